//! A snapshot as JSON, for programs: every process's handystats dump and the
//! aggregate over them, as `hrts stats --json` and `/stats.json` print it.

use crate::shared::snapshot::Snapshot;
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

    /// [`to_json_value`](Snapshot::to_json_value) as one line of text.
    pub fn to_json(&self) -> String {
        self.to_json_value().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use crate::shared::aggregate::tests::snapshot;
    use serde_json::{json, Value};

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
        }
        assert_eq!(procs[2]["state"], "exited");
        assert_eq!(v["aggregate"], snap.aggregate().to_json_value());
        assert_eq!(v["aggregate"]["requests"]["value"], 14);
        let text = snap.to_json();
        assert!(!text.contains('\n'));
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
        let empty = snapshot(vec![]).to_json_value();
        assert_eq!(empty["processes"], json!([]));
        assert_eq!(empty["aggregate"], json!({}));
    }
}
