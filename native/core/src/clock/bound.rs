//! How wrong the system clock may be now, as the host's time service says:
//! chronyd's tracking report when this process was told to ask it (the host
//! daemon, `clock::chrony`), else the kernel's own estimate (`adjtimex`
//! read-only: `maxerror`, `STA_UNSYNC`, the leap-second state), which chronyd
//! and ntpd keep up to date, and which every segment can read.

/// What a bound on the system clock's error is worth.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundStatus {
    /// Nothing is known (no source, or the last word is older than void-after).
    Unknown = 0,
    /// The time service keeps the clock and its word is fresh.
    Synchronized = 1,
    /// The time service's last word is old: the bound grows at the drift rate.
    FreeRunning = 2,
    /// The time service says the clock is not synchronized: no bound holds.
    Unsynchronized = 3,
    /// The writer saw the counter or the clock disrupted (a counter that
    /// jumped, stopped or changed rate, a suspend, a step of the clock): no
    /// bound holds until it has learned the counter's rate again.
    Disrupted = 4,
}

impl BoundStatus {
    pub const ALL: [BoundStatus; 5] = [
        BoundStatus::Unknown,
        BoundStatus::Synchronized,
        BoundStatus::FreeRunning,
        BoundStatus::Unsynchronized,
        BoundStatus::Disrupted,
    ];

    /// The stable lower-case name (`hrts info`, `hrts now --bound`).
    pub fn name(self) -> &'static str {
        match self {
            BoundStatus::Unknown => "unknown",
            BoundStatus::Synchronized => "synchronized",
            BoundStatus::FreeRunning => "free-running",
            BoundStatus::Unsynchronized => "unsynchronized",
            BoundStatus::Disrupted => "disrupted",
        }
    }

    /// The code every front end uses (C `HRTS_BOUND_*`, Java `BoundStatus`).
    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<BoundStatus> {
        BoundStatus::ALL.into_iter().find(|s| s.code() == code)
    }

    /// Whether an interval may be given in this status.
    pub fn bounded(self) -> bool {
        matches!(self, BoundStatus::Synchronized | BoundStatus::FreeRunning)
    }
}

/// Where a bound came from.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundSource {
    None = 0,
    /// chronyd's tracking report: root delay / 2 + root dispersion + |correction|.
    Chrony = 1,
    /// The kernel's `maxerror` (`adjtimex`).
    Kernel = 2,
    /// A test build's fixed bound (`HRTS_TEST_BOUND`).
    Test = 3,
    /// The hypervisor's VMClock page overrode the time service's word: its
    /// clock is unknown or unreliable, or a named device cannot be read.
    Vmclock = 4,
}

impl BoundSource {
    pub fn name(self) -> &'static str {
        match self {
            BoundSource::None => "none",
            BoundSource::Chrony => "chrony",
            BoundSource::Kernel => "kernel",
            BoundSource::Test => "test",
            BoundSource::Vmclock => "vmclock",
        }
    }

    pub fn from_code(code: u32) -> BoundSource {
        match code {
            1 => BoundSource::Chrony,
            2 => BoundSource::Kernel,
            3 => BoundSource::Test,
            4 => BoundSource::Vmclock,
            _ => BoundSource::None,
        }
    }
}

/// A leap second the time service announced for the end of the day.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Leap {
    None = 0,
    Insert = 1,
    Delete = 2,
}

impl Leap {
    pub fn name(self) -> &'static str {
        match self {
            Leap::None => "none",
            Leap::Insert => "insert",
            Leap::Delete => "delete",
        }
    }

    pub fn from_code(code: u32) -> Leap {
        match code {
            1 => Leap::Insert,
            2 => Leap::Delete,
            _ => Leap::None,
        }
    }
}

/// Windows publishes no error bound for its clock to user programs: the
/// kernel's word is always "unknown" there.
#[cfg(windows)]
pub fn kernel() -> Learned {
    Learned {
        status: BoundStatus::Unknown,
        source: BoundSource::None,
        bound_ns: 0,
        leap: Leap::None,
    }
}

