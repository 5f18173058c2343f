//! The host page's stamp beside a per-user segment's, a bare counter read and
//! clock_gettime, and the bounded stamp (`now_bounded`) beside them, in one
//! run: `cargo bench -p hrts-core --features testing --bench host` (the
//! feature's `HRTS_TEST_BOUND` fixes the bound every tie learns, so that the
//! interval is computed even where the kernel says the clock is
//! unsynchronized). Built as shipped (`cargo bench -p hrts-core --bench
//! host`) it times the plain stamps without the testing build's counter hook,
//! and the bounded stamps only where the host's clock is synchronized.
//! Results: README.md here.
//!
//! The daemon runs in a thread of this process (its rounds every 0.5 s, as
//! with the default tie interval); the reader maps the page read-only, as any
//! other process would.

// The host page is Linux only (see docs/windows.md).
#[cfg(all(target_arch = "x86_64", not(windows)))]
mod x86 {
    use criterion::Criterion;
    use hrts_core::{Access, Config, HostConfig, HostDaemon, SharedBase};
    use std::hint::black_box;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn realtime() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    fn looped(f: impl Fn() -> u64) -> impl FnMut(u64) {
        move |n| {
            (0..n).for_each(|_| {
                black_box(f());
            })
        }
    }

    pub fn main() {
        // Every tie (the daemon's, the per-user segment's) learns this fixed
        // bound (a test build's hook): the interval is computed, never the
        // error of a kernel that says its clock is unsynchronized.
        std::env::set_var("HRTS_TEST_BOUND", "synchronized,50000");
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("hrts-bench-host-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        let segment = format!("/hrts-bench-host-{pid}");
        let _ = SharedBase::unlink(&segment);
        let daemon = Arc::new(HostDaemon::start(&dir, &Config::named(&segment)).expect("daemon"));
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = {
            let (daemon, stop) = (Arc::clone(&daemon), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(daemon.round_interval());
                    daemon.round();
                }
            })
        };
        let cfg = Config::named(&segment).with_host_page(HostConfig {
            dir: dir.clone(),
            user: "0".into(),
        });
        let host = SharedBase::open(&cfg).expect("host reader");
        assert_eq!(host.access(), Access::HostReader);
        let user = SharedBase::open(&Config::named(&segment)).expect("per-user segment");
        println!("{} vs {}", host.timeline(), user.timeline());
        // A refusal is no measure of an interval's cost: where either
        // segment gives none, the bounded stamps are left out.
        let bounded = match (user.now_bounded(), host.now_bounded()) {
            (Ok(_), Ok(_)) => true,
            (Err(e), _) | (_, Err(e)) => {
                println!("bounded stamps not timed: {e}");
                false
            }
        };

        interleaved(&host, &user, bounded);
        criterion(&host, &user, bounded);

        stop.store(true, Ordering::Relaxed);
        rounds.join().unwrap();
        drop(host);
        drop(user);
        let _ = SharedBase::unlink(&segment);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Each contender's fastest batch over rounds that run all of them in
    /// turn (see shared.rs): the cost when nothing interfered.
    /// `with_bounded`: whether the bounded stamps (the last two rows) are timed.
    fn interleaved(host: &SharedBase, user: &SharedBase, with_bounded: bool) {
        const ROUNDS: usize = 400;
        let bounded = |b: &SharedBase| b.now_bounded().map_or(0, |i| i.earliest ^ i.latest);
        let mut contenders: [(&str, &mut dyn FnMut(u64)); 7] = [
            // SAFETY: rdtsc only reads the time-stamp counter.
            (
                "rdtsc",
                &mut looped(|| unsafe { core::arch::x86_64::_rdtsc() }),
            ),
            ("per-user segment now_ns", &mut looped(|| user.now_ns())),
            ("host page now_ns", &mut looped(|| host.now_ns())),
            ("clock_gettime_realtime", &mut looped(realtime)),
            (
                "per-user now_ns_ordered",
                &mut looped(|| user.now_ns_ordered()),
            ),
            ("per-user now_bounded", &mut looped(|| bounded(user))),
            ("host page now_bounded", &mut looped(|| bounded(host))),
        ];
        let timed = contenders.len() - if with_bounded { 0 } else { 2 };
        let mut best = [f64::INFINITY; 7];
        for _ in 0..ROUNDS {
            for (i, (_, f)) in contenders[..timed].iter_mut().enumerate() {
                let t0 = Instant::now();
                f(2000);
                best[i] = best[i].min(t0.elapsed().as_nanos() as f64 / 2000.0);
            }
        }
        println!("interleaved minimum ({ROUNDS} rounds), ns/call:");
        for ((name, _), ns) in contenders[..timed].iter().zip(&best) {
            println!("  {name:<28} {ns:8.2}");
        }
        println!(
            "  ratios: host/per-user {:.3} (target <= 1.02), host/rdtsc {:.3}, \
             host/clock_gettime {:.3}",
            best[2] / best[1],
            best[2] / best[0],
            best[2] / best[3]
        );
        if !with_bounded {
            return;
        }
        println!(
            "  bounded: per-user {:.3} x now_ns, {:.3} x now_ns_ordered (target <= 1.5); \
             host {:.3} x its now_ns; {:.3} x clock_gettime",
            best[5] / best[1],
            best[5] / best[4],
            best[6] / best[2],
            best[5] / best[3]
        );
    }

    fn criterion(host: &SharedBase, user: &SharedBase, with_bounded: bool) {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args();
        let mut g = c.benchmark_group("host");
        // SAFETY: rdtsc only reads the time-stamp counter.
        g.bench_function("rdtsc", |b| {
            b.iter(|| unsafe { core::arch::x86_64::_rdtsc() })
        });
        g.bench_function("per_user_now_ns", |b| b.iter(|| user.now_ns()));
        g.bench_function("host_now_ns", |b| b.iter(|| host.now_ns()));
        g.bench_function("per_user_now_ns_ordered", |b| {
            b.iter(|| user.now_ns_ordered())
        });
        g.bench_function("host_now_ns_ordered", |b| b.iter(|| host.now_ns_ordered()));
        g.bench_function("clock_gettime_realtime", |b| b.iter(realtime));
        // Both ends, as a caller uses them. `black_box` of the whole
        // `Result` would copy it through the stack with wider loads than the
        // stores that wrote it: a failed store forwarding (~8 ns on this AMD)
        // that measures the harness, not the call.
        let ends =
            |r: hrts_core::Result<hrts_core::Bounded>| r.map_or(0, |i| i.earliest ^ i.latest);
        if with_bounded {
            g.bench_function("per_user_now_bounded", |b| {
                b.iter(|| ends(user.now_bounded()))
            });
            g.bench_function("host_now_bounded", |b| b.iter(|| ends(host.now_bounded())));
        }
        g.finish();
        c.final_summary();
    }
}

fn main() {
    #[cfg(all(target_arch = "x86_64", not(windows)))]
    x86::main();
}
