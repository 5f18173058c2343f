use super::*;
use crate::testutil::TestName;

fn synchronized(ns: u64) -> Learned {
    Learned {
        status: BoundStatus::Synchronized,
        source: BoundSource::Test,
        bound_ns: ns,
        leap: Leap::None,
    }
}

/// Gives the active line the slope `slope(its learned frequency)`, as a
/// tie's slew would leave it; returns the line as stored.
fn set_slope(base: &SharedBase, slope: impl Fn(u64) -> u64) -> crate::segment::tracking::Line {
    let h = base.header();
    let slot = &h.slots[crate::segment::layout::seq_slot(h.seq.load(Acquire))];
    let (mut line, written, _) = crate::segment::timeline::load_line(slot);
    line.mult = slope(line.freq_mult);
    crate::segment::timeline::store_line(slot, &line, written);
    line
}

fn ticks_of(base: &SharedBase, ns: u64) -> u64 {
    (ns as u128 * base.frequency() as u128 / 1_000_000_000) as u64
}

#[test]
fn the_writer_publishes_its_own_drift_and_void_after() {
    let t = TestName::new("bound-settings");
    // Ties a minute apart: none but the test's own publishes a word.
    let mut cfg = t.quiet_cfg();
    cfg.bound = BoundConfig {
        drift_ppm: 123,
        void_after: std::time::Duration::from_secs(2),
    };
    // The creator's first word, at the pairing: its settings.
    let creator = SharedBase::open(&cfg).unwrap();
    let s = creator.bound_state().unwrap();
    // Fresh for three tie intervals, cut to the void-after.
    assert_eq!((s.drift_ppb, s.fresh_ns), (123_000, 2_000_000_000));
    // Another process's tie publishes its own (here the defaults).
    let other = SharedBase::open(&t.cfg()).unwrap();
    let now = crate::clock::source::read_ordered(other.source());
    other.publish_bound(synchronized(1_000), 0, now);
    let s = creator.bound_state().unwrap();
    assert_eq!((s.drift_ppb, s.fresh_ns), (50_000, 60_000_000_000));
}

#[test]
fn an_interval_holds_the_clock_and_is_as_wide_as_its_parts() {
    let t = TestName::new("bound");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let published = crate::clock::kernel::realtime_ns();
    let now = crate::clock::source::read_ordered(base.source());
    base.publish_bound(synchronized(50_000), 700, now);
    let before = crate::clock::kernel::realtime_ns();
    let b = base.now_bounded().unwrap();
    let after = crate::clock::kernel::realtime_ns();
    assert_eq!(b.status, BoundStatus::Synchronized);
    // The line follows the clock within a few µs: the clock at the stamp's
    // instant (somewhere between the two readings; far apart under qemu)
    // lies inside the interval.
    assert!(
        b.earliest <= after && before <= b.latest,
        "{b:?} {before} {after}"
    );
    let half = (b.latest - b.earliest) / 2;
    let fixed = 50_000 + 700 + base.shift_ns();
    // Plus the drift since `as_of`, rounded up: 50 ppm of the time since
    // the publication (a few µs natively, far more under qemu).
    let drift = ((after - published) / 1_000 + 2) * 50_000 / 1_000_000 + 2;
    assert!(
        (fixed..=fixed + drift).contains(&half),
        "{half} vs {fixed} + {drift}"
    );
    let s = base.bound_state().unwrap();
    assert_eq!(
        (s.source, s.bound_ns, s.line_error_ns),
        (BoundSource::Test, 50_000, 700)
    );
    // A new segment's line runs at its frequency (no slew to absorb yet).
    assert!(s.slope_error_ppb <= 1, "{s:?}");
    // The widest a synchronized stamp gets on this word: its drift grown
    // over the whole freshness window (3 s at the 1 s tie interval: 150 µs).
    assert_eq!(s.fresh_ns, 3_000_000_000);
    let rate = 50_000 + s.slope_error_ppb;
    assert_eq!(
        s.widest_synchronized_ns(),
        fixed + 3_000_001 * rate / 1_000_000 + 1 + 3
    );
    assert!(s.widest_synchronized_ns() >= half);
    // Time only goes on (and a minute is far more than any test takes, even
    // under qemu).
    assert!(base.after(b.earliest - 1).unwrap());
    assert!(!base.after(b.latest + 60_000_000_000).unwrap());
    assert!(base.before(b.latest + 60_000_000_000).unwrap());
}

