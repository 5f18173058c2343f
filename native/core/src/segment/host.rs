//! The host page's two sides (see `storage::host` for the file).
//!
//! **Readers** map it read-only: they never take the writer role, never tie,
//! move, mark or repair; past the fast path's range they use the exact wide
//! computation on the line as it is, which keeps its last learned slope. Their
//! unique stamps and sequence numbers keep their state in the per-user segment
//! (the host page has no room anyone may write) but take "now" from the host
//! line, so every user's stamps lie on one line.
//!
//! **The daemon** is the page's only writer: it ties (tracking) or moves
//! (frozen) on its own timer, well inside the fast path's range, validates and
//! repairs the page, and writes its signs of life. Because no reader can give
//! a stamp from a counter it has not read yet, a tie must only be no lower
//! than the old line up to the counter at its publication; the daemon reads
//! the counter once more just before it publishes and builds its line to that
//! point (see `timeline::tie_held`).

use super::access::Access;
use super::config::{Config, HostConfig, Mode};
use super::layout::*;
use super::{init, role, SharedBase};
use crate::error::Result;
use crate::storage::host::{self as file, DaemonLock};
use crate::storage::Opened;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

impl SharedBase {
    /// The host page `host` names, for a reader. `Ok(Err(None))`: there is
    /// none; `Ok(Err(Some(why)))`: there is one and it was refused (the caller
    /// falls back to the per-user segment and keeps why for `hrts info`).
    pub(crate) fn open_host_reader(
        cfg: &Config,
        host: &HostConfig,
    ) -> Result<std::result::Result<SharedBase, Option<String>>> {
        let trusted = file::trusted_uids(&host.user);
        let hp = match file::open_reader(&host.dir, &trusted, &SPEC) {
            Ok(Some(hp)) => hp,
            Ok(None) => return Ok(Err(None)),
            Err(e) => return Ok(Err(Some(e.message().to_string()))),
        };
        let path = file::page_path(&host.dir);
        let page_cfg = cfg.for_host_page(&path);
        let mut base = match SharedBase::from_ready(
            hp.page,
            &page_cfg,
            Opened::Attached,
            Access::HostReader,
        ) {
            Ok(base) => base,
            Err(e) => {
                return Ok(Err(Some(format!(
                    "host page {} refused: {}",
                    path.display(),
                    e.message()
                ))))
            }
        };
        base.host_file = Some(hp.file);
        let user_cfg = cfg.per_user();
        base.seq_file = user_cfg.seq_file_path();
        base.user = Some(UserState {
            cfg: user_cfg,
            segment: once_cell::sync::OnceCell::new(),
        });
        Ok(Ok(base))
    }

    /// The segment that keeps unique stamps' and sequence numbers' state:
    /// this one, or for a host page reader its per-user segment, opened on
    /// first use (so a reader that never asks for them needs none: in an IPC
    /// namespace of its own, the per-user segment may be out of reach).
    pub(crate) fn state_segment(&self) -> Result<&SharedBase> {
        match &self.user {
            None => Ok(self),
            Some(u) => u
                .segment
                .get_or_try_init(|| SharedBase::open_segment(&u.cfg).map(Box::new))
                .map(|b| &**b),
        }
    }

    /// Which timeline this handle stamps from, as `hrts info` says it:
    /// `host service /run/hrts/time` or `per-user segment /hrts-0`, the
    /// latter with the reason a host page was refused, if one was.
    pub fn timeline(&self) -> String {
        match (self.access, &self.host_refused) {
            (Access::User, None) => format!("per-user segment {}", self.name),
            (Access::User, Some(why)) => format!("per-user segment {} ({why})", self.name),
            _ => format!("host service {}", self.name),
        }
    }

    /// Whether opening `cfg` would give this handle's timeline: the segment
    /// `cfg.name`, or the host page when `cfg` allows it and this handle
    /// reads it (its per-user state in `cfg.name`).
    pub fn opened_as(&self, cfg: &Config) -> bool {
        match (&self.user, &cfg.host) {
            (Some(user), Some(_)) => user.cfg.name == cfg.name,
            (None, _) => self.access == Access::User && self.name == cfg.name,
            (Some(_), None) => false,
        }
    }

