//! What each native method of `io.hrts.Native` does, in Rust terms: no JNI
//! type beyond the primitive aliases, so it is unit-tested without a JVM.
//! [`crate::exports`] wraps each in its JNI signature and the boundary.

use crate::boundary::{base, Failure};
use hrts_core::{ibmts, process};
use hrts_core::{BoundOptions, Mode, OpenOptions, OpenRequest, SharedBase};
use jni::sys::{jint, jlong};
use std::ops::Range;

/// Epoch ns as a jlong, saturating in 2262 rather than wrapping negative.
#[inline(always)]
pub(crate) fn to_jlong(v: u64) -> jlong {
    v.min(jlong::MAX as u64) as jlong
}

/// The open settings of the JVM's system properties, as `Native.openSegment`
/// passes them: a mode code and numbers, each 0 where the property is not set.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RawOptions {
    /// `hrts.mode`, as an `io.hrts.Mode` code.
    pub mode: jint,
    /// `hrts.tieIntervalMs`.
    pub tie_interval_ms: jlong,
    /// `hrts.maxSlewPpm`.
    pub max_slew_ppm: jlong,
    /// `hrts.stepThresholdMs`.
    pub step_threshold_ms: jlong,
    /// `hrts.boundDriftPpm`.
    pub bound_drift_ppm: jlong,
    /// `hrts.boundVoidS`.
    pub bound_void_s: jlong,
}

impl RawOptions {
    /// The request for `name` (None: the default segment) with these options,
    /// checked: a bad property is refused naming the properties, before the
    /// core looks at the environment.
    fn request(&self, name: Option<String>) -> Result<OpenRequest, Failure> {
        let invalid = |what: &str| {
            Failure::invalid_argument(format!(
                "hrts: {what}; fix or remove the system property (-Dhrts.mode=tracking|frozen, \
                 -Dhrts.tieIntervalMs, -Dhrts.maxSlewPpm, -Dhrts.stepThresholdMs, \
                 -Dhrts.boundDriftPpm, -Dhrts.boundVoidS)"
            ))
        };
        let raw = |v: i64, what: &str| {
            u64::try_from(v).map_err(|_| invalid(&format!("{what} {v} is negative")))
        };
        let options = OpenOptions::from_raw(
            raw(self.mode.into(), "the mode code")?,
            raw(self.tie_interval_ms, "the tie interval")?,
            raw(self.max_slew_ppm, "the largest slew")?,
            raw(self.step_threshold_ms, "the step threshold")?,
        )
        .map_err(|e| invalid(e.message()))?;
        let bound = BoundOptions::from_raw(
            raw(self.bound_drift_ppm, "the bound drift")?,
            raw(self.bound_void_s, "the bound void-after")?,
        )
        .map_err(|e| invalid(e.message()))?;
        Ok(OpenRequest {
            name,
            options,
            bound,
        })
    }
}

/// Opens the process's segment (`process::init_global`): the core resolves
/// the request of this name (UTF-8 from Java, `-Dhrts.segment`; None: the
/// default) and the system properties' options with the environment
/// (`HRTS_*`). The options are checked even when the segment exists and they
/// will not be used: a bad property is reported, not ignored. Nothing is
/// cached on failure, so a later call retries.
pub(crate) fn open(name: Option<Vec<u8>>, options: RawOptions) -> Result<(), Failure> {
    let name = name
        .map(|bytes| {
            String::from_utf8(bytes).map_err(|_| {
                Failure::invalid_argument("hrts: the segment name is not valid UTF-8".to_string())
            })
        })
        .transpose()?;
    let cfg = options.request(name)?.resolve()?;
    process::init_global(&cfg)?;
    Ok(())
}

/// The code of a mode in `io.hrts.Mode` (its constructor argument): the
/// core's [`Mode::code`].
pub(crate) fn mode_code(mode: Mode) -> jint {
    mode.code() as jint
}

/// The segment's mode, as an `io.hrts.Mode` code.
pub(crate) fn mode() -> Result<jint, Failure> {
    Ok(mode_code(base()?.mode()))
}

/// Calendar minus timeline now, ns (narrowest bracket).
pub(crate) fn offset_nanos() -> Result<jlong, Failure> {
    Ok(base()?.offset_now())
}

/// The attach checks again: `CORRUPT` if the segment was damaged since.
pub(crate) fn validate() -> Result<(), Failure> {
    Ok(base()?.validate()?)
}

/// a.b.c.d packed 16 bits each.
pub(crate) fn logic_version() -> jlong {
    ibmts::LOGIC_VERSION as jlong
}

