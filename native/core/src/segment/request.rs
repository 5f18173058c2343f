//! Which timeline a process opens, decided in one place.
//!
//! Every front end (the `hrts` command, C's default segment and handles, JNI,
//! the daemon) describes what its caller asked in an [`OpenRequest`] (a name
//! or none, the options of a segment it creates, the bound settings) and
//! calls [`OpenRequest::resolve`], which alone reads the environment, fills
//! in the defaults and decides the segment's name, whether the host page is
//! used and where sequence numbers are persisted. The rule it implements is
//! documented once, in docs/configuration.md ("Which segment"):
//!
//! - the name: the request's, else `HRTS_SEGMENT`, else `/hrts-<uid>`;
//! - the host page: only without either name, and unless `HRTS_HOST=off`;
//! - the sequence file: `HRTS_SEQ_FILE` belongs to the segment the
//!   environment names (`HRTS_SEGMENT`, else `/hrts-<uid>`), whoever opens
//!   it and however; any other segment persists to its own
//!   `<state dir>/hrts/<name>.seq`. The file is the segment's, not the
//!   front end's: every process of a segment must use the same one (the
//!   sequence module refuses a second), and two segments sharing one would
//!   hand out each other's numbers after a reboot.
//!
//! The host page's own configuration and a host page reader's per-user
//! segment are derived here too ([`Config::for_host_page`],
//! [`Config::per_user`]), so no other module sets a name or the host page.

use super::config::*;
use crate::clock::calibrate::CalibrationConfig;
use crate::clock::vmclock::{Device, ENV_VMCLOCK};
use crate::error::{Error, ErrorKind, Result};
use crate::storage::Sharing;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a caller asks to open: a segment it names, or the default; the
/// settings of a segment the open creates; the bound settings of this
/// process. Turned into a [`Config`] by [`resolve`](OpenRequest::resolve).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenRequest {
    /// The segment the caller named (`hrts --segment`, `-Dhrts.segment`, a
    /// name given to `hrts_segment_open`); `None`: the environment's choice.
    pub name: Option<String>,
    /// How a segment this open creates is made (unset: the environment's).
    pub options: OpenOptions,
    /// What this process publishes with its error bounds (unset: the
    /// environment's).
    pub bound: BoundOptions,
}

impl OpenRequest {
    /// A request for the segment `name`, with the environment's settings.
    pub fn named(name: impl Into<String>) -> OpenRequest {
        OpenRequest {
            name: Some(name.into()),
            ..OpenRequest::default()
        }
    }

    /// The name of the segment this request opens when it does not use the
    /// host page, read without checking the rest of the environment: `hrts
    /// unlink` must work whatever state the environment is in.
    pub fn segment_name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| Vars::process().default_segment())
    }

    /// The configuration this request opens with, from the process
    /// environment: see the module docs for the rule. A malformed or
    /// out-of-range `HRTS_*` value, or option, is an `InvalidArgument` error
    /// that names it.
    pub fn resolve(&self) -> Result<Config> {
        self.resolve_in(&Vars::process())
    }

    fn resolve_in(&self, vars: &Vars<'_>) -> Result<Config> {
        let env_name = vars.text(ENV_SEGMENT).filter(|s| !s.is_empty());
        let default_name = env_name.clone().unwrap_or_else(|| vars.fallback_name());
        let named = self.name.is_some() || env_name.is_some();
        let name = self.name.clone().unwrap_or_else(|| default_name.clone());
        let mut cfg = Config::named(&name);
        // Checked even when a name makes it moot: a malformed value is refused
        // wherever it is set.
        let host_on = host_enabled(vars.text(ENV_HOST))?;
        if host_on && !named {
            cfg.host = Some(HostConfig::from_values(
                vars.path(ENV_HOST_DIR),
                vars.text(ENV_HOST_USER),
            ));
        }
        cfg.sharing = crate::storage::sharing_of(ENV_GROUP, vars.text(ENV_GROUP).as_deref())?;
        cfg.calendar = calendar_named(vars.text(ENV_CALENDAR_CLOCK).as_deref())?;
        if let Some(ticks) = env_number(vars, ENV_WRAP_THRESHOLD, "ticks", 1..=u64::MAX)? {
            cfg.wrap_threshold = Some(ticks);
        }
        let env_seq_file = vars.path(ENV_SEQ_FILE).filter(|v| !v.is_empty());
        cfg.seq_file = Some(match env_seq_file {
            Some(file) if name == default_name => PathBuf::from(file),
            _ => vars.state_file(&name),
        });
        if let Some(n) = env_number(vars, ENV_SEQ_INTERVAL, "sequence numbers", 1..=u64::MAX)? {
            cfg.seq_interval = n;
        }
        if let Some(v) = vars.text(ENV_MODE).filter(|v| !v.trim().is_empty()) {
            cfg.mode = Mode::from_name(&v).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{ENV_MODE}={v:?} is neither tracking nor frozen"),
                )
            })?;
        }
        if let Some(ms) = env_number(vars, ENV_TIE_INTERVAL_MS, "milliseconds", 1..=60_000)? {
            cfg.tracking.interval = Duration::from_millis(ms);
        }
        if let Some(ppm) = env_number(vars, ENV_MAX_SLEW_PPM, "ppm", 1..=50_000)? {
            cfg.tracking.max_slew_ppm = ppm as u32;
        }
        let max_ms = u64::MAX / 1_000_000;
        if let Some(ms) = env_number(vars, ENV_STEP_THRESHOLD_MS, "milliseconds", 1..=max_ms)? {
            cfg.tracking.step_threshold = Duration::from_millis(ms);
        }
        let max_drift = MAX_BOUND_DRIFT_PPM.into();
        if let Some(ppm) = env_number(vars, ENV_BOUND_DRIFT_PPM, "ppm", 1..=max_drift)? {
            cfg.bound.drift_ppm = ppm as u32;
        }
        if let Some(s) = env_number(vars, ENV_BOUND_VOID_S, "seconds", 1..=MAX_BOUND_VOID_S)? {
            cfg.bound.void_after = Duration::from_secs(s);
        }
        cfg.vmclock = Device::from_value(vars.text(ENV_VMCLOCK).as_deref())?;
        self.options.apply(&mut cfg)?;
        self.bound.apply(&mut cfg)?;
        Ok(cfg)
    }
}

