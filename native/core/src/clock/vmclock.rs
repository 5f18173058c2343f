//! The hypervisor's VMClock page (Linux `drivers/ptp/ptp_vmclock.c`, ABI in
//! `include/uapi/linux/vmclock-abi.h`): what it says of the counter and the
//! clock, read at every tie of a writer.
//!
//! Of the page hrts uses the `disruption_marker` (a new value after a live
//! migration or anything else that disrupts the counter: every calibration
//! against it is void), the `clock_status` (the hypervisor's own reference:
//! unknown, initializing or unreliable means no bound holds), the time's
//! largest error (`time_maxerror_nanosec`, when its flag says it is valid),
//! and the leap indicator.
//!
//! The page is read with `pread` (the device's `read` retries until it has a
//! copy inside one even `seq_count`; a plain file, as tests give, is checked
//! here the same way), opened afresh at each look: a tie is at most once a
//! tie interval, and a file a test replaces is read as it is now. The default
//! device found missing is looked for again a minute later, not at every tie.
//!
//! All fields are little-endian, at fixed offsets (the struct has no holes):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | `magic` (`0x4b4c4356`, "VCLK") |
//! | 4 | 4 | `size` (of the region holding the structure) |
//! | 8 | 2 | `version` (1) |
//! | 10 | 1 | `counter_id` |
//! | 11 | 1 | `time_type` |
//! | 12 | 4 | `seq_count` (odd: an update is in progress) |
//! | 16 | 8 | `disruption_marker` |
//! | 24 | 8 | `flags` |
//! | 32 | 2 | `pad` |
//! | 34 | 1 | `clock_status` |
//! | 35 | 1 | `leap_second_smearing_hint` |
//! | 36 | 2 | `tai_offset_sec` |
//! | 38 | 1 | `leap_indicator` |
//! | 39 | 1 | `counter_period_shift` |
//! | 40 | 8 | `counter_value` |
//! | 48 | 8 | `counter_period_frac_sec` |
//! | 56 | 8 | `counter_period_esterror_rate_frac_sec` |
//! | 64 | 8 | `counter_period_maxerror_rate_frac_sec` |
//! | 72 | 8 | `time_sec` |
//! | 80 | 8 | `time_frac_sec` |
//! | 88 | 8 | `time_esterror_nanosec` |
//! | 96 | 8 | `time_maxerror_nanosec` |

use super::bound::{BoundSource, BoundStatus, Leap, Learned};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// `VMCLOCK_MAGIC`: "VCLK" as a little-endian u32.
pub const MAGIC: u32 = 0x4b4c_4356;
/// The bytes of `struct vmclock_abi` (version 1).
pub const ABI_SIZE: usize = 104;

pub const OFF_MAGIC: usize = 0;
pub const OFF_SIZE: usize = 4;
pub const OFF_VERSION: usize = 8;
pub const OFF_SEQ_COUNT: usize = 12;
pub const OFF_DISRUPTION_MARKER: usize = 16;
pub const OFF_FLAGS: usize = 24;
pub const OFF_CLOCK_STATUS: usize = 34;
pub const OFF_LEAP_INDICATOR: usize = 38;
pub const OFF_TIME_MAXERROR_NANOSEC: usize = 96;

/// `VMCLOCK_FLAG_TIME_MAXERROR_VALID`.
pub const FLAG_TIME_MAXERROR_VALID: u64 = 1 << 6;

/// `VMCLOCK_STATUS_*`.
pub const STATUS_UNKNOWN: u8 = 0;
pub const STATUS_INITIALIZING: u8 = 1;
pub const STATUS_SYNCHRONIZED: u8 = 2;
pub const STATUS_FREERUNNING: u8 = 3;
pub const STATUS_UNRELIABLE: u8 = 4;

/// `VMCLOCK_LEAP_*` (the ones that announce or are in a leap).
pub const LEAP_PRE_POS: u8 = 1;
pub const LEAP_PRE_NEG: u8 = 2;
pub const LEAP_POS: u8 = 3;

