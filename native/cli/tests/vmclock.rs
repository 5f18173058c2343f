//! Issue 36, "Done when" 2: the hypervisor's VMClock page, given as a file
//! with the kernel's exact layout (`include/uapi/linux/vmclock-abi.h`,
//! written here byte by byte, as a hypervisor updates it: `seq_count` odd,
//! the fields, `seq_count` even), read by a running `hrts daemon` at each of
//! its rounds (`HRTS_VMCLOCK`). With real `hrts` processes:
//!
//! - a valid `time_maxerror_nanosec` widens the published bound by itself;
//! - a new `disruption_marker` gives `disrupted` from the daemon's next
//!   round on (a reader stamping throughout gets no interval from then, and
//!   none that misses `CLOCK_REALTIME`), then `synchronized` again once the
//!   rate is learned again;
//! - `clock_status` unreliable gives `unknown` (`hrts now --bound` exit 5,
//!   naming VMClock), synchronized again when the status is.
#![cfg(feature = "testing")]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

mod common;
use common::daemon::Daemon;

const SYNCHRONIZED: u8 = 2;
const UNRELIABLE: u8 = 4;

/// The page as the kernel's ABI lays it out (104 bytes, little-endian).
struct Page {
    seq: u32,
    marker: u64,
    status: u8,
    max_error_ns: Option<u64>,
}

impl Page {
    fn bytes(&self) -> [u8; 104] {
        let mut b = [0u8; 104];
        b[0..4].copy_from_slice(&0x4b4c_4356u32.to_le_bytes()); // magic "VCLK"
        b[4..8].copy_from_slice(&4096u32.to_le_bytes()); // size
        b[8..10].copy_from_slice(&1u16.to_le_bytes()); // version
        b[10] = 1; // counter_id: x86 TSC
        b[11] = 0; // time_type: UTC
        b[12..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.marker.to_le_bytes());
        let flags: u64 = if self.max_error_ns.is_some() {
            1 << 6
        } else {
            0
        };
        b[24..32].copy_from_slice(&flags.to_le_bytes());
        b[34] = self.status; // clock_status
        b[96..104].copy_from_slice(&self.max_error_ns.unwrap_or(0).to_le_bytes());
        b
    }

    /// Writes the page as a hypervisor updates it: `seq_count` odd, the
    /// fields, then `seq_count` even.
    fn update(&mut self, file: &Path) {
        let f = File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(file)
            .unwrap();
        if self.seq > 0 {
            f.write_at(&(self.seq + 1).to_le_bytes(), 12).unwrap();
        }
        self.seq += 2;
        let b = self.bytes();
        f.write_at(&b[..12], 0).unwrap();
        f.write_at(&b[16..], 16).unwrap();
        f.write_at(&b[12..16], 12).unwrap();
    }
}

fn half(b: (u64, u64, String)) -> u64 {
    (b.1 - b.0) / 2
}

#[test]
fn the_vmclock_page_disrupts_widens_and_voids_the_bound() {
    let dir = common::TempDir::new("vmclock");
    let file = dir.at("vmclock0");
    let mut page = Page {
        seq: 0,
        marker: 0x1234_5678,
        status: SYNCHRONIZED,
        max_error_ns: None,
    };
    page.update(&file);
    let vm = file.to_str().unwrap();
    let d = Daemon::start(
        &dir.0,
        &[
            ("HRTS_TEST_BOUND", "synchronized,50000"),
            ("HRTS_VMCLOCK", vm),
        ],
        |_| {},
    );
    let info = d.info();
    assert!(info.contains("\nbound ns: 50000\n"), "{info}");
    let narrow = half(d.now_bound().unwrap());

    // The max error: 2 ms on top of the service's 50 µs.
    page.max_error_ns = Some(2_000_000);
    page.update(&file);
    let (_, took) = d.wait_for("\nbound ns: 2050000\n", Duration::from_secs(5));
    let wide = half(d.now_bound().unwrap());
    eprintln!(
        "max error 2 ms: bound ns 50000 -> 2050000 after {took:?}; `hrts now --bound` half \
         width {narrow} -> {wide} ns"
    );
    assert!(
        wide >= 2_050_000 && wide < 2_050_000 + narrow,
        "{narrow} {wide}"
    );

    // The marker: a reader stamps 3 s, the marker bumped 1 s in.
    let reader = d.bound_check(3_000).output_spawned();
    std::thread::sleep(Duration::from_secs(1));
    let bumped = hrts_core::clock::realtime_ns();
    page.marker += 1;
    page.update(&file);
    let line = reader.finish();
    let first = common::field(&line, "first-unbounded");
    let (info, _) = d.wait_for("\nbound status: synchronized\n", Duration::from_secs(10));
    let seen: u64 = common::value(&info, "last disruption epoch ns:")
        .parse()
        .unwrap();
    eprintln!(
        "marker bumped: the daemon's round saw it {:.1} ms later, the reader's first stamp \
         without an interval {:.1} ms later, the last {:.1} ms later; {line}",
        (seen as f64 - bumped as f64) / 1e6,
        (first as f64 - bumped as f64) / 1e6,
        (common::field(&line, "last-unbounded") as f64 - bumped as f64) / 1e6,
    );
    assert!(first >= bumped, "disrupted before the bump: {line}");
    // One round is 100 ms; a loaded machine's rounds come late.
    assert!(seen >= bumped && seen - bumped < 1_000_000_000, "{info}");
    assert_eq!(common::field(&line, "misses-after-unbounded"), 0, "{line}");
    assert!(info.contains("\ndisruptions: 1\n"), "{info}");
    assert!(info.contains("VMClock disruption marker changed"), "{info}");

    // The hypervisor's clock unreliable: unknown, naming the page.
    page.status = UNRELIABLE;
    page.update(&file);
    let (info, _) = d.wait_for("\nbound status: unknown\n", Duration::from_secs(5));
    assert!(info.contains("\nbound source: vmclock\n"), "{info}");
    let (code, why) = d.now_bound().unwrap_err();
    eprintln!("unreliable: exit {code}: {}", why.trim());
    assert_eq!(code, 5);
    assert!(why.contains("VMClock"), "{why}");
    page.status = SYNCHRONIZED;
    page.update(&file);
    d.wait_for("\nbound status: synchronized\n", Duration::from_secs(5));
}

/// A command whose output is collected in the background.
trait Spawned {
    fn output_spawned(self) -> Reader;
}

struct Reader(std::thread::JoinHandle<std::process::Output>);

impl Spawned for std::process::Command {
    fn output_spawned(mut self) -> Reader {
        Reader(std::thread::spawn(move || self.output().unwrap()))
    }
}

impl Reader {
    fn finish(self) -> String {
        let out = self.0.join().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}
