//! The calls on segments through their exports, in both forms: on the
//! process's default segment (one test alone opens it) and on handles. What they
//! must do whatever their topic: refuse a NULL handle or output before anything
//! else, name themselves in messages, work on several segments at once.

use crate::library::c_str;
use crate::segment_types::{HrtsMode, HrtsOpenOptions, HrtsTrackingState};
use crate::status::HrtsStatus;
use crate::*;
use hrts_core::SharedBase;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr::{null, null_mut, NonNull};

#[test]
fn null_pointers_are_refused_before_anything_else() {
    // These never reach the segment, so they need no HRTS_SEGMENT.
    let mut v = 0u64;
    // SAFETY: every pointer is NULL or points at a live local.
    let rcs = unsafe {
        [
            hrts_get_epoch_nanoseconds(null_mut()),
            hrts_get_epoch_nanoseconds_ordered(null_mut()),
            hrts_get_unique_nanoseconds(null_mut()),
            hrts_next_sequence(null_mut()),
            hrts_get_epoch_microseconds(null_mut()),
            hrts_get_generation(null_mut()),
            hrts_get_base_info(&mut v, &mut v, null_mut(), &mut v),
            hrts_calc_time_stamp(null_mut(), null_mut()),
            hrts_calc_time_stamp64(&mut v, null_mut()),
            hrts_get_segment_name(null_mut(), 10),
            hrts_get_mode(null_mut()),
            hrts_get_tracking_state(null_mut()),
            hrts_get_disruption_state(null_mut()),
            hrts_get_bounded_epoch_nanoseconds(&mut v, &mut v, null_mut()),
            hrts_get_timeline(null_mut(), 10),
            hrts_get_offset_nanoseconds(null_mut()),
        ]
    };
    for rc in rcs {
        assert_eq!(rc, HrtsStatus::E_NULL_POINTER as c_int);
    }
    assert!(c_str(hrts_last_error()).contains("hrts_get_offset_nanoseconds"));
    // SAFETY: NULL is refused before anything is written.
    unsafe { hrts_get_segment_name(null_mut(), 10) };
    assert!(c_str(hrts_last_error()).contains("`buf` is NULL"));
    assert_eq!(v, 0, "nothing is written on failure");
}

const NULL_POINTER: c_int = HrtsStatus::E_NULL_POINTER as c_int;

/// A segment name of one test, removed when dropped (also when an
/// assertion failed), so no test leaves a segment behind.
struct TestSegment(String);

impl TestSegment {
    fn new(tag: &str) -> TestSegment {
        let name = format!("/hrts-capitest-{}-{tag}", std::process::id());
        let _ = SharedBase::unlink(&name);
        TestSegment(name)
    }

    fn open(&self) -> *mut HrtsSegment {
        let name = CString::new(self.0.as_str()).unwrap();
        let mut seg = null_mut();
        // SAFETY: a C string and a local out pointer.
        let rc = unsafe { hrts_segment_open(name.as_ptr(), &mut seg) };
        assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
        assert!(!seg.is_null());
        seg
    }
}

impl Drop for TestSegment {
    fn drop(&mut self) {
        let _ = SharedBase::unlink(&self.0);
    }
}

fn name_of(seg: *const HrtsSegment) -> String {
    let mut buf = [0 as c_char; 256];
    // SAFETY: `seg` is an open handle of the calling test; `buf` a local array.
    let rc = unsafe { hrts_segment_name(seg, buf.as_mut_ptr(), buf.len()) };
    assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
    c_str(buf.as_ptr())
}

fn generation(seg: *const HrtsSegment) -> u64 {
    let mut g = 0;
    // SAFETY: `seg` is an open handle of the calling test; `g` a local.
    assert_eq!(unsafe { hrts_segment_generation(seg, &mut g) }, 0);
    g
}

