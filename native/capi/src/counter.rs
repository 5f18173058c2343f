//! The counter under the process's timeline, as WTMLIB offers it: the
//! cross-CPU reliability evaluation with its result
//! (`hrts_evaluate_reliability`, WTMLIB's `wtmlib_EvalTSCReliabilityCOP` and
//! `..CPUSW`), the result the segment's creator recorded
//! (`hrts_get_creation_reliability`), the raw counter (`hrts_get_counter`,
//! `WTMLIB_GET_TSC`), the conversion parameters with the seconds before the
//! counter wraps (`hrts_get_conversion_params`,
//! `wtmlib_GetTSCToNsecConversionParams`) and the conversion of elapsed ticks
//! (`hrts_ticks_to_ns`, `WTMLIB_TSC_TO_NSEC`; the header also has it inline as
//! `hrts_ticks_to_ns_inline`). Each wraps the Rust core's function of the same
//! purpose, so C gets exactly the Rust results.

use crate::boundary::c_calls;
use crate::handle::process_base;
use crate::status::{Failure, HrtsStatus};
use hrts_core::clock::{self, ConversionParams, Method, Pace, ReliabilityConfig, Report};
use hrts_core::SharedBase;
use std::time::Duration;

/// `hrts_evaluate_reliability` method: CAS-ordered probes, one thread per CPU
/// (WTMLIB's recommended method).
pub const HRTS_RELIABILITY_COP: u32 = 1;
/// `hrts_evaluate_reliability` method: one thread switching from CPU to CPU.
pub const HRTS_RELIABILITY_CPU_SWITCHING: u32 = 2;

/// `hrts_reliability.pace`: no pace check ran.
pub const HRTS_PACE_NOT_RUN: u32 = 0;
/// `hrts_reliability.pace`: one pace on every CPU, within `pace_ppb`.
pub const HRTS_PACE_SAME: u32 = 1;
/// `hrts_reliability.pace`: two CPUs' counters drift apart by at least `pace_ppb`.
pub const HRTS_PACE_DIFFERS: u32 = 2;
/// `hrts_reliability.pace`: a counter did not change.
pub const HRTS_PACE_STUCK: u32 = 3;
/// `hrts_reliability.pace`: too few hand-overs between CPUs to compare.
pub const HRTS_PACE_UNKNOWN: u32 = 4;

/// `hrts_reliability.significant`: not recorded (the creation-time result).
pub const HRTS_SIGNIFICANCE_UNKNOWN: u32 = 2;

/// The `hrts_reliability_options` layout this library was built with.
pub const HRTS_RELIABILITY_OPTIONS_VERSION: u32 = 1;

/// Bytes of `hrts_reliability.note`, its terminating NUL included.
pub const HRTS_RELIABILITY_NOTE_LEN: usize = 256;

// C knows this type as `hrts_reliability_options` (cbindgen.toml renames it).
/// How `hrts_evaluate_reliability` runs. Zero-initialise it, set `version` to
/// `HRTS_RELIABILITY_OPTIONS_VERSION` and the fields you want; a field left 0
/// takes the default. A NULL options pointer takes every default.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HrtsReliabilityOptions {
    /// `HRTS_RELIABILITY_OPTIONS_VERSION`.
    pub version: u32,
    /// Time spent probing, ms; 0: 50.
    pub budget_ms: u32,
    /// Stop after this many probes even within the budget; 0: 200000.
    pub max_probes: u64,
    /// The statistical significance asked for (WTMLIB's control for
    /// CAS-ordered probes): the fewest hand-overs every ordered pair of CPUs
    /// must show for the result to be `significant`; 0: 16; 1 accepts any
    /// sequence that bounds every pair.
    pub min_handovers: u64,
}