    /// How this handle may use its page.
    pub fn access(&self) -> Access {
        self.access
    }

    /// A host page's service, as the page records it; `None` for a
    /// per-user segment.
    pub fn service(&self) -> Option<ServiceState> {
        if self.access == Access::User {
            return None;
        }
        let a = host_area(&self.page);
        Some(ServiceState {
            pid: a.daemon_pid.load(Relaxed),
            started_ns: a.daemon_started_ns.load(Relaxed),
            heartbeat_ns: a.heartbeat_ns.load(Relaxed),
            round_ns: a.round_ns.load(Relaxed),
            restarts: a.restarts.load(Relaxed),
            untied_rounds: a.untied_rounds.load(Relaxed),
        })
    }
}

/// A host page reader's per-user state: where it is, and the segment once
/// opened.
pub(crate) struct UserState {
    cfg: Config,
    segment: once_cell::sync::OnceCell<Box<SharedBase>>,
}

/// What the host page says of its daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceState {
    /// Its pid in its own pid namespace; 0 once it stopped cleanly.
    pub pid: u32,
    pub started_ns: u64,
    /// `CLOCK_REALTIME` at its latest round, ns.
    pub heartbeat_ns: u64,
    /// Time between its rounds, ns.
    pub round_ns: u64,
    pub restarts: u64,
    /// Rounds in a row that could not tie (tracking); 0 while it ties.
    pub untied_rounds: u32,
}

impl ServiceState {
    /// `CLOCK_REALTIME` (ns) of the first round that could not tie, while the
    /// running service cannot; `None` while it ties.
    pub fn untied_since(&self) -> Option<u64> {
        (self.untied_rounds > 0).then(|| {
            self.heartbeat_ns
                .saturating_sub((self.untied_rounds as u64 - 1).saturating_mul(self.round_ns))
        })
    }

    /// How long ago (ns, at `now_ns`) the service last kept the page, if it
    /// missed more than three rounds and a quarter second (it is gone,
    /// stopped or stuck); `None` while it keeps it.
    pub fn gone_for(&self, now_ns: u64) -> Option<u64> {
        // Three rounds, and never under a quarter second: a busy host may
        // delay a running daemon's round by a scheduling slice or two.
        let age = now_ns.saturating_sub(self.heartbeat_ns);
        (self.pid == 0 || age > (3 * self.round_ns).max(250_000_000)).then_some(age)
    }

    /// One line for `hrts info`.
    pub fn text(&self, now_ns: u64) -> String {
        match (self.gone_for(now_ns), self.untied_since()) {
            (None, Some(since)) => format!(
                "not tying since {} ({:.1} s, {} rounds; pid {}): stamps free-run on its last \
                 line and bounds are free-running; see the daemon's log",
                crate::utc::utc(since),
                now_ns.saturating_sub(since) as f64 / 1e9,
                self.untied_rounds,
                self.pid
            ),
            (None, None) => format!(
                "running (pid {}, last round {:.1} ms ago, {} restarts)",
                self.pid,
                now_ns.saturating_sub(self.heartbeat_ns) as f64 / 1e6,
                self.restarts
            ),
            (Some(age), _) => format!(
                "gone for {:.1} s ({}); stamps free-run on its last line",
                age as f64 / 1e9,
                if self.pid == 0 {
                    "stopped cleanly"
                } else {
                    "killed, stopped or stuck"
                }
            ),
        }
    }
}

fn host_area(page: &crate::storage::Page) -> &HostArea {
    // SAFETY: HOST_AREA_OFFSET is 8-byte aligned and the area ends before the
    // storage layer's last 64 bytes (checked at compile time); it is all
    // atomics, valid for any bit pattern. A reader's mapping is read-only and
    // only the daemon stores to it.
    unsafe { &*(page.as_ptr().add(HOST_AREA_OFFSET) as *const HostArea) }
}

/// `hrts daemon`'s hold on the host page: the only handle that writes it.
pub struct HostDaemon {
    base: SharedBase,
    _lock: DaemonLock,
    path: PathBuf,
    adopted: bool,
    replaced: Option<String>,
    round: Duration,
}

