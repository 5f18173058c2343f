//! The shared segment's costs, side by side with the reads they compete with, in
//! one run: `cargo bench -p hrts-core --bench shared`. Results: README.md here.
//!
//! Groups: `stamp` (one epoch stamp through a tracking and a frozen segment vs
//! bare counter reads and clock_gettime), `tie` (a stamp that ties, and one that
//! moves a frozen base: segments whose threshold is one tick, so every stamp
//! does), `attach` (opening an existing segment: no calibration), and `unique`
//! (next_unique uncontended, with 2 threads, with 2 processes).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use criterion::{Criterion, Throughput};
    use hrts_core::clock::{read_ordered, read_ordered_by, OrderedRead, SourceId};
    use hrts_core::{Config, Mode, SharedBase};
    use std::hint::black_box;
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const CHILD_ENV: &str = "HRTS_BENCH_UNIQUE_CHILD";

    fn segment_name() -> String {
        format!("/hrts-bench-{}", std::process::id())
    }

    fn open(name: &str) -> SharedBase {
        SharedBase::open(&Config::named(name)).expect("open bench segment")
    }

    fn open_with(name: &str, mode: Mode, threshold: Option<u64>) -> SharedBase {
        let _ = SharedBase::unlink(name);
        let mut cfg = Config::named(name);
        cfg.mode = mode;
        cfg.wrap_threshold = threshold;
        SharedBase::open(&cfg).expect("open bench segment")
    }

    fn realtime() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// The 2-process case: a child process on the same segment that takes
    /// `iters` unique stamps once told to start.
    fn child_main(name: &str) {
        let base = open(name);
        let mut line = String::new();
        while std::io::stdin()
            .read_line(&mut line)
            .map(|n| n > 0)
            .unwrap_or(false)
        {
            let iters: u64 = line.trim().parse().expect("iteration count");
            for _ in 0..iters {
                black_box(base.next_unique().unwrap());
            }
            println!("done");
            std::io::stdout().flush().unwrap();
            line.clear();
        }
    }

    /// Each contender's fastest batch over rounds that run every contender in
    /// turn: the cost when nothing interfered, with all contenders under the
    /// same conditions (see clock.rs). Returns ns per call, in order.
    /// A contender: name, calls per batch, and the batch.
    type Contender<'a> = (&'a str, u64, &'a mut dyn FnMut(u64));

    fn interleaved_minimum(contenders: &mut [Contender<'_>]) -> Vec<f64> {
        const ROUNDS: usize = 400;
        let mut best = vec![f64::INFINITY; contenders.len()];
        for _ in 0..ROUNDS {
            for (i, (_, batch, f)) in contenders.iter_mut().enumerate() {
                let t0 = Instant::now();
                f(*batch);
                best[i] = best[i].min(t0.elapsed().as_nanos() as f64 / *batch as f64);
            }
        }
        println!("interleaved minimum ({ROUNDS} rounds), ns/call:");
        for ((name, _, _), ns) in contenders.iter().zip(&best) {
            println!("  {name:<32} {ns:8.2}");
        }
        best
    }

    fn looped(f: impl Fn() -> u64) -> impl FnMut(u64) {
        move |n| {
            (0..n).for_each(|_| {
                black_box(f());
            })
        }
    }

    pub fn main() {
        if let Ok(name) = std::env::var(CHILD_ENV) {
            return child_main(&name);
        }
        let name = segment_name();
        let _ = SharedBase::unlink(&name);
        let base = open(&name);
        let frozen_name = format!("{name}-frozen");
        let frozen = open_with(&frozen_name, Mode::Frozen, None);
        let skew = base.now_ns() as i64 - realtime() as i64;
        assert!(skew.abs() < 1_000_000, "segment base is off by {skew} ns");
        println!(
            "segment {name}: source {}, {} Hz, ordered read {}",
            base.source().name(),
            base.frequency(),
            base.ordered_read().name(base.source()),
        );

        {
            let tying_name = format!("{name}-tie0");
            let tying = open_with(&tying_name, Mode::Tracking, Some(1));
            let moving_name = format!("{name}-move0");
            let moving = open_with(&moving_name, Mode::Frozen, Some(1));
            let ties_before = tying.tracking_state().ties;
            let rdtscp = OrderedRead::rdtscp().expect("this bench compares with RDTSCP");
            // A plausible line for the model below: now, 2^32 / 2.6 GHz.
            let line = (
                read_ordered(SourceId::Tsc),
                realtime(),
                1u64 << 31,
                1_652_000_000u64,
            );
            let b = interleaved_minimum(&mut [
                // SAFETY: rdtsc only reads the time-stamp counter.
                (
                    "rdtsc",
                    2000,
                    &mut looped(|| unsafe { core::arch::x86_64::_rdtsc() }),
                ),
                (
                    "rdtscp",
                    2000,
                    &mut looped(|| read_ordered_by(SourceId::Tsc, rdtscp)),
                ),
                (
                    "lfence; rdtsc",
                    2000,
                    &mut looped(|| read_ordered(SourceId::Tsc)),
                ),
                (
                    "segment_now_ns (tracking)",
                    2000,
                    &mut looped(|| base.now_ns()),
                ),
                (
                    "segment_now_ns (frozen)",
                    2000,
                    &mut looped(|| frozen.now_ns()),
                ),
                (
                    "segment_now_ns_ordered (tracking)",
                    2000,
                    &mut looped(|| base.now_ns_ordered()),
                ),
                (
                    "segment_now_ns_ordered (frozen)",
                    2000,
                    &mut looped(|| frozen.now_ns_ordered()),
                ),
                (
                    "next_unique",
                    2000,
                    &mut looped(|| base.next_unique().unwrap()),
                ),
                (
                    "next_unique_ordered",
                    2000,
                    &mut looped(|| base.next_unique_ordered().unwrap()),
                ),
                (
                    "stamp that ties (tracking)",
                    50,
                    &mut looped(|| tying.now_ns()),
                ),
                (
                    "stamp that moves (frozen)",
                    50,
                    &mut looped(|| moving.now_ns()),
                ),
                // The least an ordered stamp can cost: `rdtscp` and the
                // conversion alone, the line's words held in registers (no
                // seqlock, no quick check, no threshold). An ordered read waits
                // for the previous call's arithmetic to finish.
                (
                    "rdtscp + conversion only (model)",
                    2000,
                    &mut looped(|| {
                        let counter = read_ordered_by(SourceId::Tsc, rdtscp);
                        let (base_counter, ns, frac, mult) =
                            black_box((line.0, line.1, line.2, line.3));
                        let delta = counter.wrapping_sub(base_counter);
                        ns.wrapping_add(delta.wrapping_mul(mult).wrapping_add(frac) >> 32)
                    }),
                ),
            ]);
            println!(
                "  ratios: tracking/frozen {:.3} (target <= 1.05), tracking/rdtsc {:.3} (target <= 1.10), \
                 ordered tracking/frozen {:.3}; one tie {:.0} ns (target <= 2000), one move {:.0} ns",
                b[3] / b[4],
                b[3] / b[0],
                b[5] / b[6],
                b[9] - b[3],
                b[10] - b[4],
            );
            println!(
                "  ordered: tracking/rdtscp {:.3} (target <= 1.10; the model of rdtscp + conversion {:.3}), \
                 lfence;rdtsc/rdtscp {:.3}; \
                 unique: {:.1} M/s (target >= 50), ordered unique {:.1} M/s, unique/now_ns {:.2}",
                b[5] / b[1],
                b[11] / b[1],
                b[2] / b[1],
                1e3 / b[7],
                1e3 / b[8],
                b[7] / b[3],
            );
            println!(
                "  ({} ties by the tying segment)",
                tying.tracking_state().ties - ties_before
            );
            let _ = SharedBase::unlink(&tying_name);
            let _ = SharedBase::unlink(&moving_name);
        }

        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .configure_from_args();

        let mut g = c.benchmark_group("stamp");
        // SAFETY (both): rdtsc/rdtscp only read the time-stamp counter.
        g.bench_function("rdtsc", |b| {
            b.iter(|| unsafe { core::arch::x86_64::_rdtsc() })
        });
        g.bench_function("rdtscp", |b| {
            let mut aux = 0u32;
            b.iter(|| unsafe { core::arch::x86_64::__rdtscp(&mut aux) })
        });
        g.bench_function("lfence_rdtsc", |b| b.iter(|| read_ordered(SourceId::Tsc)));
        g.bench_function("clock_gettime_realtime", |b| b.iter(realtime));
        g.bench_function("segment_now_ns", |b| b.iter(|| base.now_ns()));
        g.bench_function("segment_now_ns_frozen", |b| b.iter(|| frozen.now_ns()));
        g.bench_function("segment_now_ns_ordered", |b| {
            b.iter(|| base.now_ns_ordered())
        });
        g.bench_function("segment_now_ns_ordered_frozen", |b| {
            b.iter(|| frozen.now_ns_ordered())
        });
        g.bench_function("segment_next_unique", |b| {
            b.iter(|| base.next_unique().unwrap())
        });
        g.bench_function("segment_next_unique_ordered", |b| {
            b.iter(|| base.next_unique_ordered().unwrap())
        });
        g.finish();

        let mut g = c.benchmark_group("tie");
        let tying_name = format!("{name}-tie");
        let tying = open_with(&tying_name, Mode::Tracking, Some(1));
        let moving_name = format!("{name}-move");
        let moving = open_with(&moving_name, Mode::Frozen, Some(1));
        let ties_before = tying.tracking_state().ties;
        g.bench_function("stamp_that_ties", |b| b.iter(|| tying.now_ns()));
        g.bench_function("stamp_that_moves_frozen", |b| b.iter(|| moving.now_ns()));
        g.finish();
        println!(
            "tie: {} ties taken by the tying segment",
            tying.tracking_state().ties - ties_before
        );
        for n in [&frozen_name, &tying_name, &moving_name] {
            let _ = SharedBase::unlink(n);
        }

        let mut g = c.benchmark_group("attach");
        g.bench_function("open_existing_segment", |b| {
            b.iter(|| black_box(open(&name)))
        });
        g.finish();

        let mut g = c.benchmark_group("unique");
        g.throughput(Throughput::Elements(1));
        g.bench_function("1_thread", |b| b.iter(|| base.next_unique().unwrap()));
        g.bench_function("1_thread_ordered", |b| {
            b.iter(|| base.next_unique_ordered().unwrap())
        });
        g.bench_function("2_threads", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                std::thread::scope(|s| {
                    s.spawn(|| {
                        (0..iters).for_each(|_| {
                            black_box(base.next_unique().unwrap());
                        })
                    });
                    (0..iters).for_each(|_| {
                        black_box(base.next_unique().unwrap());
                    });
                });
                // Two threads did `iters` each: time per stamp of the pair.
                start.elapsed() / 2
            })
        });
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(CHILD_ENV, &name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn bench child");
        let mut to_child = child.stdin.take().unwrap();
        let mut from_child = child.stdout.take().unwrap();
        g.bench_function("2_processes", |b| {
            b.iter_custom(|iters| {
                writeln!(to_child, "{iters}").unwrap();
                to_child.flush().unwrap();
                let start = Instant::now();
                (0..iters).for_each(|_| {
                    black_box(base.next_unique().unwrap());
                });
                let mut done = [0u8; 5];
                from_child.read_exact(&mut done).unwrap();
                start.elapsed() / 2
            })
        });
        g.finish();
        drop(to_child);
        let _ = child.wait();
        c.final_summary();
        let _ = SharedBase::unlink(&name);
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::main();
    #[cfg(not(target_arch = "x86_64"))]
    println!("the shared-segment benchmark compares against x86-64 reads only");
}