// C knows this type as `hrts_reliability` (cbindgen.toml renames it).
/// A reliability evaluation's result, WTMLIB's two estimations (the largest
/// shift between CPUs' counters, and whether counter values read one after
/// another on any CPUs increase) and its simpler checks (pace, a counter that
/// does not change), with what the numbers alone do not say in `note`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HrtsReliability {
    /// `HRTS_RELIABILITY_COP` or `HRTS_RELIABILITY_CPU_SWITCHING`.
    pub method: u32,
    /// The counter evaluated: 1 CLOCK_MONOTONIC_RAW, 2 TSC, 3 CNTVCT, 4 Time Base.
    pub source: u32,
    /// 1 when an evaluation ran; 0 for a creation-time result of a segment
    /// that ran none (software counter, or evaluation disabled).
    pub evaluated: u32,
    /// 1: no counter value was smaller than the one read before it.
    pub monotonic: u32,
    /// Upper bound on the shift between any two CPUs' counters, ticks;
    /// `UINT64_MAX`: unbounded (some pair never handed over) or not recorded.
    pub max_shift_ticks: u64,
    /// The same in nanoseconds (rounded up); `UINT64_MAX`: unbounded.
    pub max_shift_ns: u64,
    /// How many times the counter decreased in sequence order.
    pub violations: u64,
    /// Probes recorded (COP) or counter reads (CPU switching); 0: not recorded.
    pub probes: u64,
    /// Cross-CPU transitions (COP) or CPU switches made.
    pub switches: u64,
    /// How long the evaluation took, ns.
    pub elapsed_ns: u64,
    /// CPUs that took part.
    pub cpus: u32,
    /// `HRTS_PACE_*`.
    pub pace: u32,
    /// With `HRTS_PACE_SAME` the largest pace difference not ruled out, with
    /// `HRTS_PACE_DIFFERS` the smallest one proven, ppb.
    pub pace_ppb: u64,
    /// The fewest hand-overs over every ordered pair of CPUs; `UINT64_MAX`
    /// with a single CPU or when not recorded.
    pub min_pair_handovers: u64,
    /// 1: the probe sequence met the significance asked for; 0: it did not
    /// (`note` says so); `HRTS_SIGNIFICANCE_UNKNOWN`: not recorded.
    pub significant: u32,
    /// Unused, 0.
    pub reserved: u32,
    /// NUL-terminated text: a single CPU, CPUs that failed, pairs never
    /// bounded, too few hand-overs (cut to fit).
    pub note: [u8; HRTS_RELIABILITY_NOTE_LEN],
}

fn pace_code(p: &Pace) -> (u32, u64) {
    match *p {
        Pace::Same { bound_ppb } => (HRTS_PACE_SAME, bound_ppb),
        Pace::Differs { ppb } => (HRTS_PACE_DIFFERS, ppb),
        Pace::Stuck => (HRTS_PACE_STUCK, 0),
        Pace::Unknown => (HRTS_PACE_UNKNOWN, 0),
    }
}

fn note_bytes(text: &str) -> [u8; HRTS_RELIABILITY_NOTE_LEN] {
    let mut note = [0u8; HRTS_RELIABILITY_NOTE_LEN];
    let mut end = text.len().min(HRTS_RELIABILITY_NOTE_LEN - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    note[..end].copy_from_slice(&text.as_bytes()[..end]);
    note
}

impl HrtsReliability {
    pub(crate) fn from_report(r: &Report) -> HrtsReliability {
        let (pace, pace_ppb) = pace_code(&r.pace);
        HrtsReliability {
            method: match r.method {
                Method::CasOrderedProbes => HRTS_RELIABILITY_COP,
                Method::CpuSwitching => HRTS_RELIABILITY_CPU_SWITCHING,
            },
            source: r.source as u32,
            evaluated: 1,
            monotonic: r.monotonic.into(),
            max_shift_ticks: r.max_shift_ticks.unwrap_or(u64::MAX),
            max_shift_ns: r.max_shift_ns.unwrap_or(u64::MAX),
            violations: r.violations,
            probes: r.probes,
            switches: r.switches,
            elapsed_ns: r.elapsed_ns,
            cpus: u32::try_from(r.cpus.len()).unwrap_or(u32::MAX),
            pace,
            pace_ppb,
            min_pair_handovers: r.min_pair_handovers.unwrap_or(u64::MAX),
            significant: r.significant.into(),
            reserved: 0,
            note: note_bytes(&r.note),
        }
    }

    /// What the segment's creator recorded of its evaluation (CAS-ordered
    /// probes): the verdicts, the shift in ns, the CPUs and the pace.
    pub(crate) fn creation(base: &SharedBase) -> HrtsReliability {
        let info = base.info();
        let mut r = HrtsReliability {
            method: HRTS_RELIABILITY_COP,
            source: info.source as u32,
            evaluated: 0,
            monotonic: 0,
            max_shift_ticks: u64::MAX,
            max_shift_ns: u64::MAX,
            violations: 0,
            probes: 0,
            switches: 0,
            elapsed_ns: 0,
            cpus: 0,
            pace: HRTS_PACE_NOT_RUN,
            pace_ppb: 0,
            min_pair_handovers: u64::MAX,
            significant: HRTS_SIGNIFICANCE_UNKNOWN,
            reserved: 0,
            note: note_bytes(
                "the segment records the verdicts, the shift in ns, the CPUs and the pace; \
                 the counts are not recorded",
            ),
        };
        if let Some(e) = info.evaluation {
            let (pace, pace_ppb) = pace_code(&e.pace);
            r.evaluated = 1;
            r.monotonic = e.monotonic.into();
            r.max_shift_ns = e.max_shift_ns.unwrap_or(u64::MAX);
            r.cpus = e.cpus;
            r.pace = pace;
            r.pace_ppb = pace_ppb;
        } else {
            r.note = note_bytes("no evaluation ran when the segment was created");
        }
        r
    }
}

// C knows this type as `hrts_conversion_params` (cbindgen.toml renames it).
/// What converting elapsed counter ticks to nanoseconds needs (WTMLIB's
/// conversion parameters, fio's method): `ns = (ticks >> modulus_shift) *
/// ns_per_modulus + (((ticks & ((1 << modulus_shift) - 1)) * mult) >> shift)`,
/// with no division and no overflow for any tick count below 2^64 ns. Keep a
/// copy where the conversion runs (in cache, or in registers).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HrtsConversionParams {
    /// The counter frequency, Hz (the segment's calibrated one).
    pub frequency: u64,
    /// Nanoseconds per tick times 2^shift.
    pub mult: u64,
    /// The binary point of `mult` (32).
    pub shift: u32,
    /// A modulus is 2^modulus_shift ticks (about 4 s of ticks at most).
    pub modulus_shift: u32,
    /// Whole nanoseconds in one modulus.
    pub ns_per_modulus: u64,
}

