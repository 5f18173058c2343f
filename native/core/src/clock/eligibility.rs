//! Choosing a counter source.
//!
//! The decision is a pure function ([`decide`]) of the [`Facts`] gathered from the
//! machine ([`Facts::gather`]), so every branch is unit-tested without the hardware.
//! The runtime reliability evaluation ([`crate::clock::reliability`]) is a separate,
//! costlier step the segment creator runs on the chosen hardware source.

use crate::clock::source::SourceId;

/// The environment variable that forces a source: `tsc`, `cntvct`, `timebase` or
/// `monotonic-raw`.
pub const OVERRIDE_ENV: &str = "HRTS_SOURCE";

/// The source chosen, and why, in words meant for `hrts info` and error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The source to use.
    pub source: SourceId,
    /// One line saying why (and what was ignored), for `hrts info` and logs.
    pub reason: String,
}

/// The CPU architecture, as far as counter sources are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// x86-64: the TSC.
    X86_64,
    /// aarch64: `CNTVCT_EL0`.
    Aarch64,
    /// 64-bit Power (either endianness): the Time Base.
    Powerpc64,
    /// No hardware counter hrts can read.
    Other,
}

impl Arch {
    /// The architecture this library was built for.
    pub fn current() -> Arch {
        if cfg!(target_arch = "x86_64") {
            Arch::X86_64
        } else if cfg!(target_arch = "aarch64") {
            Arch::Aarch64
        } else if cfg!(target_arch = "powerpc64") {
            Arch::Powerpc64
        } else {
            Arch::Other
        }
    }

    /// The hardware counter this architecture has, if hrts can read one.
    pub fn hardware_source(self) -> Option<SourceId> {
        match self {
            Arch::X86_64 => Some(SourceId::Tsc),
            Arch::Aarch64 => Some(SourceId::Cntvct),
            Arch::Powerpc64 => Some(SourceId::TimeBase),
            Arch::Other => None,
        }
    }
}

/// Everything the choice depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The architecture this build runs on.
    pub arch: Arch,
    /// CPUID 0x80000007 EDX bit 8; `None` when not x86-64 or the leaf is missing.
    pub invariant_tsc: Option<bool>,
    /// The kernel's current clocksource (`/sys/.../current_clocksource`), trimmed.
    pub clocksource: Option<String>,
    /// The value of `HRTS_SOURCE`, if set.
    pub override_source: Option<String>,
    /// x86-64: whether `rdtsc` may execute in this process (`prctl(PR_GET_TSC)`;
    /// `Some(false)` when a sandbox made it fault). `None` if unknown or not x86-64.
    pub tsc_readable: Option<bool>,
}

impl Facts {
    /// Reads the facts of this machine and process. Never panics.
    pub fn gather() -> Facts {
        Facts {
            arch: Arch::current(),
            invariant_tsc: invariant_tsc(),
            clocksource: std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .ok()
            .map(|s| s.trim().to_string()),
            override_source: std::env::var_os(OVERRIDE_ENV)
                .map(|v| v.to_string_lossy().into_owned()),
            tsc_readable: tsc_readable(),
        }
    }
}

