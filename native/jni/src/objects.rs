//! The Java objects the cold paths return, built from typed values through
//! their constructors or static factories (`FindClass` resolves `io.hrts`
//! classes with the loader of `io.hrts.Native`, whose method is running).

use crate::calls::{mode_code, to_jlong};
use hrts_core::clock::Pace;
use hrts_core::{Disruptions, SegmentInfo, TrackingState};
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

/// `io.hrts.TrackingState.fromNative(mode, ...)`: every field of
/// [`TrackingState`], the mode as its `io.hrts.Mode` code (the factory turns it
/// into the constant). Unsigned values are passed as their bits.
pub(crate) fn tracking_state<'local>(
    env: &mut Env<'local>,
    t: &TrackingState,
) -> jni::errors::Result<JObject<'local>> {
    let class = env.find_class(jni_str!("io/hrts/TrackingState"))?;
    env.call_static_method(
        &class,
        jni_str!("fromNative"),
        jni_sig!(
            (
                mode: jint,
                tie_interval_ns: jlong,
                max_slew_ppb: jlong,
                step_threshold_ns: jlong,
                ties: jlong,
                last_tie_epoch_ns: jlong,
                last_offset_ns: jlong,
                pending_ns: jlong,
                frequency_ppb: jlong,
                slew_ppb: jlong,
                correction_ppb: jlong,
                steps: jlong,
                last_step_ns: jlong,
                largest_step_ns: jlong,
                repairs: jlong,
            ) -> io.hrts.TrackingState
        ),
        &[
            JValue::Int(mode_code(t.mode)),
            JValue::Long(t.tie_interval_ns as jlong),
            JValue::Long(t.max_slew_ppb as jlong),
            JValue::Long(t.step_threshold_ns as jlong),
            JValue::Long(t.ties as jlong),
            JValue::Long(t.last_tie_ns as jlong),
            JValue::Long(t.last_offset_ns),
            JValue::Long(t.pending_ns),
            JValue::Long(t.frequency_ppb),
            JValue::Long(t.slew_ppb),
            JValue::Long(t.correction_ppb),
            JValue::Long(t.steps as jlong),
            JValue::Long(t.last_step_ns),
            JValue::Long(t.largest_step_ns),
            JValue::Long(t.repairs as jlong),
        ],
    )?
    .l()
}

/// An evaluation's pace check as `io.hrts.SegmentInfo.Pace.fromCode` takes
/// it: the constant's code and its ppb (the bound for `SAME`, the difference
/// for `DIFFERS`, -1 for the others).
fn pace_code(pace: &Pace) -> (i32, jlong) {
    match *pace {
        Pace::Same { bound_ppb } => (1, to_jlong(bound_ppb)),
        Pace::Differs { ppb } => (2, to_jlong(ppb)),
        Pace::Stuck => (3, -1),
        Pace::Unknown => (4, -1),
    }
}

/// `new io.hrts.SegmentInfo(...)`: every fact of [`SegmentInfo`] and the
/// page's disruption record (`None`: a page that records none), typed. The
/// unsigned 64-bit values are passed as their bits (Java shows them with
/// `Long.toUnsignedString`); an evaluation's unbounded shift is -1, its pace
/// code 0 when none ran; the last disruption's kind is its core code
/// (`SegmentInfo.DisruptionKind.fromCode`), 0 when none.
pub(crate) fn segment_info<'local>(
    env: &mut Env<'local>,
    info: &SegmentInfo,
    disruptions: Option<Disruptions>,
) -> jni::errors::Result<JObject<'local>> {
    let class = env.find_class(jni_str!("io/hrts/SegmentInfo"))?;
    let timeline = JString::from_str(env, &info.timeline)?;
    let service = match &info.service {
        Some(s) => JString::from_str(env, s)?,
        None => JString::null(),
    };
    let name = JString::from_str(env, &info.name)?;
    let source = JString::from_str(env, info.source.name())?;
    let reason = JString::from_str(env, &info.reason)?;
    let ordered_read = JString::from_str(env, info.ordered_read.name(info.source))?;
    let tracking = tracking_state(env, &info.tracking)?;
    let (evaluated, monotonic, max_shift_ns, cpus, (pace, pace_ppb)) = match info.evaluation {
        None => (false, false, -1, 0, (0, -1)),
        Some(e) => (
            true,
            e.monotonic,
            e.max_shift_ns.map_or(-1, to_jlong),
            e.cpus as i32,
            pace_code(&e.pace),
        ),
    };
    let (recorded, count, last_ns, last_kind, pending) = match disruptions {
        None => (false, 0, 0, 0, false),
        Some(d) => (
            true,
            d.count as jlong,
            d.last_ns as jlong,
            d.last_kind.map_or(0, |k| k as i32),
            d.pending,
        ),
    };
    env.new_object(
        &class,
        jni_sig!(
            (
                timeline: JString,
                service: JString,
                name: JString,
                layout_version: jlong,
                source: JString,
                reason: JString,
                ordered_read: JString,
                frequency: jlong,
                calibration_spread_ppb: jlong,
                calibration_elapsed_ns: jlong,
                calibrations: jlong,
                evaluated: jboolean,
                evaluation_monotonic: jboolean,
                evaluation_max_shift_ns: jlong,
                evaluation_cpus: jint,
                evaluation_pace: jint,
                evaluation_pace_ppb: jlong,
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
                offset_ns: jlong,
                tracking: io.hrts.TrackingState,
                statistics_valid: jboolean,
                disruption_record: jboolean,
                disruptions: jlong,
                last_disruption_epoch_ns: jlong,
                last_disruption_kind: jint,
                disruption_pending: jboolean,
            ) -> void
        ),
        &[
            JValue::Object(&timeline),
            JValue::Object(&service),
            JValue::Object(&name),
            JValue::Long(info.layout_version.into()),
            JValue::Object(&source),
            JValue::Object(&reason),
            JValue::Object(&ordered_read),
            JValue::Long(info.frequency as jlong),
            JValue::Long(info.calibration_spread_ppb as jlong),
            JValue::Long(info.calibration_elapsed_ns as jlong),
            JValue::Long(info.calibrations.into()),
            JValue::Bool(evaluated),
            JValue::Bool(monotonic),
            JValue::Long(max_shift_ns),
            JValue::Int(cpus),
            JValue::Int(pace),
            JValue::Long(pace_ppb),
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
            JValue::Long(info.offset_ns),
            JValue::Object(&tracking),
            JValue::Bool(info.tracking.statistics_valid),
            JValue::Bool(recorded),
            JValue::Long(count),
            JValue::Long(last_ns),
            JValue::Int(last_kind),
            JValue::Bool(pending),
        ],
    )
}
