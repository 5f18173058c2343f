//! The native side of `io.hrts.Wtmlib`: WTMLIB's operations on the process's
//! segment (reliability evaluation, the creator's result, the raw counter,
//! the conversion parameters and the seconds before the counter wraps). The
//! numbers travel in `long[]` in the order `Wtmlib` documents
//! (`RESULT_FIELDS`, `PARAM_FIELDS`); each is the Rust core's value.

use crate::boundary::{base, direct, Failure, ThrowHrtsException};
use hrts_core::clock::{self, ConversionParams, Pace, ReliabilityConfig, Report};
use hrts_core::{EvaluationSummary, SharedBase};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jint, jlong};
use jni::{jni_mangle, EnvUnowned};
use std::time::Duration;

/// Fields of a result array: method, source, evaluated, monotonic, max shift
/// ticks, max shift ns, violations, probes, switches, elapsed ns, cpus, pace,
/// pace ppb, min pair hand-overs, significant (-1 for "none"/"unbounded"/"not
/// recorded" where the C struct has `UINT64_MAX`; significant 2: not recorded).
const RESULT_FIELDS: usize = 15;
/// Fields of a parameter array: frequency, mult, shift, modulus shift, ns per
/// modulus, seconds before wrap.
const PARAM_FIELDS: usize = 6;

fn pace(p: &Pace) -> (i64, i64) {
    let u = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    match *p {
        Pace::Same { bound_ppb } => (1, u(bound_ppb)),
        Pace::Differs { ppb } => (2, u(ppb)),
        Pace::Stuck => (3, 0),
        Pace::Unknown => (4, 0),
    }
}

fn opt(v: Option<u64>) -> i64 {
    v.and_then(|v| i64::try_from(v).ok()).unwrap_or(-1)
}

pub(crate) fn report_fields(r: &Report) -> [i64; RESULT_FIELDS] {
    let (p, ppb) = pace(&r.pace);
    let method = match r.method {
        clock::Method::CasOrderedProbes => 1,
        clock::Method::CpuSwitching => 2,
    };
    [
        method,
        r.source as i64,
        1,
        r.monotonic as i64,
        opt(r.max_shift_ticks),
        opt(r.max_shift_ns),
        opt(Some(r.violations)),
        opt(Some(r.probes)),
        opt(Some(r.switches)),
        opt(Some(r.elapsed_ns)),
        r.cpus.len() as i64,
        p,
        ppb,
        opt(r.min_pair_handovers),
        r.significant as i64,
    ]
}

pub(crate) fn creation_fields(b: &SharedBase) -> ([i64; RESULT_FIELDS], &'static str) {
    let info = b.info();
    let mut f = [
        1,
        info.source as i64,
        0,
        0,
        -1,
        -1,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        -1,
        2,
    ];
    match info.evaluation {
        Some(EvaluationSummary {
            monotonic,
            max_shift_ns,
            cpus,
            pace: ref p,
            ..
        }) => {
            let (code, ppb) = pace(p);
            f[2] = 1;
            f[3] = monotonic as i64;
            f[5] = opt(max_shift_ns);
            f[10] = cpus as i64;
            f[11] = code;
            f[12] = ppb;
            (
                f,
                "the segment records the verdicts, the shift in ns, the CPUs and the pace; \
                 the counts are not recorded",
            )
        }
        None => (f, "no evaluation ran when the segment was created"),
    }
}

pub(crate) fn param_fields(b: &SharedBase) -> [i64; PARAM_FIELDS] {
    let p = ConversionParams::new(&b.scale(), b.frequency());
    let wrap = clock::secs_before_wrap(clock::read(b.source()), b.frequency());
    [
        p.hz as i64,
        p.mult as i64,
        p.shift as i64,
        p.modulus_shift as i64,
        p.ns_per_modulus as i64,
        opt(Some(wrap)),
    ]
}

pub(crate) fn config(
    budget_ms: jlong,
    max_probes: jlong,
    min_handovers: jlong,
) -> ReliabilityConfig {
    let mut cfg = ReliabilityConfig::default();
    if budget_ms > 0 {
        cfg.budget = Duration::from_millis(budget_ms as u64);
    }
    if max_probes > 0 {
        cfg.max_probes = max_probes as u64;
    }
    if min_handovers != 0 {
        // Java's long: -1 is 2^64 - 1, as everywhere hrts passes unsigned values.
        cfg.min_handovers = min_handovers as u64;
    }
    cfg
}

