//! A loom model of the time page's writer protocol (docs/PROTOCOL.md: the
//! reader's rules, the writer's rules, the writer role's lock, stamps beside
//! the writer, the tie), explored by loom for every interleaving (within a
//! preemption bound) of two would-be writers and a reader, under the C11
//! memory model rather than the hardware's: qemu's aarch64 and ppc64le runs
//! execute weakly ordered hardware's instructions but do not explore its
//! orderings, so this model is the evidence for them.
//!
//! The model keeps the protocol's words and orderings and shrinks the rest: a
//! line is `value(c) = ns + (c − counter) · mult` in small integers, the
//! counter is one shared clock that every read advances, the role's lock is an
//! atomic word that "the kernel" clears when its holder dies. A writer may
//! stop (keep its lock, never run again) or die (its lock is released) after
//! each of its steps. Invariants checked, as the protocol document states
//! them:
//!
//! - no torn snapshot is accepted (every line a stamp uses carries a matching
//!   check word);
//! - never backward (a stamp is at least every stamp that finished before it
//!   started);
//! - at most one writer (among the processes still running);
//! - no reader waits (a stamp retries only after a line was published, so at
//!   most as often as there are publications, whatever the writers do).

use loom::sync::atomic::AtomicU64;
use loom::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use loom::sync::Arc;

const SEQ_ONE: u64 = 1 << 32;
const STALE: u64 = 1 << 31;
/// Ticks past the base a stamp converts on the fast path.
const THRESHOLD: u64 = 1;
/// The reach a holder announces past the counter it reads.
const WINDOW: u64 = 4;
/// Lines the model can publish (two writers, two ties each): a stamp retries
/// only after one of them, so at most this often plus one.
const MAX_RETRIES: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Line {
    counter: u64,
    ns: u64,
    mult: u64,
}

impl Line {
    fn at(&self, c: u64) -> u64 {
        // Counters here are never behind a base by more than the model's
        // cross-CPU skew, which it has none of.
        self.ns + c.saturating_sub(self.counter) * self.mult
    }
    fn check(&self) -> u64 {
        self.counter.wrapping_mul(31) ^ self.ns.wrapping_mul(17) ^ self.mult.wrapping_mul(7) ^ 1
    }
}

struct Slot {
    counter: AtomicU64,
    ns: AtomicU64,
    mult: AtomicU64,
    check: AtomicU64,
}

impl Slot {
    fn new(l: Line) -> Slot {
        Slot {
            counter: AtomicU64::new(l.counter),
            ns: AtomicU64::new(l.ns),
            mult: AtomicU64::new(l.mult),
            check: AtomicU64::new(l.check()),
        }
    }
    fn store(&self, l: &Line) {
        self.counter.store(l.counter, Relaxed);
        self.ns.store(l.ns, Relaxed);
        self.mult.store(l.mult, Relaxed);
        self.check.store(l.check(), Relaxed);
    }
    fn load(&self) -> (Line, u64) {
        let l = Line {
            counter: self.counter.load(Relaxed),
            ns: self.ns.load(Relaxed),
            mult: self.mult.load(Relaxed),
        };
        (l, self.check.load(Relaxed))
    }
}

/// The shared page, the role's lock and the model's bookkeeping.
struct Page {
    seq: AtomicU64,
    slots: [Slot; 2],
    reach: AtomicU64,
    /// The writer role's lock: 0 free, else the holder's id. The kernel clears
    /// it when the holder dies.
    lock: AtomicU64,
    /// The counter: one clock for every process.
    clock: AtomicU64,
    /// Bookkeeping: running processes that hold the role, and the largest
    /// stamp finished so far.
    writers: AtomicU64,
    issued: AtomicU64,
    publications: AtomicU64,
}

impl Page {
    fn new() -> Page {
        let l = Line {
            counter: 0,
            ns: 100,
            mult: 2,
        };
        Page {
            seq: AtomicU64::new(0),
            slots: [Slot::new(l), Slot::new(l)],
            reach: AtomicU64::new(0),
            lock: AtomicU64::new(0),
            clock: AtomicU64::new(0),
            writers: AtomicU64::new(0),
            issued: AtomicU64::new(0),
            publications: AtomicU64::new(0),
        }
    }

