//! What opening a segment needs, once resolved: name, sharing, calendar source,
//! the bounds on waiting, the settings of a segment this process creates and
//! of the bounds it publishes. [`super::request`] is where a [`Config`] is
//! made from what a caller asks and the environment; this module holds the
//! types and their checks.

use crate::clock::calibrate::CalibrationConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::storage::Sharing;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Environment variable naming the segment (e.g. `/hrts-myapp`).
pub const ENV_SEGMENT: &str = "HRTS_SEGMENT";
/// Environment variable naming a group (name or numeric gid) to share the segment with.
pub const ENV_GROUP: &str = "HRTS_GROUP";
/// Environment variable setting the wrap threshold, in counter ticks.
pub const ENV_WRAP_THRESHOLD: &str = "HRTS_WRAP_THRESHOLD";

/// Environment variable turning the host page off (`off`) or on (`on`, the
/// default): with it on and no explicit segment name, a process uses the host
/// page `hrts daemon` keeps, if there is a valid one.
pub const ENV_HOST: &str = "HRTS_HOST";
/// Environment variable naming the host page's directory (default `/run/hrts`).
pub const ENV_HOST_DIR: &str = "HRTS_HOST_DIR";
/// Environment variable naming the service user whose host page is trusted
/// besides root's (a name or a uid; default `hrts`).
pub const ENV_HOST_USER: &str = "HRTS_HOST_USER";

/// Where to look for the host page, and whose page to trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    pub dir: PathBuf,
    pub user: String,
}

impl HostConfig {
    /// `HRTS_HOST_DIR` and `HRTS_HOST_USER` of the process environment, or
    /// their defaults.
    pub fn from_env() -> HostConfig {
        HostConfig::from_values(
            std::env::var_os(ENV_HOST_DIR),
            std::env::var(ENV_HOST_USER).ok(),
        )
    }

    /// The values of `HRTS_HOST_DIR` and `HRTS_HOST_USER` (unset or empty:
    /// the default).
    pub(crate) fn from_values(dir: Option<OsString>, user: Option<String>) -> HostConfig {
        HostConfig {
            dir: dir
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(crate::storage::host::DEFAULT_DIR)),
            user: user
                .filter(|u| !u.trim().is_empty())
                .unwrap_or_else(|| crate::storage::host::DEFAULT_USER.into()),
        }
    }
}

/// The calendar clock read once when a base is set: nanoseconds since the Unix epoch.
/// Injectable so tests can make the calendar jump without touching the machine's clock.
pub type Calendar = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Environment variable choosing how ties and pairings read `CLOCK_REALTIME`:
/// `kernel` (the default: the vDSO or the system call, which no `LD_PRELOAD`
/// library can shift) or `libc` (libc's `clock_gettime`, so that a test's
/// libfaketime or shifted clock reaches the shared line).
pub const ENV_CALENDAR_CLOCK: &str = "HRTS_CALENDAR_CLOCK";

/// The calendar a value of `HRTS_CALENDAR_CLOCK` names (see
/// [`ENV_CALENDAR_CLOCK`]); `None`: the variable is not set.
pub(crate) fn calendar_named(value: Option<&str>) -> Result<Calendar> {
    match value.map(str::trim) {
        None | Some("" | "kernel") => Ok(kernel_calendar()),
        Some("libc") => Ok(Arc::new(crate::os::realtime_ns)),
        Some(_) => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{ENV_CALENDAR_CLOCK}={:?} is neither kernel (the default) nor libc; unset \
                 it unless a test needs its LD_PRELOAD clock to reach the shared line",
                value.unwrap_or_default()
            ),
        )),
    }
}

pub(crate) fn kernel_calendar() -> Calendar {
    Arc::new(crate::clock::kernel::realtime_ns)
}

/// Environment variable naming the persist file.
pub const ENV_SEQ_FILE: &str = "HRTS_SEQ_FILE";
/// Environment variable setting the persist interval N.
pub const ENV_SEQ_INTERVAL: &str = "HRTS_SEQ_INTERVAL";
/// Sequence numbers between two writes of the persist file, by default.
pub const DEFAULT_INTERVAL: u64 = 1000;

