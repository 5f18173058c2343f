//! The C types of a segment's mode and tracking state, and the options a
//! creator opens a segment with: typed values, not the text `hrts info` prints.
//!
//! The values of `hrts_mode` and the layouts of `hrts_tracking_state` and
//! of each version of `hrts_open_options` are ABI: they never change. A later
//! version of the options only adds fields at the end (and raises
//! `HRTS_OPEN_OPTIONS_VERSION`), and a caller built against an older header
//! keeps working: only the fields of its version are read. Tracking facts
//! added later come in a new struct and function rather than growing
//! `hrts_tracking_state`: the disruptions (issue 36) are
//! `hrts_disruption_state`, whose layout never changes either.

use crate::status::{Failure, HrtsStatus};
use hrts_core::{
    BoundOptions, DisruptionKind, Disruptions, Mode, OpenOptions, OpenRequest, SharedBase,
    TrackingState,
};

// C knows this type as `hrts_mode` (cbindgen.toml renames it).
/// How a segment's timeline follows the calendar clock (`CLOCK_REALTIME`).
/// The creator of a segment chooses it; every process of the segment uses the
/// creator's. The functions that report a mode write it as a `uint32_t` holding
/// one of these values (0 is never a mode: in `hrts_open_options` it means
/// "the default").
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum HrtsMode {
    /// The timeline follows `CLOCK_REALTIME`: every tie interval it is paired
    /// with the calendar again and slewed toward it, never backward (the
    /// default).
    MODE_TRACKING = 1,
    /// IBMTS semantics: the calendar is read when the base is made; later
    /// changes of the system clock do not move the timeline.
    MODE_FROZEN = 2,
}

// C knows this type as `hrts_bound_status` (cbindgen.toml renames it).
/// What an interval from `hrts_get_bounded_epoch_nanoseconds` is worth; the
/// functions write it as a `uint32_t` holding one of these values. Only
/// `HRTS_BOUND_SYNCHRONIZED` and `HRTS_BOUND_FREE_RUNNING` come with an
/// interval; the others are reported by the status `HRTS_E_UNSYNCHRONIZED`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum HrtsBoundStatus {
    /// Nothing is known: no bound yet, or it is older than its void-after.
    BOUND_UNKNOWN = 0,
    /// The time service keeps the clock and its word is fresh.
    BOUND_SYNCHRONIZED = 1,
    /// The time service's word is old: the interval grows at the drift rate.
    BOUND_FREE_RUNNING = 2,
    /// The time service says the clock is not synchronized.
    BOUND_UNSYNCHRONIZED = 3,
    /// The writer saw the counter or the clock disrupted (a counter that
    /// jumped, stopped or changed rate, a suspend): no interval until it has
    /// learned the counter's rate again.
    BOUND_DISRUPTED = 4,
}

const _: () = {
    use hrts_core::clock::bound::BoundStatus as B;
    assert!(HrtsBoundStatus::BOUND_UNKNOWN as u32 == B::Unknown as u32);
    assert!(HrtsBoundStatus::BOUND_SYNCHRONIZED as u32 == B::Synchronized as u32);
    assert!(HrtsBoundStatus::BOUND_FREE_RUNNING as u32 == B::FreeRunning as u32);
    assert!(HrtsBoundStatus::BOUND_UNSYNCHRONIZED as u32 == B::Unsynchronized as u32);
    assert!(HrtsBoundStatus::BOUND_DISRUPTED as u32 == B::Disrupted as u32);
};

/// The segment's mode as `hrts_get_mode` and `hrts_segment_mode` write it.
pub(crate) fn mode_of(b: &SharedBase) -> u32 {
    b.mode().code()
}

