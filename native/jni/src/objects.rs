//! The Java objects the cold paths return, built from typed values through
//! their constructors (`FindClass` resolves `io.hrts` classes with the loader of
//! `io.hrts.Native`, whose method is running).

use crate::calls::to_jlong;
use hrts_core::SegmentInfo;
use jni::objects::{JObject, JString, JValue};
use jni::sys::jlong;
use jni::{jni_sig, jni_str, Env};

/// `new io.hrts.BaseInfo(frequency, counter, seconds, microseconds, nanoseconds,
/// generation)`: the record's canonical constructor.
pub(crate) fn base_info<'local>(
    env: &mut Env<'local>,
    b: hrts_core::BaseInfo,
) -> jni::errors::Result<JObject<'local>> {
    let class = env.find_class(jni_str!("io/hrts/BaseInfo"))?;
    env.new_object(
        &class,
        jni_sig!(
            (
                frequency: jlong,
                counter: jlong,
                seconds: jlong,
                microseconds: jlong,
                nanoseconds: jlong,
                generation: jlong,
            ) -> void
        ),
        &[
            JValue::Long(to_jlong(b.frequency)),
            // The counter is an unsigned 64-bit value: Java gets its bits.
            JValue::Long(b.counter as jlong),
            JValue::Long(to_jlong(b.seconds)),
            JValue::Long(to_jlong(b.microseconds)),
            JValue::Long(to_jlong(b.nanoseconds)),
            JValue::Long(to_jlong(b.generation)),
        ],
    )
}

/// `new io.hrts.SegmentInfo(...)`: every fact of [`SegmentInfo`], typed. The
/// unsigned 64-bit values are passed as their bits (Java shows them with
/// `Long.toUnsignedString`); an evaluation's unbounded shift is -1.
pub(crate) fn segment_info<'local>(
    env: &mut Env<'local>,
    info: &SegmentInfo,
) -> jni::errors::Result<JObject<'local>> {
    let class = env.find_class(jni_str!("io/hrts/SegmentInfo"))?;
    let name = JString::from_str(env, &info.name)?;
    let source = JString::from_str(env, info.source.name())?;
    let reason = JString::from_str(env, &info.reason)?;
    let (evaluated, monotonic, max_shift_ns, cpus) = match info.evaluation {
        None => (false, false, -1, 0),
        Some(e) => (
            true,
            e.monotonic,
            e.max_shift_ns.map_or(-1, to_jlong),
            e.cpus as i32,
        ),
    };
    env.new_object(
        &class,
        jni_sig!(
            (
                name: JString,
                layout_version: jlong,
                source: JString,
                reason: JString,
                frequency: jlong,
                calibration_spread_ppb: jlong,
                calibration_elapsed_ns: jlong,
                calibrations: jlong,
                evaluated: jboolean,
                evaluation_monotonic: jboolean,
                evaluation_max_shift_ns: jlong,
                evaluation_cpus: jint,
                creator_pid: jlong,
                creator_uid: jlong,
                created_epoch_ns: jlong,
                generation: jlong,
                base_counter: jlong,
                base_ns: jlong,
                mult: jlong,
                shift: jint,
                wrap_threshold_ticks: jlong,
                moves: jlong,
            ) -> void
        ),
        &[
            JValue::Object(&name),
            JValue::Long(info.layout_version.into()),
            JValue::Object(&source),
            JValue::Object(&reason),
            JValue::Long(info.frequency as jlong),
            JValue::Long(info.calibration_spread_ppb as jlong),
            JValue::Long(info.calibration_elapsed_ns as jlong),
            JValue::Long(info.calibrations.into()),
            JValue::Bool(evaluated),
            JValue::Bool(monotonic),
            JValue::Long(max_shift_ns),
            JValue::Int(cpus),
            JValue::Long(info.creator_pid.into()),
            JValue::Long(info.creator_uid.into()),
            JValue::Long(info.created_realtime_ns as jlong),
            JValue::Long(info.base.generation as jlong),
            JValue::Long(info.base.counter as jlong),
            JValue::Long(info.base.ns as jlong),
            JValue::Long(info.mult as jlong),
            JValue::Int(info.shift as i32),
            JValue::Long(info.wrap_threshold as jlong),
            JValue::Long(info.moves as jlong),
        ],
    )
}