impl HrtsConversionParams {
    fn of(p: &ConversionParams) -> HrtsConversionParams {
        HrtsConversionParams {
            frequency: p.hz,
            mult: p.mult,
            shift: p.shift,
            modulus_shift: p.modulus_shift,
            ns_per_modulus: p.ns_per_modulus,
        }
    }

    fn to_core(self) -> ConversionParams {
        ConversionParams {
            hz: self.frequency,
            mult: self.mult,
            shift: self.shift.min(63),
            modulus_shift: self.modulus_shift.min(63),
            ns_per_modulus: self.ns_per_modulus,
        }
    }
}

/// The configuration `opts` (NULL: the defaults) asks for.
///
/// # Safety
/// `opts` must be NULL or valid for reading one `hrts_reliability_options`.
unsafe fn config(
    opts: *const HrtsReliabilityOptions,
    function: &str,
) -> Result<ReliabilityConfig, Failure> {
    let mut cfg = ReliabilityConfig::default();
    // SAFETY: NULL or valid for one read, by this function's contract.
    let Some(o) = (unsafe { opts.as_ref() }) else {
        return Ok(cfg);
    };
    if o.version != HRTS_RELIABILITY_OPTIONS_VERSION {
        return Err(Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!(
                "{function}: hrts_reliability_options version {} is not \
                 {HRTS_RELIABILITY_OPTIONS_VERSION}, the one this libhrts knows; zero the struct \
                 and set version = HRTS_RELIABILITY_OPTIONS_VERSION",
                o.version
            ),
        ));
    }
    if o.budget_ms != 0 {
        cfg.budget = Duration::from_millis(o.budget_ms.into());
    }
    if o.max_probes != 0 {
        cfg.max_probes = o.max_probes;
    }
    if o.min_handovers != 0 {
        cfg.min_handovers = o.min_handovers;
    }
    Ok(cfg)
}

fn method_of(method: u32, function: &str) -> Result<Method, Failure> {
    match method {
        HRTS_RELIABILITY_COP => Ok(Method::CasOrderedProbes),
        HRTS_RELIABILITY_CPU_SWITCHING => Ok(Method::CpuSwitching),
        other => Err(Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!(
                "{function}: method {other} is neither HRTS_RELIABILITY_COP (1) \
                 nor HRTS_RELIABILITY_CPU_SWITCHING (2)"
            ),
        )),
    }
}

/// The evaluation of `b`'s counter at its calibrated frequency.
fn evaluate(
    b: &SharedBase,
    method: Method,
    cfg: &ReliabilityConfig,
) -> Result<HrtsReliability, Failure> {
    let report = match method {
        Method::CasOrderedProbes => clock::evaluate_cop(b.source(), b.frequency(), cfg)?,
        Method::CpuSwitching => clock::evaluate_cpu_switching(b.source(), b.frequency(), cfg)?,
    };
    Ok(HrtsReliability::from_report(&report))
}

