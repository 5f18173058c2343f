//! The one boundary every exported function goes through, and the macro that
//! writes the exports: [`c_calls!`].
//!
//! Unwinding out of an `extern "C"` function aborts the process (or, before Rust
//! 1.81, was undefined behaviour), so no panic may leave this crate. Every export
//! runs its body in [`status_call`] or [`value_call`], and no export is written by
//! hand: each module defines its calls once in a `c_calls! { ... }` block, which
//! generates the `#[no_mangle] extern "C"` functions. A call that exists on the
//! process's default segment and on a handle (`hrts_get_epoch_nanoseconds` and
//! `hrts_segment_epoch_nanoseconds`) is one definition (one doc, one body over a
//! `&SharedBase`) from which both exports are generated. The macro also gives
//! every body the exported name it runs under as `FUNCTION`, for its messages,
//! so no export types its own name.
//!
//! # The header
//!
//! cbindgen reads source, not expanded code: it does not see functions that a
//! `macro_rules!` writes. Its `parse.expand` would expand the crate first, but
//! only with a nightly compiler, which `scripts/bootstrap.sh` does not install
//! and a fresh machine need not have; `header_is_fresh` must keep working on
//! stable. So every `c_calls!` block also yields, in test builds, the Rust
//! declaration of each export it generates (`Declaration`: name, doc lines,
//! parameter list, return type), made by `stringify!` from the very tokens the
//! export is generated from. `header_test` writes those declarations into a
//! source file of their own and hands it to cbindgen beside the crate (whose
//! types, constants and docs cbindgen reads as before). The header stays
//! generated and checked on stable Rust, every call keeps its doc in it, the
//! two forms of a call sit side by side, and the functions appear in the order
//! of the modules `header_test` lists. A proc macro would not help (cbindgen
//! expands neither), and hand-written declarations would be a second place to
//! keep in step.
//!
//! # Adding a call
//!
//! Add one definition to the `c_calls!` block of its topic's module; nothing
//! else (a new module is also listed in `lib.rs` and `header_test.rs`). Then
//! bless the header.

use crate::status::{code, set_last_error, Failure, HrtsStatus};
use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