// C knows this type as `hrts_tracking_state` (cbindgen.toml renames it).
/// How a segment follows the calendar and what its ties have done so far, as
/// `hrts info` shows it: the same for every process of the segment (it lives
/// in the segment). Times are nanoseconds, rates parts per billion (ppb) of the
/// calibrated counter rate; "calendar" is `CLOCK_REALTIME`, "timeline" the
/// segment's stamps. A frozen segment never ties: `ties` and `last_tie_ns`
/// are 0. The disruptions the segment's writers saw are in
/// `hrts_disruption_state` (`hrts_get_disruption_state`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HrtsTrackingState {
    /// `HRTS_MODE_TRACKING` or `HRTS_MODE_FROZEN`.
    pub mode: u32,
    /// Time between ties (tracking), ns.
    pub tie_interval_ns: u64,
    /// Bound on the slew and on the learned frequency error, ppb.
    pub max_slew_ppb: u64,
    /// A calendar ahead of the timeline by more than this is followed by a
    /// step forward, ns.
    pub step_threshold_ns: u64,
    /// Ties so far, by all processes together.
    pub ties: u64,
    /// The calendar's reading at the last tie, ns since the Unix epoch (before
    /// the first tie: at the pairing that made the base); 0 in frozen mode.
    pub last_tie_ns: u64,
    /// Calendar minus timeline measured by the last tie, before its
    /// correction, ns.
    pub last_offset_ns: i64,
    /// Calendar minus timeline still to absorb by slewing, as of the last tie,
    /// ns (negative: the timeline is ahead, after a backward step of the clock).
    pub pending_ns: i64,
    /// The learned rate of the calendar against the calibrated counter, ppb.
    pub frequency_ppb: i64,
    /// The slew in force on top of it, ppb.
    pub slew_ppb: i64,
    /// The slope's whole correction (frequency + slew), ppb.
    pub correction_ppb: i64,
    /// Steps forward so far (calendar steps, counter resets).
    pub steps: u64,
    /// Size of the last step, ns.
    pub last_step_ns: i64,
    /// Size of the largest step, ns.
    pub largest_step_ns: i64,
    /// Damaged lines or header fields a tie or base move found and repaired.
    pub repairs: u64,
}

impl From<TrackingState> for HrtsTrackingState {
    fn from(t: TrackingState) -> HrtsTrackingState {
        HrtsTrackingState {
            mode: t.mode.code(),
            tie_interval_ns: t.tie_interval_ns,
            max_slew_ppb: t.max_slew_ppb,
            step_threshold_ns: t.step_threshold_ns,
            ties: t.ties,
            last_tie_ns: t.last_tie_ns,
            last_offset_ns: t.last_offset_ns,
            pending_ns: t.pending_ns,
            frequency_ppb: t.frequency_ppb,
            slew_ppb: t.slew_ppb,
            correction_ppb: t.correction_ppb,
            steps: t.steps,
            last_step_ns: t.last_step_ns,
            largest_step_ns: t.largest_step_ns,
            repairs: t.repairs,
        }
    }
}

/// The tracking state as `hrts_get_tracking_state` and
/// `hrts_segment_tracking_state` write it; `HRTS_E_CORRUPT` when its tie
/// statistics disagree with their check word (damage: the next tie or move
/// starts them again).
pub(crate) fn tracking_state_of(b: &SharedBase) -> Result<HrtsTrackingState, Failure> {
    let t = b.tracking_state();
    if !t.statistics_valid {
        return Err(Failure::new(
            HrtsStatus::E_CORRUPT,
            format!(
                "the tie statistics of segment {} are damaged (their check word disagrees); the \
                 next tie or move starts them again: ask again after it",
                b.name()
            ),
        ));
    }
    Ok(t.into())
}

// C knows this type as `hrts_disruption_kind` (cbindgen.toml renames it).
/// What the last disruption a writer saw was; `hrts_disruption_state`'s
/// `last_kind` holds one of these values as a `uint32_t` (0: none, or a kind
/// a newer libhrts recorded that this one does not know).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum HrtsDisruptionKind {
    /// No disruption seen (or a kind this library does not know).
    DISRUPTION_NONE = 0,
    /// The counter ran ahead of `CLOCK_MONOTONIC_RAW` by more than the drift
    /// allows: it jumped forward or runs fast.
    DISRUPTION_COUNTER_AHEAD = 1,
    /// The counter fell behind `CLOCK_MONOTONIC_RAW` by more than the drift
    /// allows: it jumped back or runs slow.
    DISRUPTION_COUNTER_BEHIND = 2,
    /// The counter advanced by less than half the time that passed: it stopped.
    DISRUPTION_COUNTER_STOPPED = 3,
    /// `CLOCK_BOOTTIME - CLOCK_MONOTONIC` grew: the machine was suspended.
    DISRUPTION_SUSPEND = 4,
    /// The hypervisor's VMClock page has a new disruption marker (a live
    /// migration, or another event that disrupted the counter).
    DISRUPTION_VMCLOCK_MARKER = 5,
    /// The system clock moved away from the line by more than the bound
    /// allows: it was stepped.
    DISRUPTION_CLOCK_STEP = 6,
}