impl Config {
    /// The defaults for a segment called `name`, private to this user, never
    /// the host page, its sequence file the default one for `name` (Rust
    /// callers that pick a segment and its settings themselves; front ends
    /// use [`OpenRequest::resolve`]).
    pub fn named(name: &str) -> Config {
        Config {
            name: name.to_string(),
            sharing: Sharing::Private,
            calendar: kernel_calendar(),
            ready_timeout: Duration::from_secs(5),
            wrap_threshold: None,
            calibration: CalibrationConfig::default(),
            evaluate_reliability: true,
            seq_file: None,
            seq_interval: DEFAULT_INTERVAL,
            mode: Mode::Tracking,
            tracking: TrackingConfig::default(),
            host: None,
            bound: BoundConfig::default(),
            vmclock: Device::default_device(),
        }
    }

    /// This configuration, reading the host page `host` describes when it is
    /// there and valid, else the segment `name` (what the resolver chooses
    /// for an unnamed request; for a test's or a benchmark's own page).
    pub fn with_host_page(mut self, host: HostConfig) -> Config {
        self.host = Some(host);
        self
    }

    /// The configuration of the host page at `path` (for its daemon or a
    /// reader): these settings, the page's path as its name (in messages and
    /// `hrts info`), and no further host page to look for.
    pub(crate) fn for_host_page(&self, path: &Path) -> Config {
        let mut cfg = self.clone();
        cfg.name = path.display().to_string();
        cfg.host = None;
        cfg
    }

    /// A host page reader's per-user segment, which keeps its unique stamps'
    /// and sequence numbers' state: the segment `name` of these settings,
    /// never the host page.
    pub(crate) fn per_user(&self) -> Config {
        let mut cfg = self.clone();
        cfg.host = None;
        cfg
    }
}

/// The environment the resolver reads: the process's, or a test's table.
struct Vars<'a> {
    lookup: &'a dyn Fn(&str) -> Option<OsString>,
    euid: u32,
}

impl Vars<'static> {
    fn process() -> Vars<'static> {
        Vars {
            lookup: &|var| std::env::var_os(var),
            euid: crate::os::euid(),
        }
    }
}