/// Environment variable choosing a new segment's mode: `tracking` or `frozen`.
pub const ENV_MODE: &str = "HRTS_MODE";
/// Environment variable setting a new segment's tie interval, in milliseconds.
pub const ENV_TIE_INTERVAL_MS: &str = "HRTS_TIE_INTERVAL_MS";
/// Environment variable setting a new segment's largest slew, in ppm.
pub const ENV_MAX_SLEW_PPM: &str = "HRTS_MAX_SLEW_PPM";
/// Environment variable setting a new segment's step threshold, in milliseconds.
pub const ENV_STEP_THRESHOLD_MS: &str = "HRTS_STEP_THRESHOLD_MS";

/// Environment variable: the clock's largest drift between two learnings of
/// its error bound, ppm (default 50, ClockBound's recommendation); the
/// writer's value counts.
pub const ENV_BOUND_DRIFT_PPM: &str = "HRTS_BOUND_DRIFT_PPM";
/// Environment variable: seconds after which a bound counts as void (default
/// 60); the writer's value counts.
pub const ENV_BOUND_VOID_S: &str = "HRTS_BOUND_VOID_S";

/// How a segment's timeline relates to the calendar clock after its creation.
/// Chosen by the creator; every process of the segment uses the creator's.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The timeline follows `CLOCK_REALTIME`: every tie interval, the first
    /// stamp past it pairs the counter with the calendar again and sets a slope,
    /// shared by all processes, that slews the timeline toward it (never
    /// backward; forward steps beyond the step threshold are followed).
    Tracking = 1,
    /// IBMTS semantics: the calendar is read when the base is made, and later
    /// changes of the system clock do not move the timeline; when the last
    /// process has detached, the next one to attach pairs the base anew (a new
    /// generation, same calibration).
    Frozen = 2,
}

impl Mode {
    /// Every mode, in the order of their codes.
    pub const ALL: [Mode; 2] = [Mode::Tracking, Mode::Frozen];

    /// The stable lower-case name, as `HRTS_MODE` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tracking => "tracking",
            Mode::Frozen => "frozen",
        }
    }

    /// The mode with this name (ASCII case and surrounding white space ignored).
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The mode's code: the value stored in the segment, and the one every
    /// front end uses (C `HRTS_MODE_*`, Java `io.hrts.Mode`). 0 is never a code.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The mode with this code, or `None` for a value no mode has.
    pub fn from_code(code: u32) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.code() == code)
    }
}

/// The largest slew [`TrackingConfig::check`] accepts, ppm.
const MAX_SLEW_PPM: u32 = 50_000;

/// How a tracking segment follows the calendar (only the creator's counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackingConfig {
    /// Time between ties (default 1 s; 1 ms ..= 60 s).
    pub interval: Duration,
    /// Largest slew, and largest learned frequency error, in ppm of the
    /// calibrated rate (default 500; 1 ..= 50 000).
    pub max_slew_ppm: u32,
    /// A calendar ahead of the timeline by more than this is followed by a
    /// step forward with a new generation (default 100 ms; at least 1 ms).
    pub step_threshold: Duration,
}

impl Default for TrackingConfig {
    fn default() -> Self {
        TrackingConfig {
            interval: Duration::from_secs(1),
            max_slew_ppm: 500,
            step_threshold: Duration::from_millis(100),
        }
    }
}

impl TrackingConfig {
    /// Refuses values outside the documented ranges.
    pub fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::new(ErrorKind::InvalidArgument, what));
        if !(Duration::from_millis(1)..=Duration::from_secs(60)).contains(&self.interval) {
            return bad(format!(
                "tie interval {:?} is outside 1 ms ..= 60 s",
                self.interval
            ));
        }
        if !(1..=MAX_SLEW_PPM).contains(&self.max_slew_ppm) {
            return bad(format!(
                "largest slew {} ppm is outside 1 ..= {MAX_SLEW_PPM} ppm",
                self.max_slew_ppm
            ));
        }
        if self.step_threshold < Duration::from_millis(1) {
            return bad(format!(
                "step threshold {:?} is below 1 ms",
                self.step_threshold
            ));
        }
        Ok(())
    }
}

