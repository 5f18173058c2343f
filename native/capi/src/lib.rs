//! hrts C ABI: the IBMTS C API, modernised, over the shared time base.
//!
//! Every exported function goes through one panic boundary
//! (`boundary::status_call` / `boundary::value_call`); status-returning ones
//! return `HRTS_SUCCESS` (0) or an `HRTS_E_*` code and leave a message for
//! `hrts_last_error()`. The functions in `default_segment` work on the
//! process's default segment (and the library-wide ones: version, errors,
//! ids); the `hrts_segment_*` ones in `handle` on handles the caller opens on
//! segments of its choice; `common` holds what both share (output pointers,
//! the bodies of the calls that exist twice); `segment_types` the C types of a
//! segment's mode and tracking state and the open options; `wtmlib` WTMLIB's
//! operations (reliability evaluation, raw counter, tick-to-ns conversion).
//! The header `include/hrts.h` is generated from this crate
//! by cbindgen and checked by the `header_is_fresh` test.

mod boundary;
mod common;
mod default_segment;
mod handle;
mod segment_types;
mod stats;
mod stats_json;
mod stats_shared;
mod status;
mod trace;
mod wtmlib;

pub use default_segment::*;
pub use handle::*;
pub use segment_types::{HrtsMode, HrtsOpenOptions, HrtsTrackingState, HRTS_OPEN_OPTIONS_VERSION};
pub use stats::*;
pub use stats_json::*;
pub use stats_shared::*;
pub use status::HrtsStatus;
pub use trace::*;
pub use wtmlib::*;

#[cfg(test)]
mod header_test;
