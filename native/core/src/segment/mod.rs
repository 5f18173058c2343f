//! The shared segment: one page of named shared memory holding the counter
//! source, its calibration and the base, created once per host and user and
//! attached to by every later process.
//!
//! Opening follows one rule: create exclusively; whoever loses attaches and waits,
//! bounded, for `ready`. A creator that died before `ready` is replaced by the
//! first waiter that notices. Everything an attacher maps is validated first, so
//! a foreign, truncated, other-version or corrupt object is an error, never a
//! crash.

pub(crate) mod access;
pub(crate) mod bound;
pub(crate) mod config;
mod damage;
pub(crate) mod disruption;
pub(crate) mod host;
pub(crate) mod info;
mod init;
pub(crate) mod layout;
mod presence;
pub(crate) mod request;
#[cfg(not(windows))]
pub(crate) mod role;
#[cfg(windows)]
#[path = "role_windows.rs"]
pub(crate) mod role;
pub(crate) mod tie_stats;
pub(crate) mod timeline;
pub(crate) mod tracking;
mod validate;

pub(crate) use init::load_reason;

pub use crate::storage::resolve_group;
pub use crate::storage::{Opened, Sharing};
pub use access::Access;
pub use config::{
    default_name, BoundConfig, BoundOptions, Calendar, Config, HostConfig, Mode, OpenOptions,
    TrackingConfig,
};
pub use host::{DaemonRound, HostDaemon};
pub use request::OpenRequest;

use crate::clock::convert::Scale;
use crate::clock::source::{OrderedRead, SourceId};
use crate::error::{Error, Result};
use crate::storage::{self, shm};
use layout::*;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::time::Duration;

/// A process's handle on the shared base. Cheap to read from any thread.
pub struct SharedBase {
    pub(crate) page: shm::Page,
    pub(crate) name: String,
    pub(crate) opened: Opened,
    pub(crate) source: SourceId,
    pub(crate) scale: Scale,
    pub(crate) freq_hz: u64,
    pub(crate) threshold: u64,
    /// The page is of minor 1 or later: its slots carry the quick word.
    pub(crate) quick_checked: bool,
    /// How ordered stamps read the counter: the page's choice (minor 4), else
    /// the fence. Cached here so the hot path reads no more of the page.
    pub(crate) ordered: OrderedRead,
    /// Ticks a counter may lag the base (cross-CPU skew) before it counts as
    /// having gone backwards.
    pub(crate) backstep_limit: u64,
    pub(crate) calendar: Calendar,
    /// This process's lock on the writer role (see `role`).
    pub(crate) role: role::RoleLock,
    /// `CLOCK_MONOTONIC` ns before which a held role's lock is not probed again,
    /// and the (unmarked) word last probed.
    pub(crate) next_probe_ns: std::sync::atomic::AtomicU64,
    pub(crate) last_probed: std::sync::atomic::AtomicU64,
    /// The cross-CPU shift bound in ticks: a new line starts at least this far
    /// (in the old line's terms) above the old line where it takes over.
    pub(crate) margin_ticks: u64,
    /// How long an explicit reset waits for the writer role (twice this).
    pub(crate) writer_timeout: Duration,
    pub(crate) seq_file: std::path::PathBuf,
    pub(crate) seq_interval: u64,
    /// What this process publishes with the bounds it learns when it ties.
    pub(crate) bound_writer: config::BoundConfig,
    /// This process's start time (see `os::process_start_time`), read once.
    pub(crate) start_time: once_cell::sync::OnceCell<u64>,
    /// The segment's mode, tie rules and validated header, fixed at attach.
    pub(crate) mode: Mode,
    pub(crate) rules: tracking::Rules,
    pub(crate) image: validate::HeaderImage,
    /// Frozen mode: this process's registration as attached (lock held until drop).
    pub(crate) presence: Option<presence::Presence>,
    /// Whose page this is and what this handle may do with it (see `host`).
    pub(crate) access: Access,
    /// This process's last sample at a tie, for local disruption detection.
    pub(crate) watch: disruption::Watch,
    /// The hypervisor's VMClock device and this process's last look at it.
    pub(crate) vmclock: crate::clock::vmclock::Watch,
    /// A host page: its file (kept open for as long as it is mapped).
    pub(crate) host_file: Option<std::fs::File>,
    /// A host page reader: the per-user segment that keeps its unique stamps'
    /// and sequence numbers' state (the host page is read-only), opened on
    /// first use.
    pub(crate) user: Option<host::UserState>,
    /// A per-user segment opened because the host page was refused: why.
    pub(crate) host_refused: Option<String>,
    /// The line as this handle's slow paths last read it whole, and the damage
    /// its stamps met (see `damage`).
    pub(crate) memory: Box<damage::LineMemory<timeline::Base>>,
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

impl SharedBase {
    /// Opens the segment the environment chooses (the default request, see
    /// [`OpenRequest::resolve`]).
    pub fn open_default() -> Result<SharedBase> {
        SharedBase::open(&OpenRequest::default().resolve()?)
    }

