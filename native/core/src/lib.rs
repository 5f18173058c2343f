//! hrts core: one shared, high-resolution timeline for every process on a host.
//!
//! A counter source (TSC, CNTVCT, Time Base, or CLOCK_MONOTONIC_RAW) is chosen,
//! evaluated and calibrated once, by the process that creates the shared segment;
//! every other process attaches and converts counter readings to epoch
//! nanoseconds with the values recorded there, so stamps agree across processes
//! and languages.
//!
//! ```no_run
//! let base = hrts_core::process::global()?;
//! let ns = base.now_ns();
//! println!("{ns} ns since the epoch, source {}", base.source().name());
//! # Ok::<(), hrts_core::Error>(())
//! ```
//!
//! # The crate in four rooms
//!
//! | room | what | depends on |
//! |---|---|---|
//! | [`clock`] | counter sources, eligibility, calibration, tick→ns conversion, the cross-CPU reliability evaluation | nothing else here |
//! | `storage` | where shared things live: a POSIX name with a record, a System V page no one can shrink, the creation race, relinking a lost record, identity checks; for any kind of segment (`storage::Spec`) | nothing else here |
//! | `segment` | the time segment: layout, creation on `storage`, validation, the timeline (reading, moving and tying the base), tracking (what a tie does, pure), presence (frozen mode's re-pair), segment facts | `storage`, [`clock`] |
//! | `stamps` | what is built on the timeline: unique stamps, Intel Trace Collector stamps, persisted sequence numbers | `segment`, [`clock`] |
//!
//! [`process`] holds the process's default segment and stamper, [`ibmts`] the
//! IBMTS compatibility constants, [`env`](mod@env) every environment variable the library
//! reads. Dependencies only point down this list (a test in `tests/` checks that
//! no two rooms import each other).
//!
//! # Public API
//!
//! - [`SharedBase`]: a handle on a segment. Where its methods live:
//!   opening and facts (`open`, `open_default`, `name`, `source`,
//!   `ordered_read`, `frequency`, `unlink`, ...) in `segment/mod.rs`; stamps and the base (`now_ns`,
//!   `now_ns_ordered`, `ticks`, `ns_at`, `exact_ns`, `calc_time_stamp`,
//!   `epoch_micros`, `base`, `base_info`, `set_base_info`, `offset_now`,
//!   `validate`) in `segment/timeline/` (`stamp.rs`: the stamps; `writer.rs`:
//!   `set_base_info`; `mod.rs`: the rest); `info`, `mode`, `tracking_state` in
//!   `segment/info.rs`; `next_unique`, `next_unique_ordered`, `last_unique` in
//!   `stamps/unique.rs`;
//!   `next_sequence`, `seq_file` in `stamps/sequence.rs`.
//! - [`OpenRequest`]: what a caller asks to open (a name or the default, the
//!   options of a segment it creates, the bound settings); its `resolve` is
//!   the one place that reads the environment and decides the segment's
//!   name, the host page and the sequence file (every front end calls it).
//! - [`Config`], [`Sharing`], [`Calendar`], [`Opened`], [`Mode`],
//!   [`TrackingConfig`], [`OpenOptions`], [`BoundConfig`], [`BoundOptions`],
//!   [`default_segment_name`], [`resolve_group`]: how a segment is named,
//!   shared, opened, how it follows the calendar and what its bounds say
//!   ([`OpenOptions`] and [`BoundOptions`] are what the C and Java front ends
//!   turn their settings into).
//! - [`Base`], [`BaseInfo`], [`TimeStamp`], [`SegmentInfo`], [`EvaluationSummary`],
//!   [`TrackingState`], [`pace_text`]: what the timeline and
//!   `hrts info` report.
//! - [`ItcFormat`], [`ItcStamper`]: Intel Trace Collector style stamps.
//! - [`Error`], [`ErrorKind`], [`Result`], [`panic_message`]: errors, and the text
//!   of a caught panic for the FFI boundaries.
//! - [`LAYOUT_VERSION`]: the version of the shared segment's layout.
//! - [`clock`], [`process`], [`ibmts`], [`env`](mod@env): see above.
//!
//! `storage` is public only for the other hrts crates (hidden from these
//! docs; it may change in any release).
//!
//! With the `testing` feature, test hooks that break the protocol on purpose
//! (`SharedBase::force_move`, `SharedBase::hold_writer_role_for_test`,
//! `SharedBase::page_words_for_test`) are public;
//! no production build enables it.

pub mod clock;
mod error;
pub mod ibmts;
mod os;
pub mod process;
mod segment;
mod stamps;
// Plumbing for the sibling crates of this workspace (hrts-stats keeps its
// shared segment on it); not part of the API: hidden from the docs, and free
// to change in any release. Nothing outside the hrts crates may use it.
#[doc(hidden)]
pub mod storage;
#[cfg(test)]
mod testutil;
pub mod utc;

pub use clock::bound::{BoundSource, BoundStatus, Leap};
pub use error::{panic_message, Error, ErrorKind, Result};
#[cfg(any(test, feature = "testing"))]
pub use segment::access::set_pause_for_test as set_daemon_pause_for_test;
pub use segment::bound::{BoundState, Bounded};
pub use segment::disruption::{Disruptions, Kind as DisruptionKind};
pub use segment::host::ServiceState;
pub use segment::info::{pace_text, EvaluationSummary, SegmentInfo, TrackingState};
pub use segment::layout::LAYOUT_VERSION;
pub use segment::timeline::{Base, BaseInfo, TimeStamp};
pub use segment::{
    default_name as default_segment_name, resolve_group, Access, BoundConfig, BoundOptions,
    Calendar, Config, DaemonRound, HostConfig, HostDaemon, Mode, OpenOptions, OpenRequest, Opened,
    SharedBase, Sharing, TrackingConfig,
};
pub use stamps::itc::{ItcFormat, ItcStamper};

/// Every environment variable the library reads, in one place.
pub mod env {
    pub use crate::clock::eligibility::OVERRIDE_ENV as SOURCE;
    pub use crate::clock::vmclock::ENV_VMCLOCK as VMCLOCK;
    pub use crate::segment::config::{
        ENV_BOUND_DRIFT_PPM as BOUND_DRIFT_PPM, ENV_BOUND_VOID_S as BOUND_VOID_S,
        ENV_CALENDAR_CLOCK as CALENDAR_CLOCK, ENV_GROUP as GROUP, ENV_HOST as HOST,
        ENV_HOST_DIR as HOST_DIR, ENV_HOST_USER as HOST_USER, ENV_MAX_SLEW_PPM as MAX_SLEW_PPM,
        ENV_MODE as MODE, ENV_SEGMENT as SEGMENT, ENV_SEQ_FILE as SEQ_FILE,
        ENV_SEQ_INTERVAL as SEQ_INTERVAL, ENV_STEP_THRESHOLD_MS as STEP_THRESHOLD_MS,
        ENV_TIE_INTERVAL_MS as TIE_INTERVAL_MS, ENV_WRAP_THRESHOLD as WRAP_THRESHOLD,
    };
    pub use crate::stamps::itc::{ENV_EVENT_BITS as ITC_EVENT_BITS, ENV_TICK_NS as ITC_TICK_NS};
}