/// Opens the library copy at `path` and takes a shared lock on all of it, so
/// that the cleanups of other JVMs, which need an exclusive one
/// (`FileChannel.tryLock`, a POSIX record lock), leave the copy alone. An
/// open-file-description lock rather than a POSIX one: the two kinds conflict,
/// but a POSIX lock belongs to the process and goes when it closes any
/// descriptor of the file (a test or a program reading the library's own file
/// would drop it), while this one lives with its descriptor, which stays open
/// on purpose until the process ends. Returns 0 or the errno.
#[cfg(unix)]
pub(crate) fn hold_copy(path: &[u8]) -> jint {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::IntoRawFd;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(std::ffi::OsStr::from_bytes(path))
    {
        Ok(f) => f,
        Err(e) => return e.raw_os_error().unwrap_or(libc::EIO),
    };
    // SAFETY: a zeroed `flock` is a valid value of the plain C struct; the fields
    // that matter are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_RDLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 0; // to the end of the file, however long
    fl.l_pid = 0; // required of OFD locks
    let fd = file.into_raw_fd();
    // SAFETY: `fd` is an open descriptor this function owns, and `fl` a valid
    // `flock` that outlives the call; F_OFD_SETLK never blocks.
    if unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &fl) } != 0 {
        let err = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        // SAFETY: `fd` is ours and not used after this.
        unsafe { libc::close(fd) };
        return err;
    }
    0
}

/// On Windows the loader's own mapping of the copy already keeps other
/// processes from deleting or replacing it (an image in use cannot be), so
/// there is nothing to take.
#[cfg(windows)]
pub(crate) fn hold_copy(_path: &[u8]) -> jint {
    0
}

/// The calling process's id.
pub(crate) fn pid() -> jint {
    // Linux pids fit in an i32 (pid_max <= 2^22); the cast is a bit reinterpretation.
    hrts_core::process::pid() as jint
}

/// The calling thread's Linux thread id (gettid).
pub(crate) fn tid() -> jint {
    hrts_core::process::thread_id() as jint
}

/// Epoch ns, unordered counter read.
#[inline(always)]
pub(crate) fn epoch_nanos(b: &SharedBase) -> jlong {
    to_jlong(b.now_ns())
}

/// Epoch ns, ordered counter read (cannot execute before earlier instructions:
/// for stamps compared across threads and processes).
#[inline(always)]
pub(crate) fn epoch_nanos_ordered(b: &SharedBase) -> jlong {
    to_jlong(b.now_ns_ordered())
}

/// IBMTS getEpochMicroseconds.
#[inline(always)]
pub(crate) fn epoch_micros(b: &SharedBase) -> jlong {
    to_jlong(b.epoch_micros())
}

/// A raw counter read of the segment's source.
#[inline(always)]
pub(crate) fn ticks(b: &SharedBase) -> jlong {
    b.ticks() as jlong
}

/// The epoch ns of a counter value, exact for any input against the current
/// base. Read-only: a far-future tick count must not re-base every process.
#[inline(always)]
pub(crate) fn ticks_to_nanos(b: &SharedBase, ticks: jlong) -> jlong {
    b.ns_at(ticks as u64) as jlong
}

/// A unique stamp: strictly increasing across every thread of every process
/// attached to the segment.
/// A host page reader opens its per-user segment for this on the first call;
/// that can fail.
#[inline(always)]
pub(crate) fn unique() -> Result<jlong, Failure> {
    Ok(to_jlong(base()?.next_unique()?))
}

/// The base's generation (bumped by every setBaseInfo / `hrts reset` and by a
/// re-base after a counter reset).
#[inline(always)]
pub(crate) fn generation(b: &SharedBase) -> jlong {
    to_jlong(b.base().generation)
}

/// The segment's next sequence number; a failure to persist it is an error
/// (kind PERSIST, OS, ...).
pub(crate) fn next_sequence() -> Result<jlong, Failure> {
    Ok(base()?.next_sequence()? as jlong)
}

/// The process's next Intel Trace Collector stamp (clock tick in the high
/// bits, event counter in the low ones).
pub(crate) fn itc_next() -> Result<jlong, Failure> {
    base()?;
    Ok(process::itc_next()? as jlong)
}

/// Epoch ns of an ITC stamp's tick.
pub(crate) fn itc_to_epoch_nanos(stamp: jlong) -> Result<jlong, Failure> {
    base()?;
    Ok(to_jlong(process::itc()?.to_epoch_ns(stamp as u64)))
}

/// The most ITC stamps of this process that shared one clock tick.
pub(crate) fn itc_max_events_per_tick() -> Result<jlong, Failure> {
    base()?;
    Ok(to_jlong(process::itc()?.max_events_per_tick()))
}

/// The event bits of this process's ITC stamps.
pub(crate) fn itc_event_bits() -> Result<jint, Failure> {
    base()?;
    Ok(process::itc()?.format().event_bits as jint)
}

