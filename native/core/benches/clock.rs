//! Cost of one time stamp, every contender side by side in one run:
//! `cargo bench -p hrts-core --bench clock`. See README.md in this directory.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use criterion::Criterion;
    use hrts_core::clock::{
        self as source, calibrate, CalibrationConfig, OrderedRead, Scale, SourceId,
    };
    use std::hint::black_box;
    use std::time::Duration;

    /// A process-local time base: the read path of the shared base without the
    /// seqlock. The source id is a runtime value, as it is when read from a segment.
    struct LocalBase {
        id: SourceId,
        counter: u64,
        ns: u64,
        frac: u64,
        scale: Scale,
        /// What a segment created here would record (`choose_ordered_read`).
        ordered: OrderedRead,
    }

    impl LocalBase {
        fn new() -> LocalBase {
            let id = black_box(SourceId::Tsc);
            let cal = calibrate(id, &CalibrationConfig::default()).expect("calibration");
            let scale = Scale::for_frequency(cal.hz).expect("scale");
            LocalBase {
                id,
                counter: source::read_ordered(id),
                ns: hrts_core::clock::realtime_ns(),
                frac: 0,
                scale,
                ordered: source::choose_ordered_read(id),
            }
        }

        #[inline(always)]
        fn at(&self, counter: u64) -> u64 {
            let delta = counter.wrapping_sub(self.counter);
            if delta <= self.scale.max_delta {
                self.ns + self.scale.to_ns_fast(delta, self.frac)
            } else {
                self.slow(delta)
            }
        }

        /// Past `max_delta` (the bench outlives 4 s) the shared base would have
        /// moved; here the u128 path stands in so results stay correct.
        #[cold]
        #[inline(never)]
        fn slow(&self, delta: u64) -> u64 {
            self.ns + self.scale.to_ns_exact(delta, self.frac) as u64
        }

        #[inline(never)]
        fn now_ns(&self) -> u64 {
            self.at(source::read(self.id))
        }

        /// The ordered read a segment created here would use.
        #[inline(never)]
        fn now_ns_ordered(&self) -> u64 {
            self.at(source::read_ordered_by(self.id, self.ordered))
        }

        /// The ordered read as it was before the choice: always `lfence; rdtsc`.
        #[inline(never)]
        fn now_ns_ordered_fence(&self) -> u64 {
            self.at(source::read_ordered(self.id))
        }
    }

    fn clock_gettime_realtime() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Per-call cost by the minimum over many short batches, with the contenders
    /// interleaved batch by batch. On a shared, loaded machine the minimum is the
    /// cost when nothing interfered, and interleaving exposes every contender to the
    /// same conditions, so the ratios are stable where criterion's means are not.
    fn interleaved_minimum(contenders: &mut [(&str, &mut dyn FnMut(u64))]) {
        const BATCH: u64 = 2_000;
        const ROUNDS: usize = 400;
        let mut best = vec![f64::INFINITY; contenders.len()];
        for _ in 0..ROUNDS {
            for (i, (_, f)) in contenders.iter_mut().enumerate() {
                let t0 = std::time::Instant::now();
                f(BATCH);
                let per_call = t0.elapsed().as_nanos() as f64 / BATCH as f64;
                best[i] = best[i].min(per_call);
            }
        }
        println!("interleaved minimum ({ROUNDS} rounds x {BATCH} calls), ns/call:");
        for ((name, _), ns) in contenders.iter().zip(&best) {
            println!("  {name:<26} {ns:6.2}");
        }
        let get = |n: &str| {
            contenders
                .iter()
                .position(|(c, _)| *c == n)
                .map(|i| best[i])
                .unwrap_or(f64::NAN)
        };
        println!(
            "  ratios: unordered/rdtsc {:.3} (target <= 1.15), unordered/clock_gettime {:.3} (target <= 0.55), ordered/rdtscp {:.3} (target <= 1.10), ordered (lfence)/rdtscp {:.3}, lfence_rdtsc/rdtscp {:.3}",
            get("hrts_epoch_unordered") / get("rdtsc"),
            get("hrts_epoch_unordered") / get("clock_gettime_realtime"),
            get("hrts_epoch_ordered") / get("rdtscp"),
            get("hrts_epoch_ordered_lfence") / get("rdtscp"),
            get("lfence_rdtsc") / get("rdtscp"),
        );
    }

    pub fn main() {
        let base = LocalBase::new();
        // The epoch read must agree with the calendar, or the timing means nothing.
        let skew = base.now_ns() as i64 - hrts_core::clock::realtime_ns() as i64;
        assert!(skew.abs() < 1_000_000, "local base is off by {skew} ns");
        // SAFETY: CPUID leaf 0x80000001 exists on every x86-64 CPU.
        #[allow(unused_unsafe)]
        let rdtscp = unsafe { core::arch::x86_64::__cpuid(0x8000_0001) }.edx & (1 << 27) != 0;
        assert!(
            rdtscp,
            "this CPU lacks RDTSCP; the rdtscp comparison cannot run"
        );
        println!(
            "ordered read chosen here: {}",
            base.ordered.name(SourceId::Tsc)
        );
        let anchor = minstant::Anchor::new();
        let quanta_clock = quanta::Clock::new();

        {
            let mut aux = 0u32;
            interleaved_minimum(&mut [
                ("hrts_epoch_unordered", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(base.now_ns());
                    })
                }),
                ("hrts_epoch_ordered", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(base.now_ns_ordered());
                    })
                }),
                ("hrts_epoch_ordered_lfence", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(base.now_ns_ordered_fence());
                    })
                }),
                ("rdtsc", &mut |n| {
                    (0..n).for_each(|_| {
                        // SAFETY: rdtsc exists on every x86-64 CPU.
                        black_box(unsafe { core::arch::x86_64::_rdtsc() });
                    })
                }),
                ("rdtscp", &mut |n| {
                    (0..n).for_each(|_| {
                        // SAFETY: RDTSCP is present on this machine (CPUID
                        // 0x80000001 EDX bit 27; checked in main before use).
                        black_box(unsafe { core::arch::x86_64::__rdtscp(&mut aux) });
                    })
                }),
                ("lfence_rdtsc", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(source::read_ordered(SourceId::Tsc));
                    })
                }),
                ("clock_gettime_realtime", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(clock_gettime_realtime());
                    })
                }),
                ("minstant_unix_nanos", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(minstant::Instant::now().as_unix_nanos(&anchor));
                    })
                }),
                ("quanta_clock_now", &mut |n| {
                    (0..n).for_each(|_| {
                        black_box(quanta_clock.now());
                    })
                }),
            ]);
        }

        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(50)
            .configure_from_args();
        let mut g = c.benchmark_group("clock");
        g.bench_function("hrts_epoch_unordered", |b| {
            b.iter(|| black_box(base.now_ns()))
        });
        g.bench_function("hrts_epoch_ordered", |b| {
            b.iter(|| black_box(base.now_ns_ordered()))
        });
        g.bench_function("hrts_epoch_ordered_lfence", |b| {
            b.iter(|| black_box(base.now_ns_ordered_fence()))
        });
        g.bench_function("rdtsc", |b| {
            // SAFETY: rdtsc exists on every x86-64 CPU.
            b.iter(|| black_box(unsafe { core::arch::x86_64::_rdtsc() }))
        });
        g.bench_function("rdtscp", |b| {
            let mut aux = 0u32;
            // SAFETY: RDTSCP is present (checked in main); aux is a local.
            b.iter(|| black_box(unsafe { core::arch::x86_64::__rdtscp(&mut aux) }))
        });
        g.bench_function("lfence_rdtsc", |b| {
            // SAFETY: lfence (SSE2) and rdtsc exist on every x86-64 CPU.
            b.iter(|| {
                black_box(unsafe {
                    core::arch::x86_64::_mm_lfence();
                    core::arch::x86_64::_rdtsc()
                })
            })
        });
        g.bench_function("clock_gettime_realtime", |b| {
            b.iter(|| black_box(clock_gettime_realtime()))
        });
        g.bench_function("systemtime_now", |b| {
            b.iter(|| black_box(std::time::SystemTime::now()))
        });
        g.bench_function("minstant_unix_nanos", |b| {
            b.iter(|| black_box(minstant::Instant::now().as_unix_nanos(&anchor)))
        });
        g.bench_function("quanta_clock_now", |b| {
            b.iter(|| black_box(quanta_clock.now()))
        });
        g.finish();
        c.final_summary();
    }
}

#[cfg(target_arch = "x86_64")]
fn main() {
    x86::main()
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    eprintln!("the clock benchmark compares x86-64 reads; nothing to run on this architecture");
}