/// What one round of the daemon did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaemonRound {
    /// A tie (tracking) or move (frozen) was published.
    pub published: bool,
    /// The line's generation after the round.
    pub generation: u64,
    /// Calendar minus line measured by the round's tie, ns (tracking).
    pub offset_ns: i64,
    /// Damaged lines or header fields repaired, in all (the page's count).
    pub repairs: u64,
    /// Steps (tracking), in all.
    pub steps: u64,
}

impl HostDaemon {
    /// Takes `dir`'s daemon lock, then adopts the page there if it is whole
    /// and this user's (its line, generation and calibration unchanged), or
    /// makes a new one from `cfg` (calibration, pace check, mode, tie rules)
    /// and renames it into place.
    pub fn start(dir: &Path, cfg: &Config) -> Result<HostDaemon> {
        let lock = file::lock_daemon(dir)?;
        let path = file::page_path(dir);
        let page_cfg = cfg.for_host_page(&path);
        let mut replaced = None;
        let adoptable = match file::open_writer(dir, &SPEC)? {
            Ok(hp) => {
                match SharedBase::from_ready(
                    hp.page,
                    &page_cfg,
                    Opened::Attached,
                    Access::HostWriter,
                ) {
                    Ok(base) => Some((hp.file, base)),
                    Err(e) => {
                        replaced = Some(e.message().to_string());
                        None
                    }
                }
            }
            Err(why) => {
                replaced = Some(why);
                None
            }
        };
        let adopted = adoptable.is_some();
        let (file, mut base) = match adoptable {
            Some(found) => found,
            None => {
                let init = |page: &crate::storage::Page| {
                    init::initialise_minor(super::minor_of(page), super::minor_fields_of(page));
                    init::initialise(
                        super::header_of(page),
                        super::extension_of(page),
                        super::stats_area_of(page),
                        super::bound_area_of(page),
                        super::ordered_area_of(page),
                        &page_cfg,
                    )
                };
                let made = file::create(dir, &SPEC, &init)?;
                let base = SharedBase::from_ready(
                    made.page,
                    &page_cfg,
                    Opened::Created,
                    Access::HostWriter,
                )?;
                (made.file, base)
            }
        };
        // The role's lock on the daemon's own lock file, never on the page:
        // every user may open the page and lock its bytes.
        base.role = role::RoleLock::new(lock.role_fd()?);
        base.host_file = Some(file);
        let ticks_ns = (base.threshold as u128 * 1_000_000_000 / base.freq_hz.max(1) as u128)
            .min(u64::MAX as u128) as u64;
        let range_ns = match base.mode {
            Mode::Tracking => ticks_ns.min(base.header().tie_interval_ns.load(Relaxed)),
            Mode::Frozen => ticks_ns,
        };
        // Two rounds per range: one missed round still leaves every stamp on
        // the fast path. At most a second apart, so `hrts info` sees the
        // service alive.
        let round = Duration::from_nanos((range_ns / 2).clamp(500_000, 1_000_000_000));
        let a = host_area(&base.page);
        if adopted {
            a.restarts.fetch_add(1, Relaxed);
        } else {
            a.restarts.store(0, Relaxed);
        }
        a.daemon_pid.store(crate::os::pid(), Relaxed);
        a.daemon_started_ns.store(crate::os::realtime_ns(), Relaxed);
        a.round_ns.store(round.as_nanos() as u64, Relaxed);
        a.heartbeat_ns.store(crate::os::realtime_ns(), Relaxed);
        let daemon = HostDaemon {
            base,
            _lock: lock,
            path,
            adopted,
            replaced,
            round,
        };
        daemon.round();
        Ok(daemon)
    }