#[test]
fn an_old_word_is_free_running_and_widening_then_void() {
    let t = TestName::new("boundage");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let now = crate::clock::source::read_ordered(base.source());
    // Learned 10 s ago: past fresh (3 s at the 1 s tie interval).
    base.publish_bound(
        synchronized(1_000),
        0,
        now - ticks_of(&base, 10_000_000_000),
    );
    let b = base.now_bounded().unwrap();
    assert_eq!(b.status, BoundStatus::FreeRunning);
    let half = (b.latest - b.earliest) / 2;
    // 50 ppm of 10 s is 500 µs.
    assert!(half >= 1_000 + 500_000, "{half}");
    // Learned 100 s ago: past the 60 s void-after.
    base.publish_bound(
        synchronized(1_000),
        0,
        now - ticks_of(&base, 100_000_000_000),
    );
    let e = base.now_bounded().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsynchronized);
    assert!(e.message().contains("void-after"), "{}", e.message());
    assert_eq!(base.bound_state().unwrap().status, BoundStatus::Unknown);
}

#[test]
fn a_line_left_with_its_slew_widens_the_interval_at_its_slope_error() {
    // A tie's line runs at the learned frequency plus the slew that absorbs
    // its error; with no tie after it, it keeps that slope. Here 400 ppm
    // (within the default largest slew), 8 s after the learning.
    let t = TestName::new("boundslope");
    let base = SharedBase::open(&t.cfg()).unwrap();
    set_slope(&base, |f| f + f / 2_500);
    let now = crate::clock::source::read_ordered(base.source());
    base.publish_bound(synchronized(1_000), 0, now - ticks_of(&base, 8_000_000_000));
    let s = base.bound_state().unwrap();
    assert!((400_000..=400_001).contains(&s.slope_error_ppb), "{s:?}");
    let b = base.now_bounded().unwrap();
    assert_eq!(b.status, BoundStatus::FreeRunning);
    let half = (b.latest - b.earliest) / 2;
    // (50 + 400) ppm of 8 s: 3.6 ms, against the 0.4 ms of drift alone.
    let grown = half - 1_000 - base.shift_ns();
    assert!((3_600_000..3_650_000).contains(&grown), "{grown}");
    assert!(s.widest_synchronized_ns() >= 1_000 + 450 * 3_000, "{s:?}");

    // The slope error is a distance: a slew the other way counts the same.
    set_slope(&base, |f| f - f / 2_500);
    let s = base.bound_state().unwrap();
    assert!((400_000..=400_200).contains(&s.slope_error_ppb), "{s:?}");
}

#[test]
fn a_word_sampled_after_the_stamp_widens_it_back_to_the_stamp() {
    // A reader preempted between its counter read and its read of the
    // word finds a word whose tie sampled after its stamp: the line's
    // error was known there, and at the stamp it may differ by the
    // distance back times the rate, as it would forward. Here 400 ppm of
    // slew and a word sampled 8 ms after the stamp's counter.
    let t = TestName::new("boundback");
    let base = SharedBase::open(&t.cfg()).unwrap();
    let line = set_slope(&base, |f| f + f / 2_500);
    let now = crate::clock::source::read_ordered(base.source());
    let later = now + ticks_of(&base, 8_000_000);
    let p = Published {
        line_count: None,
        bound_ns: 1_000,
        as_of: later,
        drift_ppb: 50_000,
        line_error_ns: 0,
        status: BoundStatus::Synchronized,
        source: BoundSource::Test,
        leap: Leap::None,
        fresh_ns: 3_000_000_000,
        void_ns: 60_000_000_000,
    };
    let diff = line.mult - line.freq_mult;
    let (status, age_ns, half) = base.aged(&p, now, diff);
    // Still fresh: the word is younger than the stamp.
    assert_eq!((status, age_ns), (BoundStatus::Synchronized, 0));
    // (50 + 400) ppm of 8 ms: 3.6 µs.
    let grown = half - 1_000 - base.shift_ns();
    assert!((3_590..3_620).contains(&grown), "{grown}");
    // Forward by the same distance, the same growth.
    let (_, _, ahead) = base.aged(&p, later + (later - now), diff);
    assert!(ahead.abs_diff(half) <= 1, "{ahead} {half}");
}