    /// The host page `hrts daemon` keeps when `cfg.host` asks for it and a
    /// valid one exists (see `host`); else creates the segment `cfg.name`, or
    /// attaches to it if it exists.
    pub fn open(cfg: &Config) -> Result<SharedBase> {
        let Some(host) = &cfg.host else {
            return SharedBase::open_segment(cfg);
        };
        let refused = match SharedBase::open_host_reader(cfg, host) {
            Ok(Ok(base)) => return Ok(base),
            Ok(Err(refused)) => refused,
            Err(e) => return Err(e),
        };
        let mut base = SharedBase::open_segment(cfg)?;
        base.host_refused = refused;
        Ok(base)
    }

    /// Creates the segment `cfg.name`, or attaches to it if it exists (never
    /// the host page).
    pub(crate) fn open_segment(cfg: &Config) -> Result<SharedBase> {
        let args = storage::OpenArgs {
            name: &cfg.name,
            sharing: cfg.sharing,
            ready_timeout: cfg.ready_timeout,
        };
        let init = |page: &storage::Page| {
            init::initialise_minor(minor_of(page), minor_fields_of(page));
            init::initialise(
                header_of(page),
                extension_of(page),
                stats_area_of(page),
                bound_area_of(page),
                ordered_area_of(page),
                cfg,
            )
        };
        let (page, opened) = storage::open(&SPEC, &args, &init)?;
        SharedBase::from_ready(page, cfg, opened, Access::User)
    }