#[test]
fn a_null_handle_or_output_is_refused_before_anything_else() {
    let (mut v, mut w, mut i) = (0u64, 0u32, 0i64);
    let mut buf = [0 as c_char; 8];
    let mut state = std::mem::MaybeUninit::<HrtsTrackingState>::uninit();
    let mut disruptions = std::mem::MaybeUninit::<HrtsDisruptionState>::uninit();
    // SAFETY: every pointer is NULL or points at a live local.
    let rcs = unsafe {
        [
            hrts_segment_open(null(), null_mut()),
            hrts_segment_open_with(null(), null(), null_mut()),
            hrts_segment_mode(null(), &mut w),
            hrts_segment_tracking_state(null(), state.as_mut_ptr()),
            hrts_segment_disruption_state(null(), disruptions.as_mut_ptr()),
            hrts_segment_offset_nanoseconds(null(), &mut i),
            hrts_segment_validate(null()),
            hrts_segment_epoch_nanoseconds(null(), &mut v),
            hrts_segment_epoch_nanoseconds_ordered(null(), &mut v),
            hrts_segment_epoch_microseconds(null(), &mut v),
            hrts_segment_calc_time_stamp(null(), &mut w, &mut w),
            hrts_segment_calc_time_stamp64(null(), &mut v, &mut w),
            hrts_segment_base_info(null(), &mut v, &mut v, &mut v, &mut v),
            hrts_segment_set_base_info(null()),
            hrts_segment_generation(null(), &mut v),
            hrts_segment_unique_nanoseconds(null(), &mut v),
            hrts_segment_next_sequence(null(), &mut v),
            hrts_segment_bounded_epoch_nanoseconds(null(), &mut v, &mut v, &mut w),
            hrts_segment_name(null(), buf.as_mut_ptr(), buf.len()),
        ]
    };
    for (i, rc) in rcs.into_iter().enumerate() {
        assert_eq!(rc, NULL_POINTER, "call {i}");
    }
    assert_eq!(
        c_str(hrts_last_error()),
        "hrts_segment_name: the segment handle is NULL; pass the handle \
         hrts_segment_open gave you (and check that call's status)"
    );
    assert_eq!(
        (v, w, i, buf[0]),
        (0, 0, 0, 0),
        "nothing is written on failure"
    );
    // With both NULL, the output is named: outputs are checked first.
    // SAFETY: NULL pointers only.
    let rc = unsafe { hrts_segment_generation(null(), null_mut()) };
    assert_eq!(rc, NULL_POINTER);
    assert_eq!(
        c_str(hrts_last_error()),
        "hrts_segment_generation: argument `out` is NULL; pass a pointer to writable storage"
    );
    // SAFETY: NULL is documented as a no-op.
    unsafe { hrts_segment_close(null_mut()) };
}

#[test]
fn a_bad_name_is_refused_with_out_set_to_null() {
    let bad: [(&CStr, &str); 3] = [
        (
            c"no-leading-slash",
            "\"no-leading-slash\": it must start with '/'",
        ),
        (c"", "invalid segment name \"\""),
        (c"/hrts-\xff", "is not valid UTF-8"),
    ];
    for (name, message) in bad {
        let mut seg = NonNull::<HrtsSegment>::dangling().as_ptr();
        // SAFETY: a C string and a local out pointer.
        let rc = unsafe { hrts_segment_open(name.as_ptr(), &mut seg) };
        assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int, "{name:?}");
        assert!(seg.is_null(), "{name:?}: *out must be NULL after a failure");
        let error = c_str(hrts_last_error());
        assert!(error.contains(message), "{name:?}: {error}");
    }
}

fn open_with(seg: &TestSegment, opts: &HrtsOpenOptions) -> *mut HrtsSegment {
    let name = CString::new(seg.0.as_str()).unwrap();
    let mut handle = null_mut();
    // SAFETY: a C string, options and an out pointer, all locals.
    let rc = unsafe { hrts_segment_open_with(name.as_ptr(), opts, &mut handle) };
    assert_eq!(rc, 0, "{}", c_str(hrts_last_error()));
    handle
}

fn mode(seg: *const HrtsSegment) -> u32 {
    let mut m = 0;
    // SAFETY: `seg` is an open handle of the calling test; `m` a local.
    assert_eq!(unsafe { hrts_segment_mode(seg, &mut m) }, 0);
    m
}