/// How an open creates a segment that does not exist yet: the mode and the
/// tracking settings, each `None` to keep what the [`Config`] already holds
/// (the environment's value, else the default). Every front end converts its
/// own form into this (C `hrts_open_options`, Java system properties) and
/// puts it in its [`OpenRequest`](super::request::OpenRequest). An existing segment keeps its
/// creator's mode and settings; the options are checked all the same, so a
/// bad one is refused rather than ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    pub mode: Option<Mode>,
    /// Time between ties.
    pub tie_interval: Option<Duration>,
    /// Largest slew and learned frequency error, ppm.
    pub max_slew_ppm: Option<u32>,
    /// A calendar ahead of the timeline by more than this is followed by a step.
    pub step_threshold: Option<Duration>,
}

impl OpenOptions {
    /// The options of raw numbers, as C and Java pass them: a mode code
    /// ([`Mode::code`]), milliseconds and ppm, each 0 for "not set".
    pub fn from_raw(
        mode_code: u64,
        tie_interval_ms: u64,
        max_slew_ppm: u64,
        step_threshold_ms: u64,
    ) -> Result<OpenOptions> {
        let bad = |what: String| Error::new(ErrorKind::InvalidArgument, what);
        let set = |v: u64| (v != 0).then_some(v);
        let mode = match set(mode_code) {
            None => None,
            Some(code) => Some(
                u32::try_from(code)
                    .ok()
                    .and_then(Mode::from_code)
                    .ok_or_else(|| {
                        bad(format!(
                            "mode code {code} is neither {} (tracking) nor {} (frozen); 0 takes \
                             the default",
                            Mode::Tracking.code(),
                            Mode::Frozen.code()
                        ))
                    })?,
            ),
        };
        let max_slew_ppm = match set(max_slew_ppm) {
            None => None,
            Some(ppm) => Some(u32::try_from(ppm).map_err(|_| {
                bad(format!(
                    "largest slew {ppm} ppm is outside 1 ..= {MAX_SLEW_PPM} ppm"
                ))
            })?),
        };
        let opts = OpenOptions {
            mode,
            tie_interval: set(tie_interval_ms).map(Duration::from_millis),
            max_slew_ppm,
            step_threshold: set(step_threshold_ms).map(Duration::from_millis),
        };
        opts.check()?;
        Ok(opts)
    }

    /// Refuses a set value outside its documented range (whatever the other
    /// settings are: every range is fixed), so that a front end can tell its
    /// caller's mistake from the environment's before it resolves a request.
    pub fn check(&self) -> Result<()> {
        let mut tracking = TrackingConfig::default();
        self.set_on(&mut tracking);
        tracking.check()
    }

    fn set_on(&self, tracking: &mut TrackingConfig) {
        if let Some(interval) = self.tie_interval {
            tracking.interval = interval;
        }
        if let Some(ppm) = self.max_slew_ppm {
            tracking.max_slew_ppm = ppm;
        }
        if let Some(threshold) = self.step_threshold {
            tracking.step_threshold = threshold;
        }
    }

    /// Sets the options that are set on `cfg` and checks the tracking settings
    /// that result ([`TrackingConfig::check`]); `cfg` is unchanged on error.
    pub fn apply(&self, cfg: &mut Config) -> Result<()> {
        let mut tracking = cfg.tracking;
        self.set_on(&mut tracking);
        tracking.check()?;
        cfg.tracking = tracking;
        if let Some(mode) = self.mode {
            cfg.mode = mode;
        }
        Ok(())
    }
}

/// The largest drift [`BoundConfig::check`] accepts, ppm: a rate error of
/// 100 % is no clock.
pub const MAX_BOUND_DRIFT_PPM: u32 = 1_000_000;
/// The longest void-after [`BoundConfig::check`] accepts, s (a week).
pub const MAX_BOUND_VOID_S: u64 = 7 * 86_400;

/// What this process publishes with the error bound it learns when it ties
/// (its writer settings: readers take the values the page holds, so the
/// writer's count, and a daemon's for the host page).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundConfig {
    /// The clock's largest drift between two learnings, ppm (default 50;
    /// 1 ..= 1 000 000): how fast an interval grows after its word.
    pub drift_ppm: u32,
    /// Age after which a word says nothing and bounded stamps fail (default
    /// 60 s; 1 s ..= 7 days).
    pub void_after: Duration,
}

impl Default for BoundConfig {
    fn default() -> Self {
        BoundConfig {
            drift_ppm: 50,
            void_after: Duration::from_secs(60),
        }
    }
}