/// Generates exported C functions from definitions written once.
///
/// Every definition starts with its doc (`///`), then optionally
/// `#[on_panic(VALUE)]` and `unsafe`, then `fn` and one of these shapes:
///
/// - `fn hrts_x / hrts_segment_x (b) -> (out: T, ...) { body }`: a call on a
///   segment. Generates `hrts_x(out: *mut T, ...)` on the process's default
///   segment and `hrts_segment_x(seg: *const HrtsSegment, out: *mut T, ...)` on a
///   handle (always `unsafe`, with a generated doc that refers to `hrts_x`). Both
///   return a status: every output is checked for NULL first, then the segment is
///   reached (the process's, opened on first use, or the handle's, NULL refused),
///   then `body` runs with `b: &SharedBase` and returns `Ok(value)` (a tuple
///   for several outputs, `()` for none), which is written to the outputs.
/// - `fn hrts_x / hrts_segment_x (b) -> text(buf, len, "what") { body }`: the
///   same, with `body` returning a `String` that is copied into the caller's
///   `buf` of `len` bytes (or `HRTS_E_BUFFER_TOO_SMALL` saying what needs how much).
/// - `fn hrts_x(input: T, ...) -> (out: U, ...) { body }` and
///   `fn hrts_x(input: T, ...) -> text(buf, len, "what") { body }`: one export, a
///   status, outputs checked before `body` runs; `body` reaches a segment itself
///   if it needs one.
/// - `#[on_panic(VALUE)] fn hrts_x(input: T, ...) -> R { body }`: one export
///   returning `body`'s value, `VALUE` if it panicked.
/// - `fn hrts_x(input: T, ...) { body }`: one export returning nothing.
///
/// Bodies refer to their exported name as `FUNCTION`. Each block also defines
/// (in test builds) `DECLARATIONS`, what the header declares (see the module doc).
macro_rules! c_calls {
    // ---- All definitions done: the header's declarations of the block.
    (@munch [$($decl:tt)*]) => {
        /// The C declarations of this module's exports, in order (for the header).
        #[cfg(test)]
        pub(crate) const DECLARATIONS: &[$crate::boundary::Declaration] = &[$($decl)*];
    };

    // ---- One definition's head: its doc, the value on panic, `unsafe`.
    (@munch $acc:tt $(#[doc = $doc:literal])* #[on_panic($panic:expr)] unsafe fn $($rest:tt)*) => {
        $crate::boundary::c_calls!(@def $acc [$($doc),*] [$panic] [unsafe] $($rest)*);
    };
    (@munch $acc:tt $(#[doc = $doc:literal])* #[on_panic($panic:expr)] fn $($rest:tt)*) => {
        $crate::boundary::c_calls!(@def $acc [$($doc),*] [$panic] [] $($rest)*);
    };
    (@munch $acc:tt $(#[doc = $doc:literal])* unsafe fn $($rest:tt)*) => {
        $crate::boundary::c_calls!(@def $acc [$($doc),*] [] [unsafe] $($rest)*);
    };
    (@munch $acc:tt $(#[doc = $doc:literal])* fn $($rest:tt)*) => {
        $crate::boundary::c_calls!(@def $acc [$($doc),*] [] [] $($rest)*);
    };
    (@munch $acc:tt $($rest:tt)+) => {
        compile_error!(concat!(
            "c_calls!: expected `/// doc`, `#[on_panic(..)]`, `unsafe` or `fn` before: ",
            stringify!($($rest)+)
        ));
    };

    // ---- The shape of one definition (see the macro's doc), as the output
    // `[outputs name: T, ...]`, `[text buf len "what"]`, `[value R]` or `[nothing]`.
    (@def $acc:tt $docs:tt [] $unsafe:tt $default:ident / $handle:ident ($b:ident)
        -> ($($out:ident : $oty:ty),* $(,)?) $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@pair $acc $docs $unsafe $default $handle $b
            [outputs $($out: $oty),*] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt [] $unsafe:tt $default:ident / $handle:ident ($b:ident)
        -> text($buf:ident, $len:ident, $what:literal) $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@pair $acc $docs $unsafe $default $handle $b
            [text $buf $len $what] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt [] $unsafe:tt $name:ident ($($in:ident : $ity:ty),* $(,)?)
        -> ($($out:ident : $oty:ty),* $(,)?) $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@one $acc $docs $unsafe $name [$($in: $ity),*]
            [outputs $($out: $oty),*] [] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt [] $unsafe:tt $name:ident ($($in:ident : $ity:ty),* $(,)?)
        -> text($buf:ident, $len:ident, $what:literal) $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@one $acc $docs $unsafe $name [$($in: $ity),*]
            [text $buf $len $what] [] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt [$panic:expr] $unsafe:tt $name:ident ($($in:ident : $ity:ty),* $(,)?)
        -> $ret:ty $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@one $acc $docs $unsafe $name [$($in: $ity),*]
            [value $ret] [$panic] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt [] $unsafe:tt $name:ident ($($in:ident : $ity:ty),* $(,)?)
        $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@one $acc $docs $unsafe $name [$($in: $ity),*]
            [nothing] [()] $body $($rest)*);
    };
    (@def $acc:tt $docs:tt $panic:tt $unsafe:tt $name:ident $($rest:tt)*) => {
        compile_error!(concat!(
            "c_calls!: `", stringify!($name), "` has none of the shapes `c_calls!` knows \
             (see its doc); `#[on_panic]` goes with a plain return type only"
        ));
    };

    // ---- A call on a segment: its default form, its handle form.
    (@pair [$($acc:tt)*] [$($doc:expr),*] $unsafe:tt $default:ident $handle:ident $b:ident
        $shape:tt $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@export [$($doc),*] $unsafe $default [] [] $shape []
            [let $b: &::hrts_core::SharedBase = $crate::handle::process_base()?;]
            $body);
        $crate::boundary::c_calls!(@export
            [$crate::boundary::c_calls!(@handle_doc $default $unsafe)] [unsafe] $handle
            [seg: *const $crate::handle::HrtsSegment,] [] $shape []
            [
                // SAFETY: `seg` is NULL or an open handle, not closed during the
                // call, by the exported function's contract.
                let $b: &::hrts_core::SharedBase =
                    unsafe { $crate::handle::handle_base(seg, FUNCTION) }?;
            ]
            $body);
        $crate::boundary::c_calls!(@munch [$($acc)*
            $crate::boundary::c_calls!(@declare $default [$($doc),*] "" [] $shape),
            $crate::boundary::c_calls!(@declare $handle
                [$crate::boundary::c_calls!(@handle_doc $default $unsafe)]
                "seg: *const HrtsSegment, " [] $shape),
        ] $($rest)*);
    };

    // ---- A call with one form.
    (@one [$($acc:tt)*] [$($doc:expr),*] $unsafe:tt $name:ident $ins:tt $shape:tt $panic:tt
        $body:block $($rest:tt)*) => {
        $crate::boundary::c_calls!(@export [$($doc),*] $unsafe $name [] $ins $shape $panic []
            $body);
        $crate::boundary::c_calls!(@munch [$($acc)*
            $crate::boundary::c_calls!(@declare $name [$($doc),*] "" $ins $shape),
        ] $($rest)*);
    };

    // ---- An export: a status with outputs, a status with text, a value, nothing.
    (@export [$($doc:expr),*] [$($unsafe:tt)?] $name:ident [$($lead:tt)*]
        [$($in:ident : $ity:ty),*] [outputs $($out:ident : $oty:ty),*] [] [$($reach:tt)*]
        $body:block) => {
        $(#[doc = $doc])*
        #[no_mangle]
        pub $($unsafe)? extern "C" fn $name(
            $($lead)* $($in: $ity,)* $($out: *mut $oty),*
        ) -> ::std::ffi::c_int {
            #[allow(dead_code)]
            const FUNCTION: &str = stringify!($name);
            $crate::boundary::status_call(|| {
                $(let $out = $crate::boundary::required($out, stringify!($out), FUNCTION)?;)*
                $($reach)*
                let value = $crate::boundary::body(|| $body)?;
                // SAFETY: every output was found non-NULL above and is, by the
                // exported function's contract, valid for one write of its type.
                unsafe { $crate::boundary::Outputs::write(value, ($($out,)*)) };
                Ok(())
            })
        }
    };
    (@export [$($doc:expr),*] [$($unsafe:tt)?] $name:ident [$($lead:tt)*]
        [$($in:ident : $ity:ty),*] [text $buf:ident $len:ident $what:literal] []
        [$($reach:tt)*] $body:block) => {
        $(#[doc = $doc])*
        #[no_mangle]
        pub $($unsafe)? extern "C" fn $name(
            $($lead)* $($in: $ity,)* $buf: *mut ::std::ffi::c_char, $len: usize
        ) -> ::std::ffi::c_int {
            #[allow(dead_code)]
            const FUNCTION: &str = stringify!($name);
            $crate::boundary::status_call(|| {
                let $buf = $crate::boundary::required($buf, stringify!($buf), FUNCTION)?;
                $($reach)*
                let text: String = $crate::boundary::body(|| $body)?;
                // SAFETY: `buf` is non-NULL and, by the exported function's
                // contract, valid for writing `len` bytes.
                unsafe { $crate::boundary::write_text(FUNCTION, $what, &text, $buf, $len) }
            })
        }
    };
    (@export [$($doc:expr),*] [$($unsafe:tt)?] $name:ident [] [$($in:ident : $ity:ty),*]
        [value $ret:ty] [$panic:expr] [] $body:block) => {
        $(#[doc = $doc])*
        #[no_mangle]
        pub $($unsafe)? extern "C" fn $name($($in: $ity),*) -> $ret {
            #[allow(dead_code)]
            const FUNCTION: &str = stringify!($name);
            $crate::boundary::value_call($panic, || $body)
        }
    };
    (@export [$($doc:expr),*] [$($unsafe:tt)?] $name:ident [] [$($in:ident : $ity:ty),*]
        [nothing] [()] [] $body:block) => {
        $(#[doc = $doc])*
        #[no_mangle]
        pub $($unsafe)? extern "C" fn $name($($in: $ity),*) {
            #[allow(dead_code)]
            const FUNCTION: &str = stringify!($name);
            $crate::boundary::value_call((), || $body)
        }
    };

    // ---- What the header declares for an export (Rust source for cbindgen).
    (@declare $name:ident [$($doc:expr),*] $lead:literal [$($in:ident : $ity:ty),*] $shape:tt) => {
        $crate::boundary::Declaration {
            name: stringify!($name),
            docs: &[$($doc),*],
            params: concat!(
                $lead,
                $(stringify!($in), ": ", stringify!($ity), ", ",)*
                $crate::boundary::c_calls!(@params $shape)
            ),
            ret: $crate::boundary::c_calls!(@ret $shape),
        }
    };
    (@params [outputs $($out:ident : $oty:ty),*]) => {
        concat!($(stringify!($out), ": *mut ", stringify!($oty), ", ",)*)
    };
    (@params [text $buf:ident $len:ident $what:literal]) => {
        concat!(stringify!($buf), ": *mut c_char, ", stringify!($len), ": usize")
    };
    (@params [$($other:tt)*]) => { "" };
    (@ret [value $ret:ty]) => { stringify!($ret) };
    (@ret [nothing]) => { "" };
    (@ret $status:tt) => { "c_int" };

    // ---- The doc of a call's handle form.
    (@handle_doc $default:ident [$($unsafe:tt)?]) => {
        concat!(
            " `", stringify!($default), "` on the segment `seg`, a handle from\n",
            " `hrts_segment_open`, instead of the process's segment.\n",
            "\n",
            " # Safety\n",
            " `seg` must be NULL (`HRTS_E_NULL_POINTER`) or an open handle",
            // Only when the default form takes arguments (is `unsafe`):
            $(
                "; the other\n arguments as for `", stringify!($default), "`",
                $crate::boundary::c_calls!(@nothing $unsafe),
            )?
            "."
        )
    };
    (@nothing $($t:tt)*) => { "" };

    // ---- The block itself.
    ($($definitions:tt)*) => {
        $crate::boundary::c_calls!(@munch [] $($definitions)*);
    };
}
pub(crate) use c_calls;

/// One export as the header declares it: what `c_calls!` generated, as Rust
/// source for cbindgen (see the module doc).
#[cfg(test)]
pub(crate) struct Declaration {
    /// The exported name.
    pub name: &'static str,
    /// Its doc, one string per `///` line (or several lines in one string).
    pub docs: &'static [&'static str],
    /// Its parameters as Rust source, each followed by a comma.
    pub params: &'static str,
    /// Its return type as Rust source; empty for none.
    pub ret: &'static str,
}

/// Runs `f` and returns its result, or `on_panic` if it panicked (leaving the
/// panic's message as the thread's last error). This is the only `catch_unwind`
/// in the crate.
#[inline(always)]
pub(crate) fn value_call<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    // AssertUnwindSafe: after a panic we only report it; no state the closure
    // may have left half-updated is read again (the core's shared state is all
    // atomics whose invariants do not depend on a call completing).
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            set_last_error(&panic_message(payload.as_ref()));
            on_panic
        }
    }
}

/// Runs a fallible `f` and turns its outcome into a status code: 0 on success,
/// the failure's status (with its message recorded) otherwise, `HRTS_E_PANIC` if
/// it panicked.
#[inline(always)]
pub(crate) fn status_call(f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    value_call(code(HrtsStatus::E_PANIC), || match f() {
        Ok(()) => code(HrtsStatus::SUCCESS),
        Err(failure) => fail(failure),
    })
}

#[cold]
#[inline(never)]
fn fail(failure: Failure) -> c_int {
    set_last_error(&failure.message);
    code(failure.status)
}

use hrts_core::panic_message;

/// Runs a call's body: a closure, so that its `return` and `?` leave the body
/// alone, typed here so that `?` in it converts to a [`Failure`].
#[inline(always)]
pub(crate) fn body<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    f()
}

/// A required pointer argument, or the NULL-pointer failure naming it.
#[inline(always)]
pub(crate) fn required<T>(p: *mut T, arg: &str, function: &str) -> Result<NonNull<T>, Failure> {
    NonNull::new(p).ok_or_else(|| Failure::null(arg, function))
}

/// Writes `v` through an output pointer the caller promised is valid.
///
/// # Safety
/// `p` must be aligned and valid for a write of `T` (the exported functions'
/// documented contract; NULL was already excluded by [`required`]).
#[inline(always)]
pub(crate) unsafe fn put<T>(p: NonNull<T>, v: T) {
    // SAFETY: guaranteed by this function's contract, passed on from the caller.
    unsafe { p.as_ptr().write(v) }
}

/// What a call's body returns, written to its output pointers: `()` to none, a
/// value to one, a tuple of two to four values to as many.
pub(crate) trait Outputs<P> {
    /// # Safety
    /// Every pointer of `to` must be aligned and valid for one write of its type.
    unsafe fn write(self, to: P);
}

impl Outputs<()> for () {
    #[inline(always)]
    unsafe fn write(self, _: ()) {}
}

impl<A> Outputs<(NonNull<A>,)> for A {
    #[inline(always)]
    unsafe fn write(self, to: (NonNull<A>,)) {
        // SAFETY: valid for the write, by this function's contract.
        unsafe { put(to.0, self) }
    }
}

impl<A, B> Outputs<(NonNull<A>, NonNull<B>)> for (A, B) {
    #[inline(always)]
    unsafe fn write(self, to: (NonNull<A>, NonNull<B>)) {
        // SAFETY: each valid for its write, by this function's contract.
        unsafe {
            put(to.0, self.0);
            put(to.1, self.1);
        }
    }
}

impl<A, B, C> Outputs<(NonNull<A>, NonNull<B>, NonNull<C>)> for (A, B, C) {
    #[inline(always)]
    unsafe fn write(self, to: (NonNull<A>, NonNull<B>, NonNull<C>)) {
        // SAFETY: each valid for its write, by this function's contract.
        unsafe {
            put(to.0, self.0);
            put(to.1, self.1);
            put(to.2, self.2);
        }
    }
}

impl<A, B, C, D> Outputs<(NonNull<A>, NonNull<B>, NonNull<C>, NonNull<D>)> for (A, B, C, D) {
    #[inline(always)]
    unsafe fn write(self, to: (NonNull<A>, NonNull<B>, NonNull<C>, NonNull<D>)) {
        // SAFETY: each valid for its write, by this function's contract.
        unsafe {
            put(to.0, self.0);
            put(to.1, self.1);
            put(to.2, self.2);
            put(to.3, self.3);
        }
    }
}

/// Copies `text` into `buf` as a NUL-terminated string, or fails with
/// `HRTS_E_BUFFER_TOO_SMALL` (saying how large `what` needs it) and writes
/// nothing.
///
/// # Safety
/// `buf` must be valid for writing `len` bytes.
pub(crate) unsafe fn write_text(
    function: &str,
    what: &str,
    text: &str,
    buf: NonNull<c_char>,
    len: usize,
) -> Result<(), Failure> {
    let bytes = text.as_bytes();
    if len < bytes.len() + 1 {
        return Err(Failure::new(
            HrtsStatus::E_BUFFER_TOO_SMALL,
            format!(
                "{function}: the buffer holds {len} bytes, {what} needs {}",
                bytes.len() + 1
            ),
        ));
    }
    let dst = buf.as_ptr().cast::<u8>();
    // SAFETY: `buf` is valid for `len` bytes (contract) and len > bytes.len(), so
    // both writes stay inside it; the text is our own, which cannot overlap
    // caller memory.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
        dst.add(bytes.len()).write(0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::last_error_ptr;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: last_error_ptr always returns a valid NUL-terminated string
        // owned by this thread's slot, unchanged until the next set_last_error.
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let rc = status_call(|| panic!("boom {}", 42));
        assert_eq!(rc, HrtsStatus::E_PANIC as c_int);
        assert!(last_error().contains("boom 42"), "{}", last_error());

        let v = value_call(7u64, || panic!("static message"));
        assert_eq!(v, 7);
        assert!(last_error().contains("static message"));
    }

    #[test]
    fn a_failure_sets_the_message_and_success_keeps_it() {
        let rc = status_call(|| Err(Failure::new(HrtsStatus::E_TIMEOUT, "too slow")));
        assert_eq!(rc, HrtsStatus::E_TIMEOUT as c_int);
        assert_eq!(last_error(), "too slow");
        // errno-like: a later success does not erase the last failure's message.
        assert_eq!(status_call(|| Ok(())), 0);
        assert_eq!(last_error(), "too slow");
    }

    #[test]
    fn messages_are_per_thread() {
        set_last_error("main thread");
        let other = std::thread::spawn(|| {
            let before = last_error();
            set_last_error("other thread");
            (before, last_error())
        })
        .join()
        .unwrap();
        assert_eq!(other, (String::new(), "other thread".to_string()));
        assert_eq!(last_error(), "main thread");
    }

    #[test]
    fn interior_nul_does_not_lose_the_message() {
        set_last_error("a\0b");
        assert_eq!(last_error(), "a\u{fffd}b");
    }

    // A block of every shape, exercised through its exports: the function name
    // in messages, outputs checked before the body runs, panics caught.
    c_calls! {
        /// Two outputs.
        unsafe fn hrts_boundary_test_pair(v: u64) -> (a: u64, b: u32) {
            if v == 0 {
                panic!("zero");
            }
            Ok((v, FUNCTION.len() as u32))
        }

        /// Text.
        unsafe fn hrts_boundary_test_text(v: u64) -> text(buf, len, "the text") {
            Ok(format!("{FUNCTION}:{v}"))
        }

        /// A value.
        #[on_panic(9)]
        fn hrts_boundary_test_value(v: u64) -> u64 {
            assert!(v != 0, "zero value");
            v + 1
        }

        /// Nothing.
        fn hrts_boundary_test_nothing() {
            panic!("{FUNCTION} panicked")
        }
    }

    #[test]
    fn generated_exports_check_name_and_catch() {
        let (mut a, mut b) = (0u64, 0u32);
        // SAFETY: every pointer is NULL or a live local.
        unsafe {
            assert_eq!(hrts_boundary_test_pair(5, &mut a, &mut b), 0);
            assert_eq!((a, b), (5, "hrts_boundary_test_pair".len() as u32));
            let rc = hrts_boundary_test_pair(0, &mut a, std::ptr::null_mut());
            assert_eq!(rc, HrtsStatus::E_NULL_POINTER as c_int);
            assert!(last_error().starts_with("hrts_boundary_test_pair: argument `b` is NULL"));
            let rc = hrts_boundary_test_pair(0, &mut a, &mut b);
            assert_eq!(rc, HrtsStatus::E_PANIC as c_int);
            assert!(last_error().contains("zero"));

            let mut buf = [0 as c_char; 32];
            assert_eq!(hrts_boundary_test_text(7, buf.as_mut_ptr(), 32), 0);
            let text = CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
            assert_eq!(text, "hrts_boundary_test_text:7");
            let rc = hrts_boundary_test_text(7, buf.as_mut_ptr(), 4);
            assert_eq!(rc, HrtsStatus::E_BUFFER_TOO_SMALL as c_int);
            assert_eq!(
                last_error(),
                "hrts_boundary_test_text: the buffer holds 4 bytes, the text needs 26"
            );
        }
        assert_eq!(hrts_boundary_test_value(1), 2);
        assert_eq!(hrts_boundary_test_value(0), 9);
        hrts_boundary_test_nothing();
        assert!(last_error().contains("hrts_boundary_test_nothing panicked"));
        let names: Vec<_> = DECLARATIONS.iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "hrts_boundary_test_pair",
                "hrts_boundary_test_text",
                "hrts_boundary_test_value",
                "hrts_boundary_test_nothing"
            ]
        );
        assert_eq!(DECLARATIONS[0].params, "v: u64, a: *mut u64, b: *mut u32, ");
        assert_eq!(DECLARATIONS[2].ret, "u64");
    }
}
