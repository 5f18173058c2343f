//! Real chronyd processes for the tests of the chronyd client and of bounded
//! stamps: each runs with `-x` (it never adjusts the system clock), in the
//! foreground, with its configuration, sockets, pid file and log in a
//! directory of the test's own, usually inside a network namespace of the
//! test's own (only a loopback interface) so that its NTP port meets nothing
//! of the host's. chronyd comes from Debian's `chrony` package
//! (scripts/bootstrap.sh installs it); namespaces and chronyd need root.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The effective uid of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether this run is root; says what is skipped otherwise.
pub fn root_or_skip(what: &str) -> bool {
    let root = euid() == 0;
    if !root {
        eprintln!("skipped: {what}: needs root (CI runs as root)");
    }
    root
}

/// A program on PATH or in the system directories root's PATH has.
pub fn program(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} not found: install Debian's chrony package (scripts/bootstrap.sh)")
        })
}

/// A directory of the test's own under the temporary directory
/// (`hrts-chrony-test.PID.TAG.N`), removed on drop. Mode 0755: chronyd, once
/// it has dropped root for `_chrony`, must reach the sockets in here to answer.
pub struct TestDir(PathBuf);

impl TestDir {
    pub fn new(tag: &str) -> TestDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hrts-chrony-test.{}.{tag}.{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        TestDir(dir)
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.0
    }

    /// `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names in the directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` on a thread of its own in a new network namespace that has only a
/// loopback interface; every process the thread starts lives there too. The
/// namespace goes away with the thread and those processes, even on a panic
/// (which is passed on to the caller).
pub fn in_new_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let ip = program("ip");
    std::thread::spawn(move || {
        // SAFETY: unshare(CLONE_NEWNET) changes only this thread's network
        // namespace; it touches no memory of the process.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(
            rc,
            0,
            "unshare(CLONE_NEWNET): {}",
            io::Error::last_os_error()
        );
        let out = Command::new(ip)
            .args(["link", "set", "lo", "up"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ip link set lo up: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        f()
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The configuration of a chronyd that serves its own clock as stratum 1 on
/// 127.0.0.1:`port`, its command socket at `socket` (no UDP command port).
pub fn server_conf(port: u16, socket: &Path) -> String {
    format!(
        "local stratum 1\nallow 127.0.0.1\nbindaddress 127.0.0.1\nport {port}\ncmdport 0\n\
         bindcmdaddress {}\n",
        socket.display()
    )
}

/// A chronyd of the test's: `-x` (never adjusts the system clock), `-d` (in
/// the foreground, logging to a file of the test's), `-f` its own
/// configuration. Killed and reaped on drop (also when stopped).
pub struct Chronyd {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Chronyd {
    /// Starts chronyd `name` with `conf` (a `pidfile` line is added), its
    /// files in `dir`.
    pub fn start(dir: &Path, name: &'static str, conf: &str) -> Chronyd {
        let conf_path = dir.join(format!("{name}.conf"));
        let pid_file = dir.join(format!("{name}.pid"));
        fs::write(
            &conf_path,
            format!("{conf}pidfile {}\n", pid_file.display()),
        )
        .unwrap();
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).unwrap();
        let child = Command::new(program("chronyd"))
            .args(["-x", "-d", "-f"])
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("starting chronyd ({name}): {e}"));
        Chronyd { name, child, log }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its log so far, headed by its name: for a failing assertion's message.
    pub fn log(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        format!("--- chronyd {} ---\n{text}", self.name)
    }

    /// Panics, with its log, if it has exited.
    pub fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("chronyd {} exited ({status}):\n{}", self.name, self.log());
        }
    }
}

impl Drop for Chronyd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