/// Environment variable: the VMClock device (default `/dev/vmclock0`; `off`
/// reads none).
pub const ENV_VMCLOCK: &str = "HRTS_VMCLOCK";
/// Where the kernel's driver puts the first device.
pub const DEFAULT_PATH: &str = "/dev/vmclock0";

/// What hrts reads of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub seq_count: u32,
    pub disruption_marker: u64,
    pub flags: u64,
    pub clock_status: u8,
    pub leap_indicator: u8,
    pub time_maxerror_ns: u64,
}

/// Why bytes are no VMClock page, or not a whole one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bad {
    Short(usize),
    Magic(u32),
    Version(u16),
    Size(u32),
    /// `seq_count` odd: the hypervisor is in the middle of an update.
    Updating,
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bad::Short(n) => write!(f, "only {n} bytes, the ABI has {ABI_SIZE}"),
            Bad::Magic(m) => write!(f, "magic {m:#x}, not {MAGIC:#x} (\"VCLK\")"),
            Bad::Version(v) => write!(f, "version {v}, not 1"),
            Bad::Size(s) => write!(f, "size {s}, below the ABI's {ABI_SIZE}"),
            Bad::Updating => write!(f, "seq_count stayed odd (an update in progress)"),
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

/// The page in `bytes` (at least the ABI's 104), checked.
pub fn parse(bytes: &[u8]) -> Result<Page, Bad> {
    if bytes.len() < ABI_SIZE {
        return Err(Bad::Short(bytes.len()));
    }
    let magic = u32_at(bytes, OFF_MAGIC);
    if magic != MAGIC {
        return Err(Bad::Magic(magic));
    }
    let version = u16_at(bytes, OFF_VERSION);
    if version != 1 {
        return Err(Bad::Version(version));
    }
    let size = u32_at(bytes, OFF_SIZE);
    if (size as usize) < ABI_SIZE {
        return Err(Bad::Size(size));
    }
    let seq_count = u32_at(bytes, OFF_SEQ_COUNT);
    if seq_count & 1 == 1 {
        return Err(Bad::Updating);
    }
    Ok(Page {
        seq_count,
        disruption_marker: u64_at(bytes, OFF_DISRUPTION_MARKER),
        flags: u64_at(bytes, OFF_FLAGS),
        clock_status: bytes[OFF_CLOCK_STATUS],
        leap_indicator: bytes[OFF_LEAP_INDICATOR],
        time_maxerror_ns: u64_at(bytes, OFF_TIME_MAXERROR_NANOSEC),
    })
}

/// Why a look at the device found no page.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    Bad(Bad),
}

/// The page at `path`: two copies with the same even `seq_count` and the
/// same bytes (a torn copy of a file differs from the next), tried for up
/// to 1 ms.
pub fn read(path: &Path) -> Result<Page, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let copy = || -> Result<[u8; ABI_SIZE], ReadError> {
        let mut b = [0u8; ABI_SIZE];
        let n = read_at(&file, &mut b).map_err(ReadError::Io)?;
        if n < ABI_SIZE {
            return Err(ReadError::Bad(Bad::Short(n)));
        }
        Ok(b)
    };
    let deadline = crate::os::monotonic_ns() + 1_000_000;
    loop {
        let a = copy()?;
        match parse(&a) {
            Ok(page) if copy()? == a => return Ok(page),
            Ok(_) | Err(Bad::Updating) if crate::os::monotonic_ns() < deadline => {
                std::thread::yield_now()
            }
            Ok(_) => return Err(ReadError::Bad(Bad::Updating)),
            Err(bad) => return Err(ReadError::Bad(bad)),
        }
    }
}

/// The first bytes of the file, without moving a shared offset.
#[cfg(not(windows))]
fn read_at(file: &std::fs::File, b: &mut [u8]) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, b, 0)
}

/// Windows has no VMClock device; a file named by `HRTS_VMCLOCK` is read all
/// the same (tests give one).
#[cfg(windows)]
fn read_at(file: &std::fs::File, b: &mut [u8]) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, b, 0)
}

/// Which device a writer reads (`HRTS_VMCLOCK`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub path: PathBuf,
    /// Named by the user: a page that cannot be read makes the bound
    /// unknown. The default device's absence says only that there is none.
    pub named: bool,
}

