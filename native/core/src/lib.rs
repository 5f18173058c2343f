//! hrts core: one shared, high-resolution timeline for every process on a host.

pub mod calibrate;
pub mod convert;
pub mod eligibility;
pub mod error;
pub mod os;
pub mod reliability;
pub mod source;

pub use error::{Error, ErrorKind, Result};
