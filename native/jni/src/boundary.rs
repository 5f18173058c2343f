//! The one panic/error boundary: how a [`Failure`] (a core [`Error`], a JNI
//! error, a segment that is not open, or a caught panic) becomes a thrown
//! `io.hrts.HrtsException`, and the one error → exception table, [`kind_name`].

use hrts_core::process;
use hrts_core::{Error, ErrorKind, SharedBase};
use jni::errors::ErrorPolicy;
use jni::objects::{JString, JThrowable, JValue};
use jni::strings::JNIString;
use jni::{jni_sig, jni_str, Env, EnvUnowned};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failure on its way to Java: the exception's kind (the name of an
/// `io.hrts.HrtsException.Kind` constant) and its message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: &'static str,
    pub(crate) message: String,
}

/// Kind of a panic caught at the boundary, or of a JNI call that failed.
pub(crate) const KIND_INTERNAL: &str = "INTERNAL";
/// Kind of a native call made before the segment was opened (the Java side
/// prevents it; reported rather than trusted).
pub(crate) const KIND_NOT_OPEN: &str = "NOT_OPEN";
/// What [`kind_name`] gives a core kind it does not know (a kind added to the
/// core after this table). `HrtsException.fromNative` turns it into `INTERNAL`;
/// the tests make sure no kind of [`ErrorKind::ALL`] gets it.
const KIND_UNMAPPED: &str = "UNMAPPED";

/// The one error → exception table: every core [`ErrorKind`] is thrown as
/// `io.hrts.HrtsException` with the `HrtsException.Kind` of this name.
pub(crate) fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
        ErrorKind::Os => "OS",
        ErrorKind::Foreign => "FOREIGN",
        ErrorKind::Truncated => "TRUNCATED",
        ErrorKind::Version => "VERSION",
        ErrorKind::Corrupt => "CORRUPT",
        ErrorKind::Permission => "PERMISSION",
        ErrorKind::Timeout => "TIMEOUT",
        ErrorKind::Source => "SOURCE",
        ErrorKind::Persist => "PERSIST",
        ErrorKind::Full => "FULL",
        ErrorKind::Unsynchronized => "UNSYNCHRONIZED",
        // ErrorKind is #[non_exhaustive]: a new kind lands here until it is mapped.
        _ => KIND_UNMAPPED,
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure {
            kind: kind_name(e.kind()),
            message: e.message().to_string(),
        }
    }
}

impl From<jni::errors::Error> for Failure {
    /// A JNI call of the cold path failed. If it left a Java exception pending
    /// (`Error::JavaException`), that exception is what Java sees: [`throw`]
    /// never replaces a pending one.
    fn from(e: jni::errors::Error) -> Failure {
        Failure {
            kind: KIND_INTERNAL,
            message: format!("hrts: a JNI call failed: {e}; please report this as a bug"),
        }
    }
}

impl Failure {
    pub(crate) fn invalid_argument(message: String) -> Failure {
        Failure {
            kind: kind_name(ErrorKind::InvalidArgument),
            message,
        }
    }

    #[cold]
    #[inline(never)]
    fn not_open() -> Failure {
        Failure {
            kind: KIND_NOT_OPEN,
            message: "hrts: the time-stamp segment is not open in this process (call \
                      HighResTimestamp.open() first)"
                .to_string(),
        }
    }

    fn panic(payload: &(dyn Any + Send)) -> Failure {
        Failure {
            kind: KIND_INTERNAL,
            message: hrts_core::panic_message(payload),
        }
    }
}

/// The segment, once `Native.openSegment` succeeded.
#[inline(always)]
pub(crate) fn base() -> Result<&'static SharedBase, Failure> {
    process::global_if_open().ok_or_else(Failure::not_open)
}

/// Runs `f`, turning a panic into a [`Failure`]. `catch_unwind` costs nothing
/// on the normal path.
#[inline(always)]
pub(crate) fn catch<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    // AssertUnwindSafe: after a panic we only report it; the core's shared state
    // is atomics whose invariants do not depend on a call completing.
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(Failure::panic(&*payload)))
}

/// The boundary of the exports that need no JNI call on their normal path (the
/// hot stamp reads, pid, tid, version): `f` inside [`catch`]; on a failure the
/// exception is thrown through `env` and `T::default()` returned (Java never
/// sees it: an exception is pending). Unlike [`EnvUnowned::with_env`] this
/// touches neither `env` nor any thread-local state unless `f` fails.
#[inline(always)]
pub(crate) fn direct<T: Default>(
    env: &mut EnvUnowned<'_>,
    f: impl FnOnce() -> Result<T, Failure>,
) -> T {
    match catch(f) {
        Ok(v) => v,
        Err(failure) => {
            fail(env, failure);
            T::default()
        }
    }
}

/// A hot stamp read: `f` on the open segment, inside `catch_unwind`. On the
/// normal path this is a load of the segment pointer, a predictable branch and
/// `f`, its value returned in a register: no `Result<T, Failure>` is built
/// (measured: building one on the stack cost 1.5 ns a call from Java).
#[inline(always)]
pub(crate) fn stamp<T: Default>(env: &mut EnvUnowned<'_>, f: impl FnOnce(&SharedBase) -> T) -> T {
    let Some(b) = process::global_if_open() else {
        fail(env, Failure::not_open());
        return T::default();
    };
    // AssertUnwindSafe: as in `catch`.
    match catch_unwind(AssertUnwindSafe(|| f(b))) {
        Ok(v) => v,
        Err(payload) => {
            fail(env, Failure::panic(&*payload));
            T::default()
        }
    }
}

