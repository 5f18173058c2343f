//! hrts C ABI: the IBMTS C API, modernised, over the shared time base.
//!
//! Every exported function goes through one panic boundary
//! (`boundary::status_call` / `boundary::value_call`); status-returning ones
//! return `HRTS_SUCCESS` (0) or an `HRTS_E_*` code and leave a message for
//! `hrts_last_error()`. The functions in `ffi` work on the process's default
//! segment; the `hrts_segment_*` ones in `handle` on handles the caller opens
//! on segments of its choice; `calls` holds what both share, `tracking` the
//! types of a segment's mode and tracking state, `wtmlib` WTMLIB's operations
//! (reliability evaluation, raw counter, tick-to-ns conversion).
//! The header `include/hrts.h` is generated from this crate
//! by cbindgen and checked by the `header_is_fresh` test.

mod boundary;
mod calls;
mod ffi;
mod handle;
mod stats;
mod stats_json;
mod stats_shared;
mod status;
mod trace;
mod tracking;
mod wtmlib;

pub use ffi::*;
pub use handle::*;
pub use stats::*;
pub use stats_json::*;
pub use stats_shared::*;
pub use status::HrtsStatus;
pub use trace::*;
pub use tracking::{HrtsMode, HrtsOpenOptions, HrtsTrackingState, HRTS_OPEN_OPTIONS_VERSION};
pub use wtmlib::*;

#[cfg(test)]
mod header_test;