const _: () = {
    use DisruptionKind as K;
    use HrtsDisruptionKind as C;
    assert!(C::DISRUPTION_COUNTER_AHEAD as u32 == K::CounterAhead as u32);
    assert!(C::DISRUPTION_COUNTER_BEHIND as u32 == K::CounterBehind as u32);
    assert!(C::DISRUPTION_COUNTER_STOPPED as u32 == K::CounterStopped as u32);
    assert!(C::DISRUPTION_SUSPEND as u32 == K::Suspend as u32);
    assert!(C::DISRUPTION_VMCLOCK_MARKER as u32 == K::VmclockMarker as u32);
    assert!(C::DISRUPTION_CLOCK_STEP as u32 == K::ClockStep as u32);
};

// C knows this type as `hrts_disruption_state` (cbindgen.toml renames it).
/// The disruptions of the counter or the clock the segment's writers saw (a
/// counter that jumped, stopped or changed rate, a suspend, a VMClock
/// disruption marker, a step of the system clock), as `hrts info`'s
/// `disruptions`, `last disruption epoch ns` and `last disruption` lines show
/// them: the same for every process of the segment. While `pending` is 1 the
/// bound's status is `HRTS_BOUND_DISRUPTED` (bounded stamps fail with
/// `HRTS_E_UNSYNCHRONIZED`). A page made before disruptions were recorded
/// (layout minor below 5: a host page kept by an older `hrts daemon`) has
/// `recorded` 0 and every other field 0. This layout never changes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HrtsDisruptionState {
    /// Disruptions seen since the page was made.
    pub count: u64,
    /// `CLOCK_REALTIME` when the last one was seen, ns since the Unix epoch;
    /// 0 if none.
    pub last_ns: u64,
    /// What the last one was: an `hrts_disruption_kind` value
    /// (`HRTS_DISRUPTION_NONE`, 0, if none).
    pub last_kind: u32,
    /// 1 while the bound is still disrupted (the counter's rate not learned
    /// again since the last one), else 0.
    pub pending: u32,
    /// 1 if the page records disruptions (layout minor 5 or later), else 0.
    pub recorded: u32,
    /// Always 0 (keeps the size a multiple of 8 on every target).
    pub reserved: u32,
}

impl From<Option<Disruptions>> for HrtsDisruptionState {
    fn from(d: Option<Disruptions>) -> HrtsDisruptionState {
        match d {
            None => HrtsDisruptionState {
                count: 0,
                last_ns: 0,
                last_kind: HrtsDisruptionKind::DISRUPTION_NONE as u32,
                pending: 0,
                recorded: 0,
                reserved: 0,
            },
            Some(d) => HrtsDisruptionState {
                count: d.count,
                last_ns: d.last_ns,
                last_kind: d.last_kind.map_or(0, |k| k as u32),
                pending: d.pending.into(),
                recorded: 1,
                reserved: 0,
            },
        }
    }
}

// The layout C sees, fixed for good.
const _: () = {
    assert!(std::mem::size_of::<HrtsDisruptionState>() == 32);
    assert!(std::mem::offset_of!(HrtsDisruptionState, last_kind) == 16);
    assert!(std::mem::offset_of!(HrtsDisruptionState, reserved) == 28);
};

/// The disruption state as `hrts_get_disruption_state` and
/// `hrts_segment_disruption_state` write it.
pub(crate) fn disruption_state_of(b: &SharedBase) -> HrtsDisruptionState {
    b.disruptions().into()
}

/// The `hrts_open_options` layout this library was built with: set
/// `version` to it.
pub const HRTS_OPEN_OPTIONS_VERSION: u32 = 2;

