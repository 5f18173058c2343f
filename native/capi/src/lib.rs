//! hrts C ABI: the IBMTS C API, modernised, over the shared time base.
//!
//! Every exported function goes through one panic boundary
//! ([`boundary::status_call`] / [`boundary::value_call`]); status-returning ones
//! return `HRTS_SUCCESS` (0) or an `HRTS_E_*` code and leave a message for
//! `hrts_last_error()`. The header `include/hrts.h` is generated from this crate
//! by cbindgen and checked by the `header_is_fresh` test.

mod boundary;
mod ffi;
mod stats;
mod status;

pub use ffi::*;
pub use stats::*;
pub use status::HrtsStatus;

#[cfg(test)]
mod header_test;
