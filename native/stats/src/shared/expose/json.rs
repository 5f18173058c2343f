//! A snapshot as JSON, for programs: every process's handystats dump and the
//! aggregate over them, as `hrts stats --json` and `/stats.json` print it.

use crate::dump::{json_text, DumpJson};
use crate::shared::snapshot::{ProcessStats, Snapshot};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

impl Snapshot {
    /// `{"segment", "timestamp", "processes": [{"pid", "instance",
    /// "instance_id", "program", "state", "timestamp", "metrics"}], "aggregate", "damaged":
    /// {"process_slots": [...], "cells": [...]}}`, where `metrics` and
    /// `aggregate` are handystats dumps ([`Dump::to_json_value`](crate::Dump::to_json_value))
    /// and `damaged` lists the slot and cell indices left out as damaged.
    pub fn to_json_value(&self) -> Value {
        let processes: Vec<Value> = self
            .processes
            .iter()
            .map(|p| {
                json!({
                    "pid": p.pid,
                    "instance": p.instance,
                    "instance_id": p.instance_id,
                    "program": p.program,
                    "state": p.state.name(),
                    "timestamp": p.dump.timestamp,
                    "metrics": p.dump.to_json_value(),
                })
            })
            .collect();
        json!({
            "segment": self.segment,
            "timestamp": self.taken,
            "processes": processes,
            "aggregate": self.aggregate().to_json_value(),
            "damaged": {
                "process_slots": self.damaged_slots,
                "cells": self.damaged_cells,
            },
        })
    }

    /// [`to_json_value`](Snapshot::to_json_value)'s text, as one line,
    /// written a metric at a time (as [`Dump::to_json`](crate::Dump::to_json)).
    pub fn to_json(&self) -> String {
        json_text(&SnapshotJson(self))
    }
}

/// The keys of every object below are written in the order a `Value`'s map
/// (a `BTreeMap`) writes them, so that the text is `to_json_value`'s.
struct SnapshotJson<'a>(&'a Snapshot);

impl Serialize for SnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let snap = self.0;
        let mut map = s.serialize_map(Some(5))?;
        map.serialize_entry("aggregate", &DumpJson(&snap.aggregate()))?;
        map.serialize_entry(
            "damaged",
            &json!({
                "process_slots": snap.damaged_slots,
                "cells": snap.damaged_cells,
            }),
        )?;
        map.serialize_entry("processes", &Processes(&snap.processes))?;
        map.serialize_entry("segment", &snap.segment)?;
        map.serialize_entry("timestamp", &snap.taken)?;
        map.end()
    }
}

struct Processes<'a>(&'a [ProcessStats]);

impl Serialize for Processes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ProcessJson))
    }
}

struct ProcessJson<'a>(&'a ProcessStats);

impl Serialize for ProcessJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut map = s.serialize_map(Some(7))?;
        map.serialize_entry("instance", &p.instance)?;
        map.serialize_entry("instance_id", &p.instance_id)?;
        map.serialize_entry("metrics", &DumpJson(&p.dump))?;
        map.serialize_entry("pid", &p.pid)?;
        map.serialize_entry("program", &p.program)?;
        map.serialize_entry("state", p.state.name())?;
        map.serialize_entry("timestamp", &p.dump.timestamp)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use crate::shared::aggregate::tests::snapshot;
    use serde_json::json;

    #[test]
    fn json_has_the_contracts_shape() {
        let snap = sample();
        let v = snap.to_json_value();
        assert_eq!(v["segment"], "/test");
        assert_eq!(v["timestamp"], 5000);
        let procs = v["processes"].as_array().unwrap();
        assert_eq!(procs.len(), 3);
        for (j, p) in procs.iter().zip(&snap.processes) {
            assert_eq!(j["pid"], p.pid);
            assert_eq!(j["instance"], p.instance);
            assert_eq!(j["instance_id"], p.instance_id.as_str());
            assert_eq!(j["program"], p.program.as_str());
            assert_eq!(j["state"], p.state.name());
            assert_eq!(j["timestamp"], p.dump.timestamp);
            assert_eq!(j["metrics"], p.dump.to_json_value());
            assert_eq!(p.dump.to_json(), p.dump.to_json_value().to_string());
        }
        assert_eq!(procs[2]["state"], "exited");
        assert_eq!(v["aggregate"], snap.aggregate().to_json_value());
        assert_eq!(v["aggregate"]["requests"]["value"], 14);
        let text = snap.to_json();
        assert!(!text.contains('\n'));
        assert_eq!(text, v.to_string(), "the text written a metric at a time");
        let empty = snapshot(vec![]).to_json_value();
        assert_eq!(empty["processes"], json!([]));
        assert_eq!(empty["aggregate"], json!({}));
    }
}