impl Device {
    /// `/dev/vmclock0`, if it exists.
    pub fn default_device() -> Option<Device> {
        Some(Device {
            path: PathBuf::from(DEFAULT_PATH),
            named: false,
        })
    }

    /// The device a value of `HRTS_VMCLOCK` names: unset or empty the
    /// default, `off` none, else an absolute path.
    pub fn from_value(value: Option<&str>) -> crate::Result<Option<Device>> {
        match value.map(str::trim) {
            None | Some("") => Ok(Device::default_device()),
            Some("off") => Ok(None),
            Some(p) if p.starts_with('/') => Ok(Some(Device {
                path: PathBuf::from(p),
                named: true,
            })),
            Some(_) => Err(crate::Error::new(
                crate::ErrorKind::InvalidArgument,
                format!(
                    "{ENV_VMCLOCK}={:?} is neither off nor an absolute path to the hypervisor's \
                     VMClock device (default {DEFAULT_PATH}); fix or unset it",
                    value.unwrap_or_default()
                ),
            )),
        }
    }
}

/// What a writer saw of the device at a tie, against its own last look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    /// The word to publish: the time service's, made unknown, free-running
    /// or wider by what the hypervisor says.
    pub learned: Learned,
    /// The disruption marker changed since this writer's last look.
    pub disrupted: bool,
}

/// One process's looks at the device (its last marker).
#[derive(Debug, Default)]
pub struct Watch {
    device: Option<Device>,
    last_marker: Mutex<Option<u64>>,
    /// `CLOCK_BOOTTIME` before which the default device, found missing, is
    /// not looked for again (0: look).
    absent_until: AtomicU64,
    absent_for_ns: u64,
}

/// How long the default device, found missing, counts as missing. Looking for
/// it is a failed `open` of a path (1.4 µs on a KVM guest, 2026-11-28, a third
/// of a tie), and the driver makes it at boot or when loaded, so a writer
/// looks once a minute instead of at every tie (once a second by default).
const ABSENT_FOR_NS: u64 = 60_000_000_000;

impl Watch {
    pub fn new(device: Option<Device>) -> Watch {
        Watch::looking_again_after(device, ABSENT_FOR_NS)
    }

    fn looking_again_after(device: Option<Device>, absent_for_ns: u64) -> Watch {
        Watch {
            device,
            last_marker: Mutex::new(None),
            absent_until: AtomicU64::new(0),
            absent_for_ns,
        }
    }

    /// Reads the device and applies what it says to `learned` (see [`apply`]).
    pub fn look(&self, learned: Learned) -> Look {
        let none = Look {
            learned,
            disrupted: false,
        };
        let Some(device) = &self.device else {
            return none;
        };
        let missing_until = self.absent_until.load(Relaxed);
        if missing_until != 0 && crate::os::boottime_ns() < missing_until {
            return none;
        }
        let page = match read(&device.path) {
            Ok(page) => Some(page),
            Err(ReadError::Io(e)) if !device.named && e.kind() == std::io::ErrorKind::NotFound => {
                let until = crate::os::boottime_ns().saturating_add(self.absent_for_ns);
                self.absent_until.store(until.max(1), Relaxed);
                return none;
            }
            Err(_) => None,
        };
        let mut last = self.last_marker.lock().unwrap_or_else(|e| e.into_inner());
        let disrupted = match (page, *last) {
            (Some(p), Some(m)) => p.disruption_marker != m,
            _ => false,
        };
        if let Some(p) = page {
            *last = Some(p.disruption_marker);
        }
        Look {
            learned: apply(learned, page.as_ref()),
            disrupted,
        }
    }
}

