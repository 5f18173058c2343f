//! What is built on the timeline: unique stamps (strictly increasing across every
//! process of a segment), Intel Trace Collector stamps (tick and event counter in
//! one word) and sequence numbers persisted so they never repeat.

pub(crate) mod itc;
mod sequence;
mod unique;
