//! The native side of `io.hrts.stats.JsonDumps`: the latest periodic JSON
//! dump and the JSON dump file's last error, as Java strings (null if none).

use crate::boundary::{Failure, ThrowHrtsException};
use jni::objects::{JClass, JString};
use jni::{jni_mangle, EnvUnowned};

fn string_or_null<'local>(
    env: &mut jni::Env<'local>,
    text: Option<&str>,
) -> Result<JString<'local>, Failure> {
    Ok(match text {
        Some(t) => JString::from_str(env, t)?,
        None => JString::null(),
    })
}

/// `static native String nLatest()`.
#[jni_mangle("io.hrts.stats.JsonDumps")]
pub fn n_latest<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> JString<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let json = hrts_stats::global().last_json_dump();
        string_or_null(env, json.as_deref())
    })
    .resolve::<ThrowHrtsException>()
}

/// `static native String nFileError()`.
#[jni_mangle("io.hrts.stats.JsonDumps")]
pub fn n_file_error<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<_, Failure> {
        let error = hrts_stats::json_file::last_error();
        string_or_null(env, error.as_deref())
    })
    .resolve::<ThrowHrtsException>()
}