impl BoundConfig {
    /// Refuses values outside the documented ranges.
    pub fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::new(ErrorKind::InvalidArgument, what));
        if !(1..=MAX_BOUND_DRIFT_PPM).contains(&self.drift_ppm) {
            return bad(format!(
                "bound drift {} ppm is outside 1 ..= {MAX_BOUND_DRIFT_PPM} ppm",
                self.drift_ppm
            ));
        }
        if !(Duration::from_secs(1)..=Duration::from_secs(MAX_BOUND_VOID_S))
            .contains(&self.void_after)
        {
            return bad(format!(
                "bound void-after {:?} is outside 1 s ..= {MAX_BOUND_VOID_S} s",
                self.void_after
            ));
        }
        Ok(())
    }

    /// The drift as the page stores it, ppb.
    pub(crate) fn drift_ppb(&self) -> u64 {
        u64::from(self.drift_ppm) * 1_000
    }

    /// The void-after as the page stores it, ns.
    pub(crate) fn void_ns(&self) -> u64 {
        u64::try_from(self.void_after.as_nanos()).unwrap_or(u64::MAX)
    }
}

/// The bound settings a caller asks for, each `None` to keep what the
/// [`Config`] already holds (`HRTS_BOUND_DRIFT_PPM`, `HRTS_BOUND_VOID_S`,
/// else the default): C's `hrts_open_options` (version 2) and Java's system
/// properties become this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoundOptions {
    /// The clock's largest drift between two learnings, ppm.
    pub drift_ppm: Option<u32>,
    /// Age after which a bound is void.
    pub void_after: Option<Duration>,
}

impl BoundOptions {
    /// The options of raw numbers, as C and Java pass them: ppm and seconds,
    /// each 0 for "not set". Values out of range are refused.
    pub fn from_raw(drift_ppm: u64, void_s: u64) -> Result<BoundOptions> {
        let set = |v: u64| (v != 0).then_some(v);
        let drift_ppm = match set(drift_ppm) {
            None => None,
            Some(ppm) => Some(u32::try_from(ppm).map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("bound drift {ppm} ppm is outside 1 ..= {MAX_BOUND_DRIFT_PPM} ppm"),
                )
            })?),
        };
        let opts = BoundOptions {
            drift_ppm,
            void_after: set(void_s).map(Duration::from_secs),
        };
        opts.check()?;
        Ok(opts)
    }

    /// Refuses a set value outside its range.
    pub fn check(&self) -> Result<()> {
        self.set_on(BoundConfig::default()).check()
    }

    fn set_on(&self, mut bound: BoundConfig) -> BoundConfig {
        if let Some(ppm) = self.drift_ppm {
            bound.drift_ppm = ppm;
        }
        if let Some(void) = self.void_after {
            bound.void_after = void;
        }
        bound
    }

    /// Sets the options that are set on `cfg`, checked; `cfg` is unchanged
    /// on error.
    pub fn apply(&self, cfg: &mut Config) -> Result<()> {
        let bound = self.set_on(cfg.bound);
        bound.check()?;
        cfg.bound = bound;
        Ok(())
    }
}

/// `$XDG_STATE_HOME/hrts/<segment>.seq`, else `~/.local/state/hrts/<segment>.seq`,
/// else (no HOME, as for many services) `/var/tmp/hrts-<euid>/hrts/<segment>.seq`:
/// a place that survives reboots, unlike /dev/shm and often /tmp. `/var/tmp` is
/// writable by everyone, so another user may have created `hrts-<euid>` first;
/// whatever the path, the sequence module refuses a directory that is not this
/// user's alone (see `stamps::sequence`).
///
/// On Windows: `%LOCALAPPDATA%\hrts\<segment>.seq` (the user's own local
/// application data, which only that user can write), else the temporary
/// directory's `hrts-<rid>`.
#[cfg(windows)]
pub fn default_seq_file(segment_name: &str) -> PathBuf {
    seq_file_in_local(
        std::env::var_os("LOCALAPPDATA"),
        crate::os::euid(),
        segment_name,
    )
}

/// Windows: `<local application data>\hrts\<segment>.seq`, else the
/// temporary directory's `hrts-<rid>\hrts\<segment>.seq`.
#[cfg(windows)]
pub(crate) fn seq_file_in_local(
    local_app_data: Option<std::ffi::OsString>,
    euid: u32,
    segment_name: &str,
) -> PathBuf {
    local_app_data
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("hrts-{euid}")))
        .join("hrts")
        .join(format!("{}.seq", segment_name.trim_start_matches('/')))
}

