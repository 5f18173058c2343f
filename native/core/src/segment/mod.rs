//! The shared segment: one page of named shared memory holding the counter
//! source, its calibration and the base, created once per host and user and
//! attached to by every later process.
//!
//! Opening follows one rule: create exclusively; whoever loses attaches and waits,
//! bounded, for `ready`. A creator that died before `ready` is replaced by the
//! first waiter that notices. Everything an attacher maps is validated first, so
//! a foreign, truncated, other-version or corrupt object is an error, never a
//! crash.

pub(crate) mod config;
pub(crate) mod info;
mod init;
pub(crate) mod layout;
mod presence;
pub(crate) mod shm;
pub(crate) mod timeline;
pub(crate) mod tracking;
mod validate;

pub(crate) use init::{load_reason, pair_counter_with_calendar};

pub use config::{default_name, resolve_group, Calendar, Config, Mode, TrackingConfig};
pub use shm::Sharing;

use crate::clock::convert::Scale;
use crate::clock::source::SourceId;
use crate::error::{Error, ErrorKind, Result};
use layout::*;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// How this process came to use the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// It created the segment and calibrated the counter.
    Created,
    /// It attached to a ready segment (no calibration).
    Attached,
    /// The creator died before `ready`; this process initialised it instead.
    TookOver,
}

/// A process's handle on the shared base. Cheap to read from any thread.
pub struct SharedBase {
    pub(crate) map: shm::Mapping,
    pub(crate) name: String,
    pub(crate) opened: Opened,
    pub(crate) source: SourceId,
    pub(crate) scale: Scale,
    pub(crate) freq_hz: u64,
    pub(crate) threshold: u64,
    /// Ticks a counter may lag the base (cross-CPU skew) before it counts as
    /// having gone backwards.
    pub(crate) backstep_limit: u64,
    pub(crate) calendar: Calendar,
    /// (seq word, first seen) of a writer role this process suspects is stale.
    pub(crate) suspect: Mutex<Option<(u64, u64)>>,
    pub(crate) writer_timeout: Duration,
    pub(crate) seq_file: std::path::PathBuf,
    pub(crate) seq_interval: u64,
    /// This process's start time (see `os::process_start_time`), read once.
    pub(crate) start_time: once_cell::sync::OnceCell<u64>,
    /// The segment's mode, tie rules and validated header, fixed at attach.
    pub(crate) mode: Mode,
    pub(crate) rules: tracking::Rules,
    pub(crate) image: validate::HeaderImage,
    /// Frozen mode: this process's registration as attached (lock held until drop).
    pub(crate) presence: Option<presence::Presence>,
}

impl std::fmt::Debug for SharedBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBase")
            .field("name", &self.name)
            .field("opened", &self.opened)
            .field("source", &self.source)
            .field("freq_hz", &self.freq_hz)
            .finish_non_exhaustive()
    }
}

/// A poll interval while waiting on another process: short next to a creator's
/// calibration, long enough not to burn a core.
const POLL: Duration = Duration::from_millis(1);

impl SharedBase {
    /// Opens the segment named by the environment (see [`Config::from_env`]).
    pub fn open_default() -> Result<SharedBase> {
        SharedBase::open(&Config::from_env()?)
    }