    /// The handle (the daemon stamps from the page it keeps).
    pub fn base(&self) -> &SharedBase {
        &self.base
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether an existing page was adopted (else a new one was made).
    pub fn adopted(&self) -> bool {
        self.adopted
    }

    /// Why a new page was made: there was none, or the old one was refused.
    pub fn replaced(&self) -> Option<&str> {
        self.replaced.as_deref()
    }

    /// Time between rounds.
    pub fn round_interval(&self) -> Duration {
        self.round
    }

    /// One round: validate (and repair), then tie or move, then the sign of life.
    pub fn round(&self) -> DaemonRound {
        let published = self.base.keep_round();
        let h = self.base.header();
        let a = host_area(&self.base.page);
        if self.base.mode == Mode::Tracking {
            if published {
                a.untied_rounds.store(0, Relaxed);
            } else {
                // Every round of a tracking daemon ties; one that could not
                // leaves the line free-running, and readers must know now, not
                // when the word ages out of its freshness.
                a.untied_rounds
                    .store(a.untied_rounds.load(Relaxed).saturating_add(1), Relaxed);
                self.base.demote_bound();
            }
        }
        a.heartbeat_ns.store(crate::os::realtime_ns(), Relaxed);
        DaemonRound {
            published,
            generation: self.base.base().generation,
            offset_ns: h.last_offset_ns.load(Relaxed) as i64,
            repairs: h.repairs.load(Relaxed),
            steps: h.steps.load(Relaxed),
        }
    }

    /// A clean stop: the page stays (readers keep stamping on its line, and
    /// the next daemon adopts it); it records that no daemon runs.
    pub fn stop(self) {
        host_area(&self.base.page).daemon_pid.store(0, Relaxed);
    }
}

// The host page is Linux only.
#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;
    use crate::testutil::TestName;
    use crate::ErrorKind;

    /// A host directory of this test's own, removed on drop.
    struct HostDir(PathBuf);

    impl HostDir {
        fn new(tag: &str) -> HostDir {
            let dir =
                std::env::temp_dir().join(format!("hrts-hosttest-{}-{tag}", crate::os::pid()));
            let _ = std::fs::remove_dir_all(&dir);
            HostDir(dir)
        }
        /// A reader's configuration: the host page here, else the segment `t`.
        fn reader(&self, t: &TestName) -> Config {
            t.cfg().with_host_page(HostConfig {
                dir: self.0.clone(),
                user: "0".into(),
            })
        }
        fn daemon(&self, t: &TestName, tie_ms: u64) -> Config {
            let mut cfg = t.cfg();
            cfg.tracking.interval = Duration::from_millis(tie_ms);
            cfg
        }
    }