impl Vars<'_> {
    /// A variable that holds text; one that is not UTF-8 counts as unset, as
    /// `std::env::var` has it.
    fn text(&self, var: &str) -> Option<String> {
        (self.lookup)(var).and_then(|v| v.into_string().ok())
    }

    /// A variable that holds a path, whatever its bytes.
    fn path(&self, var: &str) -> Option<OsString> {
        (self.lookup)(var)
    }

    /// `/hrts-<uid>`.
    fn fallback_name(&self) -> String {
        format!("/hrts-{}", self.euid)
    }

    /// `HRTS_SEGMENT`, else `/hrts-<uid>`.
    fn default_segment(&self) -> String {
        self.text(ENV_SEGMENT)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.fallback_name())
    }

    /// `<local application data>\\hrts\\<segment>.seq` (see [`default_seq_file`]).
    #[cfg(windows)]
    fn state_file(&self, segment: &str) -> PathBuf {
        super::config::seq_file_in_local(self.path("LOCALAPPDATA"), self.euid, segment)
    }

    /// `<state dir>/hrts/<segment>.seq` (see [`default_seq_file`]).
    #[cfg(not(windows))]
    fn state_file(&self, segment: &str) -> PathBuf {
        seq_file_in(
            self.path("XDG_STATE_HOME"),
            self.path("HOME"),
            self.euid,
            segment,
        )
    }
}

/// `HRTS_HOST`: on unless it says `off`.
fn host_enabled(value: Option<String>) -> Result<bool> {
    let Some(v) = value else {
        return Ok(true);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "on" | "1" | "yes" => Ok(true),
        "off" | "0" | "no" => Ok(false),
        _ => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{ENV_HOST}={v:?} is neither on (the default: use the host page of `hrts \
                 daemon` when there is one) nor off"
            ),
        )),
    }
}