    /// Creates the segment `cfg.name`, or attaches to it if it exists.
    pub fn open(cfg: &Config) -> Result<SharedBase> {
        let cname = shm::validate_name(&cfg.name)?;
        let start = crate::os::monotonic_ns();
        let deadline = start + cfg.ready_timeout.as_nanos() as u64;
        loop {
            if let Some(fd) = shm::create_exclusive(&cname, cfg.sharing)? {
                let sized = shm::set_size(&fd, SEGMENT_SIZE).and_then(|_| map_page(&fd));
                let map = match sized {
                    Ok(map) => map,
                    Err(e) => {
                        shm::unlink(&cname);
                        return Err(e);
                    }
                };
                let header = header_of(&map);
                let me = state_word(STATE_INITIALISING, crate::os::pid());
                if header
                    .state
                    .compare_exchange(STATE_EMPTY, me, Acquire, Relaxed)
                    .is_ok()
                {
                    if let Err(e) = init::initialise(header, extension_of(&map), cfg) {
                        shm::unlink(&cname);
                        return Err(e);
                    }
                    return SharedBase::from_ready(map, cfg, Opened::Created);
                }
                // A waiter judged us dead and took over; use its result.
                return SharedBase::attach_mapped(map, cfg, deadline);
            }
            let Some(fd) = shm::open_existing(&cname)? else {
                continue; // unlinked between our two calls: try creating again
            };
            let st = shm::fstat(&fd)?;
            shm::check_owner_and_mode(&cfg.name, &st, cfg.sharing)?;
            if st.size == 0 {
                // The creator has not sized it yet, or died before doing so.
                if crate::os::monotonic_ns() < deadline {
                    std::thread::sleep(POLL);
                    continue;
                }
                shm::set_size(&fd, SEGMENT_SIZE)?;
                let map = map_page(&fd)?;
                return SharedBase::attach_mapped(map, cfg, crate::os::monotonic_ns());
            }
            if (st.size as usize) < SEGMENT_SIZE {
                return Err(Error::new(
                    ErrorKind::Truncated,
                    format!(
                        "segment {} is truncated: {} bytes, an hrts segment has {SEGMENT_SIZE}; \
                         remove it with `hrts unlink` and retry",
                        cfg.name, st.size
                    ),
                ));
            }
            let map = map_page(&fd)?;
            return SharedBase::attach_mapped(map, cfg, deadline);
        }
    }