fn tracking_state(seg: *const HrtsSegment) -> HrtsTrackingState {
    let mut state = std::mem::MaybeUninit::uninit();
    // SAFETY: `seg` is an open handle of the calling test; `state` a local,
    // written in full on success.
    unsafe {
        assert_eq!(hrts_segment_tracking_state(seg, state.as_mut_ptr()), 0);
        state.assume_init()
    }
}

fn options(mode: HrtsMode) -> HrtsOpenOptions {
    HrtsOpenOptions {
        version: crate::HRTS_OPEN_OPTIONS_VERSION,
        mode: mode as u32,
        ..HrtsOpenOptions::default()
    }
}

#[test]
fn the_bound_settings_of_the_options_are_what_the_handle_publishes() {
    let seg = TestSegment::new("bound-options");
    let h = open_with(
        &seg,
        &HrtsOpenOptions {
            // Ties a minute apart: no tie publishes another word first.
            tie_interval_ms: 60_000,
            bound_drift_ppm: 77,
            bound_void_s: 2,
            ..options(HrtsMode::MODE_TRACKING)
        },
    );
    // SAFETY: `h` is open until closed below.
    let base = unsafe { crate::handle::handle_base(h, "test") }.unwrap();
    // The creator's first word: its drift, fresh for 3 tie intervals cut to
    // its void-after.
    let state = base.bound_state().unwrap();
    assert_eq!((state.drift_ppb, state.fresh_ns), (77_000, 2_000_000_000));
    // SAFETY: open, closed once.
    unsafe { hrts_segment_close(h) };
}

#[test]
fn the_creator_chooses_the_mode_and_every_handle_reports_it() {
    let (frozen, tracked) = (TestSegment::new("frozen"), TestSegment::new("tracked"));
    let f = open_with(&frozen, &options(HrtsMode::MODE_FROZEN));
    assert_eq!(mode(f), HrtsMode::MODE_FROZEN as u32);
    // The segment exists now: a later open keeps the creator's mode.
    let f2 = open_with(&frozen, &options(HrtsMode::MODE_TRACKING));
    assert_eq!(mode(f2), HrtsMode::MODE_FROZEN as u32);
    let fs = tracking_state(f);
    assert_eq!((fs.mode, fs.ties, fs.last_tie_ns), (mode(f), 0, 0));

    let t = open_with(
        &tracked,
        &HrtsOpenOptions {
            tie_interval_ms: 20,
            max_slew_ppm: 100,
            ..options(HrtsMode::MODE_TRACKING)
        },
    );
    assert_eq!(mode(t), HrtsMode::MODE_TRACKING as u32);
    let before = tracking_state(t);
    assert_eq!(before.tie_interval_ns, 20_000_000);
    assert_eq!(before.max_slew_ppb, 100_000);
    assert_eq!(before.step_threshold_ns, 100_000_000);
    // The first stamp past a tie interval ties.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut ns = 0;
    // SAFETY: `t` is open; `ns` a local.
    assert_eq!(unsafe { hrts_segment_epoch_nanoseconds(t, &mut ns) }, 0);
    let after = tracking_state(t);
    assert!(after.ties > before.ties, "{before:?} -> {after:?}");
    assert!(
        after.last_tie_ns.abs_diff(ns) < 1_000_000_000,
        "{after:?} at {ns}"
    );

    for seg in [f, t] {
        let mut offset = i64::MIN;
        // SAFETY: `seg` is open; `offset` a local.
        unsafe {
            assert_eq!(hrts_segment_offset_nanoseconds(seg, &mut offset), 0);
            assert_eq!(
                hrts_segment_validate(seg),
                0,
                "{}",
                c_str(hrts_last_error())
            );
        }
        assert!(offset.abs() < 50_000_000, "{offset}");
    }

    // Options of a version this library does not know, or out of range, are refused before
    // anything is opened, and *out is NULL.
    let name = CString::new(tracked.0.as_str()).unwrap();
    for bad in [
        HrtsOpenOptions::default(),
        HrtsOpenOptions {
            mode: 7,
            ..options(HrtsMode::MODE_FROZEN)
        },
        HrtsOpenOptions {
            tie_interval_ms: 60_001,
            ..options(HrtsMode::MODE_TRACKING)
        },
    ] {
        let mut seg = NonNull::<HrtsSegment>::dangling().as_ptr();
        // SAFETY: a C string, options and an out pointer, all locals.
        let rc = unsafe { hrts_segment_open_with(name.as_ptr(), &bad, &mut seg) };
        assert_eq!(rc, HrtsStatus::E_INVALID_ARGUMENT as c_int, "{bad:?}");
        assert!(seg.is_null());
        assert!(c_str(hrts_last_error()).starts_with("hrts_segment_open_with: "));
    }
    // SAFETY: each handle is open, closed once, and not used afterwards.
    unsafe {
        hrts_segment_close(f);
        hrts_segment_close(f2);
        hrts_segment_close(t);
    }
}