/// Throws `failure` from an export that does not run inside `with_env`: the
/// failure goes through the same [`ThrowHrtsException`] policy as every other.
#[cold]
#[inline(never)]
fn fail(env: &mut EnvUnowned<'_>, failure: Failure) {
    env.with_env(|_| Err::<(), Failure>(failure))
        .resolve::<ThrowHrtsException>()
}

/// The [`ErrorPolicy`] of every export: a [`Failure`] or a panic is thrown as
/// `io.hrts.HrtsException` and the export returns a default value (null, 0),
/// which Java never sees.
pub(crate) struct ThrowHrtsException;

impl<T: Default> ErrorPolicy<T, Failure> for ThrowHrtsException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        failure: Failure,
    ) -> jni::errors::Result<T> {
        throw(env, &failure);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        throw(env, &Failure::panic(&*payload));
        Ok(T::default())
    }
}

/// Throws `failure` as an `io.hrts.HrtsException`, unless an exception is
/// already pending (that one is more precise: it came from the JVM). If the
/// exception cannot be built, an `IllegalStateException` carrying the same
/// kind and message is thrown instead, so a failure is never silent.
fn throw(env: &mut Env<'_>, failure: &Failure) {
    if env.exception_check() {
        return;
    }
    match new_exception(env, failure).and_then(|e| env.throw(e)) {
        // `Env::throw` reports success as `Err(JavaException)`: it is now pending.
        Ok(()) | Err(jni::errors::Error::JavaException) => {}
        Err(_) if env.exception_check() => {} // e.g. OutOfMemoryError
        Err(e) => {
            let message = format!(
                "hrts: could not create io.hrts.HrtsException ({e}); the failure was {}: {}",
                failure.kind, failure.message
            );
            let _ = env.throw_new(
                jni_str!("java/lang/IllegalStateException"),
                JNIString::from(message),
            );
        }
    }
}

/// `HrtsException.fromNative(kind, message)`. `FindClass` (not the thread's
/// context class loader) resolves the class with the loader of `io.hrts.Native`,
/// whose method is running: the same `HrtsException` its caller catches.
fn new_exception<'local>(
    env: &mut Env<'local>,
    failure: &Failure,
) -> jni::errors::Result<JThrowable<'local>> {
    let class = env.find_class(jni_str!("io/hrts/HrtsException"))?;
    let kind = JString::from_str(env, failure.kind)?;
    let message = JString::from_str(env, &failure.message)?;
    let exception = env
        .call_static_method(
            &class,
            jni_str!("fromNative"),
            jni_sig!((kind: JString, message: JString) -> io.hrts.HrtsException),
            &[JValue::Object(&kind), JValue::Object(&message)],
        )?
        .l()?;
    env.cast_local::<JThrowable>(exception)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The constants of `io.hrts.HrtsException.Kind`, read from its source.
    fn java_kinds() -> BTreeSet<String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../java/src/main/java/io/hrts/HrtsException.java"
        );
        let source = std::fs::read_to_string(path).expect("HrtsException.java");
        // Drop comments, then take the constant list: `enum Kind { A, B, C }`.
        let mut code = String::new();
        let mut rest = source.as_str();
        while let Some(start) = rest.find("/*") {
            code.push_str(&rest[..start]);
            let end = rest[start..].find("*/").expect("closed comment");
            rest = &rest[start + end + 2..];
        }
        code.push_str(rest);
        let code: String = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let body = code.split("enum Kind {").nth(1).expect("enum Kind");
        let constants = &body[..body.find(['}', ';']).expect("end of constants")];
        constants
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn every_kind_has_a_name() {
        for k in ErrorKind::ALL {
            assert_ne!(kind_name(k), KIND_UNMAPPED, "{k:?}");
        }
    }

    #[test]
    fn every_kind_thrown_is_a_java_enum_constant_and_back() {
        let java = java_kinds();
        let mut native: BTreeSet<String> = ErrorKind::ALL
            .iter()
            .map(|&k| kind_name(k).to_string())
            .collect();
        assert_eq!(native.len(), ErrorKind::ALL.len(), "two kinds share a name");
        native.insert(KIND_NOT_OPEN.to_string());
        native.insert(KIND_INTERNAL.to_string());
        // LOAD is Java's own: the library could not be loaded, so it threw nothing.
        let java_native: BTreeSet<String> = java.iter().filter(|k| *k != "LOAD").cloned().collect();
        assert!(java.contains("LOAD"), "{java:?}");
        assert_eq!(native, java_native);
    }

    #[test]
    fn a_panic_is_caught_at_the_boundary() {
        let r = catch(|| -> Result<i32, Failure> { panic!("boom") });
        let f = r.unwrap_err();
        assert_eq!(f.kind, KIND_INTERNAL);
        assert!(f.message.contains("boom"), "{}", f.message);
        assert_eq!(catch(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn failures_carry_the_core_kind_and_message() {
        let f = Failure::from(Error::new(ErrorKind::Persist, "the file is damaged"));
        assert_eq!(
            (f.kind, f.message.as_str()),
            ("PERSIST", "the file is damaged")
        );
        let j = Failure::from(jni::errors::Error::NullPtr("x"));
        assert_eq!(j.kind, KIND_INTERNAL);
        assert!(j.message.contains("JNI call failed"), "{}", j.message);
    }
}