/// What a source said about the system clock, at the moment it was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Learned {
    pub status: BoundStatus,
    pub source: BoundSource,
    /// The clock's error bound, ns (meaningful while `status.bounded()`).
    pub bound_ns: u64,
    pub leap: Leap,
}

/// The kernel's word: `adjtimex` with no mode bits, which reads and never
/// changes anything (any user may call it). `maxerror` is the kernel's bound,
/// which it grows by 500 ppm a second until the time service updates it;
/// `STA_UNSYNC` says no service keeps the clock.
#[cfg(not(windows))]
pub fn kernel() -> Learned {
    // SAFETY: zeroed is a valid struct timex; modes 0 asks only to read it.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    tx.modes = 0;
    // SAFETY: `tx` is a valid, writable struct timex for the call.
    let state = unsafe { libc::adjtimex(&mut tx) };
    // TIME_OOP: the inserted second is under way, still ambiguous.
    let leap = match state {
        libc::TIME_INS | libc::TIME_OOP => Leap::Insert,
        libc::TIME_DEL => Leap::Delete,
        _ => Leap::None,
    };
    if state < 0 {
        return Learned {
            status: BoundStatus::Unknown,
            source: BoundSource::None,
            bound_ns: 0,
            leap,
        };
    }
    let unsync = tx.status & libc::STA_UNSYNC != 0 || state == libc::TIME_ERROR;
    Learned {
        status: if unsync {
            BoundStatus::Unsynchronized
        } else {
            BoundStatus::Synchronized
        },
        source: BoundSource::Kernel,
        bound_ns: (tx.maxerror.max(0) as u64).saturating_mul(1_000),
        leap,
    }
}

/// Environment variable of test builds: a fixed bound (see [`learn`]).
pub const ENV_TEST_BOUND: &str = "HRTS_TEST_BOUND";

/// A test build's fixed word: `HRTS_TEST_BOUND=STATUS,NS[,LEAP@AT]` (e.g.
/// `synchronized,50000` or `synchronized,50000,insert@1767225600000000000`),
/// so that tests of the interval need no time service; `LEAP@AT` announces
/// a leap second (`insert` or `delete`) that applies at `AT` (epoch ns)
/// instead of the end of the UTC day (readers given the same variable
/// widen around it, see `clock::leap`).
#[cfg(any(test, feature = "testing"))]
pub fn test_override() -> Option<Learned> {
    let v = std::env::var(ENV_TEST_BOUND).ok()?;
    let mut parts = v.split(',');
    let status = parts.next()?.trim();
    let status = BoundStatus::ALL.into_iter().find(|s| s.name() == status)?;
    let bound_ns = parts.next()?.trim().parse().ok()?;
    Some(Learned {
        status,
        source: BoundSource::Test,
        bound_ns,
        leap: parse_test_leap(&v).map_or(Leap::None, |(leap, _)| leap),
    })
}

/// The `LEAP@AT` part of a `HRTS_TEST_BOUND` value, if it has one.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn parse_test_leap(value: &str) -> Option<(Leap, u64)> {
    let (leap, at) = value.split(',').nth(2)?.trim().split_once('@')?;
    let leap = [Leap::Insert, Leap::Delete]
        .into_iter()
        .find(|l| l.name() == leap)?;
    Some((leap, at.trim().parse().ok()?))
}

