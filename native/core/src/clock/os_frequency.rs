//! The counter frequency the operating system reports, to set beside the one
//! hrts calibrates. Where it comes from, per counter:
//!
//! - Time Base (ppc64): the `timebase` line of `/proc/cpuinfo`, which the
//!   kernel takes from the device tree (`timebase-frequency`).
//! - TSC (x86-64), the first of: `/sys/devices/system/cpu/cpu0/tsc_freq_khz`
//!   (the kernel's `tsc_khz`, on kernels that export it); CPUID leaf 0x15
//!   (crystal clock × TSC/crystal ratio), taking the crystal from leaf 0x16's base
//!   frequency when leaf 0x15 leaves it 0, as Linux's `native_calibrate_tsc`
//!   does; the hypervisor leaf 0x40000010 (the TSC kHz a KVM or VMware host
//!   passes to its guests). Leaf 0x16 alone is not used: on CPUs without leaf
//!   0x15 it is the marketing base frequency, not the TSC's rate.
//! - CNTVCT (aarch64): `CNTFRQ_EL0`, which firmware programs and the kernel
//!   reports as the arch timer's rate.
//! - CLOCK_MONOTONIC_RAW: none (it counts nanoseconds by definition).
//!
//! A platform that reports none of these gives `None`.

use super::source::SourceId;

/// A relative difference beyond this many ppm between the calibrated and the
/// reported frequency is a warning: calibration agrees with a correct report
/// to a few ppm (crystal tolerances reach ~100 ppm), so a larger gap means the
/// report or the calibration describes another clock.
pub const DISAGREEMENT_WARN_PPM: f64 = 1000.0;

/// A frequency the operating system reports, and where it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OsFrequency {
    pub hz: u64,
    /// Where the figure came from (`/proc/cpuinfo timebase`, `CPUID leaf 0x15`...).
    pub from: &'static str,
}

/// The reported frequency of `id`'s counter on this machine, if any.
pub fn os_frequency(id: SourceId) -> Option<OsFrequency> {
    match id {
        SourceId::MonotonicRaw => None,
        #[cfg(target_arch = "x86_64")]
        SourceId::Tsc => x86::tsc(),
        #[cfg(target_arch = "aarch64")]
        SourceId::Cntvct => super::source::nominal_frequency(id).map(|hz| OsFrequency {
            hz,
            from: "CNTFRQ_EL0",
        }),
        #[cfg(target_arch = "powerpc64")]
        SourceId::TimeBase => super::source::nominal_frequency(id).map(|hz| OsFrequency {
            hz,
            from: "/proc/cpuinfo timebase",
        }),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A `tsc_freq_khz` file's content, in Hz.
pub fn parse_khz(text: &str) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|k| *k > 0)
        .and_then(|k| k.checked_mul(1000))
}

/// The TSC frequency from CPUID leaf 0x15 (`eax` denominator, `ebx` numerator,
/// `ecx` crystal Hz) and, when `ecx` is 0, leaf 0x16's base MHz
/// (`base_mhz`), as Linux computes it.
pub fn tsc_from_cpuid(eax: u32, ebx: u32, ecx: u32, base_mhz: Option<u32>) -> Option<u64> {
    let (den, num) = (eax as u64, ebx as u64);
    if den == 0 || num == 0 {
        return None;
    }
    let crystal = match ecx {
        0 => {
            // base = crystal × num / den, so crystal = base × den / num.
            let base_hz = base_mhz.filter(|m| *m > 0)? as u64 * 1_000_000;
            base_hz * den / num
        }
        c => c as u64,
    };
    Some(crystal * num / den)
}

/// `(calibrated − reported) / reported`, in ppm.
pub fn difference_ppm(calibrated_hz: u64, reported_hz: u64) -> f64 {
    if reported_hz == 0 {
        return f64::INFINITY;
    }
    (calibrated_hz as f64 - reported_hz as f64) / reported_hz as f64 * 1e6
}