#[cfg(not(windows))]
pub fn default_seq_file(segment_name: &str) -> PathBuf {
    let euid = crate::os::euid();
    seq_file_in(
        std::env::var_os("XDG_STATE_HOME"),
        std::env::var_os("HOME"),
        euid,
        segment_name,
    )
}

#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn seq_file_in(
    xdg_state_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    euid: u32,
    segment_name: &str,
) -> PathBuf {
    let state = xdg_state_home
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
        .unwrap_or_else(|| PathBuf::from(format!("/var/tmp/hrts-{euid}")));
    state
        .join("hrts")
        .join(format!("{}.seq", segment_name.trim_start_matches('/')))
}

#[derive(Clone)]
pub struct Config {
    pub name: String,
    pub sharing: Sharing,
    pub calendar: Calendar,
    /// How long an attaching process waits for the creator to publish `ready`
    /// before it gives up (creator alive) or takes over (creator gone).
    pub ready_timeout: Duration,
    /// Ticks after which the base is moved forward; `None` picks half of the
    /// largest delta the fast arithmetic handles. Only the creator's value counts.
    pub wrap_threshold: Option<u64>,
    pub calibration: CalibrationConfig,
    /// Run the cross-CPU reliability evaluation before trusting a hardware counter.
    pub evaluate_reliability: bool,
    /// Where sequence numbers are persisted; `None`: `$XDG_STATE_HOME/hrts/<segment>.seq`,
    /// else `~/.local/state/hrts/<segment>.seq`, else
    /// `/var/tmp/hrts-<euid>/hrts/<segment>.seq`. Every
    /// process of a segment must use the same file; its directory must be this
    /// user's and writable by nobody else.
    pub seq_file: Option<PathBuf>,
    /// Sequence numbers a process reserves in the file at a time (one file write
    /// per block).
    pub seq_interval: u64,
    /// The mode of a segment this process creates (default tracking).
    pub mode: Mode,
    /// How a tracking segment this process creates follows the calendar.
    pub tracking: TrackingConfig,
    /// The host page to use instead of the segment `name` when it exists and
    /// is valid; `None`: the segment `name` (a named segment, or `HRTS_HOST=off`).
    pub host: Option<HostConfig>,
    /// What this process publishes with the error bounds it learns.
    pub bound: BoundConfig,
    /// The hypervisor's VMClock device this process reads at its ties
    /// (`HRTS_VMCLOCK`; default `/dev/vmclock0` where there is one).
    pub vmclock: Option<crate::clock::vmclock::Device>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.name)
            .field("sharing", &self.sharing)
            .field("ready_timeout", &self.ready_timeout)
            .field("wrap_threshold", &self.wrap_threshold)
            .field("mode", &self.mode)
            .field("tracking", &self.tracking)
            .field("host", &self.host)
            .field("bound", &self.bound)
            .field("vmclock", &self.vmclock)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Where this segment's sequence numbers are persisted: `seq_file`, else
    /// the default file for its name.
    pub(crate) fn seq_file_path(&self) -> PathBuf {
        self.seq_file
            .clone()
            .unwrap_or_else(|| default_seq_file(&self.name))
    }
}