#[test]
fn handles_on_two_segments_work_at_once() {
    let (a, b) = (TestSegment::new("a"), TestSegment::new("b"));
    let (ha, hb, ha2) = (a.open(), b.open(), a.open());
    assert_ne!(ha, ha2, "every open gives a handle of its own");
    assert_eq!(
        (name_of(ha), name_of(hb), name_of(ha2)),
        (a.0.clone(), b.0.clone(), a.0.clone())
    );

    for seg in [ha, hb, ha2] {
        let (mut ns, mut ordered, mut us) = (0u64, 0u64, 0u64);
        let (mut secs, mut micros) = (0u64, 0u32);
        // SAFETY: `seg` is open; the outputs are locals.
        unsafe {
            assert_eq!(hrts_segment_epoch_nanoseconds(seg, &mut ns), 0);
            assert_eq!(hrts_segment_epoch_nanoseconds_ordered(seg, &mut ordered), 0);
            assert_eq!(hrts_segment_epoch_microseconds(seg, &mut us), 0);
            assert_eq!(
                hrts_segment_calc_time_stamp64(seg, &mut secs, &mut micros),
                0
            );
        }
        let real = hrts_core::clock::realtime_ns();
        assert!(real.abs_diff(ns) < 50_000_000, "{real} vs {ns}");
        assert!(ordered >= ns && us >= ns / 1000 && secs >= ns / 1_000_000_000);
        assert!(micros < 1_000_000);
    }

    // A base set through one handle is the segment's: the other handle on
    // it sees the new generation, the other segment does not change.
    let (ga, gb) = (generation(ha), generation(hb));
    // SAFETY: `ha` is open.
    assert_eq!(unsafe { hrts_segment_set_base_info(ha) }, 0);
    assert_eq!(
        (generation(ha), generation(ha2), generation(hb)),
        (ga + 1, ga + 1, gb)
    );

    // Unique stamps through either handle on one segment share its order.
    let mut last = 0;
    for i in 0..1000 {
        let mut u = 0;
        let seg = if i % 2 == 0 { ha } else { ha2 };
        // SAFETY: `seg` is open; `u` a local.
        assert_eq!(unsafe { hrts_segment_unique_nanoseconds(seg, &mut u) }, 0);
        assert!(u > last, "unique stamp {u} after {last}");
        last = u;
    }

    // A live handle with a NULL output is refused too, naming the argument.
    // SAFETY: `ha` is open; the other pointers are NULL or locals.
    unsafe {
        let mut v = 0u64;
        assert_eq!(hrts_segment_epoch_nanoseconds(ha, null_mut()), NULL_POINTER);
        assert_eq!(
            hrts_segment_base_info(ha, &mut v, null_mut(), &mut v, &mut v),
            NULL_POINTER
        );
        assert!(c_str(hrts_last_error()).contains("argument `counter` is NULL"));
        assert_eq!(hrts_segment_name(ha, null_mut(), 8), NULL_POINTER);
        let mut small = [0 as c_char; 4];
        assert_eq!(
            hrts_segment_name(ha, small.as_mut_ptr(), small.len()),
            HrtsStatus::E_BUFFER_TOO_SMALL as c_int
        );
        assert_eq!(v, 0);
    }

    // SAFETY: each handle is open, closed once, and not used afterwards.
    unsafe {
        hrts_segment_close(ha);
        hrts_segment_close(hb);
    }
    // Closing a handle leaves the segment to the others that use it.
    let mut ns = 0;
    // SAFETY: `ha2` is still open; `ns` a local.
    assert_eq!(unsafe { hrts_segment_epoch_nanoseconds(ha2, &mut ns) }, 0);
    // SAFETY: as above.
    unsafe { hrts_segment_close(ha2) };
}