#[test]
fn an_unsynchronized_clock_a_frozen_segment_and_a_torn_word_give_errors() {
    let t = TestName::new("boundunsync");
    let base = SharedBase::open(&t.quiet_cfg()).unwrap();
    let now = crate::clock::source::read_ordered(base.source());
    base.publish_bound(
        Learned {
            status: BoundStatus::Unsynchronized,
            source: BoundSource::Kernel,
            bound_ns: 16_000_000_000,
            leap: Leap::None,
        },
        0,
        now,
    );
    let e = base.now_bounded().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsynchronized);
    assert!(e.message().contains("not synchronized"), "{}", e.message());
    // A writer that died in the middle leaves the word odd: no interval.
    let a = base.bound_area();
    a.version.fetch_add(1, Relaxed);
    assert!(base.now_bounded().is_err());
    base.publish_bound(synchronized(10), 0, now);
    assert!(base.now_bounded().is_ok());

    let f = TestName::new("boundfrozen");
    let mut cfg = f.cfg();
    cfg.mode = Mode::Frozen;
    let frozen = SharedBase::open(&cfg).unwrap();
    frozen.publish_bound(synchronized(10), 0, now);
    let e = frozen.now_bounded().unwrap_err();
    assert!(e.message().contains("frozen"), "{}", e.message());
}

#[test]
fn every_tie_publishes_the_kernels_word() {
    let t = TestName::new("boundtie");
    let base = SharedBase::open(&t.cfg()).unwrap();
    assert!(base.force_move());
    let s = base.bound_state().unwrap();
    let kernel = bound::kernel();
    // Windows tells user programs no error bound for its clock.
    #[cfg(not(windows))]
    assert_eq!(s.source, BoundSource::Kernel);
    #[cfg(windows)]
    assert_eq!(s.source, BoundSource::None);
    assert_eq!(s.status, kernel.status);
    match base.now_bounded() {
        Ok(b) => assert!(kernel.status.bounded() && b.earliest <= b.latest),
        Err(e) => {
            assert!(!kernel.status.bounded());
            assert_eq!(e.kind(), ErrorKind::Unsynchronized);
        }
    }
}

#[test]
fn a_tie_learns_the_frequency_from_the_sample_its_predecessors_word_names() {
    let t = TestName::new("boundlearn");
    let base = SharedBase::open(&t.cfg()).unwrap();
    assert!(base.force_move());
    let (first, ..) = base.active_line();
    assert_eq!(
        first.rate_mult, 0,
        "the first tie after creation learns nothing"
    );
    let word = base.tie_word(seq_count(base.header().seq.load(Acquire)));
    let (as_of, line_error, _) = word.expect("the tie's word names its line");
    // The word's sample is where the line passes through its calendar
    // read less its residual (the line itself starts at its publication).
    assert!(as_of <= first.counter);
    let through = first.tie_ns as i128 - first.residual as i128;
    assert!(((first.fixed_at(as_of) >> SHIFT) - through).abs() <= 2);
    assert!(line_error > 0);
    // Over half a tie interval (the 1 s default) the reads' error is far
    // below a quarter of the drift bound: the next tie learns.
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert!(base.force_move());
    let (second, ..) = base.active_line();
    assert!(second.rate_mult > 0, "{second:?}");
    assert_eq!(second.freq_mult, second.rate_mult);
}

#[test]
fn a_tie_replaces_a_word_a_dead_writer_left_half_written() {
    let t = TestName::new("boundtorn");
    let base = SharedBase::open(&t.cfg()).unwrap();
    assert!(base.force_move());
    let count = || seq_count(base.header().seq.load(Acquire));
    assert!(base.tie_word(count()).is_some());
    // The holder died between its first and last store: the version is odd.
    let a = base.bound_area();
    a.version.fetch_add(1, Relaxed);
    // The next holder takes it for no word (nobody else can be writing it)
    // and its tie publishes a whole one for its own line.
    assert_eq!(base.tie_word(count()), None);
    assert!(base.force_move());
    assert_eq!(a.version.load(Relaxed) & 1, 0);
    let (as_of, ..) = base.tie_word(count()).expect("the tie's word, whole again");
    assert!(as_of <= base.active_line().0.counter);
}

#[test]
fn commit_wait_returns_once_the_earliest_is_past() {
    let t = TestName::new("boundwait");
    let base = SharedBase::open(&t.quiet_cfg()).unwrap();
    let now = crate::clock::source::read_ordered(base.source());
    base.publish_bound(synchronized(200_000), 0, now);
    let b = base.now_bounded().unwrap();
    base.commit_wait(b.latest).unwrap();
    assert!(base.now_bounded().unwrap().earliest > b.latest);
}