fn check_out(env: &mut jni::Env<'_>, out: &JLongArray<'_>, want: usize) -> Result<(), Failure> {
    if out.is_null() || out.len(env)? < want {
        return Err(Failure::invalid_argument(format!(
            "the result array must hold at least {want} longs"
        )));
    }
    Ok(())
}

/// `static native String nativeEvaluate(int method, long budgetMs, long maxProbes,
/// long minHandovers, long[] out)`: the result's numbers into `out`, its note
/// returned.
#[jni_mangle("io.hrts.Wtmlib")]
pub fn native_evaluate<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    method: jint,
    budget_ms: jlong,
    max_probes: jlong,
    min_handovers: jlong,
    out: JLongArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        check_out(env, &out, RESULT_FIELDS)?;
        let b = base()?;
        let cfg = config(budget_ms, max_probes, min_handovers);
        let report = match method {
            1 => clock::evaluate_cop(b.source(), b.frequency(), &cfg)?,
            2 => clock::evaluate_cpu_switching(b.source(), b.frequency(), &cfg)?,
            other => {
                return Err(Failure::invalid_argument(format!(
                    "reliability method {other} is neither 1 (CAS-ordered probes) nor 2 (CPU \
                     switching)"
                )))
            }
        };
        out.set_region(env, 0, &report_fields(&report))?;
        Ok(JString::from_str(env, &report.note)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native String nativeCreation(long[] out)`: the creator's result.
#[jni_mangle("io.hrts.Wtmlib")]
pub fn native_creation<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    out: JLongArray<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        check_out(env, &out, RESULT_FIELDS)?;
        let (fields, note) = creation_fields(base()?);
        out.set_region(env, 0, &fields)?;
        Ok(JString::from_str(env, note)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native void nativeConversionParams(long[] out)`.
#[jni_mangle("io.hrts.Wtmlib")]
pub fn native_conversion_params<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    out: JLongArray<'local>,
) {
    env.with_env(|env| -> Result<(), Failure> {
        check_out(env, &out, PARAM_FIELDS)?;
        let fields = param_fields(base()?);
        Ok(out.set_region(env, 0, &fields)?)
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nativeCounter()`: the raw counter of the segment's source.
#[jni_mangle("io.hrts.Wtmlib")]
pub fn native_counter<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    direct(&mut env, || Ok(clock::read(base()?.source()) as jlong))
}

/// `static native long ticksToNanosInRust(long ticks)`: the Rust core's
/// conversion with the segment's parameters (the reference `Wtmlib`'s Java
/// conversion is tested against).
#[jni_mangle("io.hrts.Wtmlib")]
pub fn ticks_to_nanos_in_rust<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    ticks: jlong,
) -> jlong {
    direct(&mut env, || {
        let b = base()?;
        let p = ConversionParams::new(&b.scale(), b.frequency());
        Ok(p.ticks_to_ns(ticks as u64) as jlong)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_carry_the_core_values() {
        let name = format!("/hrts-jni-wtmlib-{}", std::process::id());
        let b = SharedBase::open(&hrts_core::Config::named(&name)).unwrap();
        let p = param_fields(&b);
        assert_eq!(p[0] as u64, b.frequency());
        assert_eq!(p[1] as u64, b.scale().mult);
        assert_eq!(p[2], 32);
        assert!(p[5] > 0);
        let cfg = config(10, 0, -1);
        assert_eq!(cfg.min_handovers, u64::MAX);
        assert_eq!(cfg.budget, Duration::from_millis(10));
        let r = clock::evaluate_cop(b.source(), b.frequency(), &cfg).unwrap();
        let f = report_fields(&r);
        assert_eq!((f[0], f[2]), (1, 1));
        assert_eq!(f[7] as u64, r.probes);
        assert_eq!(f[14], r.significant as i64);
        let (c, note) = creation_fields(&b);
        assert_eq!(c[14], 2);
        assert!(!note.is_empty());
        let _ = SharedBase::unlink(&name);
    }
}