/// The chronyd command socket this process asks (see [`use_chrony`]).
static CHRONY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Makes [`learn`] ask chronyd at `socket` first (the host daemon; readers
/// never do). Once per process; a later call is ignored.
pub fn use_chrony(socket: std::path::PathBuf) {
    let _ = CHRONY.set(socket);
}

/// chronyd's word: its tracking report's bound (ClockBound's formula),
/// unsynchronized when chronyd says so (leap status "unsynchronised"), and
/// free-running when its last clock update is stale (see [`chrony_is_stale`]):
/// chronyd keeps saying "synchronised" long after its sources went away.
#[cfg(not(windows))]
pub fn chrony(socket: &std::path::Path) -> crate::Result<Learned> {
    use super::chrony::{tracking, Leap as C};
    let t = tracking(socket, std::time::Duration::from_millis(200))?;
    let now = crate::os::realtime_ns();
    Ok(Learned {
        status: match t.leap {
            C::Unsynchronised => BoundStatus::Unsynchronized,
            _ if chrony_is_stale(t.ref_time_ns, t.last_update_interval_s, now) => {
                BoundStatus::FreeRunning
            }
            _ => BoundStatus::Synchronized,
        },
        source: BoundSource::Chrony,
        bound_ns: t.bound_ns(),
        leap: match t.leap {
            C::InsertSecond => Leap::Insert,
            C::DeleteSecond => Leap::Delete,
            _ => Leap::None,
        },
    })
}

/// chronyd's command socket is a Unix datagram socket: Linux only.
#[cfg(windows)]
pub fn chrony(_socket: &std::path::Path) -> crate::Result<Learned> {
    Err(crate::Error::windows_lacks(
        "asking chronyd for the clock's error bound",
    ))
}

/// Whether chronyd's last clock update (at `ref_time_ns`, epoch ns) is older
/// than 8 of its recent update intervals, and at least 1 s: several polls in a
/// row brought nothing, so the clock runs on its own (the bound chronyd
/// reports still grows with the time since that update).
pub fn chrony_is_stale(ref_time_ns: u64, update_interval_s: f64, now_ns: u64) -> bool {
    let limit_ns = (8.0 * update_interval_s.max(0.0) * 1e9).max(1e9);
    ref_time_ns > 0 && now_ns.saturating_sub(ref_time_ns) as f64 > limit_ns
}

/// The word of the first source that answers: a test build's override, else
/// chronyd if this process asks it and it answers, else the kernel.
pub fn learn() -> Learned {
    #[cfg(any(test, feature = "testing"))]
    if let Some(l) = test_override() {
        return l;
    }
    if let Some(socket) = CHRONY.get() {
        if let Ok(l) = chrony(socket) {
            return l;
        }
    }
    kernel()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrony_is_stale_after_eight_update_intervals_and_a_second() {
        let s = 1_000_000_000u64;
        let t = 1_700_000_000 * s;
        assert!(!chrony_is_stale(t, 64.0, t + 500 * s));
        assert!(chrony_is_stale(t, 64.0, t + 513 * s));
        assert!(!chrony_is_stale(t, 0.0625, t + s / 2), "the 1 s floor");
        assert!(chrony_is_stale(t, 0.0625, t + 2 * s));
        assert!(
            !chrony_is_stale(0, 64.0, t),
            "no update yet is chronyd's own status"
        );
        assert!(
            !chrony_is_stale(t + s, 64.0, t),
            "an update ahead of now is fresh"
        );
    }

    #[test]
    fn a_test_word_may_announce_a_leap_at_a_chosen_moment() {
        assert_eq!(
            parse_test_leap("synchronized,50000,insert@123"),
            Some((Leap::Insert, 123))
        );
        assert_eq!(
            parse_test_leap("synchronized,1,delete@7"),
            Some((Leap::Delete, 7))
        );
        assert_eq!(parse_test_leap("synchronized,50000"), None);
        assert_eq!(parse_test_leap("synchronized,50000,smear@1"), None);
    }

    #[test]
    #[cfg(not(windows))]
    fn the_kernel_is_read_without_changing_anything() {
        let a = kernel();
        let b = kernel();
        assert_eq!(a.source, BoundSource::Kernel);
        assert!(matches!(
            a.status,
            BoundStatus::Synchronized | BoundStatus::Unsynchronized
        ));
        // maxerror only grows between updates (or is reset by the service).
        assert_eq!(a.status, b.status);
        for s in BoundStatus::ALL {
            assert_eq!(BoundStatus::from_code(s.code()), Some(s));
        }
    }
}
