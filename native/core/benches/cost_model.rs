//! The stamp loops that the static cost model analyses: `scripts/cost-model.sh`
//! (results in README.md here). Not a timing benchmark: it never measures
//! anything itself. The script runs each loop under callgrind, which counts the
//! instructions each stamp executes (the same on any x86-64 machine) and which
//! of them ran once per call, and gives those, in the order they ran, to
//! `llvm-mca` for Intel and AMD cores.
//!
//! `cost_model KIND N`: takes N stamps of KIND in the loop the model reads, on
//! a tracking per-user segment (or the host page of a daemon running in a
//! thread), and prints how many calls were made. `cost_model --list` names the
//! kinds this build counts: the plain stamps without the `testing` feature,
//! whose hooks (a test counter checked at every counter read) would be counted
//! as part of them, and the bounded ones only with it, whose fixed bound
//! (`HRTS_TEST_BOUND`) gives them an interval on any machine. Each loop is its
//! own `#[inline(never)]` function (`loop_KIND`), so
//! callgrind can count that function alone and every loop keeps its result
//! alive the way the timing benchmarks do (`black_box`).

#[cfg(target_arch = "x86_64")]
mod x86 {
    use hrts_core::{Access, Config, HostConfig, HostDaemon, SharedBase};
    use std::hint::black_box;

    #[inline(never)]
    pub fn loop_rdtsc(_: &SharedBase, n: u64) {
        // SAFETY: rdtsc only reads the time-stamp counter.
        (0..n).for_each(|_| {
            black_box(unsafe { core::arch::x86_64::_rdtsc() });
        });
    }

    #[inline(never)]
    pub fn loop_rdtscp(_: &SharedBase, n: u64) {
        let mut aux = 0u32;
        // SAFETY: rdtscp reads the counter and IA32_TSC_AUX; `main` checked
        // CPUID for it.
        (0..n).for_each(|_| {
            black_box(unsafe { core::arch::x86_64::__rdtscp(&mut aux) });
        });
    }

    #[inline(never)]
    pub fn loop_now_ns(base: &SharedBase, n: u64) {
        (0..n).for_each(|_| {
            black_box(base.now_ns());
        });
    }

    #[inline(never)]
    pub fn loop_now_ns_ordered(base: &SharedBase, n: u64) {
        (0..n).for_each(|_| {
            black_box(base.now_ns_ordered());
        });
    }

    #[inline(never)]
    pub fn loop_now_bounded(base: &SharedBase, n: u64) {
        // Both ends kept, as a caller does (and as the `host` bench does).
        (0..n).for_each(|_| {
            black_box(base.now_bounded().map_or(0, |i| i.earliest ^ i.latest));
        });
    }

    #[inline(never)]
    pub fn loop_next_unique(base: &SharedBase, n: u64) {
        (0..n).for_each(|_| {
            black_box(base.next_unique().map_or(0, |u| u));
        });
    }

    type Loop = fn(&SharedBase, u64);

    /// The kinds: name, loop, its function's name, whether it stamps from the
    /// host page (the same function as the per-user segment's: only the data
    /// differ, which callgrind's count would show).
    const KINDS: [(&str, Loop, &str, bool); 8] = [
        ("rdtsc", loop_rdtsc, "loop_rdtsc", false),
        ("rdtscp", loop_rdtscp, "loop_rdtscp", false),
        ("now_ns", loop_now_ns, "loop_now_ns", false),
        ("now_ns_host", loop_now_ns, "loop_now_ns", true),
        (
            "now_ns_ordered",
            loop_now_ns_ordered,
            "loop_now_ns_ordered",
            false,
        ),
        ("now_bounded", loop_now_bounded, "loop_now_bounded", false),
        (
            "now_bounded_host",
            loop_now_bounded,
            "loop_now_bounded",
            true,
        ),
        ("next_unique", loop_next_unique, "loop_next_unique", false),
    ];