    /// Validates a ready segment and builds the process-local handle from the
    /// values recorded in it, never from this process's own measurements.
    /// `cfg.name` names it in messages.
    pub(crate) fn from_ready(
        page: shm::Page,
        cfg: &Config,
        opened: Opened,
        access: Access,
    ) -> Result<SharedBase> {
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
        let per_user = access == Access::User;
        let presence = (per_user && checked.mode == Mode::Frozen).then(|| {
            let deadline = crate::os::monotonic_ns() + cfg.ready_timeout.as_nanos() as u64;
            presence::Presence::join(&cfg.name, cfg.sharing, deadline)
        });
        let freq_hz = checked.freq_hz;
        let role = match access {
            Access::User => role::RoleLock::new(role_fd(&cfg.name, &page)),
            // Set by the daemon's constructor, which holds the page's file.
            Access::HostWriter | Access::HostReader => role::RoleLock::unavailable(),
        };
        let minor = minor_of(&page).layout_minor.load(Acquire);
        let quick_checked = minor >= 1;
        let ordered = if minor >= 4 {
            OrderedRead::from_code(ordered_area_of(&page).ordered_read.load(Relaxed))
        } else {
            OrderedRead::fence()
        };
        let mut base = SharedBase {
            page,
            name: cfg.name.clone(),
            opened,
            source: checked.source,
            scale: checked.scale,
            freq_hz,
            threshold: checked.threshold,
            quick_checked,
            ordered,
            backstep_limit: (freq_hz / 1000).max(1),
            calendar: cfg.calendar.clone(),
            role,
            next_probe_ns: std::sync::atomic::AtomicU64::new(0),
            last_probed: std::sync::atomic::AtomicU64::new(0),
            margin_ticks: margin_ticks(checked.source, checked.shift_ns, freq_hz),
            writer_timeout: Duration::from_secs(1),
            seq_file: cfg.seq_file_path(),
            seq_interval: cfg.seq_interval.max(1),
            bound_writer: cfg.bound,
            start_time: once_cell::sync::OnceCell::new(),
            mode: checked.mode,
            rules: checked.rules,
            image: checked.image,
            presence,
            access,
            host_file: None,
            user: None,
            host_refused: None,
            memory: Box::default(),
            watch: Default::default(),
            vmclock: crate::clock::vmclock::Watch::new(cfg.vmclock.clone()),
        };
        if access == Access::HostWriter {
            // The daemon checks and repairs once it holds the role's lock.
            return Ok(base);
        }
        base.check_on_attach()?;
        use presence::Attendance;
        let alone = base.presence.as_ref().is_some_and(|p| !p.others_attached());
        if per_user && presence::repair_on_attach(base.mode, opened, !alone) {
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

    /// The page's unique stamps' and sequence numbers' state (unused in the
    /// host page: see [`SharedBase::state_segment`]).
    pub(crate) fn extension(&self) -> &Extension {
        extension_of(&self.page)
    }

    pub(crate) fn minor_area(&self) -> &MinorArea {
        minor_of(&self.page)
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

    /// How this handle's ordered stamps read the counter: what the page's
    /// creator recorded, or the fence on a page of minor 3 or older.
    pub fn ordered_read(&self) -> OrderedRead {
        self.ordered
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

    /// Stamps of this handle that found the segment's active line damaged
    /// while another process held the writer role (and so could not repair
    /// it): each was answered from the line with its damaged word corrected,
    /// from this handle's copy of the line, or from the previous line or the
    /// calendar clock, never below an earlier such answer. 0: none.
    pub fn damaged_line_stamps(&self) -> u64 {
        self.memory.stamps()
    }

    /// The damage this handle's stamps met (see
    /// [`SharedBase::damaged_line_stamps`]) as an error of kind `Corrupt`
    /// saying how they were answered; `None` if they met none.
    pub fn line_damage(&self) -> Option<Error> {
        self.memory.report(&self.name)
    }

    /// Test hook: the active slot's words as stored, in slot order (`counter`,
    /// `ns`, `frac`, `mult`, `generation`, `freq_mult`, `rate_mult`,
    /// `residual`, `tie_ns`, `written`, `check`, `quick`), for tests that
    /// damage the line on purpose.
    #[cfg(any(test, feature = "testing"))]
    pub fn active_line_words_for_test(&self) -> [&std::sync::atomic::AtomicU64; 12] {
        let h = self.header();
        let s = &h.slots[seq_slot(h.seq.load(Acquire))];
        [
            &s.counter,
            &s.ns,
            &s.frac,
            &s.mult,
            &s.generation,
            &s.freq_mult,
            &s.rate_mult,
            &s.residual,
            &s.tie_ns,
            &s.written,
            &s.check,
            &s.quick,
        ]
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
        shm::validate_name(name)?;
        let _ = std::fs::remove_file(presence::path(name));
        storage::unlink(&SPEC, name)
    }
}

/// The segment's role mutex (see `role`), or `None`: this process then never
/// takes the writer role.
#[cfg(windows)]
fn role_fd(name: &str, _page: &shm::Page) -> Option<role::RoleMutex> {
    Some(role::RoleMutex {
        handle: shm::role_mutex(name)?,
        name: shm::object_name(name, ".role"),
    })
}

/// A descriptor of the segment's name for the writer role's lock (see `role`),
/// or -1: this process then never takes the writer role. The name is opened
/// again here and must still name this page (not one made after it was
/// removed and created anew).
#[cfg(not(windows))]
fn role_fd(name: &str, page: &shm::Page) -> i32 {
    let Ok(cname) = shm::validate_name(name) else {
        return -1;
    };
    let Ok(Some(fd)) = shm::open_existing(&cname) else {
        return -1;
    };
    match shm::read_record(&fd) {
        // SAFETY: fd is open; F_DUPFD_CLOEXEC makes a new descriptor of the same
        // open file description, which this process then owns.
        // The page's id and namespace: `cpid` reads differently in another
        // pid namespace and `ctime` moves with IPC_SET, so neither says whether
        // the record still names this page.
        Ok(rec) if rec.page.shmid == page.id().shmid && rec.page.ns == page.id().ns => unsafe {
            libc::fcntl(fd.raw(), libc::F_DUPFD_CLOEXEC, 0)
        },
        _ => -1,
    }
}

/// The cross-CPU shift bound in ticks of a `freq_hz` counter: 0 for the
/// kernel's own clock, else the evaluation's `eval_max_shift_ns`, at most 1 µs
/// (1 µs when unknown).
fn margin_ticks(source: SourceId, shift_ns: u64, freq_hz: u64) -> u64 {
    if source == SourceId::MonotonicRaw {
        return 0;
    }
    let ns = shift_ns.min(1_000) as u128;
    (ns * freq_hz as u128 / 1_000_000_000) as u64
}

pub(crate) fn header_of(page: &shm::Page) -> &Header {
    // SAFETY: the page is page-aligned (shmat), SEGMENT_SIZE bytes long for its
    // whole life (a System V segment cannot be resized) and stays attached as long
    // as the borrow; Header is all atomics, valid for any bit pattern, and every
    // access goes through atomic operations.
    unsafe { &*(page.as_ptr() as *const Header) }
}

pub(crate) fn minor_of(page: &shm::Page) -> &MinorArea {
    // SAFETY: MINOR_OFFSET is 8-byte aligned inside the page-aligned attachment
    // and the area ends before the page does (checked at compile time); it is
    // all atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(MINOR_OFFSET) as *const MinorArea) }
}

/// The page's bytes from `MINOR_FIELDS_OFFSET` to the storage layer's part,
/// as words: where later minor versions put their fields.
pub(crate) fn minor_fields_of(page: &shm::Page) -> &[std::sync::atomic::AtomicU64] {
    // SAFETY: MINOR_FIELDS_OFFSET is 8-byte aligned and the range ends 64 bytes
    // before the page does (checked at compile time); any bit pattern is a valid
    // AtomicU64 and every access goes through atomics.
    unsafe {
        std::slice::from_raw_parts(
            page.as_ptr().add(MINOR_FIELDS_OFFSET) as *const std::sync::atomic::AtomicU64,
            (SEGMENT_SIZE - 64 - MINOR_FIELDS_OFFSET) / 8,
        )
    }
}

pub(crate) fn bound_area_of(page: &shm::Page) -> &BoundArea {
    // SAFETY: BOUND_AREA_OFFSET is 8-byte aligned and the area ends before the
    // storage layer's last 64 bytes (checked at compile time); it is all
    // atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(BOUND_AREA_OFFSET) as *const BoundArea) }
}

pub(crate) fn disruption_area_of(page: &shm::Page) -> &DisruptionArea {
    // SAFETY: DISRUPTION_AREA_OFFSET is 8-byte aligned and the area ends before
    // the storage layer's last 64 bytes (checked at compile time); it is all
    // atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(DISRUPTION_AREA_OFFSET) as *const DisruptionArea) }
}

pub(crate) fn ordered_area_of(page: &shm::Page) -> &OrderedArea {
    // SAFETY: ORDERED_AREA_OFFSET is 8-byte aligned and the area ends before the
    // storage layer's last 64 bytes (checked at compile time); it is all
    // atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(ORDERED_AREA_OFFSET) as *const OrderedArea) }
}

pub(crate) fn stats_area_of(page: &shm::Page) -> &StatsArea {
    // SAFETY: STATS_AREA_OFFSET is 8-byte aligned and the area ends before the
    // storage layer's last 64 bytes (checked at compile time); it is an
    // atomic, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(STATS_AREA_OFFSET) as *const StatsArea) }
}

pub(crate) fn extension_of(page: &shm::Page) -> &Extension {
    // SAFETY: EXTENSION_OFFSET is 64-byte aligned inside the page-aligned
    // attachment and the Extension fits in the page (checked at compile time); it
    // is all atomics, valid for any bit pattern.
    unsafe { &*(page.as_ptr().add(EXTENSION_OFFSET) as *const Extension) }
}

pub(crate) fn corrupt(name: &str, what: String) -> Error {
    storage::corrupt(&SPEC, name, what)
}

fn check_identity(magic: u64, version: u32, name: &str) -> Result<bool> {
    storage::check_identity(&SPEC, magic, version, name)
}

#[cfg(test)]
mod tests;
