//! hrts JNI glue: the native side of `io.hrts.Native` (`libhrts_jni.so`), the
//! package-private class behind `io.hrts.HighResTimestamp`, `UniqueStamps`,
//! `Sequences` and `ItcStamps`.
//!
//! # Layout
//!
//! - [`exports`]: the 28 `Java_io_hrts_Native_*` functions, one per native
//!   method (a JUnit test checks the library's dynamic symbols against the
//!   class and `Native.DOWNCALLS`);
//! - [`calls`]: what each does in Rust terms, unit-tested without a JVM;
//! - [`objects`]: the Java objects the cold paths return (`BaseInfo`,
//!   `SegmentInfo`, `TrackingState`), built from typed values through their
//!   constructors or factories;
//! - [`boundary`]: the one panic/error boundary and error → exception table;
//! - [`ring_layout`]: the statistics queue layout Java writes, from which the
//!   Java class `io.hrts.stats.RingLayout` is generated (and checked fresh by
//!   a test).
//! - [`wtmlib`]: the natives of `io.hrts.Wtmlib` (WTMLIB's operations).
//! - [`downcalls`]: the hot paths again as plain `extern "C"` functions
//!   (`hrts_jni_ffm_*`), for the JDK 22+ FFM critical downcalls of the
//!   multi-release jar; the JUnit tests check the library exports exactly
//!   these beside the JNI functions.
//!
//! # Export pattern
//!
//! Hot paths (a stamp read) are `extern "system"` functions returning a
//! primitive. They take the `EnvUnowned` / `JClass` wrappers, which are
//! `#[repr(transparent)]` over the raw `JNIEnv*` / `jclass` (the raw JNI
//! signature), and on the normal path make no JNI call and allocate nothing:
//! [`boundary::stamp`] reads the segment through `process::global_if_open`, which
//! the Java side guarantees is open (`Native.open()` runs before the first stamp).
//!
//! Cold paths (open, base info, segment info, tracking state, copyright,
//! fill) use the `jni` crate's typed API inside `EnvUnowned::with_env`; the
//! cold ones that return a primitive or nothing (mode, offset, validate,
//! sequence, ITC) need no JNI call and use [`boundary::direct`].
//!
//! The [`downcalls`] return a reserved value instead of throwing (they have no
//! `JNIEnv`, and a critical function must not call back into the JVM), and
//! catch a panic themselves.
//!
//! Every export runs its body inside `catch_unwind`: the cold ones through
//! `with_env`, the others through [`boundary::direct`] (a `catch_unwind` that is
//! free unless something panics, without `with_env`'s per-call thread-local
//! bookkeeping). So no panic crosses this FFI boundary: a panic, a core `Error`,
//! a JNI error or a segment that is not open is thrown as
//! `io.hrts.HrtsException` by the one error policy,
//! [`boundary::ThrowHrtsException`], with the kind from [`boundary::kind_name`].

// A cdylib with no Rust API: its docs are a map of its private modules.
#![allow(rustdoc::private_intra_doc_links)]

mod boundary;
mod calls;
mod downcalls;
mod exports;
mod objects;
mod ring_layout;
mod stats;
mod stats_json;
mod stats_shared;
mod trace;
mod wtmlib;