// C knows this type as `hrts_open_options` (cbindgen.toml renames it).
/// How `hrts_segment_open_with` creates a segment that does not exist yet, and
/// what the handle publishes with the error bounds it learns when it ties.
/// Zero-initialise it, set `version` to `HRTS_OPEN_OPTIONS_VERSION` and the
/// fields you want: a field left 0 takes the environment's value
/// (`HRTS_MODE`, `HRTS_TIE_INTERVAL_MS`, `HRTS_MAX_SLEW_PPM`,
/// `HRTS_STEP_THRESHOLD_MS`, `HRTS_BOUND_DRIFT_PPM`, `HRTS_BOUND_VOID_S`),
/// else the default. Like those variables, the mode and tracking settings
/// only shape a segment this call creates: an existing segment keeps its
/// creator's mode and settings (`hrts_segment_mode` says which it has).
///
/// Version 1 (the layout before the bound settings) ends after
/// `step_threshold_ms`; a caller that sets `version = 1` is read only that
/// far, so a program built against the older header keeps working.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HrtsOpenOptions {
    /// `HRTS_OPEN_OPTIONS_VERSION`: the layout the caller filled in (1 or 2).
    pub version: u32,
    /// `HRTS_MODE_TRACKING` or `HRTS_MODE_FROZEN`; 0: default (tracking).
    pub mode: u32,
    /// Time between ties, ms, 1 ..= 60000; 0: default (1000).
    pub tie_interval_ms: u32,
    /// Largest slew and learned frequency error, ppm, 1 ..= 50000; 0:
    /// default (500).
    pub max_slew_ppm: u32,
    /// A calendar ahead of the timeline by more than this many ms is followed
    /// by a step forward, at least 1; 0: default (100).
    pub step_threshold_ms: u64,
    /// Version 2: the system clock's largest drift between two learnings of
    /// its error bound, ppm, 1 ..= 1000000; 0: default (50). The value of the
    /// process that ties counts.
    pub bound_drift_ppm: u32,
    /// Version 2: seconds after which an error bound is void and bounded
    /// stamps fail, 1 ..= 604800; 0: default (60). The value of the process
    /// that ties counts.
    pub bound_void_s: u32,
}

/// Version 1 of `hrts_open_options`: what a caller built against the first
/// header allocates, and all that may be read of it.
#[repr(C)]
#[derive(Clone, Copy)]
struct OpenOptionsV1 {
    version: u32,
    mode: u32,
    tie_interval_ms: u32,
    max_slew_ppm: u32,
    step_threshold_ms: u64,
}

// Version 2 only adds fields at the end of version 1.
const _: () = {
    assert!(std::mem::size_of::<OpenOptionsV1>() == 24);
    assert!(std::mem::size_of::<HrtsOpenOptions>() == 32);
    assert!(std::mem::align_of::<OpenOptionsV1>() == std::mem::align_of::<HrtsOpenOptions>());
    assert!(std::mem::offset_of!(HrtsOpenOptions, step_threshold_ms) == 16);
};

// The C constants are the core's mode codes.
const _: () = assert!(HrtsMode::MODE_TRACKING as u32 == Mode::Tracking as u32);
const _: () = assert!(HrtsMode::MODE_FROZEN as u32 == Mode::Frozen as u32);

/// The core's request for the segment `name` (None: the default) with the
/// options at `opts` (NULL: none), for the core to resolve. A field left 0 is
/// not set; every value is checked (also for a segment that exists: a bad
/// option is refused, not ignored), as is the `version`.
///
/// # Safety
/// `opts` must be NULL or valid for reading the `hrts_open_options` of the
/// version it holds: version 1's fields for `version == 1`, the whole struct
/// otherwise (a version this library does not know is refused after reading
/// `version` alone).
pub(crate) unsafe fn open_request(
    name: Option<&str>,
    opts: *const HrtsOpenOptions,
    function: &str,
) -> Result<OpenRequest, Failure> {
    let mut request = OpenRequest {
        name: name.map(str::to_string),
        ..OpenRequest::default()
    };
    // SAFETY: as this function's contract says.
    if let Some(opts) = unsafe { read_options(opts, function) }? {
        let invalid = |e: hrts_core::Error| {
            Failure::new(
                HrtsStatus::E_INVALID_ARGUMENT,
                format!("{function}: {}", e.message()),
            )
        };
        request.options = OpenOptions::from_raw(
            opts.mode.into(),
            opts.tie_interval_ms.into(),
            opts.max_slew_ppm.into(),
            opts.step_threshold_ms,
        )
        .map_err(invalid)?;
        request.bound =
            BoundOptions::from_raw(opts.bound_drift_ppm.into(), opts.bound_void_s.into())
                .map_err(invalid)?;
    }
    Ok(request)
}