    impl Drop for HostDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn readers_map_the_daemons_page_read_only_and_never_write_it() {
        let (dir, t) = (HostDir::new("ro"), TestName::new("hostro"));
        let daemon = HostDaemon::start(&dir.0, &dir.daemon(&t, 10)).unwrap();
        assert!(!daemon.adopted());
        let reader = SharedBase::open(&dir.reader(&t)).unwrap();
        assert_eq!(reader.access(), Access::HostReader);
        let path = dir.0.join("time");
        assert_eq!(
            reader.timeline(),
            format!("host service {}", path.display())
        );
        // The kernel's own word: the mapping of the page is read-only, shared.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mine: Vec<&str> = maps
            .lines()
            .filter(|l| l.ends_with(&format!(" {}", path.display())))
            .collect();
        assert!(mine.iter().any(|l| l.contains(" r--s ")), "{mine:?}");
        // Stamps from both sides lie on one line.
        let a = daemon.base().now_ns_ordered();
        let b = reader.now_ns_ordered();
        let c = daemon.base().now_ns_ordered();
        assert!(a <= b + 1_000 && b <= c + 1_000, "{a} {b} {c}");
        // What only the service may do is refused with a message.
        let e = reader.set_base_info().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Permission);
        assert!(e.message().contains("hrts daemon"), "{}", e.message());
        // Unique stamps keep their state in the per-user segment.
        let (u1, u2) = (reader.next_unique().unwrap(), reader.next_unique().unwrap());
        assert!(u2 > u1);
        let user = SharedBase::open_segment(&t.cfg()).unwrap();
        assert_eq!(user.last_unique(), u2);
        // Ties are the daemon's: the reader's stamps never moved the line.
        let before = reader.info().tracking.ties;
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(12));
            reader.now_ns();
        }
        assert_eq!(reader.info().tracking.ties, before);
        daemon.round();
        assert!(reader.info().tracking.ties > before);
    }

    #[test]
    fn a_second_daemon_is_refused_and_a_restart_adopts_the_line() {
        let (dir, t) = (HostDir::new("adopt"), TestName::new("hostadopt"));
        let first = HostDaemon::start(&dir.0, &dir.daemon(&t, 10)).unwrap();
        let e = HostDaemon::start(&dir.0, &dir.daemon(&t, 10))
            .err()
            .expect("a second daemon on the same directory");
        assert!(
            e.message().contains("another hrts daemon"),
            "{}",
            e.message()
        );
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(5));
            first.round();
        }
        let generation = first.base().base().generation;
        let reader = SharedBase::open(&dir.reader(&t)).unwrap();
        let before = reader.now_ns_ordered();
        first.stop();
        let second = HostDaemon::start(&dir.0, &dir.daemon(&t, 10)).unwrap();
        assert!(second.adopted(), "{:?}", second.replaced());
        assert_eq!(second.base().base().generation, generation);
        assert_eq!(reader.service().unwrap().restarts, 1);
        assert!(reader.now_ns_ordered() >= before);
    }

    #[test]
    fn without_its_daemon_a_reader_past_the_range_stamps_the_exact_wide_value() {
        let (dir, t) = (HostDir::new("wide"), TestName::new("hostwide"));
        let mut cfg = dir.daemon(&t, 10);
        cfg.wrap_threshold = Some(1_000); // a microsecond or so of ticks
        let daemon = HostDaemon::start(&dir.0, &cfg).unwrap();
        let reader = SharedBase::open(&dir.reader(&t)).unwrap();
        std::thread::sleep(Duration::from_millis(20)); // no rounds: the daemon is "gone"
        let line = reader.base();
        let mut last = 0;
        for _ in 0..1_000 {
            let counter = reader.ticks();
            let ns = reader.ns_at(counter);
            assert_eq!(ns, reader.exact_ns(counter, &line));
            let stamp = reader.now_ns_ordered();
            assert!(stamp >= ns && stamp >= last);
            last = stamp;
        }
        assert_eq!(reader.base(), line, "a reader moved or tied the line");
        // No round since: a second from now it counts as gone; just after
        // its last round, as running.
        let service = reader.service().unwrap();
        assert!(service
            .gone_for(service.heartbeat_ns + 1_000_000_000)
            .is_some());
        assert!(service.gone_for(service.heartbeat_ns + 1_000_000).is_none());
        drop(daemon);
    }

    #[test]
    fn an_untrustworthy_page_is_refused_and_the_reader_says_why() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, t) = (HostDir::new("refuse"), TestName::new("hostrefuse"));
        let daemon = HostDaemon::start(&dir.0, &dir.daemon(&t, 10)).unwrap();
        let page = dir.0.join("time");
        let good = std::fs::read(&page).unwrap();
        daemon.stop();
        let cases: [(&str, &dyn Fn(), &str); 4] = [
            (
                "writable by others",
                &|| {
                    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o666)).unwrap()
                },
                "lets others write it",
            ),
            (
                "truncated",
                &|| std::fs::write(&page, [1u8; 100]).unwrap(),
                "100 bytes",
            ),
            (
                "foreign",
                &|| std::fs::write(&page, [7u8; 4096]).unwrap(),
                "not an hrts page",
            ),
            (
                "a symbolic link",
                &|| {
                    let real = dir.0.join("real");
                    std::fs::write(&real, &good).unwrap();
                    std::os::unix::fs::symlink(&real, &page).unwrap();
                },
                "symbolic link",
            ),
        ];
        for (what, damage, words) in cases {
            let _ = std::fs::remove_file(&page);
            std::fs::write(&page, &good).unwrap();
            std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o644)).unwrap();
            let _ = std::fs::remove_file(&page);
            if what != "a symbolic link" {
                std::fs::write(&page, &good).unwrap();
            }
            damage();
            let base = SharedBase::open(&dir.reader(&t)).unwrap();
            assert_eq!(base.access(), Access::User, "{what}");
            let timeline = base.timeline();
            assert!(
                timeline.starts_with(&format!("per-user segment {} (host page", t.0))
                    && timeline.contains(words),
                "{what}: {timeline}"
            );
        }
    }
}
