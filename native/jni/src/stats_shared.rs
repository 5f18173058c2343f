//! JNI glue of `io.hrts.stats.SharedStats` and the shared timer instances of
//! `io.hrts.stats.Timer`: three cold-path natives of `StatsNative` with flat
//! arrays, so that Java builds its typed snapshot itself (a JNI call per
//! object would cost code size and time).

use crate::boundary::{Failure, ThrowHrtsException};
use crate::stats::{dump_array, long_array, object_array, string_array, utf8_arg};
use hrts_stats::shared::{ProcessState, StatsSegment};
use hrts_stats::{global, MetricId};
use jni::objects::{JByteArray, JClass, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_mangle, jni_str, Env, EnvUnowned};

/// The segment Java named (a UTF-8 byte[]), or for null the one of
/// `HRTS_STATS_SEGMENT`, else the user's default.
fn segment_name(env: &mut Env<'_>, name: &JByteArray<'_>) -> Result<String, Failure> {
    if name.is_null() {
        return Ok(hrts_stats::shared::name_from_env());
    }
    utf8_arg(env, name, "the segment name")
}

/// `static native Object[] nSnapshot(byte[] utf8Segment)`: {String segment,
/// long[] [taken, damaged process slots, damaged cells, then per process:
/// pid, instance, state (1 live, 2 exited)],
/// String[] programs, Object[] dumps (each process's, then the aggregate, as
/// `dump_array` encodes them)}. No segment of that name: no process, taken 0.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    segment: JByteArray<'local>,
) -> JObjectArray<'local> {
    env.with_env(|env| -> Result<JObjectArray<'local>, Failure> {
        let name = segment_name(env, &segment)?;
        let snap = StatsSegment::snapshot_of(&name)?;
        let aggregate = snap.aggregate();
        let mut longs = Vec::with_capacity(3 + 3 * snap.processes.len());
        longs.extend([
            snap.taken as jlong,
            snap.damaged_slots.len() as jlong,
            snap.damaged_cells.len() as jlong,
        ]);
        for p in &snap.processes {
            let state = match p.state {
                ProcessState::Live => 1,
                ProcessState::Exited => 2,
            };
            longs.extend([p.pid as jlong, p.instance as jlong, state]);
        }
        let object_class = env.find_class(jni_str!("java/lang/Object"))?;
        let n = snap.processes.len() as jint + 1;
        let dumps = env.new_object_array(n, &object_class, JObject::null())?;
        for (i, d) in snap
            .processes
            .iter()
            .map(|p| &p.dump)
            .chain([&aggregate])
            .enumerate()
        {
            let a = dump_array(env, d)?;
            dumps.set_element(env, i, &a)?;
            env.delete_local_ref(a);
        }
        let seg = env.new_string(&snap.segment)?;
        let la = long_array(env, &longs)?;
        let programs = string_array(env, snap.processes.iter().map(|p| p.program.as_str()))?;
        object_array(env, &[&seg, &la, &programs, &dumps])
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native long nTimerShared(long metric, long instance, int op)`:
/// op 0 starts a shared instance (returns 0); 1 stops it and records the
/// duration (returns it in ns, or -1 if no process had started it); 2 drops it
/// (returns 1 if one was running, else 0).
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_timer_shared<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    metric: jlong,
    instance: jlong,
    op: jint,
) -> jlong {
    env.with_env(|_| -> Result<jlong, Failure> {
        let id = MetricId::from_bits(metric as u64).ok_or_else(|| {
            Failure::invalid_argument(format!("hrts-stats: {metric} is no metric id"))
        })?;
        let stats = global();
        let instance = instance as u64;
        Ok(match op {
            0 => stats.timer_start_shared_id(id, instance).map(|()| 0)?,
            1 => stats
                .timer_stop_shared_id(id, instance, true)?
                .map_or(-1, |d| d.min(i64::MAX as u64) as jlong),
            2 => stats.timer_stop_shared_id(id, instance, false)?.is_some() as jlong,
            op => {
                return Err(Failure::invalid_argument(format!(
                    "hrts-stats: unknown shared timer operation {op}"
                )))
            }
        })
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native boolean nUnlinkSegment(byte[] utf8Segment)`: removes the
/// statistics segment (null: the default one); false if there was none.
#[jni_mangle("io.hrts.stats.StatsNative")]
pub fn n_unlink_segment<'local>(
    mut env: EnvUnowned<'local>,
    _c: JClass<'local>,
    segment: JByteArray<'local>,
) -> jboolean {
    env.with_env(|env| -> Result<jboolean, Failure> {
        Ok(StatsSegment::unlink(&segment_name(env, &segment)?)?)
    })
    .resolve::<ThrowHrtsException>()
}