/// The options at `opts` as this library's layout (the fields a version 1
/// caller has not got are 0: not set); `None` for NULL.
///
/// # Safety
/// As for [`open_request`].
unsafe fn read_options(
    opts: *const HrtsOpenOptions,
    function: &str,
) -> Result<Option<HrtsOpenOptions>, Failure> {
    if opts.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, and every version starts with `version`, so even a
    // struct of an unknown version is valid for reading it (contract).
    let version = unsafe { opts.cast::<u32>().read() };
    match version {
        1 => {
            // SAFETY: a version 1 struct is valid for reading version 1's
            // fields (contract); the layouts agree on them (checked above).
            let v1 = unsafe { opts.cast::<OpenOptionsV1>().read() };
            Ok(Some(HrtsOpenOptions {
                version: v1.version,
                mode: v1.mode,
                tie_interval_ms: v1.tie_interval_ms,
                max_slew_ppm: v1.max_slew_ppm,
                step_threshold_ms: v1.step_threshold_ms,
                ..HrtsOpenOptions::default()
            }))
        }
        // SAFETY: a struct of this library's version is valid for reading
        // whole (contract).
        HRTS_OPEN_OPTIONS_VERSION => Ok(Some(unsafe { opts.read() })),
        _ => Err(Failure::new(
            HrtsStatus::E_INVALID_ARGUMENT,
            format!(
                "{function}: hrts_open_options version {version} is neither 1 nor \
                 {HRTS_OPEN_OPTIONS_VERSION}, the ones this libhrts knows; zero the struct and \
                 set version = HRTS_OPEN_OPTIONS_VERSION (and build against the hrts.h of this \
                 libhrts)"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn options() -> HrtsOpenOptions {
        HrtsOpenOptions {
            version: HRTS_OPEN_OPTIONS_VERSION,
            ..HrtsOpenOptions::default()
        }
    }

    fn request(opts: &HrtsOpenOptions) -> Result<OpenRequest, Failure> {
        // SAFETY: a whole struct of this library's layout.
        unsafe { open_request(Some("/hrts-options"), opts, "hrts_segment_open_with") }
    }

    #[test]
    fn zero_options_set_nothing_and_set_ones_are_passed_on() {
        // SAFETY: NULL options.
        let none = unsafe { open_request(None, std::ptr::null(), "f") }.unwrap();
        assert_eq!(none, OpenRequest::default());
        let zero = request(&options()).unwrap();
        assert_eq!(zero, OpenRequest::named("/hrts-options"));

        let set = request(&HrtsOpenOptions {
            mode: HrtsMode::MODE_FROZEN as u32,
            tie_interval_ms: 250,
            max_slew_ppm: 100,
            step_threshold_ms: 7,
            bound_drift_ppm: 20,
            bound_void_s: 5,
            ..options()
        })
        .unwrap();
        assert_eq!(set.name.as_deref(), Some("/hrts-options"));
        assert_eq!(
            set.options,
            OpenOptions {
                mode: Some(Mode::Frozen),
                tie_interval: Some(Duration::from_millis(250)),
                max_slew_ppm: Some(100),
                step_threshold: Some(Duration::from_millis(7)),
            }
        );
        assert_eq!(
            set.bound,
            BoundOptions {
                drift_ppm: Some(20),
                void_after: Some(Duration::from_secs(5)),
            }
        );
    }

    #[test]
    fn a_version_1_caller_is_read_only_as_far_as_its_struct_goes() {
        // A version 1 struct with something else right after it: the bytes
        // where version 2 has its bound fields must not be read.
        #[repr(C)]
        struct V1AndMore {
            v1: OpenOptionsV1,
            after: [u32; 2],
        }
        let caller = V1AndMore {
            v1: OpenOptionsV1 {
                version: 1,
                mode: HrtsMode::MODE_TRACKING as u32,
                tie_interval_ms: 300,
                max_slew_ppm: 0,
                step_threshold_ms: 0,
            },
            after: [u32::MAX, u32::MAX],
        };
        let ptr = (&caller as *const V1AndMore).cast::<HrtsOpenOptions>();
        // SAFETY: version 1's fields are valid for reading at `ptr`.
        let req = unsafe { open_request(None, ptr, "f") }.unwrap();
        assert_eq!(req.options.tie_interval, Some(Duration::from_millis(300)));
        assert_eq!(req.bound, BoundOptions::default());
    }

    #[test]
    fn bad_options_are_refused_saying_what_to_do() {
        let cases = [
            (HrtsOpenOptions::default(), "version 0 is neither 1 nor 2"),
            (
                HrtsOpenOptions {
                    version: 3,
                    ..options()
                },
                "build against the hrts.h of this libhrts",
            ),
            (
                HrtsOpenOptions {
                    mode: 3,
                    ..options()
                },
                "mode code 3 is neither 1 (tracking) nor 2 (frozen)",
            ),
            (
                HrtsOpenOptions {
                    tie_interval_ms: 60_001,
                    ..options()
                },
                "outside 1 ms ..= 60 s",
            ),
            (
                HrtsOpenOptions {
                    max_slew_ppm: 50_001,
                    ..options()
                },
                "outside 1 ..= 50000 ppm",
            ),
            (
                HrtsOpenOptions {
                    bound_drift_ppm: 1_000_001,
                    ..options()
                },
                "bound drift 1000001 ppm is outside 1 ..= 1000000 ppm",
            ),
            (
                HrtsOpenOptions {
                    bound_void_s: 604_801,
                    ..options()
                },
                "bound void-after 604801s is outside 1 s ..= 604800 s",
            ),
        ];
        for (opts, message) in cases {
            let e = request(&opts).unwrap_err();
            assert_eq!(e.status, HrtsStatus::E_INVALID_ARGUMENT, "{opts:?}");
            assert!(
                e.message.starts_with("hrts_segment_open_with: ") && e.message.contains(message),
                "{opts:?}: {}",
                e.message
            );
        }
    }

    #[test]
    fn disruption_states_say_none_unrecorded_and_seen() {
        let none = HrtsDisruptionState::from(None);
        assert_eq!((none.count, none.last_ns, none.last_kind), (0, 0, 0));
        assert_eq!((none.pending, none.recorded), (0, 0));
        let seen = HrtsDisruptionState::from(Some(Disruptions {
            count: 3,
            last_ns: 1_700_000_000_000_000_000,
            last_kind: Some(DisruptionKind::Suspend),
            pending: true,
        }));
        assert_eq!(
            (
                seen.count,
                seen.last_ns,
                seen.last_kind,
                seen.pending,
                seen.recorded
            ),
            (
                3,
                1_700_000_000_000_000_000,
                HrtsDisruptionKind::DISRUPTION_SUSPEND as u32,
                1,
                1
            )
        );
        for code in 1..=6 {
            let k = DisruptionKind::from_code(code).unwrap();
            assert_eq!(
                HrtsDisruptionState::from(Some(Disruptions {
                    count: 1,
                    last_ns: 1,
                    last_kind: Some(k),
                    pending: false,
                }))
                .last_kind as u64,
                code
            );
        }
        assert_eq!(
            DisruptionKind::from_code(7),
            None,
            "a new core disruption kind needs a C constant"
        );
    }

    #[test]
    fn c_modes_are_the_core_modes() {
        for (c, core) in [
            (HrtsMode::MODE_TRACKING, Mode::Tracking),
            (HrtsMode::MODE_FROZEN, Mode::Frozen),
        ] {
            assert_eq!(Mode::from_code(c as u32), Some(core));
        }
        assert_eq!(Mode::ALL.len(), 2, "a new core mode needs a C constant");
    }
}