    fn read_counter(&self) -> u64 {
        self.clock.fetch_add(1, SeqCst) + 1
    }
}

/// How a would-be writer ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Runs,
    /// Stops for good after this many writer steps, its lock held.
    StopsAfter(u32),
    /// Dies after this many writer steps: the kernel releases its lock.
    DiesAfter(u32),
}

/// Signals that a writer stopped or died at a step.
struct Gone;

struct Writer<'a> {
    page: &'a Page,
    id: u64,
    fate: Fate,
    steps: u32,
    holds: bool,
}

impl Writer<'_> {
    /// One step of the writer's rules; the writer stops or dies after it as
    /// its fate says.
    fn step(&mut self) -> Result<(), Gone> {
        self.steps += 1;
        match self.fate {
            Fate::StopsAfter(n) if self.steps > n => Err(Gone),
            Fate::DiesAfter(n) if self.steps > n => {
                if self.holds {
                    self.page.writers.fetch_sub(1, SeqCst);
                }
                // The kernel releases the lock of a dead process.
                if self.page.lock.load(Relaxed) == self.id {
                    self.page.lock.store(0, Release);
                }
                Err(Gone)
            }
            _ => Ok(()),
        }
    }
}

/// What a stamp did: its value, or that its process stopped or died.
type Stamp = Result<u64, Gone>;

/// One stamp (the reader's rules), by a process that may take the writer role
/// (`writer`) or only reads (`None`).
fn stamp(page: &Page, mut writer: Option<&mut Writer<'_>>) -> Stamp {
    let floor = page.issued.load(SeqCst);
    let mut retries = 0;
    let v = loop {
        // Rule 2: one snapshot under an unchanged count.
        let before = page.seq.load(Acquire);
        let c = page.read_counter();
        let (line, check) = page.slots[((before >> 32) & 1) as usize].load();
        loom::sync::atomic::fence(Acquire);
        let after = page.seq.load(Relaxed);
        if (before ^ after) >> 32 != 0 {
            retries += 1;
            assert!(retries <= MAX_RETRIES, "a stamp waited");
            continue;
        }
        assert_eq!(line.check(), check, "a torn snapshot was accepted");
        if c - line.counter <= THRESHOLD {
            break line.at(c);
        }
        // Past the threshold: take the role, or stamp beside its holder.
        if let Some(w) = writer.as_deref_mut() {
            if let Some(v) = tie(page, w, after, c)? {
                break v;
            }
        }
        match beside(page, &line, after, c) {
            Some(v) => break v,
            None => {
                retries += 1;
                assert!(retries <= MAX_RETRIES, "a stamp waited");
            }
        }
    };
    assert!(v >= floor, "backward: {v} < {floor}");
    page.issued.fetch_max(v, SeqCst);
    Ok(v)
}

/// Stamps beside the writer: `None` means the line was replaced; stamp again.
fn beside(page: &Page, line: &Line, seen: u64, c: u64) -> Option<u64> {
    let w = page.seq.load(Acquire);
    if w >> 32 != seen >> 32 {
        return None;
    }
    if w & STALE == 0 {
        let reach = page.reach.load(Acquire);
        if c <= reach {
            if page.seq.load(Acquire) >> 32 != seen >> 32 {
                return None;
            }
            return Some(line.at(c));
        }
        if page
            .seq
            .compare_exchange(w, w | STALE, AcqRel, Acquire)
            .is_err()
        {
            return None;
        }
    }
    Some(line.at(c))
}

