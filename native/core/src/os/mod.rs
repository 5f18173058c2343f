//! The platform layer: the few operating-system facts every other room needs,
//! behind one set of functions, so the segment protocol above is written once.
//!
//! Each platform is a room of its own: `linux` (any Unix hrts builds for:
//! `clock_gettime`, `/proc`, CPU affinity masks) and `windows` (the
//! precise system time, `QueryPerformanceCounter`, kernel objects that the
//! system releases when their holder dies). What only Linux has (System V
//! pages, namespaces, the host daemon's page, chrony, VMClock, the vDSO) stays
//! in the modules that use it, behind `cfg(not(windows))`; their Windows twins
//! say clearly that the feature does not exist there.

#[cfg(not(windows))]
mod linux;
#[cfg(not(windows))]
pub use linux::*;

#[cfg(windows)]
pub mod windows;
#[cfg(windows)]
pub use windows::*;