/// A whole number in `range` from the variable `var`, if it is set; any other
/// value (also an empty one) is refused, naming the variable.
fn env_number(
    vars: &Vars<'_>,
    var: &str,
    unit: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>> {
    let Some(v) = vars.text(var) else {
        return Ok(None);
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .map(Some)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{var}={v:?} is not a whole number of {unit} in {}..={}; fix or unset it",
                    range.start(),
                    range.end()
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const UID: u32 = 4242;

    /// Resolves `req` in an environment of these variables alone.
    fn resolve(req: &OpenRequest, env: &[(&str, &str)]) -> Result<Config> {
        let table: HashMap<String, OsString> = env
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        let lookup = move |var: &str| table.get(var).cloned();
        req.resolve_in(&Vars {
            lookup: &lookup,
            euid: UID,
        })
    }

    fn ok(req: &OpenRequest, env: &[(&str, &str)]) -> Config {
        resolve(req, env).unwrap_or_else(|e| panic!("{env:?}: {}", e.message()))
    }

    #[cfg(not(windows))]
    const STATE: (&str, &str) = ("XDG_STATE_HOME", "/state");
    // Windows keeps state in the local application data.
    #[cfg(windows)]
    const STATE: (&str, &str) = ("LOCALAPPDATA", "/state");

    #[test]
    fn the_name_is_the_requests_else_hrts_segment_else_the_users() {
        let default = OpenRequest::default();
        assert_eq!(ok(&default, &[]).name, "/hrts-4242");
        assert_eq!(ok(&default, &[(ENV_SEGMENT, "/env")]).name, "/env");
        // An empty HRTS_SEGMENT is no name.
        assert_eq!(ok(&default, &[(ENV_SEGMENT, "")]).name, "/hrts-4242");
        let named = OpenRequest::named("/mine");
        assert_eq!(ok(&named, &[]).name, "/mine");
        assert_eq!(ok(&named, &[(ENV_SEGMENT, "/env")]).name, "/mine");
    }

    #[test]
    fn only_an_unnamed_request_uses_the_host_page() {
        let host = |req: &OpenRequest, env: &[(&str, &str)]| ok(req, env).host;
        let default = OpenRequest::default();
        assert_eq!(
            host(&default, &[(ENV_HOST_DIR, "/h"), (ENV_HOST_USER, "svc")]),
            Some(HostConfig {
                dir: "/h".into(),
                user: "svc".into()
            })
        );
        assert_eq!(
            host(&default, &[]),
            Some(HostConfig::from_values(None, None))
        );
        assert_eq!(host(&default, &[(ENV_HOST, "off")]), None);
        assert_eq!(host(&default, &[(ENV_SEGMENT, "/env")]), None);
        // A name never uses the host page, even the default segment's own.
        assert_eq!(host(&OpenRequest::named("/hrts-4242"), &[]), None);
        assert_eq!(
            host(&OpenRequest::named("/mine"), &[(ENV_HOST, "on")]),
            None
        );
        // A malformed HRTS_HOST is refused also where a name makes it moot.
        for req in [default, OpenRequest::named("/mine")] {
            let e = resolve(&req, &[(ENV_HOST, "maybe")]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(
                e.message().contains("HRTS_HOST=\"maybe\""),
                "{}",
                e.message()
            );
        }
    }

    #[test]
    fn hrts_seq_file_belongs_to_the_segment_the_environment_names() {
        let seq = |req: &OpenRequest, env: &[(&str, &str)]| ok(req, env).seq_file.unwrap();
        let file = (ENV_SEQ_FILE, "/env.seq");
        let own = |name: &str| PathBuf::from(format!("/state/hrts/{name}.seq"));
        let default = OpenRequest::default();
        assert_eq!(seq(&default, &[file, STATE]), Path::new("/env.seq"));
        assert_eq!(seq(&default, &[STATE]), own("hrts-4242"));
        // The default segment named explicitly is the same segment: same file,
        // whichever front end names it.
        let same = OpenRequest::named("/hrts-4242");
        assert_eq!(seq(&same, &[file, STATE]), Path::new("/env.seq"));
        let env_named = [file, STATE, (ENV_SEGMENT, "/env")];
        assert_eq!(seq(&default, &env_named), Path::new("/env.seq"));
        assert_eq!(
            seq(&OpenRequest::named("/env"), &env_named),
            Path::new("/env.seq")
        );
        // Any other segment persists to its own file.
        assert_eq!(seq(&OpenRequest::named("/mine"), &env_named), own("mine"));
        assert_eq!(
            seq(&OpenRequest::named("/mine"), &[file, STATE]),
            own("mine")
        );
        assert_eq!(seq(&same, &env_named), own("hrts-4242"));
        // The state directory falls back as default_seq_file's does.
        #[cfg(not(windows))]
        {
            assert_eq!(
                seq(&OpenRequest::named("/mine"), &[("HOME", "/home/u")]),
                Path::new("/home/u/.local/state/hrts/mine.seq")
            );
            assert_eq!(
                seq(&OpenRequest::named("/mine"), &[]),
                Path::new("/var/tmp/hrts-4242/hrts/mine.seq")
            );
        }
        #[cfg(windows)]
        assert_eq!(
            seq(&OpenRequest::named("/mine"), &[("HOME", "/home/u")]),
            std::env::temp_dir().join("hrts-4242/hrts/mine.seq")
        );
    }

    #[test]
    fn the_segment_name_alone_ignores_the_rest_of_the_environment() {
        assert_eq!(OpenRequest::named("/x").segment_name(), "/x");
        // The process environment's: whatever it holds, it is a name.
        let name = OpenRequest::default().segment_name();
        assert!(name.starts_with('/'), "{name}");
    }

    #[test]
    fn every_setting_comes_from_its_variable_and_the_request_wins() {
        let env = [
            (ENV_MODE, "frozen"),
            (ENV_TIE_INTERVAL_MS, "250"),
            (ENV_MAX_SLEW_PPM, "100"),
            (ENV_STEP_THRESHOLD_MS, "7"),
            (ENV_WRAP_THRESHOLD, "1000000"),
            (ENV_SEQ_INTERVAL, "3"),
            (ENV_GROUP, "4243"),
            (ENV_BOUND_DRIFT_PPM, "20"),
            (ENV_BOUND_VOID_S, "5"),
        ];
        let cfg = ok(&OpenRequest::default(), &env);
        assert_eq!(cfg.mode, Mode::Frozen);
        assert_eq!(
            cfg.tracking,
            TrackingConfig {
                interval: Duration::from_millis(250),
                max_slew_ppm: 100,
                step_threshold: Duration::from_millis(7),
            }
        );
        assert_eq!(cfg.wrap_threshold, Some(1_000_000));
        assert_eq!(cfg.seq_interval, 3);
        assert_eq!(cfg.sharing, Sharing::Group(4243));
        assert_eq!(
            cfg.bound,
            BoundConfig {
                drift_ppm: 20,
                void_after: Duration::from_secs(5)
            }
        );

        let req = OpenRequest {
            name: None,
            options: OpenOptions::from_raw(Mode::Tracking.code().into(), 500, 0, 0).unwrap(),
            bound: BoundOptions::from_raw(0, 30).unwrap(),
        };
        let cfg = ok(&req, &env);
        assert_eq!(cfg.mode, Mode::Tracking);
        assert_eq!(cfg.tracking.interval, Duration::from_millis(500));
        assert_eq!(cfg.tracking.max_slew_ppm, 100);
        assert_eq!(
            cfg.bound,
            BoundConfig {
                drift_ppm: 20,
                void_after: Duration::from_secs(30)
            }
        );

        let cfg = ok(&OpenRequest::default(), &[]);
        assert_eq!(cfg.bound, BoundConfig::default());
        assert_eq!(
            (cfg.bound.drift_ppb(), cfg.bound.void_ns()),
            (50_000, 60 * 1_000_000_000)
        );
    }

    #[test]
    fn malformed_variables_are_refused_by_name() {
        for (var, value) in [
            (ENV_BOUND_DRIFT_PPM, "abc"),
            (ENV_BOUND_DRIFT_PPM, "0"),
            (ENV_BOUND_DRIFT_PPM, "1000001"),
            (ENV_BOUND_DRIFT_PPM, ""),
            (ENV_BOUND_VOID_S, "abc"),
            (ENV_BOUND_VOID_S, "0"),
            (ENV_BOUND_VOID_S, "604801"),
            (ENV_BOUND_VOID_S, "-1"),
            (ENV_WRAP_THRESHOLD, "0"),
            (ENV_SEQ_INTERVAL, "x"),
            (ENV_MODE, "slewing"),
            (ENV_TIE_INTERVAL_MS, "60001"),
            (ENV_MAX_SLEW_PPM, "0"),
            (ENV_STEP_THRESHOLD_MS, "0"),
            (ENV_CALENDAR_CLOCK, "tsc"),
            (ENV_VMCLOCK, "vmclock0"),
        ] {
            for req in [OpenRequest::default(), OpenRequest::named("/mine")] {
                let e = resolve(&req, &[(var, value)]).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{var}={value}");
                assert!(
                    e.message().contains(&format!("{var}={value:?}")),
                    "{var}={value}: {}",
                    e.message()
                );
            }
        }
    }

    #[test]
    fn bound_options_are_checked_and_applied() {
        assert_eq!(
            BoundOptions::from_raw(0, 0).unwrap(),
            BoundOptions::default()
        );
        assert_eq!(
            BoundOptions::from_raw(7, 9).unwrap(),
            BoundOptions {
                drift_ppm: Some(7),
                void_after: Some(Duration::from_secs(9))
            }
        );
        for (raw, message) in [
            ((1 << 40, 0), "bound drift 1099511627776 ppm is outside"),
            (
                (1_000_001, 0),
                "bound drift 1000001 ppm is outside 1 ..= 1000000 ppm",
            ),
            (
                (0, 604_801),
                "bound void-after 604801s is outside 1 s ..= 604800 s",
            ),
        ] {
            let e = BoundOptions::from_raw(raw.0, raw.1).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains(message), "{raw:?}: {}", e.message());
        }
        // Set directly out of range: refused by apply, nothing applied.
        let mut cfg = Config::named("/b");
        let bad = BoundOptions {
            drift_ppm: Some(3),
            void_after: Some(Duration::ZERO),
        };
        assert!(bad.apply(&mut cfg).is_err());
        assert_eq!(cfg.bound, BoundConfig::default());
    }

    #[test]
    fn hrts_vmclock_names_the_device_or_turns_it_off() {
        let device = |env: &[(&str, &str)]| ok(&OpenRequest::default(), env).vmclock;
        assert_eq!(device(&[]), Device::default_device());
        assert_eq!(device(&[(ENV_VMCLOCK, "off")]), None);
        let named = device(&[(ENV_VMCLOCK, "/tmp/page")]).unwrap();
        assert_eq!((named.path, named.named), ("/tmp/page".into(), true));
    }

    #[test]
    fn the_host_page_and_the_per_user_segment_derive_from_one_config() {
        let cfg = ok(
            &OpenRequest::default(),
            &[STATE, (ENV_TIE_INTERVAL_MS, "9")],
        );
        assert!(cfg.host.is_some());
        let page = cfg.for_host_page(Path::new("/run/hrts/time"));
        assert_eq!((page.name.as_str(), &page.host), ("/run/hrts/time", &None));
        assert_eq!(page.tracking, cfg.tracking);
        let user = cfg.per_user();
        assert_eq!((user.name.as_str(), &user.host), ("/hrts-4242", &None));
        assert_eq!(user.seq_file_path(), cfg.seq_file_path());
        assert_eq!(Config::named("/p").seq_file_path(), default_seq_file("/p"));
    }
}