fn tsc_readable() -> Option<bool> {
    // Windows has no PR_GET_TSC: user mode may always read the TSC there.
    #[cfg(all(target_arch = "x86_64", windows))]
    {
        Some(true)
    }
    #[cfg(all(target_arch = "x86_64", not(windows)))]
    {
        let mut mode: libc::c_int = 0;
        // SAFETY: PR_GET_TSC writes one int through the pointer, which is a valid,
        // writable local; the unused arguments are zero as the man page requires.
        let rc = unsafe {
            libc::prctl(
                libc::PR_GET_TSC,
                &mut mode as *mut libc::c_int as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        (rc == 0).then_some(mode == libc::PR_TSC_ENABLE)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

fn invariant_tsc() -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    {
        crate::clock::source::arch::invariant_tsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Chooses the source for this machine. Never panics.
pub fn choose_source() -> Choice {
    decide(&Facts::gather())
}

/// The decision, as a pure function of the facts.
///
/// 1. `HRTS_SOURCE`, when it names a source this architecture can read, wins
///    (even a TSC the checks below would refuse: the user asked for it, and the
///    reason says so). An unknown or unreadable override is ignored, and the reason
///    says that too.
/// 2. x86-64: the TSC if CPUID declares it invariant, or else if the kernel itself
///    keeps time with it (clocksource `tsc`: the kernel has then checked it against
///    other clocks at boot and watches it); otherwise `CLOCK_MONOTONIC_RAW`.
/// 3. aarch64 / ppc64: the architected counter (`CNTVCT_EL0` / Time Base). Both are
///    defined as system-wide and constant-rate by their architectures.
/// 4. Anything else: `CLOCK_MONOTONIC_RAW`.
pub fn decide(facts: &Facts) -> Choice {
    let mut prefix = String::new();
    if facts.arch == Arch::X86_64 && facts.tsc_readable == Some(false) {
        // Executing rdtsc would kill the process (SIGSEGV): no override can help.
        if let Some(raw) = facts.override_source.as_deref() {
            prefix = format!("{OVERRIDE_ENV}={} ignored; ", raw.trim());
        }
        return Choice {
            source: SourceId::MonotonicRaw,
            reason: prefix
                + "monotonic-raw: rdtsc is disabled for this process (prctl PR_SET_TSC, e.g. by a sandbox)",
        };
    }
    if let Some(raw) = facts.override_source.as_deref() {
        match SourceId::from_name(raw) {
            Some(id)
                if facts.arch.hardware_source() == Some(id) || id == SourceId::MonotonicRaw =>
            {
                let mut reason = format!("{} forced by {OVERRIDE_ENV}={}", id.name(), raw.trim());
                if id == SourceId::Tsc && facts.invariant_tsc != Some(true) {
                    let cs = facts.clocksource.as_deref().unwrap_or("unknown");
                    reason.push_str(&format!(
                        " (warning: CPUID does not declare an invariant TSC; kernel clocksource is {cs})"
                    ));
                }
                return Choice { source: id, reason };
            }
            Some(id) => {
                prefix = format!(
                    "{OVERRIDE_ENV}={} ignored: {} cannot be read on {:?}; ",
                    raw.trim(),
                    id.name(),
                    facts.arch
                );
            }
            None => {
                prefix = format!(
                    "{OVERRIDE_ENV}={raw:?} ignored: not one of tsc, cntvct, timebase, monotonic-raw; "
                );
            }
        }
    }
    let (source, why) = match facts.arch {
        Arch::X86_64 => {
            let cs = facts.clocksource.as_deref();
            match (facts.invariant_tsc, cs) {
                (Some(true), _) => (SourceId::Tsc, "tsc: CPUID declares an invariant TSC".to_string()),
                (_, Some("tsc")) => (
                    SourceId::Tsc,
                    "tsc: CPUID does not declare an invariant TSC, but the kernel's clocksource is tsc"
                        .to_string(),
                ),
                (inv, cs) => (
                    SourceId::MonotonicRaw,
                    format!(
                        "monotonic-raw: the TSC is not trustworthy here (invariant TSC: {}; kernel clocksource: {})",
                        match inv {
                            Some(false) => "no",
                            Some(true) => "yes",
                            None => "unknown",
                        },
                        cs.unwrap_or("unknown")
                    ),
                ),
            }
        }
        Arch::Aarch64 => (
            SourceId::Cntvct,
            "cntvct: the aarch64 generic timer is architecturally system-wide and constant-rate"
                .to_string(),
        ),
        Arch::Powerpc64 => (
            SourceId::TimeBase,
            "timebase: the Power Time Base is synchronised across CPUs by the platform".to_string(),
        ),
        Arch::Other => (
            SourceId::MonotonicRaw,
            "monotonic-raw: no hardware counter hrts can read on this architecture".to_string(),
        ),
    };
    Choice {
        source,
        reason: prefix + &why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(arch: Arch, inv: Option<bool>, cs: Option<&str>, ov: Option<&str>) -> Facts {
        Facts {
            arch,
            invariant_tsc: inv,
            clocksource: cs.map(str::to_string),
            override_source: ov.map(str::to_string),
            tsc_readable: None,
        }
    }

    #[test]
    fn a_faulting_rdtsc_is_never_chosen_even_when_forced() {
        for ov in [None, Some("tsc")] {
            let mut f = facts(Arch::X86_64, Some(true), Some("tsc"), ov);
            f.tsc_readable = Some(false);
            let c = decide(&f);
            assert_eq!(c.source, SourceId::MonotonicRaw);
            assert!(c.reason.contains("rdtsc is disabled"), "{}", c.reason);
            assert_eq!(c.reason.contains("ignored"), ov.is_some(), "{}", c.reason);
            f.tsc_readable = Some(true);
            assert_eq!(decide(&f).source, SourceId::Tsc);
        }
    }

    #[test]
    fn x86_invariant_tsc_is_chosen() {
        let c = decide(&facts(Arch::X86_64, Some(true), Some("hpet"), None));
        assert_eq!(c.source, SourceId::Tsc);
        assert!(c.reason.contains("invariant"), "{}", c.reason);
    }

    #[test]
    fn x86_kernel_tsc_clocksource_is_enough() {
        for inv in [Some(false), None] {
            let c = decide(&facts(Arch::X86_64, inv, Some("tsc"), None));
            assert_eq!(c.source, SourceId::Tsc);
            assert!(c.reason.contains("clocksource is tsc"), "{}", c.reason);
        }
    }

    #[test]
    fn x86_untrusted_tsc_falls_back() {
        for (inv, cs) in [
            (Some(false), Some("hpet")),
            (None, None),
            (Some(false), Some("kvm-clock")),
        ] {
            let c = decide(&facts(Arch::X86_64, inv, cs, None));
            assert_eq!(c.source, SourceId::MonotonicRaw);
            assert!(c.reason.contains("not trustworthy"), "{}", c.reason);
            assert!(c.reason.contains(cs.unwrap_or("unknown")), "{}", c.reason);
        }
    }

    #[test]
    fn other_arches_use_their_counter_or_fall_back() {
        assert_eq!(
            decide(&facts(Arch::Aarch64, None, None, None)).source,
            SourceId::Cntvct
        );
        assert_eq!(
            decide(&facts(Arch::Powerpc64, None, Some("timebase"), None)).source,
            SourceId::TimeBase
        );
        let c = decide(&facts(Arch::Other, None, None, None));
        assert_eq!(c.source, SourceId::MonotonicRaw);
        assert!(c.reason.contains("no hardware counter"));
    }

    #[test]
    fn override_forces_a_readable_source() {
        let c = decide(&facts(
            Arch::X86_64,
            Some(true),
            Some("tsc"),
            Some("monotonic-raw"),
        ));
        assert_eq!(c.source, SourceId::MonotonicRaw);
        assert!(c.reason.contains("forced by HRTS_SOURCE"), "{}", c.reason);

        let c = decide(&facts(
            Arch::X86_64,
            Some(false),
            Some("hpet"),
            Some(" TSC "),
        ));
        assert_eq!(c.source, SourceId::Tsc);
        assert!(c.reason.contains("warning"), "{}", c.reason);

        let c = decide(&facts(Arch::X86_64, Some(true), None, Some("tsc")));
        assert!(!c.reason.contains("warning"), "{}", c.reason);

        assert_eq!(
            decide(&facts(Arch::Aarch64, None, None, Some("cntvct"))).source,
            SourceId::Cntvct
        );
        assert_eq!(
            decide(&facts(Arch::Other, None, None, Some("monotonic-raw"))).source,
            SourceId::MonotonicRaw
        );
    }

    #[test]
    fn unreadable_override_is_ignored_with_a_reason() {
        let c = decide(&facts(Arch::X86_64, Some(true), None, Some("timebase")));
        assert_eq!(c.source, SourceId::Tsc);
        assert!(
            c.reason
                .starts_with("HRTS_SOURCE=timebase ignored: timebase cannot be read"),
            "{}",
            c.reason
        );

        let c = decide(&facts(Arch::Aarch64, None, None, Some("tsc")));
        assert_eq!(c.source, SourceId::Cntvct);
        assert!(c.reason.contains("ignored"), "{}", c.reason);
    }

    #[test]
    fn unknown_override_is_ignored_with_a_reason() {
        for bad in ["hpet", "", "tsc,cntvct", "\u{fffd}"] {
            let c = decide(&facts(
                Arch::X86_64,
                Some(false),
                Some("acpi_pm"),
                Some(bad),
            ));
            assert_eq!(c.source, SourceId::MonotonicRaw);
            assert!(c.reason.contains("ignored: not one of"), "{}", c.reason);
        }
    }

    #[test]
    fn choice_on_this_machine_is_readable() {
        let c = choose_source();
        assert!(c.source.supported(), "{c:?}");
        assert!(!c.reason.is_empty());
        let f = Facts::gather();
        assert_eq!(f.arch, Arch::current());
        // The test process runs rdtsc elsewhere; it must be allowed to.
        let expected = cfg!(target_arch = "x86_64").then_some(true);
        assert_eq!(f.tsc_readable, expected);
    }
}
