//! hrts core: one shared, high-resolution timeline for every process on a host.
//!
//! A counter source (TSC, CNTVCT, Time Base, or CLOCK_MONOTONIC_RAW) is chosen,
//! evaluated and calibrated once, by the process that creates the shared segment;
//! every other process attaches and converts counter readings to epoch
//! nanoseconds with the values recorded there, so stamps agree across processes
//! and languages. Start at [`SharedBase`] or the IBMTS-style functions in [`api`].
//!
//! ```no_run
//! let base = hrts_core::api::global()?;
//! let ns = base.now_ns();
//! println!("{ns} ns since the epoch, source {}", base.source().name());
//! # Ok::<(), hrts_core::Error>(())
//! ```

pub mod api;
pub mod calibrate;
pub mod convert;
pub mod eligibility;
pub mod error;
pub mod itc;
pub mod os;
pub mod reliability;
pub mod segment;
pub mod sequence;
pub mod source;
#[cfg(test)]
mod testutil;
pub mod timeline;
pub mod unique;

pub use error::{Error, ErrorKind, Result};
pub use segment::{Config, Opened, SharedBase};
pub use timeline::{Base, BaseInfo};