/// The writer's rules and the tie. `Ok(None)`: the role was not taken.
fn tie(page: &Page, w: &mut Writer<'_>, seen: u64, c: u64) -> Result<Option<u64>, Gone> {
    // Rule 1: the lock first (a held lock is a live holder), then the CAS.
    if page
        .lock
        .compare_exchange(0, w.id, Acquire, Relaxed)
        .is_err()
    {
        return Ok(None);
    }
    w.step()?;
    let mine = (seen & !0xffff_ffff) | w.id;
    if page
        .seq
        .compare_exchange(seen, mine, AcqRel, Relaxed)
        .is_err()
    {
        page.lock.store(0, Release);
        return Ok(None);
    }
    loom::sync::atomic::fence(Release);
    w.holds = true;
    assert_eq!(page.writers.fetch_add(1, SeqCst), 0, "two writers");
    w.step()?;
    let old = page.slots[((mine >> 32) & 1) as usize].load().0;
    // Announce the reach; count the exposure.
    let x = page.read_counter();
    let mut reach = (x + WINDOW).max(page.reach.load(Acquire).min(x + WINDOW));
    page.reach.store(reach, Release);
    let mut exposed = (old.counter + THRESHOLD).max(reach);
    if seen & STALE != 0 {
        exposed = exposed.max(x);
    }
    w.step()?;
    // A slope that changes (down, to exercise the raise), a line taken over
    // at a counter read just before publishing.
    let mult = if old.mult == 2 { 1 } else { 2 };
    loop {
        let p = page.read_counter();
        let given = |c: u64| old.at(c.min(exposed));
        let mut ns = given(p);
        if exposed > p {
            // No lower than the old line at the end of the exposure.
            ns = ns.max(old.at(exposed).saturating_sub((exposed - p) * mult));
        }
        let new = Line {
            counter: p,
            ns,
            mult,
        };
        page.slots[(((mine >> 32) & 1) ^ 1) as usize].store(&new);
        w.step()?;
        let next = (mine & !0xffff_ffff) + SEQ_ONE;
        match page.seq.compare_exchange(mine, next, AcqRel, Acquire) {
            Ok(_) => {
                page.publications.fetch_add(1, SeqCst);
                w.holds = false;
                page.writers.fetch_sub(1, SeqCst);
                page.lock.store(0, Release);
                // The stamp that tied: the old line at its own counter.
                return Ok(Some(old.at(c)));
            }
            Err(now) => {
                assert_eq!(now, mine | STALE, "the role was robbed from a live writer");
                let x2 = page.read_counter();
                reach = reach.max(x2 + WINDOW);
                page.reach.store(reach, Release);
                page.seq
                    .compare_exchange(mine | STALE, mine, AcqRel, Acquire)
                    .expect("only the holder clears its mark");
                let y = page.read_counter();
                exposed = exposed.max(reach).max(y);
                w.step()?;
            }
        }
    }
}

/// One would-be writer: `stamps` stamps past the threshold, as its fate allows.
fn writer(page: &Page, id: u64, fate: Fate, stamps: u32) {
    let mut w = Writer {
        page,
        id,
        fate,
        steps: 0,
        holds: false,
    };
    for _ in 0..stamps {
        if stamp(page, Some(&mut w)).is_err() {
            return;
        }
    }
}

fn explore(fate: Fate, bound: usize, stamps: u32) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.check(move || {
        let page = Arc::new(Page::new());
        let p1 = page.clone();
        let w1 = loom::thread::spawn(move || writer(&p1, 1, fate, stamps));
        let p2 = page.clone();
        let w2 = loom::thread::spawn(move || writer(&p2, 2, Fate::Runs, stamps));
        // The reader: stamps that must finish whatever the writers do.
        let mut last = 0;
        for _ in 0..2 {
            let v = stamp(&page, None).unwrap_or_else(|_| unreachable!());
            assert!(v >= last);
            last = v;
        }
        w1.join().unwrap();
        w2.join().unwrap();
        assert!(page.writers.load(SeqCst) <= 1);
    });
}

#[test]
fn two_writers_and_a_reader() {
    explore(Fate::Runs, 2, 2);
}

#[test]
fn a_writer_that_stops_at_any_step_is_neither_robbed_nor_waited_for() {
    for n in 0..5 {
        explore(Fate::StopsAfter(n), 2, 1);
    }
}

#[test]
fn a_writer_that_dies_at_any_step_is_taken_over() {
    for n in 0..5 {
        explore(Fate::DiesAfter(n), 2, 1);
    }
}