/// The one test in this crate that opens the process's segment: it names its
/// own before first use (the global reads HRTS_SEGMENT once) and removes it.
#[test]
fn real_calls_against_a_private_segment() {
    let name = format!("/hrts-capitest-{}", std::process::id());
    std::env::set_var("HRTS_SEGMENT", &name);
    let result = std::panic::catch_unwind(|| {
        let mut buf = [0 as c_char; 64];
        // SAFETY: `buf` is valid for its length; the other pointers are locals.
        unsafe {
            assert_eq!(hrts_get_segment_name(buf.as_mut_ptr(), buf.len()), 0);
            assert_eq!(c_str(buf.as_ptr()), name);
            let exact = name.len() + 1;
            assert_eq!(hrts_get_segment_name(buf.as_mut_ptr(), exact), 0);
            assert_eq!(
                hrts_get_segment_name(buf.as_mut_ptr(), exact - 1),
                HrtsStatus::E_BUFFER_TOO_SMALL as c_int
            );
            assert!(c_str(hrts_last_error()).contains(&format!("needs {exact}")));

            let (mut g0, mut g1) = (0u64, 0u64);
            assert_eq!(hrts_get_generation(&mut g0), 0);
            assert_eq!(hrts_set_base_info(), 0);
            assert_eq!(hrts_get_generation(&mut g1), 0);
            assert_eq!(g1, g0 + 1);

            let (mut ns, mut us, mut ordered) = (0u64, 0u64, 0u64);
            assert_eq!(hrts_get_epoch_nanoseconds(&mut ns), 0);
            assert_eq!(hrts_get_epoch_nanoseconds_ordered(&mut ordered), 0);
            assert!(ordered >= ns && ordered - ns < 50_000_000);
            assert_eq!(hrts_get_epoch_microseconds(&mut us), 0);
            assert!(us >= ns / 1000 && us - ns / 1000 < 1_000_000);
            let real = hrts_core::clock::realtime_ns();
            assert!(real.abs_diff(ns) < 50_000_000, "{real} vs {ns}");

            // HRTS_MODE is unset here: the default, tracking.
            let mut mode = 0u32;
            assert_eq!(hrts_get_mode(&mut mode), 0);
            assert_eq!(mode, crate::HrtsMode::MODE_TRACKING as u32);
            let mut state = std::mem::MaybeUninit::<HrtsTrackingState>::uninit();
            assert_eq!(hrts_get_tracking_state(state.as_mut_ptr()), 0);
            let state = state.assume_init();
            assert_eq!(state.mode, mode);
            assert_eq!(state.tie_interval_ns, 1_000_000_000);
            assert_eq!(state.max_slew_ppb, 500_000);
            assert_eq!(state.step_threshold_ns, 100_000_000);
            // A fresh segment: no disruption seen, the bound not disrupted.
            let mut d = std::mem::MaybeUninit::<HrtsDisruptionState>::uninit();
            assert_eq!(hrts_get_disruption_state(d.as_mut_ptr()), 0);
            let d = d.assume_init();
            assert_eq!((d.count, d.last_ns, d.last_kind, d.pending), (0, 0, 0, 0));
            assert_eq!((d.recorded, d.reserved), (1, 0));
            let mut offset = i64::MIN;
            assert_eq!(hrts_get_offset_nanoseconds(&mut offset), 0);
            assert!(offset.abs() < 50_000_000, "{offset}");
            assert_eq!(hrts_validate(), 0, "{}", c_str(hrts_last_error()));
        }
    });
    let _ = SharedBase::unlink(&name);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
