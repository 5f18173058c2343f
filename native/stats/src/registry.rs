//! Metric names: looked up without locks, created on first use.

use hrts_core::{Error, ErrorKind, Result};
use std::sync::Mutex;

/// The three kinds of metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Counter,
    Gauge,
    Timer,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Timer => "timer",
        }
    }
}

/// Longest metric name, in bytes.
pub const MAX_NAME_LEN: usize = 255;
/// Most metrics one [`Stats`](crate::Stats) holds.
pub const MAX_METRICS: usize = 65_536;
/// Names the library keeps for its own gauges.
pub const RESERVED_PREFIX: &str = "hrts-stats.";

pub struct Meta {
    pub name: Box<str>,
    pub kind: Kind,
}

#[derive(Default)]
pub struct Registry {
    by_name: papaya::HashMap<Box<str>, u32>,
    metas: boxcar::Vec<Meta>,
    create: Mutex<()>,
}

/// Why a name cannot be a metric name, if it cannot.
pub fn check_name(name: &str) -> Result<()> {
    let bad = |why: String| Err(Error::new(ErrorKind::InvalidArgument, why));
    if name.is_empty() {
        return bad("a metric name must not be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return bad(format!(
            "metric name of {} bytes is too long (at most {MAX_NAME_LEN}); it starts with {:?}",
            name.len(),
            name.chars().take(40).collect::<String>()
        ));
    }
    if name.chars().any(char::is_control) {
        return bad(format!("metric name {name:?} contains a control character"));
    }
    Ok(())
}

impl Registry {
    /// The id of `name`, creating it as a `kind` metric on first use.
    pub fn id(&self, name: &str, kind: Kind) -> Result<u32> {
        if let Some(&id) = self.by_name.pin().get(name) {
            return self.check_kind(name, id, kind);
        }
        check_name(name)?;
        if name.starts_with(RESERVED_PREFIX) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("metric name {name:?}: names starting with {RESERVED_PREFIX:?} are the library's own"),
            ));
        }
        self.create_id(name, kind)
    }

    /// Creates one of the library's own metrics.
    pub(crate) fn internal(&self, name: &str, kind: Kind) -> u32 {
        self.create_id(name, kind)
            .expect("the library's own names are valid")
    }

    fn create_id(&self, name: &str, kind: Kind) -> Result<u32> {
        // Creation is rare and takes a lock so that two threads creating one
        // name agree on its id; lookups never take it.
        let _guard = self.create.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = self.by_name.pin().get(name) {
            return self.check_kind(name, id, kind);
        }
        if self.metas.count() >= MAX_METRICS {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "cannot create metric {name:?}: the limit of {MAX_METRICS} metrics is reached \
                     (names should not carry unbounded values such as request ids)"
                ),
            ));
        }
        let id = self.metas.push(Meta {
            name: name.into(),
            kind,
        }) as u32;
        self.by_name.pin().insert(name.into(), id);
        Ok(id)
    }

    fn check_kind(&self, name: &str, id: u32, kind: Kind) -> Result<u32> {
        let have = self.metas[id as usize].kind;
        if have == kind {
            Ok(id)
        } else {
            Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "metric {name:?} is a {}; it cannot be used as a {} (a name has one type)",
                    have.name(),
                    kind.name()
                ),
            ))
        }
    }

    /// The id of an existing metric.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.by_name.pin().get(name).copied()
    }

    pub fn meta(&self, id: u32) -> Option<&Meta> {
        self.metas.get(id as usize)
    }

    pub fn len(&self) -> usize {
        self.metas.count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_one_id_and_one_kind() {
        let r = Registry::default();
        let a = r.id("requests", Kind::Counter).unwrap();
        assert_eq!(r.id("requests", Kind::Counter).unwrap(), a);
        let b = r.id("latency", Kind::Timer).unwrap();
        assert_ne!(a, b);
        let e = r.id("requests", Kind::Gauge).unwrap_err();
        assert!(e.message().contains("is a counter") && e.message().contains("gauge"));
        assert_eq!(r.meta(b).unwrap().name.as_ref(), "latency");
    }

    #[test]
    fn bad_names_are_errors() {
        let r = Registry::default();
        assert!(r
            .id("", Kind::Counter)
            .unwrap_err()
            .message()
            .contains("empty"));
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert!(r
            .id(&long, Kind::Counter)
            .unwrap_err()
            .message()
            .contains("too long"));
        assert!(r.id(&"x".repeat(MAX_NAME_LEN), Kind::Counter).is_ok());
        assert!(r
            .id("a\nb", Kind::Counter)
            .unwrap_err()
            .message()
            .contains("control"));
        assert!(r
            .id("hrts-stats.mine", Kind::Gauge)
            .unwrap_err()
            .message()
            .contains("library"));
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn concurrent_creation_agrees() {
        let r = std::sync::Arc::new(Registry::default());
        let ids: Vec<Vec<u32>> = (0..4)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || {
                    (0..200)
                        .map(|i| r.id(&format!("m{i}"), Kind::Counter).unwrap())
                        .collect()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        assert!(ids.iter().all(|v| v == &ids[0]));
        assert_eq!(r.len(), 200);
    }
}
