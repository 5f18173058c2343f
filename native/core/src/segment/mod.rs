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
    pub(crate) page: shm::Page,
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
        let deadline = crate::os::monotonic_ns() + cfg.ready_timeout.as_nanos() as u64;
        loop {
            if let Some(fd) = shm::create_exclusive(&cname, cfg.sharing)? {
                // The creator holds the name's lock from before the object has a
                // size until the page is ready, so a waiter that finds the lock free
                // and no ready record knows the creator is gone.
                let created = fd.lock().and_then(|lock| {
                    shm::set_size(&fd, SEGMENT_SIZE)?;
                    SharedBase::initialise_locked(&fd, lock, cfg, Opened::Created)
                });
                if created.is_err() {
                    let _ = shm::unlink(&cname);
                }
                return created;
            }
            let Some(fd) = shm::open_existing(&cname)? else {
                continue; // removed between our two calls: try creating again
            };
            return SharedBase::attach_named(&fd, cfg, deadline);
        }
    }

    /// Waits, bounded, for an existing name to name a ready page and attaches
    /// it; takes over initialisation when its initialiser is gone, or when
    /// nobody started it by `deadline`.
    fn attach_named(fd: &shm::Fd, cfg: &Config, deadline: u64) -> Result<SharedBase> {
        let name = &cfg.name;
        loop {
            let st = shm::fstat(name, fd)?;
            shm::check_owner_and_mode(name, &st, cfg.sharing)?;
            let timed_out = crate::os::monotonic_ns() >= deadline;
            if st.size == 0 {
                // Not sized yet: its creator is a moment away, or died right after
                // creating the name.
                if timed_out {
                    return SharedBase::initialise_locked(fd, fd.lock()?, cfg, Opened::TookOver);
                }
                std::thread::sleep(POLL);
                continue;
            }
            if (st.size as usize) < SEGMENT_SIZE {
                return Err(Error::new(
                    ErrorKind::Truncated,
                    format!(
                        "segment {name} is truncated: {} bytes, an hrts segment has \
                         {SEGMENT_SIZE}; remove it with `hrts unlink` and retry",
                        st.size
                    ),
                ));
            }
            let rec = shm::read_record(fd)?;
            check_identity(rec.magic, rec.layout_version, name)?;
            match state_code(rec.state) {
                STATE_READY => {
                    if let Some(page) = shm::Page::attach(name, rec.page, cfg.sharing)? {
                        return SharedBase::from_ready(page, cfg, Opened::Attached);
                    }
                    // The page is gone (removed with ipcrm, or the host's IPC
                    // namespace was reset) while the name stayed: make a new one.
                    return SharedBase::initialise_locked(fd, fd.lock()?, cfg, Opened::TookOver);
                }
                STATE_INITIALISING | STATE_EMPTY => {
                    if let Some(lock) = fd.try_lock()? {
                        return SharedBase::initialise_locked(fd, lock, cfg, Opened::TookOver);
                    }
                }
                _ => {
                    return Err(corrupt(
                        name,
                        format!("state word {:#x} is invalid", rec.state),
                    ));
                }
            }
            if timed_out {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "segment {name} is still being initialised by pid {} after {} ms; \
                         if that process is stuck, stop it or remove the segment with `hrts unlink`",
                        state_pid(rec.state),
                        cfg.ready_timeout.as_millis()
                    ),
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Under the name's lock: attaches the page if another process finished it
    /// meanwhile; otherwise makes a fresh page, records it, calibrates into it and
    /// publishes `ready`. A half-made page of a creator that died is removed.
    fn initialise_locked(
        fd: &shm::Fd,
        lock: shm::NameLock<'_>,
        cfg: &Config,
        opened: Opened,
    ) -> Result<SharedBase> {
        let name = &cfg.name;
        // `opened` is what this process did if it initialises a page; attaching one
        // that another process finished (or linking a found one) is `Attached`.
        if (shm::fstat(name, fd)?.size as usize) < SEGMENT_SIZE {
            shm::set_size(fd, SEGMENT_SIZE)?;
        }
        let rec = shm::read_record(fd)?;
        if check_identity(rec.magic, rec.layout_version, name)? {
            if state_code(rec.state) == STATE_READY {
                if let Some(page) = shm::Page::attach(name, rec.page, cfg.sharing)? {
                    return SharedBase::from_ready(page, cfg, Opened::Attached);
                }
            } else if rec.page.shmid > 0 {
                if let Ok(Some(stale)) = shm::Page::attach(name, rec.page, cfg.sharing) {
                    shm::remove_page(stale.id().shmid);
                }
            }
        }
        // The record was lost but the page is there (found by its key): link it
        // again, so everyone stays on one timeline; a half-made one is replaced.
        if let Some(page) = shm::Page::find(name, Some(cfg.sharing))? {
            let h = header_of(&page);
            let ready =
                state_code(h.state.load(Acquire)) == STATE_READY && h.magic.load(Acquire) == MAGIC;
            if ready {
                shm::write_record(fd, h.state.load(Relaxed), page.id())?;
                drop(lock);
                return SharedBase::from_ready(page, cfg, Opened::Attached);
            }
            shm::remove_page(page.id().shmid);
        }
        let page = shm::Page::create(name, cfg.sharing)?;
        let me = crate::os::pid();
        let initialised = shm::write_record(fd, state_word(STATE_INITIALISING, me), page.id())
            .and_then(|_| init::initialise(header_of(&page), extension_of(&page), cfg))
            .and_then(|_| shm::write_state(fd, state_word(STATE_READY, me)));
        if let Err(e) = initialised {
            let _ = shm::write_record(fd, STATE_EMPTY, shm::PageId::default());
            shm::remove_page(page.id().shmid);
            return Err(e);
        }
        drop(lock);
        SharedBase::from_ready(page, cfg, opened)
    }

    /// Validates a ready segment and builds the process-local handle from the
    /// values recorded in it, never from this process's own measurements.
    fn from_ready(page: shm::Page, cfg: &Config, opened: Opened) -> Result<SharedBase> {
        let h = header_of(&page);
        let magic = h.magic.load(Acquire);
        if !check_identity(magic, h.layout_version.load(Relaxed), &cfg.name)? {
            return Err(corrupt(
                &cfg.name,
                "it is marked ready but its page has no magic".into(),
            ));
        }
        let state = h.state.load(Acquire);
        if state_code(state) != STATE_READY {
            return Err(corrupt(
                &cfg.name,
                format!("its page's state word {state:#x} is invalid"),
            ));
        }
        let checked = validate::header(h, &cfg.name)?;
        let presence = (checked.mode == Mode::Frozen).then(|| {
            let deadline = crate::os::monotonic_ns() + cfg.ready_timeout.as_nanos() as u64;
            presence::Presence::join(&cfg.name, cfg.sharing, deadline)
        });
        let freq_hz = checked.freq_hz;
        let mut base = SharedBase {
            page,
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
        header_of(&self.page)
    }

    pub(crate) fn extension(&self) -> &Extension {
        extension_of(&self.page)
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

    /// Test hook: the whole shared page as words, for harnesses that damage it
    /// on purpose (the fuzz stage). Every access must go through the atomics.
    #[cfg(any(test, feature = "testing"))]
    pub fn page_words_for_test(&self) -> &[std::sync::atomic::AtomicU64] {
        // SAFETY: the page is SEGMENT_SIZE bytes, page-aligned and attached for
        // as long as `self` lives; any bit pattern is a valid AtomicU64.
        unsafe {
            std::slice::from_raw_parts(
                self.page.as_ptr() as *const std::sync::atomic::AtomicU64,
                SEGMENT_SIZE / 8,
            )
        }
    }

    /// How many handles, in all processes, have this segment's page attached
    /// now, as the kernel counts them; `None` if it cannot say.
    pub fn attachments(&self) -> Option<u64> {
        self.page.attachments()
    }

    /// Removes the segment `name`: its page and its name. Attached processes
    /// keep their page until they detach; the next process to open the name
    /// creates a fresh segment. `Ok(false)`: no segment had that name.
    pub fn unlink(name: &str) -> Result<bool> {
        let cname = shm::validate_name(name)?;
        let _ = std::fs::remove_file(presence::path(name));
        shm::unlink(&cname)
    }
}

fn header_of(page: &shm::Page) -> &Header {
    // SAFETY: the page is page-aligned (shmat), SEGMENT_SIZE bytes long for its
    // whole life (a System V segment cannot be resized) and stays attached as long
    // as the borrow; Header is all atomics, valid for any bit pattern, and every
    // access goes through atomic operations.
    unsafe { &*(page.as_ptr() as *const Header) }
}

fn extension_of(page: &shm::Page) -> &Extension {
    // SAFETY: EXTENSION_OFFSET is 64-byte aligned inside the page-aligned
    // attachment and the Extension fits in the page (checked at compile time); it
    // is all atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(EXTENSION_OFFSET) as *const Extension) }
}

pub(crate) fn corrupt(name: &str, what: String) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!("segment {name} is corrupt: {what}; remove it with `hrts unlink` and retry"),
    )
}

/// Magic and version sit at fixed offsets in every layout version (of the name
/// record and of the page), so this check is safe on anything, ours or not.
/// `Ok(false)`: not initialised yet.
fn check_identity(magic: u64, version: u32, name: &str) -> Result<bool> {
    if magic == 0 {
        return Ok(false);
    }
    if magic != MAGIC {
        return Err(Error::new(
            ErrorKind::Foreign,
            format!(
                "shared memory object {name} is not an hrts segment (magic {magic:#018x}); \
                 another program uses that name: choose another segment name (HRTS_SEGMENT, \
                 `--segment`, or the name passed to open)"
            ),
        ));
    }
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