    /// Waits, bounded, for a mapped segment to be ready; takes over initialisation
    /// when its initialiser is gone, or when nobody started it by `deadline`.
    fn attach_mapped(map: shm::Mapping, cfg: &Config, deadline: u64) -> Result<SharedBase> {
        let header = header_of(&map);
        let me = crate::os::pid();
        loop {
            check_identity(header, &cfg.name)?;
            let state = header.state.load(Acquire);
            let owner = state_pid(state);
            let take_over = match state_code(state) {
                STATE_READY => return SharedBase::from_ready(map, cfg, Opened::Attached),
                STATE_INITIALISING => !crate::os::process_alive(owner),
                STATE_EMPTY => crate::os::monotonic_ns() >= deadline,
                _ => {
                    return Err(corrupt(
                        &cfg.name,
                        format!("state word {state:#x} is invalid"),
                    ));
                }
            };
            if take_over {
                let mine = state_word(STATE_INITIALISING, me);
                if header
                    .state
                    .compare_exchange(state, mine, Acquire, Relaxed)
                    .is_ok()
                {
                    init::initialise(header, extension_of(&map), cfg)?;
                    return SharedBase::from_ready(map, cfg, Opened::TookOver);
                }
                continue;
            }
            if crate::os::monotonic_ns() >= deadline {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "segment {} is still being initialised by pid {owner} after {} ms; \
                         if that process is stuck, stop it or remove the segment with `hrts unlink`",
                        cfg.name,
                        cfg.ready_timeout.as_millis()
                    ),
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Validates a ready segment and builds the process-local handle from the
    /// values recorded in it, never from this process's own measurements.
    fn from_ready(map: shm::Mapping, cfg: &Config, opened: Opened) -> Result<SharedBase> {
        let h = header_of(&map);
        if !check_identity(h, &cfg.name)? {
            return Err(corrupt(
                &cfg.name,
                "it is marked ready but has no magic".into(),
            ));
        }
        let checked = validate::header(h, &cfg.name)?;
        let presence = (checked.mode == Mode::Frozen).then(|| {
            let deadline = crate::os::monotonic_ns() + cfg.ready_timeout.as_nanos() as u64;
            presence::Presence::join(&cfg.name, cfg.sharing, deadline)
        });
        let freq_hz = checked.freq_hz;
        let mut base = SharedBase {
            map,
            name: cfg.name.clone(),
            opened,
            source: checked.source,
            scale: checked.scale,
            freq_hz,
            threshold: checked.threshold,
            backstep_limit: (freq_hz / 1000).max(1),
            calendar: cfg.calendar.clone(),
            suspect: Mutex::new(None),
            writer_timeout: Duration::from_secs(1),
            seq_file: cfg
                .seq_file
                .clone()
                .unwrap_or_else(|| config::default_seq_file(&cfg.name)),
            seq_interval: cfg.seq_interval.max(1),
            start_time: once_cell::sync::OnceCell::new(),
            mode: checked.mode,
            rules: checked.rules,
            image: checked.image,
            presence,
        };
        base.check_on_attach()?;
        use presence::Attendance;
        let alone = base.presence.as_ref().is_some_and(|p| !p.others_attached());
        if presence::repair_on_attach(base.mode, opened, !alone) {
            // The last process has gone: pair anew, keeping the calibration.
            base.set_base_info()?;
        }
        if let Some(p) = &mut base.presence {
            p.share();
        }
        Ok(base)
    }

    pub(crate) fn header(&self) -> &Header {
        header_of(&self.map)
    }

    pub(crate) fn extension(&self) -> &Extension {
        extension_of(&self.map)
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this process created, attached to or took over the segment.
    pub fn opened(&self) -> Opened {
        self.opened
    }

    /// The counter source every process of this segment reads.
    pub fn source(&self) -> SourceId {
        self.source
    }

    /// Calibrated counter frequency in Hz.
    pub fn frequency(&self) -> u64 {
        self.freq_hz
    }

    /// The tick-to-nanosecond scale recorded in the segment.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Ticks after which a reader moves the base forward.
    pub fn wrap_threshold(&self) -> u64 {
        self.threshold
    }

    /// Removes the segment name `name`. Attached processes keep their mapping;
    /// the next process to open the name creates a fresh segment.
    pub fn unlink(name: &str) -> Result<bool> {
        let cname = shm::validate_name(name)?;
        let _ = std::fs::remove_file(presence::path(name));
        Ok(shm::unlink(&cname))
    }
}

/// Maps exactly one segment page. Only called once the object is known to be at
/// least that large, so no access through the mapping can fault.
fn map_page(fd: &shm::Fd) -> Result<shm::Mapping> {
    shm::Mapping::map(fd, SEGMENT_SIZE)
}

fn header_of(map: &shm::Mapping) -> &Header {
    debug_assert!(map.len() >= std::mem::size_of::<Header>());
    // SAFETY: the mapping is page-aligned (mmap), at least SEGMENT_SIZE bytes
    // long and lives as long as the borrow; Header is all atomics, valid for any
    // bit pattern, and every access goes through atomic operations.
    unsafe { &*(map.as_ptr() as *const Header) }
}

fn extension_of(map: &shm::Mapping) -> &Extension {
    debug_assert!(map.len() >= SEGMENT_SIZE);
    // SAFETY: EXTENSION_OFFSET is 64-byte aligned inside the page-aligned
    // mapping and the Extension fits in the page (checked at compile time); it is
    // all atomics, valid for any bit pattern.
    unsafe { &*(map.as_ptr().add(EXTENSION_OFFSET) as *const Extension) }
}

pub(crate) fn corrupt(name: &str, what: String) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("segment {name} is corrupt: {what}; remove it with `hrts unlink` and retry"),
    )
}

/// Magic and version sit at fixed offsets in every layout version, so this check
/// is safe on any object, ours or not. `Ok(false)`: not initialised yet.
fn check_identity(h: &Header, name: &str) -> Result<bool> {
    let magic = h.magic.load(Acquire);
    if magic == 0 {
        return Ok(false);
    }
    if magic != MAGIC {
        return Err(Error::new(
            ErrorKind::Foreign,
            format!(
                "shared memory object {name} is not an hrts segment (magic {magic:#018x}); \
                 another program uses that name: choose another one with HRTS_SEGMENT"
            ),
        ));
    }
    let version = h.layout_version.load(Relaxed);
    if version != LAYOUT_VERSION {
        let (age, fix) = if version < LAYOUT_VERSION {
            (
                "an older",
                "once every process using it has exited, remove it with `hrts unlink`",
            )
        } else {
            (
                "a newer",
                "upgrade this program's hrts library, or use another segment name",
            )
        };
        return Err(Error::new(
            ErrorKind::Version,
            format!(
                "segment {name} has layout version {version}, from {age} hrts; this library \
                 understands version {LAYOUT_VERSION}: {fix}"
            ),
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