/// `off .. off + len` as a range inside an array of `length` elements (Java
/// checked it already; checked again rather than trusted).
pub(crate) fn fill_range(off: jint, len: jint, length: usize) -> Result<Range<usize>, Failure> {
    let (Ok(start), Ok(count)) = (usize::try_from(off), usize::try_from(len)) else {
        return Err(out_of_range(off, len, length));
    };
    match start.checked_add(count) {
        Some(end) if end <= length => Ok(start..end),
        _ => Err(out_of_range(off, len, length)),
    }
}

fn out_of_range(off: jint, len: jint, length: usize) -> Failure {
    Failure::invalid_argument(format!(
        "hrts: range [{off}, {off}+{len}) outside an array of {length}"
    ))
}

/// Stamps per block of [`fill_in_blocks`]: a 4 KiB buffer on the stack.
const FILL_BLOCK: usize = 512;

/// Consecutive stamps ([`epoch_nanos`]) for the elements `range` of a Java
/// array, handed to `write(first_index, stamps)` a block at a time. Copying
/// blocks (rather than pinning the array in a JNI critical region) keeps the
/// garbage collector free to run during a long fill.
pub(crate) fn fill_in_blocks(
    b: &SharedBase,
    range: Range<usize>,
    mut write: impl FnMut(usize, &[jlong]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut block = [0 as jlong; FILL_BLOCK];
    let mut at = range.start;
    while at < range.end {
        let n = (range.end - at).min(FILL_BLOCK);
        for slot in &mut block[..n] {
            *slot = epoch_nanos(b);
        }
        write(at, &block[..n])?;
        at += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_on_a_segment_of_their_own() {
        let name = format!("/hrts-jnitest-{}", std::process::id());
        let mut cfg = hrts_core::Config::named(&name);
        // In a directory of its own: hrts refuses a sequence file in a directory
        // others may write, such as the temp directory itself.
        let seq_dir = std::env::temp_dir().join(format!("hrts-jnitest-{}", std::process::id()));
        cfg.seq_file = Some(seq_dir.join("jnitest.seq"));
        if process::global_if_open().is_none() {
            crate::downcalls::tests::check(None);
        }
        process::init_global(&cfg).unwrap();
        let b = base().unwrap();
        crate::downcalls::tests::check(Some(b));

        let ns = epoch_nanos(b);
        // After 2020-01-01 and before 2200-01-01.
        assert!(ns > 1_577_836_800_000_000_000 && ns < 7_258_118_400_000_000_000);
        let ordered = epoch_nanos_ordered(b);
        assert!(ordered >= ns);
        let us = epoch_micros(b);
        assert!(us >= ns / 1000 && us <= ns / 1000 + 10_000_000);

        let t = ticks(b);
        let at = ticks_to_nanos(b, t);
        assert!(at >= ns && at - ns < 10_000_000_000, "{at} vs {ns}");
        // Any input is answered without moving the base or panicking.
        let gen = generation(b);
        for v in [0, -1, i64::MIN, i64::MAX, t.wrapping_add(1 << 62)] {
            ticks_to_nanos(b, v);
        }
        assert_eq!(gen, generation(b));

        let u1 = unique().unwrap();
        let u2 = unique().unwrap();
        assert!(u2 > u1);
        let i1 = itc_next().unwrap();
        let i2 = itc_next().unwrap();
        assert!(i2 > i1);
        assert_eq!(itc_event_bits().unwrap(), 13);
        let at = itc_to_epoch_nanos(i2).unwrap();
        assert!((at as u64).abs_diff(hrts_core::clock::realtime_ns()) < 1_000_000_000);
        assert!(itc_max_events_per_tick().unwrap() < 1 << 13);
        let s1 = next_sequence().unwrap();
        let s2 = next_sequence().unwrap();
        assert!(s2 > s1);

        // A range over several blocks arrives in order, every element once.
        let mut many = vec![-7; 3 + 2 * FILL_BLOCK + 5];
        let range = fill_range(3, (2 * FILL_BLOCK + 1) as jint, many.len()).unwrap();
        fill_in_blocks(b, range, |at, stamps| {
            many[at..at + stamps.len()].copy_from_slice(stamps);
            Ok(())
        })
        .unwrap();
        assert!(many[..3]
            .iter()
            .chain(&many[4 + 2 * FILL_BLOCK..])
            .all(|&v| v == -7));
        let filled = &many[3..4 + 2 * FILL_BLOCK];
        assert!(filled[0] >= ordered && filled.windows(2).all(|w| w[0] <= w[1]));
        let e = fill_in_blocks(b, 0..1, |_, _| Err(Failure::invalid_argument("x".into())));
        assert_eq!(e.unwrap_err().message, "x");

        // The segment facts the Java SegmentInfo is built from.
        let info = b.info();
        assert_eq!(info.name, name);
        assert!(info.base.generation >= 1);

        // Reopening under the same name is a no-op; another name is refused.
        open(Some(name.clone().into_bytes()), RawOptions::default()).unwrap();
        let e = open(Some(b"/hrts-jnitest-other".to_vec()), RawOptions::default()).unwrap_err();
        assert_eq!(e.kind, "INVALID_ARGUMENT");
        assert!(e.message.contains("/hrts-jnitest-other"), "{}", e.message);
        let e = open(Some(vec![b'/', 0xff]), RawOptions::default()).unwrap_err();
        assert_eq!(e.kind, "INVALID_ARGUMENT");
        // A property out of range is refused, even though the segment is open.
        let long_ties = RawOptions {
            tie_interval_ms: 60_001,
            ..RawOptions::default()
        };
        let e = open(Some(name.clone().into_bytes()), long_ties).unwrap_err();
        assert_eq!(e.kind, "INVALID_ARGUMENT");
        assert!(e.message.contains("outside 1 ms ..= 60 s"), "{}", e.message);

        // The segment's mode and state (HRTS_MODE is not set: tracking).
        assert_eq!(mode().unwrap(), mode_code(Mode::Tracking));
        assert!(offset_nanos().unwrap().abs() < 50_000_000);
        validate().unwrap();

        assert_eq!(pid() as u32, std::process::id());
        let main_tid = tid();
        let other_tid = std::thread::spawn(tid).join().unwrap();
        assert_ne!(main_tid, other_tid);
        assert_eq!(logic_version() as u64, ibmts::LOGIC_VERSION);
        let _ = SharedBase::unlink(&name);
        let _ = std::fs::remove_dir_all(seq_dir);
    }

    #[test]
    fn bad_properties_are_refused_naming_the_properties() {
        // Each is refused before any segment is looked at (the name is one
        // no test creates).
        let name = || Some(b"/hrts-jnitest-never-created".to_vec());
        let raw = |mode, tie, slew, step, drift, void| RawOptions {
            mode,
            tie_interval_ms: tie,
            max_slew_ppm: slew,
            step_threshold_ms: step,
            bound_drift_ppm: drift,
            bound_void_s: void,
        };
        for (options, message) in [
            (raw(3, 0, 0, 0, 0, 0), "mode code 3 is neither"),
            (raw(-1, 0, 0, 0, 0, 0), "the mode code -1 is negative"),
            (raw(0, -5, 0, 0, 0, 0), "the tie interval -5 is negative"),
            (raw(0, 0, 1 << 40, 0, 0, 0), "outside 1 ..= 50000 ppm"),
            (raw(0, 0, 50_001, 0, 0, 0), "outside 1 ..= 50000 ppm"),
            (raw(0, 0, 0, -7, 0, 0), "the step threshold -7 is negative"),
            (raw(0, 0, 0, 0, -1, 0), "the bound drift -1 is negative"),
            (raw(0, 0, 0, 0, 1_000_001, 0), "outside 1 ..= 1000000 ppm"),
            (raw(0, 0, 0, 0, 0, 604_801), "outside 1 s ..= 604800 s"),
        ] {
            let e = open(name(), options).unwrap_err();
            assert_eq!(e.kind, "INVALID_ARGUMENT", "{message}");
            assert!(
                e.message.contains(message) && e.message.contains("-Dhrts.mode"),
                "{message}: {}",
                e.message
            );
        }
    }

    /// The codes of `io.hrts.Mode`'s constants, read from its source
    /// (`TRACKING(1)`): the Java enum and [`mode_code`] must agree.
    #[test]
    fn mode_codes_are_those_of_the_java_enum() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../java/src/main/java/io/hrts/Mode.java"
        );
        let source = std::fs::read_to_string(path).expect("Mode.java");
        for mode in Mode::ALL {
            let constant = mode.name().to_uppercase();
            let code = mode_code(mode);
            assert!(
                source.contains(&format!("{constant}({code}")),
                "Mode.java must declare {constant}({code}, ...)"
            );
        }
    }

    #[test]
    fn fill_ranges_are_checked() {
        assert_eq!(fill_range(0, 8, 8).unwrap(), 0..8);
        assert_eq!(fill_range(8, 0, 8).unwrap(), 8..8);
        assert_eq!(fill_range(3, 2, 8).unwrap(), 3..5);
        for (off, len) in [
            (-1, 1),
            (0, -1),
            (0, 9),
            (8, 1),
            (4, 5),
            (jint::MAX, jint::MAX),
        ] {
            let e = fill_range(off, len, 8).unwrap_err();
            assert_eq!(e.kind, "INVALID_ARGUMENT", "{off} {len}");
        }
    }

    #[test]
    fn saturates_rather_than_wrapping() {
        assert_eq!(to_jlong(5), 5);
        assert_eq!(to_jlong(u64::MAX), jlong::MAX);
    }
}