    /// The kinds this build counts (see the top of the file).
    fn counted(kind: &str) -> bool {
        kind.starts_with("now_bounded") == cfg!(feature = "testing")
    }

    /// The loops must run the stamp's ordinary path: a bounded stamp needs a
    /// bound (`HRTS_TEST_BOUND`, which the `testing` feature reads at ties).
    fn check(kind: &str, base: &SharedBase) {
        if base.source().name() != "tsc" {
            eprintln!(
                "cost_model: {} counts with {}, not the TSC: make it outside valgrind",
                base.timeline(),
                base.source().name()
            );
            std::process::exit(1);
        }
        // A line older than the tie interval ties at the first stamp: here,
        // not in the counted loop.
        black_box(base.now_ns());
        if kind.starts_with("now_bounded") {
            if let Err(e) = base.now_bounded() {
                eprintln!("cost_model: {kind} has no interval to measure: {e}");
                std::process::exit(1);
            }
        }
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.first().map(String::as_str) {
            Some("--list") => {
                return KINDS
                    .iter()
                    .filter(|(name, ..)| counted(name))
                    .for_each(|(name, ..)| println!("{name}"))
            }
            Some("--functions") => {
                let pairs: Vec<String> = KINDS
                    .iter()
                    .filter(|(name, ..)| counted(name))
                    .map(|(name, _, f, _)| format!("\"{name}\": \"{f}\""))
                    .collect();
                return println!("{{{}}}", pairs.join(", "));
            }
            Some("--unlink") => {
                if let Ok(name) = std::env::var("HRTS_SEGMENT") {
                    let _ = SharedBase::unlink(&name);
                }
                return;
            }
            _ => {}
        }
        let (Some(kind), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
            eprintln!("usage: cost_model KIND N (cost_model --list names the kinds)");
            std::process::exit(2);
        };
        if kind == "rdtscp" && hrts_core::clock::OrderedRead::rdtscp().is_none() {
            eprintln!("cost_model: this CPU (or its hypervisor) has no RDTSCP");
            std::process::exit(1);
        }
        let Some(&(_, run, _, host)) = KINDS
            .iter()
            .find(|(name, ..)| name == kind && counted(name))
        else {
            eprintln!("cost_model: no kind {kind} in this build; cost_model --list names them");
            std::process::exit(2);
        };
        // The segment the script made before the counted runs (attaching to an
        // existing segment runs no calibration, whose loops are timed).
        let segment = std::env::var("HRTS_SEGMENT").unwrap_or_else(|_| {
            eprintln!("cost_model: set HRTS_SEGMENT to the segment to stamp from");
            std::process::exit(2);
        });
        let user = SharedBase::open(&Config::named(&segment)).expect("per-user segment");
        if !host {
            check(kind, &user);
            run(&user, n);
        } else {
            // Made by the script's first, native, run: a page made under
            // valgrind would not count the TSC (valgrind's CPUID hides that
            // it is invariant).
            let Some(dir) = std::env::var_os("HRTS_COST_MODEL_HOST_DIR") else {
                eprintln!("cost_model: set HRTS_COST_MODEL_HOST_DIR to the host page's directory");
                std::process::exit(2);
            };
            let dir = std::path::PathBuf::from(dir);
            let daemon = HostDaemon::start(&dir, &Config::named(&segment)).expect("host daemon");
            let cfg = Config::named(&segment).with_host_page(HostConfig {
                dir: dir.clone(),
                user: "0".into(),
            });
            let page = SharedBase::open(&cfg).expect("host page reader");
            assert_eq!(page.access(), Access::HostReader);
            check(kind, &page);
            run(&page, n);
            drop(page);
            drop(daemon);
        }
        println!("{kind}: {n} calls");
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::main();
    #[cfg(not(target_arch = "x86_64"))]
    println!("cost_model: x86-64 only (the model compares Intel and AMD cores)");
}