/// The word the time service gave (`learned`), as the hypervisor's page
/// (`None`: a device that was named but cannot be read) leaves it: an
/// unknown, initializing or unreliable hypervisor clock, or no page, makes
/// it unknown; a free-running one makes a synchronized word free-running;
/// a valid max error is added to the bound (the guest's clock follows the
/// hypervisor's time at best; whether chronyd's figure already counts that
/// error hrts cannot tell, so it counts it once more); a leap the time
/// service did not announce is taken from the page.
pub fn apply(learned: Learned, page: Option<&Page>) -> Learned {
    let Some(p) = page else {
        return Learned {
            status: BoundStatus::Unknown,
            source: BoundSource::Vmclock,
            ..learned
        };
    };
    let mut out = learned;
    match p.clock_status {
        STATUS_SYNCHRONIZED => {}
        STATUS_FREERUNNING if out.status == BoundStatus::Synchronized => {
            out.status = BoundStatus::FreeRunning;
        }
        STATUS_FREERUNNING => {}
        _ => {
            out.status = BoundStatus::Unknown;
            out.source = BoundSource::Vmclock;
        }
    }
    if p.flags & FLAG_TIME_MAXERROR_VALID != 0 {
        out.bound_ns = out.bound_ns.saturating_add(p.time_maxerror_ns);
    }
    if out.leap == Leap::None {
        out.leap = match p.leap_indicator {
            LEAP_PRE_POS | LEAP_POS => Leap::Insert,
            LEAP_PRE_NEG => Leap::Delete,
            _ => Leap::None,
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page image with the kernel's layout (tests write it to a file).
    fn image(marker: u64, status: u8, max_error_ns: Option<u64>, seq: u32) -> [u8; ABI_SIZE] {
        let mut b = [0u8; ABI_SIZE];
        b[OFF_MAGIC..OFF_MAGIC + 4].copy_from_slice(&MAGIC.to_le_bytes());
        b[OFF_SIZE..OFF_SIZE + 4].copy_from_slice(&4096u32.to_le_bytes());
        b[OFF_VERSION..OFF_VERSION + 2].copy_from_slice(&1u16.to_le_bytes());
        b[OFF_SEQ_COUNT..OFF_SEQ_COUNT + 4].copy_from_slice(&seq.to_le_bytes());
        b[OFF_DISRUPTION_MARKER..OFF_DISRUPTION_MARKER + 8].copy_from_slice(&marker.to_le_bytes());
        let flags = if max_error_ns.is_some() {
            FLAG_TIME_MAXERROR_VALID
        } else {
            0
        };
        b[OFF_FLAGS..OFF_FLAGS + 8].copy_from_slice(&flags.to_le_bytes());
        b[OFF_CLOCK_STATUS] = status;
        b[OFF_TIME_MAXERROR_NANOSEC..OFF_TIME_MAXERROR_NANOSEC + 8]
            .copy_from_slice(&max_error_ns.unwrap_or(0).to_le_bytes());
        b
    }

    fn word() -> Learned {
        Learned {
            status: BoundStatus::Synchronized,
            source: BoundSource::Test,
            bound_ns: 50_000,
            leap: Leap::None,
        }
    }

    #[test]
    fn the_kernels_layout_parses_and_bad_images_are_refused() {
        let b = image(7, STATUS_SYNCHRONIZED, Some(3_000), 42);
        let p = parse(&b).unwrap();
        assert_eq!(
            p,
            Page {
                seq_count: 42,
                disruption_marker: 7,
                flags: FLAG_TIME_MAXERROR_VALID,
                clock_status: STATUS_SYNCHRONIZED,
                leap_indicator: 0,
                time_maxerror_ns: 3_000,
            }
        );
        // The ABI's own bytes: "VCLK" first, the marker at 16.
        assert_eq!(&b[..4], b"VCLK");
        assert_eq!(b[16], 7);
        assert_eq!(parse(&b[..103]), Err(Bad::Short(103)));
        let mut odd = b;
        odd[OFF_SEQ_COUNT] = 43;
        assert_eq!(parse(&odd), Err(Bad::Updating));
        let mut foreign = b;
        foreign[0] = b'X';
        assert!(matches!(parse(&foreign), Err(Bad::Magic(_))));
        let mut v2 = b;
        v2[OFF_VERSION] = 2;
        assert_eq!(parse(&v2), Err(Bad::Version(2)));
        let mut small = b;
        small[OFF_SIZE..OFF_SIZE + 4].copy_from_slice(&64u32.to_le_bytes());
        assert_eq!(parse(&small), Err(Bad::Size(64)));
    }

    #[test]
    fn the_page_makes_the_word_unknown_free_running_or_wider() {
        let page = |status, max| parse(&image(1, status, max, 2)).unwrap();
        assert_eq!(
            apply(word(), Some(&page(STATUS_SYNCHRONIZED, None))),
            word()
        );
        let wide = apply(word(), Some(&page(STATUS_SYNCHRONIZED, Some(2_000_000))));
        assert_eq!(wide.bound_ns, 2_050_000);
        assert_eq!(
            apply(word(), Some(&page(STATUS_FREERUNNING, None))).status,
            BoundStatus::FreeRunning
        );
        for s in [STATUS_UNKNOWN, STATUS_INITIALIZING, STATUS_UNRELIABLE, 0x77] {
            let l = apply(word(), Some(&page(s, None)));
            assert_eq!(
                (l.status, l.source),
                (BoundStatus::Unknown, BoundSource::Vmclock)
            );
        }
        assert_eq!(apply(word(), None).status, BoundStatus::Unknown);
        let mut leap = image(1, STATUS_SYNCHRONIZED, None, 2);
        leap[OFF_LEAP_INDICATOR] = LEAP_PRE_POS;
        assert_eq!(
            apply(word(), Some(&parse(&leap).unwrap())).leap,
            Leap::Insert
        );
    }

    #[test]
    fn a_changed_marker_is_seen_once_and_a_named_device_that_is_gone_is_unknown() {
        let dir = std::env::temp_dir().join(format!("hrts-vmclock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vmclock");
        std::fs::write(&path, image(1, STATUS_SYNCHRONIZED, None, 2)).unwrap();
        let watch = Watch::new(Some(Device {
            path: path.clone(),
            named: true,
        }));
        assert!(
            !watch.look(word()).disrupted,
            "the first look sets the mark"
        );
        assert!(!watch.look(word()).disrupted);
        std::fs::write(&path, image(2, STATUS_SYNCHRONIZED, None, 4)).unwrap();
        assert!(watch.look(word()).disrupted);
        assert!(!watch.look(word()).disrupted, "seen once");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(watch.look(word()).learned.status, BoundStatus::Unknown);
        // The default device's absence is no device at all.
        let none = Watch::new(Some(Device {
            path: path.clone(),
            named: false,
        }));
        assert_eq!(none.look(word()).learned, word());
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn the_default_device_found_missing_is_looked_for_again_only_after_a_while() {
        let dir = std::env::temp_dir().join(format!("hrts-vmclock-absent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vmclock");
        let default_at = |absent_for_ns| {
            Watch::looking_again_after(
                Some(Device {
                    path: path.clone(),
                    named: false,
                }),
                absent_for_ns,
            )
        };
        let (minute, moment) = (default_at(60_000_000_000), default_at(1_000_000));
        assert_eq!(minute.look(word()).learned, word());
        assert_eq!(moment.look(word()).learned, word());
        // The device appears, as when its driver is loaded, with an
        // unreliable clock, which makes the word unknown.
        std::fs::write(&path, image(1, STATUS_UNRELIABLE, None, 2)).unwrap();
        assert_eq!(minute.look(word()).learned, word(), "missing for a minute");
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(
            moment.look(word()).learned.status,
            BoundStatus::Unknown,
            "seen again"
        );
        // Once found, it is read at every look, and its absence remembered again.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(moment.look(word()).learned, word());
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn hrts_vmclock_takes_off_or_an_absolute_path() {
        assert_eq!(Device::from_value(None).unwrap(), Device::default_device());
        assert_eq!(Device::from_value(Some("off")).unwrap(), None);
        assert_eq!(
            Device::from_value(Some("/tmp/v")).unwrap().unwrap().path,
            PathBuf::from("/tmp/v")
        );
        let e = Device::from_value(Some("vmclock0")).unwrap_err();
        assert!(
            e.message().contains("HRTS_VMCLOCK=\"vmclock0\""),
            "{}",
            e.message()
        );
    }
}