/// `/hrts-<uid>`: one segment per user unless configured otherwise.
pub fn default_name() -> String {
    format!("/hrts-{}", crate::os::euid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn modes_round_trip_and_tracking_ranges_are_enforced() {
        for m in [Mode::Tracking, Mode::Frozen] {
            assert_eq!(Mode::from_name(m.name()), Some(m));
            assert_eq!(Mode::from_code(m.code()), Some(m));
        }
        assert_eq!((Mode::Tracking.code(), Mode::Frozen.code()), (1, 2));
        assert_eq!(Mode::from_name(" FROZEN\n"), Some(Mode::Frozen));
        assert_eq!(Mode::from_name("slewing"), None);
        assert_eq!(Mode::from_code(0), None);
        assert_eq!(Mode::from_code(3), None);
        assert!(TrackingConfig::default().check().is_ok());
        for bad in [
            TrackingConfig {
                interval: Duration::ZERO,
                ..TrackingConfig::default()
            },
            TrackingConfig {
                max_slew_ppm: 60_000,
                ..TrackingConfig::default()
            },
            TrackingConfig {
                step_threshold: Duration::from_micros(10),
                ..TrackingConfig::default()
            },
        ] {
            assert_eq!(bad.check().unwrap_err().kind(), ErrorKind::InvalidArgument);
        }
    }

    #[test]
    fn open_options_override_what_is_set_and_are_checked() {
        let mut env = Config::named("/hrts-options");
        env.mode = Mode::Frozen;
        env.tracking.max_slew_ppm = 42;
        let mut same = env.clone();
        OpenOptions::from_raw(0, 0, 0, 0)
            .unwrap()
            .apply(&mut same)
            .unwrap();
        assert_eq!((same.mode, same.tracking), (env.mode, env.tracking));

        let mut set = env.clone();
        let opts = OpenOptions::from_raw(Mode::Tracking.code().into(), 250, 100, 7).unwrap();
        assert_eq!(
            opts,
            OpenOptions {
                mode: Some(Mode::Tracking),
                tie_interval: Some(Duration::from_millis(250)),
                max_slew_ppm: Some(100),
                step_threshold: Some(Duration::from_millis(7)),
            }
        );
        opts.apply(&mut set).unwrap();
        assert_eq!(set.mode, Mode::Tracking);
        assert_eq!(
            set.tracking,
            TrackingConfig {
                interval: Duration::from_millis(250),
                max_slew_ppm: 100,
                step_threshold: Duration::from_millis(7),
            }
        );
        assert_eq!(set.name, "/hrts-options");

        for (raw, message) in [
            (
                [3, 0, 0, 0],
                "mode code 3 is neither 1 (tracking) nor 2 (frozen)",
            ),
            ([1 << 40, 0, 0, 0], "mode code 1099511627776 is neither"),
            (
                [0, 0, 1 << 40, 0],
                "largest slew 1099511627776 ppm is outside",
            ),
        ] {
            let e = OpenOptions::from_raw(raw[0], raw[1], raw[2], raw[3]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains(message), "{raw:?}: {}", e.message());
        }
        for (raw, message) in [
            ([2, 60_001, 0, 0], "outside 1 ms ..= 60 s"),
            ([2, 0, 50_001, 0], "outside 1 ..= 50000 ppm"),
        ] {
            // Refused as raw numbers already, whatever a Config holds.
            let e = OpenOptions::from_raw(raw[0], raw[1], raw[2], raw[3]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains(message), "{raw:?}: {}", e.message());
        }
        // Set directly out of range: refused by apply, nothing applied, not
        // even the valid mode.
        let opts = OpenOptions {
            mode: Some(Mode::Frozen),
            tie_interval: Some(Duration::from_secs(61)),
            ..OpenOptions::default()
        };
        assert!(opts.check().is_err());
        let mut cfg = env.clone();
        cfg.mode = Mode::Tracking;
        let e = opts.apply(&mut cfg).unwrap_err();
        assert!(
            e.message().contains("outside 1 ms ..= 60 s"),
            "{}",
            e.message()
        );
        assert_eq!((cfg.mode, cfg.tracking), (Mode::Tracking, env.tracking));
    }

    #[test]
    fn default_location_survives_reboots() {
        let p = default_seq_file("/hrts-1000");
        assert!(p.ends_with("hrts/hrts-1000.seq"), "{}", p.display());
        assert!(!p.starts_with("/dev/shm"));
    }

    #[test]
    fn the_state_directory_falls_back_from_xdg_to_home_to_var_tmp() {
        let at = |xdg: Option<&str>, home: Option<&str>| {
            seq_file_in(xdg.map(Into::into), home.map(Into::into), 42, "/hrts-x")
        };
        assert_eq!(at(Some("/s"), Some("/h")), Path::new("/s/hrts/hrts-x.seq"));
        assert_eq!(
            at(Some(""), Some("/h")),
            Path::new("/h/.local/state/hrts/hrts-x.seq")
        );
        assert_eq!(
            at(None, None),
            Path::new("/var/tmp/hrts-42/hrts/hrts-x.seq")
        );
        assert_eq!(
            at(None, Some("")),
            Path::new("/var/tmp/hrts-42/hrts/hrts-x.seq")
        );
    }
}