/// `b`'s conversion parameters and the seconds before its counter wraps.
fn conversion(b: &SharedBase) -> (HrtsConversionParams, u64) {
    let p = ConversionParams::new(&b.scale(), b.frequency());
    let wrap = clock::secs_before_wrap(clock::read(b.source()), b.frequency());
    (HrtsConversionParams::of(&p), wrap)
}

c_calls! {
    /// WTMLIB's reliability evaluation of the process's segment's counter across
    /// the CPUs of the calling thread's affinity mask, by `method`
    /// (`HRTS_RELIABILITY_COP` or `HRTS_RELIABILITY_CPU_SWITCHING`), with `opts`
    /// (NULL: the defaults). Shifts are converted to ns at the segment's
    /// calibrated frequency. Blocks for about the budget (COP also waits up to
    /// 1 s for its threads to start). A sequence below the significance asked for
    /// is a result with `significant` 0, not an error.
    ///
    /// # Safety
    /// `opts` must be NULL or valid for reading one `hrts_reliability_options`;
    /// `out` NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `hrts_reliability`.
    unsafe fn hrts_evaluate_reliability(
        method: u32,
        opts: *const HrtsReliabilityOptions,
    ) -> (out: HrtsReliability) {
        // SAFETY: `opts` is NULL or valid for one read, by this function's contract.
        let cfg = unsafe { config(opts, FUNCTION) }?;
        let method = method_of(method, FUNCTION)?;
        evaluate(process_base()?, method, &cfg)
    }

    /// The reliability evaluation the process's segment's creator ran before it
    /// chose the counter (`evaluated` 0 if it ran none). The segment records the
    /// verdicts, the shift in ns, the CPUs and the pace; the counts are 0,
    /// `max_shift_ticks` and `min_pair_handovers` `UINT64_MAX`, `significant`
    /// `HRTS_SIGNIFICANCE_UNKNOWN`.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one
    /// `hrts_reliability`.
    unsafe fn hrts_get_creation_reliability() -> (out: HrtsReliability) {
        Ok(HrtsReliability::creation(process_base()?))
    }

    /// The raw counter of the process's segment's source (TSC, CNTVCT, Time Base,
    /// or CLOCK_MONOTONIC_RAW in ns), unordered like `WTMLIB_GET_TSC`: order it
    /// with the surrounding code yourself if you need to.
    ///
    /// # Safety
    /// `out` must be NULL (`HRTS_E_NULL_POINTER`) or valid for writing one `uint64_t`.
    unsafe fn hrts_get_counter() -> (out: u64) {
        Ok(clock::read(process_base()?.source()))
    }

    /// The parameters that convert elapsed ticks of the process's segment's
    /// counter to nanoseconds (at its calibrated frequency), and the whole
    /// seconds before that counter wraps to zero (WTMLIB's `secs_before_wrap`:
    /// make sure measurements end before it, or handle the wrap).
    ///
    /// # Safety
    /// `params` must be NULL or valid for writing one `hrts_conversion_params`,
    /// `secs_before_wrap` NULL or valid for writing one `uint64_t`; NULL gives
    /// `HRTS_E_NULL_POINTER` and nothing is written.
    unsafe fn hrts_get_conversion_params()
        -> (params: HrtsConversionParams, secs_before_wrap: u64)
    {
        Ok(conversion(process_base()?))
    }

    /// Nanoseconds in `ticks` elapsed counter ticks (a difference of two
    /// `hrts_get_counter` values), by `params` from `hrts_get_conversion_params`.
    /// Returns 0 for a NULL `params`.
    ///
    /// # Safety
    /// `params` must be NULL or valid for reading one `hrts_conversion_params`.
    #[on_panic(0)]
    unsafe fn hrts_ticks_to_ns(params: *const HrtsConversionParams, ticks: u64) -> u64 {
        // SAFETY: NULL or valid for one read, by this function's contract.
        match unsafe { params.as_ref() } {
            Some(p) => p.to_core().ticks_to_ns(ticks),
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrts_core::Config;
    use std::ffi::c_int;

    /// A segment of this test alone (the process's segment belongs to the
    /// crate's one test that opens it), removed when dropped.
    struct Private(String);
    impl Drop for Private {
        fn drop(&mut self) {
            let _ = SharedBase::unlink(&self.0);
        }
    }

    #[test]
    fn the_c_results_are_the_rust_results() {
        let name = Private(format!("/hrts-capi-wtmlib-{}", std::process::id()));
        let b = SharedBase::open(&Config::named(&name.0)).unwrap();
        let (p, wrap) = conversion(&b);
        let rust = ConversionParams::new(&b.scale(), b.frequency());
        assert_eq!(p.to_core(), rust);
        assert_eq!(p.frequency, b.frequency());
        assert!(wrap > 365 * 86_400, "{wrap} s before the counter wraps");
        for ticks in [0, 1, 12_345, b.frequency(), u64::MAX >> 8] {
            // SAFETY: a valid pointer to a local.
            assert_eq!(
                unsafe { hrts_ticks_to_ns(&p, ticks) },
                rust.ticks_to_ns(ticks)
            );
        }
        // SAFETY: NULL is allowed.
        assert_eq!(unsafe { hrts_ticks_to_ns(std::ptr::null(), 5) }, 0);

        let opts = HrtsReliabilityOptions {
            version: HRTS_RELIABILITY_OPTIONS_VERSION,
            budget_ms: 10,
            max_probes: 0,
            min_handovers: u64::MAX,
        };
        // SAFETY: a valid pointer to a local.
        let cfg = unsafe { config(&opts, "f") }.unwrap();
        assert_eq!(
            (cfg.budget, cfg.min_handovers),
            (Duration::from_millis(10), u64::MAX)
        );
        assert_eq!(cfg.max_probes, ReliabilityConfig::default().max_probes);
        for method in [HRTS_RELIABILITY_COP, HRTS_RELIABILITY_CPU_SWITCHING] {
            let r = evaluate(&b, method_of(method, "f").unwrap(), &cfg).unwrap();
            assert_eq!(
                (r.method, r.evaluated, r.source),
                (method, 1, b.source() as u32)
            );
            assert!(r.probes >= 2);
            let note = std::ffi::CStr::from_bytes_until_nul(&r.note).unwrap();
            if r.cpus > 1 {
                assert_eq!(r.significant, 0, "no sequence has 2^64 hand-overs");
                assert!(note.to_str().unwrap().contains("not significant"));
            } else {
                assert_eq!((r.significant, r.min_pair_handovers), (1, u64::MAX));
            }
        }
        let created = HrtsReliability::creation(&b);
        let info = b.info();
        match info.evaluation {
            Some(e) => {
                assert_eq!(created.evaluated, 1);
                assert_eq!(created.monotonic, u32::from(e.monotonic));
                assert_eq!(created.max_shift_ns, e.max_shift_ns.unwrap_or(u64::MAX));
                assert_eq!(created.cpus, e.cpus);
            }
            None => assert_eq!(created.evaluated, 0),
        }
        assert_eq!(created.significant, HRTS_SIGNIFICANCE_UNKNOWN);
    }

    #[test]
    fn bad_options_methods_and_null_outputs_are_refused_before_any_work() {
        let bad = HrtsReliabilityOptions {
            version: 99,
            ..HrtsReliabilityOptions::default()
        };
        let mut r = std::mem::MaybeUninit::<HrtsReliability>::uninit();
        // SAFETY: valid pointers.
        let rc = unsafe { hrts_evaluate_reliability(HRTS_RELIABILITY_COP, &bad, r.as_mut_ptr()) };
        assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int);
        let good = HrtsReliabilityOptions {
            version: HRTS_RELIABILITY_OPTIONS_VERSION,
            ..HrtsReliabilityOptions::default()
        };
        // SAFETY: valid pointers.
        let rc = unsafe { hrts_evaluate_reliability(7, &good, r.as_mut_ptr()) };
        assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int);
        // SAFETY: NULL outputs are refused without being written.
        unsafe {
            let null = HrtsStatus::E_NULL_POINTER as c_int;
            assert_eq!(
                hrts_evaluate_reliability(1, std::ptr::null(), std::ptr::null_mut()),
                null
            );
            assert_eq!(hrts_get_creation_reliability(std::ptr::null_mut()), null);
            assert_eq!(hrts_get_counter(std::ptr::null_mut()), null);
            let mut w = 0u64;
            assert_eq!(
                hrts_get_conversion_params(std::ptr::null_mut(), &mut w),
                null
            );
        }
    }

    #[test]
    fn long_notes_are_cut_at_a_character_boundary() {
        let n = note_bytes(&"é".repeat(300));
        let end = n.iter().position(|&c| c == 0).unwrap();
        assert!(end < HRTS_RELIABILITY_NOTE_LEN);
        assert!(std::str::from_utf8(&n[..end]).is_ok());
    }
}
