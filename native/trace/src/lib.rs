//! hrts global traces: one timeline across hosts, after the fact, the way the
//! Intel Trace Collector makes one.
//!
//! - A process records events (kind, name, id, payload) with local ITC stamps
//!   to a trace file of its own ([`TraceWriter`]); the header carries what
//!   converting them needs: host, clock identity and calibration, tick length,
//!   event bits ([`format`](mod@format), specified byte for byte in `FORMAT.md`).
//! - At the start and the end of the run (optionally in between) it exchanges
//!   ping-pong messages with a master ([`sync`]) and records them.
//! - [`merge`] fits each host's offset and drift to the master by regression
//!   (dropping the slowest 10 % of exchanges, with an error bound of half a
//!   round trip) and replaces every local clock tick with a global one: global
//!   ticks are finer than local ones, so events keep distinct ticks and their
//!   order; the ticks are scaled so the run lasts exactly what the master's
//!   gettimeofday measured. Out come one global trace and a Chrome/Perfetto
//!   JSON file.
//!
//! ```no_run
//! use hrts_trace::{EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
//! let w = TraceWriter::create("rank0.htr", WriterOptions::default())?;
//! w.sync("10.0.0.1:7700", SyncPhase::Start, SyncOptions::default())?;
//! w.event(EventKind::Begin, "compute", 0, b"")?;
//! w.event(EventKind::End, "compute", 0, b"")?;
//! w.sync("10.0.0.1:7700", SyncPhase::End, SyncOptions::default())?;
//! w.close()?;
//! # Ok::<(), hrts_core::Error>(())
//! ```

pub mod bound;
pub mod clock;
pub mod fit;
pub mod format;
mod header_patch;
pub mod merge;
pub mod sync;
mod writer;

pub use clock::{Clock, ClockInfo, HostClock, Skew, ENV_TEST_CLOCK_SKEW, ENV_TRACE_HOST};
pub use format::{read_file, EventKind, ReadOptions, TraceFile};
pub use sync::{RoundResult, SyncOptions, SyncPhase};
pub use writer::{PeriodicSync, TraceWriter, WriterOptions, WriterSummary};
