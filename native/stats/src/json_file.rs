//! The periodic JSON dump's file target (`json-dump.file`): each periodic dump
//! is written to `FILE.tmp` and renamed over `FILE`, so a reader always finds
//! a whole dump, from any language or tool. A failure (a missing directory, a
//! full disk) does not stop the statistics: [`last_error`] says what happened.

use hrts_core::{Error, ErrorKind, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static LAST_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// `json-dump.file` of a configuration's `json-dump` section, if set.
pub(crate) fn configured(section: &Map<String, Value>, name: &str) -> Result<Option<PathBuf>> {
    match section.get("file") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(PathBuf::from(s))),
        Some(other) => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("statistics configuration key {name}.file: expected a file name, got {other}"),
        )),
    }
}

/// Writes `json` to `path` (the configured `json-dump.file`), if both exist.
pub(crate) fn write(path: Option<&Path>, json: Option<&str>) {
    let (Some(path), Some(json)) = (path, json) else {
        return;
    };
    let result = replace(path, json);
    let mut last = LAST_ERROR.lock().unwrap_or_else(|p| p.into_inner());
    *last = result.err().map(|e| e.to_string());
}

fn replace(path: &Path, json: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let fail = |what: &str, e: std::io::Error| {
        Error::from_io(
            format!("cannot {what} the JSON dump file {}", path.display()),
            &e,
            "check that its directory exists and is writable (json-dump.file)",
        )
    };
    std::fs::write(&tmp, json).map_err(|e| fail("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| fail("replace", e))
}

/// Why the last write of the JSON dump file failed; `None` after a success
/// or when none was attempted.
pub fn last_error() -> Option<String> {
    LAST_ERROR.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_file_is_configured_replaced_whole_and_failures_are_kept() {
        let cfg =
            Config::from_json(r#"{"json-dump": {"interval": 10, "file": "/x/d.json"}}"#).unwrap();
        assert_eq!(cfg.json_dump_file.as_deref(), Some(Path::new("/x/d.json")));
        assert_eq!(Config::default().json_dump_file, None);
        let e = Config::from_json(r#"{"json-dump": {"file": 5}}"#).unwrap_err();
        assert!(e.message().contains("json-dump.file"), "{e}");
        let e = Config::from_json(r#"{"metrics-dump": {"file": "a"}}"#).unwrap_err();
        assert!(e.message().contains("file"), "{e}");

        let dir = std::env::temp_dir().join(format!("hrts-json-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dump.json");
        write(Some(&path), Some("{\"a\":1}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}");
        write(Some(&path), Some("{}"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert!(!dir.join("dump.json.tmp").exists());
        assert_eq!(last_error(), None);
        write(Some(&dir.join("missing/dump.json")), Some("{}"));
        let err = last_error().unwrap();
        assert!(
            err.contains("missing/dump.json") && err.contains("json-dump.file"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
