//! A host daemon of the test's own (a page in a directory of the test's, a
//! round every 100 ms), and `hrts` commands on its page, for the tests of
//! what the daemon's rounds see (tests/vmclock.rs, clock_step.rs, leap.rs).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `hrts` on the host page in `dir`, trusting this user.
pub fn on_host(dir: &Path) -> Command {
    let mut c = super::command();
    c.env("HRTS_HOST", "on")
        .env("HRTS_HOST_DIR", dir)
        .env("HRTS_HOST_USER", hrts_core::process::euid().to_string())
        .env_remove("HRTS_TEST_BOUND")
        .env_remove("HRTS_TEST_COUNTER");
    c
}

/// A running `hrts daemon --foreground`, killed on drop.
pub struct Daemon {
    child: Child,
    pub page: PathBuf,
    pub log: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    /// Starts a daemon on a page in `dir` with a round every 100 ms and the
    /// environment `env` (besides the page's), and waits (up to 30 s) until
    /// its bound is synchronized.
    pub fn start(dir: &Path, env: &[(&str, &str)], wrap: impl FnOnce(&mut Command)) -> Daemon {
        let page = dir.join("page");
        fs::create_dir_all(&page).unwrap();
        let log = dir.join("daemon.log");
        let mut c = on_host(&page);
        c.args(["daemon", "--foreground", "--dir"])
            .arg(&page)
            .env("HRTS_TIE_INTERVAL_MS", "100")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).unwrap());
        wrap(&mut c);
        let d = Daemon {
            child: c.spawn().unwrap(),
            page,
            log,
        };
        d.wait_for("\nbound status: synchronized\n", Duration::from_secs(30));
        d
    }

    /// `hrts info` on the page.
    pub fn info(&self) -> String {
        let out = on_host(&self.page).arg("info").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `hrts info` contains `text`; returns it and how long it took.
    pub fn wait_for(&self, text: &str, limit: Duration) -> (String, Duration) {
        let started = Instant::now();
        loop {
            let info = self.info();
            if info.contains(text) {
                return (info, started.elapsed());
            }
            assert!(
                started.elapsed() < limit,
                "no {text:?} in {limit:?}: {info}\n{}",
                fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `hrts now --bound` on the page: `Ok((earliest, latest, status))`, or
    /// `Err((exit code, stderr))`.
    pub fn now_bound(&self) -> Result<(u64, u64, String), (i32, String)> {
        let out = on_host(&self.page)
            .args(["now", "--bound"])
            .output()
            .unwrap();
        if !out.status.success() {
            return Err((
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut f = text.split_whitespace();
        let mut num = || f.next().unwrap().parse::<u64>().unwrap();
        let (e, l) = (num(), num());
        Ok((e, l, f.next().unwrap_or_default().to_string()))
    }

    /// `hrts debug bound-check MS` on the page (its one line).
    pub fn bound_check(&self, ms: u64) -> Command {
        let mut c = on_host(&self.page);
        c.args(["debug", "bound-check", &ms.to_string()]);
        c
    }
}