/// Whether a difference is large enough to warn about.
pub fn disagrees(ppm: f64) -> bool {
    ppm.abs() > DISAGREEMENT_WARN_PPM
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::OsFrequency;
    use core::arch::x86_64::{__cpuid, __cpuid_count};

    const SYSFS: &str = "/sys/devices/system/cpu/cpu0/tsc_freq_khz";

    // `__cpuid` is a safe function in recent Rust; the unsafe blocks keep the
    // crate building with the minimum supported Rust, where it is not.
    #[allow(unused_unsafe)]
    pub fn tsc() -> Option<OsFrequency> {
        if let Some(hz) = std::fs::read_to_string(SYSFS)
            .ok()
            .and_then(|t| super::parse_khz(&t))
        {
            return Some(OsFrequency {
                hz,
                from: "sysfs tsc_freq_khz (the kernel's tsc_khz)",
            });
        }
        // SAFETY: CPUID leaf 0 is always valid.
        let max = unsafe { __cpuid(0) }.eax;
        if max >= 0x15 {
            // SAFETY: the leaf is within the reported maximum.
            let r = unsafe { __cpuid_count(0x15, 0) };
            let base = if max >= 0x16 {
                // SAFETY: the leaf is within the reported maximum.
                Some(unsafe { __cpuid_count(0x16, 0) }.eax & 0xffff)
            } else {
                None
            };
            if let Some(hz) = super::tsc_from_cpuid(r.eax, r.ebx, r.ecx, base) {
                let from = if r.ecx != 0 {
                    "CPUID leaf 0x15 (crystal clock × ratio)"
                } else {
                    "CPUID leaves 0x15 and 0x16 (ratio × crystal from the base frequency)"
                };
                return Some(OsFrequency { hz, from });
            }
        }
        // SAFETY: leaf 1 is always valid.
        let hypervisor = unsafe { __cpuid(1) }.ecx & (1 << 31) != 0;
        if hypervisor {
            // SAFETY: hypervisor leaves from 0x40000000 exist when bit 31 is set;
            // 0x40000000 EAX is the maximum hypervisor leaf.
            let max_hv = unsafe { __cpuid(0x4000_0000) }.eax;
            if max_hv >= 0x4000_0010 {
                // SAFETY: within the reported hypervisor maximum.
                let khz = unsafe { __cpuid(0x4000_0010) }.eax as u64;
                if khz != 0 {
                    return Some(OsFrequency {
                        hz: khz * 1000,
                        from: "hypervisor CPUID leaf 0x40000010 (the host's TSC kHz)",
                    });
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::parse_cpuinfo_timebase;
    use super::*;

    #[test]
    fn cpuinfo_timebase_line_is_parsed() {
        let s = "processor\t: 0\ncpu\t\t: POWER9\nclock\t\t: 2200.000000MHz\n\ntimebase\t: 512000000\nplatform\t: PowerNV\n";
        assert_eq!(parse_cpuinfo_timebase(s), Some(512_000_000));
        assert_eq!(parse_cpuinfo_timebase("timebase : zero\n"), None);
        assert_eq!(parse_cpuinfo_timebase("timebase : 0\n"), None);
        assert_eq!(parse_cpuinfo_timebase("model name : x\n"), None);
    }

    #[test]
    fn khz_and_cpuid_figures_are_converted() {
        assert_eq!(parse_khz("2592000\n"), Some(2_592_000_000));
        assert_eq!(parse_khz("0"), None);
        assert_eq!(parse_khz("fast"), None);
        // Skylake client: 24 MHz crystal × 176/2.
        assert_eq!(
            tsc_from_cpuid(2, 176, 24_000_000, None),
            Some(2_112_000_000)
        );
        // Crystal not enumerated: from the 2100 MHz base, crystal = 2100 × 2/175.
        assert_eq!(tsc_from_cpuid(2, 175, 0, Some(2100)), Some(2_100_000_000));
        assert_eq!(tsc_from_cpuid(2, 175, 0, None), None);
        assert_eq!(tsc_from_cpuid(0, 175, 24_000_000, None), None);
    }

    #[test]
    fn differences_and_warnings() {
        assert_eq!(difference_ppm(1_000_100, 1_000_000), 100.0);
        assert_eq!(difference_ppm(999_000, 1_000_000), -1000.0);
        assert!(!disagrees(-1000.0));
        assert!(disagrees(1000.5));
        assert!(disagrees(difference_ppm(1, 0)));
    }

    #[test]
    fn this_machine_reports_a_plausible_figure_or_none() {
        assert_eq!(os_frequency(SourceId::MonotonicRaw), None);
        if let Some(id) = SourceId::native() {
            if let Some(f) = os_frequency(id) {
                assert!((1_000_000..=10_000_000_000).contains(&f.hz), "{f:?}");
                assert!(!f.from.is_empty());
            }
        }
        if cfg!(target_arch = "aarch64") {
            assert!(os_frequency(SourceId::Cntvct).is_some());
        }
    }
}
