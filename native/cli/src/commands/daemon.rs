//! `hrts daemon`: the host's one writer. It makes (or adopts) the host page,
//! ties or moves it on its own timer, repairs it, and logs what it does to
//! stderr (the journal under systemd). `SIGTERM` or `SIGINT` stop it cleanly:
//! the page stays, readers keep stamping on its line, and the next daemon
//! adopts it without a seam.

use super::daemon_health::{self, Health};
use crate::exit::CliError;
use hrts_core::{Error, ErrorKind, HostConfig, HostDaemon, OpenRequest};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `hrts daemon`.
#[derive(clap::Args, Debug)]
pub struct DaemonArgs {
    /// The host page's directory (default: $HRTS_HOST_DIR, else /run/hrts); the page is DIR/time
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// chronyd's command socket, asked for the system clock's error bound at every tie (default
    /// /run/chrony/chronyd.sock when it exists; else, and when chronyd does not answer, the
    /// kernel's word)
    #[arg(long, value_name = "SOCKET")]
    pub chrony: Option<PathBuf>,
    /// Stay in the foreground, logging to stderr (systemd, containers); without it the daemon
    /// detaches once the page is ready, logs to DIR/daemon.log and its pid is printed
    #[arg(long)]
    pub foreground: bool,
}

pub fn run(args: &DaemonArgs) -> Result<(), CliError> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| HostConfig::from_env().dir);
    if !args.foreground {
        return detach(&dir);
    }
    // The default request: the page takes the environment's settings (the
    // core names it by its path and never looks for another host page).
    let cfg = OpenRequest::default().resolve()?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    #[cfg(feature = "testing")]
    if let Some(us) = std::env::var("HRTS_TEST_DAEMON_PAUSE_US")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        // Test builds only: hold the role this long in every tie, so that a
        // test's signals land in the middle of one.
        hrts_core::set_daemon_pause_for_test(us);
    }
    let chrony = args.chrony.clone().or_else(|| {
        Some(PathBuf::from(hrts_core::clock::chrony::DEFAULT_SOCKET)).filter(|p| p.exists())
    });
    if let Some(socket) = &chrony {
        match hrts_core::clock::bound::chrony(socket) {
            Ok(l) => log(&format!(
                "error bounds from chronyd ({}): {}, {} ns",
                socket.display(),
                l.status.name(),
                l.bound_ns
            )),
            Err(e) => log(&format!(
                "error bounds: chronyd at {} does not answer now ({e}); the kernel's word \
                 stands in until it does",
                socket.display()
            )),
        }
        hrts_core::clock::bound::use_chrony(socket.clone());
    } else {
        log("error bounds from the kernel (adjtimex); give --chrony SOCKET to ask chronyd");
    }
    let daemon = HostDaemon::start(&dir, &cfg)?;
    announce(&daemon);
    let mut health = match Health::start(&dir, &daemon) {
        Ok(h) => {
            log(&format!(
                "health statistics in {} (hrts stats, hrts stats serve)",
                daemon_health::path(&dir).display()
            ));
            Some(h)
        }
        Err(e) => {
            log(&format!(
                "no health statistics: {e}; the page is kept without them"
            ));
            None
        }
    };
    keep(&daemon, &stop, &mut health);
    log(&format!(
        "stopping: {} stays; readers stamp on its line until a daemon adopts it",
        daemon.path().display()
    ));
    if let Some(h) = health {
        h.stop();
    }
    daemon.stop();
    Ok(())
}

fn log(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "hrts daemon: {line}");
}

fn announce(daemon: &HostDaemon) {
    let base = daemon.base();
    let info = base.info();
    match daemon.replaced() {
        None => log(&format!(
            "adopted {} (generation {}, {} restarts): no step, no new generation",
            daemon.path().display(),
            info.base.generation,
            base.service().map_or(0, |s| s.restarts)
        )),
        Some(why) => log(&format!("made {} ({why})", daemon.path().display())),
    }
    log(&format!(
        "counter {} at {} Hz, {} mode, a round every {:.1} ms, pid {}",
        info.source.name(),
        info.frequency,
        info.tracking.mode.name(),
        daemon.round_interval().as_secs_f64() * 1e3,
        std::process::id()
    ));
}

/// Rounds at a steady pace until `stop` is set, logging what changes.
fn keep(daemon: &HostDaemon, stop: &AtomicBool, health: &mut Option<Health>) {
    let every = daemon.round_interval();
    let mut last = daemon.round();
    let mut next = Instant::now() + every;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        // After a stop (SIGSTOP, a suspended host) the next round is due at once.
        next = (next + every).max(now);
        let r = daemon.round();
        if let Some(h) = health {
            h.record(daemon, &r);
        }
        if r.repairs != last.repairs {
            log(&format!(
                "repaired a damaged header or line ({} repairs so far)",
                r.repairs
            ));
        }
        if r.steps != last.steps {
            log(&format!(
                "stepped forward with the system clock (calendar ahead by {} ns; generation {})",
                r.offset_ns, r.generation
            ));
        } else if r.generation != last.generation {
            log(&format!("new generation {}", r.generation));
        }
        last = r;
    }
}

/// Starts `hrts daemon --foreground` in a new session, its log in
/// `dir/daemon.log`, and returns once it keeps the page (or says why not).
fn detach(dir: &Path) -> Result<(), CliError> {
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(dir)?;
    let log_path = dir.join("daemon.log");
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.args(["daemon", "--foreground", "--dir"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log_file);
    // SAFETY: setsid is async-signal-safe, as a pre_exec closure must be.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        })
    };
    let mut child = cmd.spawn()?;
    let page = dir.join("time");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait()? {
            return Err(failed(format!(
                "hrts daemon exited at start ({status}); see {}",
                log_path.display()
            )));
        }
        let started = std::fs::read_to_string(&log_path)
            .is_ok_and(|l| l.contains(&format!("pid {}", child.id())));
        if started && page.exists() {
            return super::print(&format!(
                "hrts daemon: running as pid {}, keeping {}; log {}\n",
                child.id(),
                page.display(),
                log_path.display()
            ));
        }
        if Instant::now() > deadline {
            return Err(failed(format!(
                "hrts daemon (pid {}) did not get ready in 60 s; see {}",
                child.id(),
                log_path.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn failed(message: String) -> CliError {
    CliError::Core(Error::new(ErrorKind::Os, message))
}
