//! Counter sources: the x86-64 TSC, the aarch64 virtual counter (`CNTVCT_EL0`), the
//! ppc64 Time Base and `CLOCK_MONOTONIC_RAW` as the portable fallback.
//!
//! Every id can be passed to [`read`] on every architecture: an id this build cannot
//! read (see [`SourceId::supported`]) reads `CLOCK_MONOTONIC_RAW` instead, so a
//! segment written on another architecture can never make a reader execute an
//! instruction its CPU lacks. Callers that care check `supported()` first.

/// A counter source; the discriminant is stored in the shared segment.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceId {
    /// `CLOCK_MONOTONIC_RAW` in nanoseconds (frequency exactly 1 GHz).
    MonotonicRaw = 1,
    /// The x86-64 time-stamp counter.
    Tsc = 2,
    /// The aarch64 generic timer's virtual count, `CNTVCT_EL0`.
    Cntvct = 3,
    /// The Power Architecture Time Base register.
    TimeBase = 4,
}

impl SourceId {
    /// Every source, in id order.
    pub const ALL: [SourceId; 4] = [
        SourceId::MonotonicRaw,
        SourceId::Tsc,
        SourceId::Cntvct,
        SourceId::TimeBase,
    ];

    /// The id stored in a segment, or `None` for a value no source has.
    pub fn from_u32(v: u32) -> Option<SourceId> {
        match v {
            1 => Some(SourceId::MonotonicRaw),
            2 => Some(SourceId::Tsc),
            3 => Some(SourceId::Cntvct),
            4 => Some(SourceId::TimeBase),
            _ => None,
        }
    }

    /// The stable lower-case name, as accepted by `HRTS_SOURCE`.
    pub fn name(self) -> &'static str {
        match self {
            SourceId::MonotonicRaw => "monotonic-raw",
            SourceId::Tsc => "tsc",
            SourceId::Cntvct => "cntvct",
            SourceId::TimeBase => "timebase",
        }
    }

    /// The source with this name (`tsc`, `cntvct`, `timebase`, `monotonic-raw`),
    /// ignoring ASCII case and surrounding white space.
    pub fn from_name(name: &str) -> Option<SourceId> {
        let name = name.trim();
        SourceId::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// Whether this build can read the source at all (architecture).
    pub fn supported(self) -> bool {
        match self {
            SourceId::MonotonicRaw => true,
            SourceId::Tsc => cfg!(target_arch = "x86_64"),
            SourceId::Cntvct => cfg!(target_arch = "aarch64"),
            SourceId::TimeBase => cfg!(target_arch = "powerpc64"),
        }
    }

    /// The source's native hardware counter on this architecture, if any.
    pub fn native() -> Option<SourceId> {
        SourceId::ALL
            .into_iter()
            .find(|s| *s != SourceId::MonotonicRaw && s.supported())
    }
}

/// Unordered read: the CPU may execute it before earlier instructions finish.
/// Cheapest; right for intervals measured on one thread with slack of a few ns.
#[inline(always)]
pub fn read(id: SourceId) -> u64 {
    #[cfg(any(test, feature = "testing"))]
    return super::test_counter::apply(id as usize, read_unhooked(id), || read_unhooked(id));
    #[cfg(not(any(test, feature = "testing")))]
    read_unhooked(id)
}

#[inline(always)]
fn read_unhooked(id: SourceId) -> u64 {
    match id {
        #[cfg(target_arch = "x86_64")]
        SourceId::Tsc => arch::read(),
        #[cfg(target_arch = "aarch64")]
        SourceId::Cntvct => arch::read(),
        #[cfg(target_arch = "powerpc64")]
        SourceId::TimeBase => arch::read(),
        _ => crate::os::monotonic_raw_ns(),
    }
}

/// Ordered read: not executed before earlier instructions have completed, so a stamp
/// taken after an event (a store another thread observed, a lock acquired) is not
/// earlier than it.
///
/// x86-64: `lfence; rdtsc`. LFENCE does not let later instructions start until all
/// earlier ones have completed locally (Intel SDM; on AMD since the Spectre-era
/// microcode, which Linux enables and KVM exposes), so it orders exactly like
/// `rdtscp` but needs no CPUID check (some hypervisors hide RDTSCP). Which of the
/// two is cheaper depends on the CPU (benches/README.md): a segment's stamps use
/// the one its creator measured cheaper ([`read_ordered_by`], [`OrderedRead`]);
/// this function is always the fence. Neither keeps later instructions from
/// starting before the read. aarch64: `isb; mrs`.
/// ppc64: `mftb` as for [`read`]: the Time Base read is not speculated ahead of
/// earlier instructions in a way any ISA document promises to prevent, and the
/// article this project follows uses plain `mftb`; a stamp's error there is bounded
/// by the pipeline depth (a few ns), which is below the Time Base's resolution on
/// current machines (512 MHz, ~2 ns).
#[inline(always)]
pub fn read_ordered(id: SourceId) -> u64 {
    #[cfg(any(test, feature = "testing"))]
    return super::test_counter::apply(id as usize, read_ordered_unhooked(id), || {
        read_unhooked(id)
    });
    #[cfg(not(any(test, feature = "testing")))]
    read_ordered_unhooked(id)
}

#[inline(always)]
fn read_ordered_unhooked(id: SourceId) -> u64 {
    match id {
        #[cfg(target_arch = "x86_64")]
        SourceId::Tsc => arch::read_ordered(),
        #[cfg(target_arch = "aarch64")]
        SourceId::Cntvct => arch::read_ordered(),
        #[cfg(target_arch = "powerpc64")]
        SourceId::TimeBase => arch::read(),
        _ => crate::os::monotonic_raw_ns(),
    }
}

/// How a segment's processes make an ordered read of the counter: chosen by the
/// segment's creator (see [`choose_ordered_read`]) and recorded in the page
/// (layout minor 4), so every process orders its reads the same way. Both ways
/// order the read after every earlier instruction and neither orders later
/// instructions after it; they differ only in cost, which varies by CPU.
///
/// The field is private so that `Rdtscp` exists only where CPUID reports the
/// instruction: [`read_ordered_by`] then never executes an instruction the CPU
/// lacks, whatever a page says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OrderedRead(OrderedKind);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum OrderedKind {
    Fence,
    Rdtscp,
}

impl OrderedRead {
    /// The code a page holds when its creator recorded no choice (a page of
    /// layout minor 3 or older): the source's fenced read.
    pub const CODE_NONE: u32 = 0;
    /// [`OrderedRead::fence`].
    pub const CODE_FENCE: u32 = 1;
    /// [`OrderedRead::rdtscp`].
    pub const CODE_RDTSCP: u32 = 2;

    /// A fence then the read, as [`read_ordered`] does: `lfence; rdtsc` on
    /// x86-64, `isb; mrs` on aarch64, `mftb` on ppc64. Every source has it.
    pub const fn fence() -> OrderedRead {
        OrderedRead(OrderedKind::Fence)
    }

    /// `rdtscp` (the TSC only), if CPUID reports it: it waits for every earlier
    /// instruction before reading the counter (Intel SDM; AMD APM: older
    /// instructions retire first), as `lfence; rdtsc` does.
    pub fn rdtscp() -> Option<OrderedRead> {
        rdtscp_supported().then_some(OrderedRead(OrderedKind::Rdtscp))
    }

    /// The way a page's code names; a code this library does not know (a newer
    /// minor's, or damage), or `rdtscp` on a CPU that lacks it, is the fence:
    /// the choice changes only the cost, never what the read guarantees.
    pub fn from_code(code: u32) -> OrderedRead {
        match code {
            OrderedRead::CODE_RDTSCP => OrderedRead::rdtscp().unwrap_or(OrderedRead::fence()),
            _ => OrderedRead::fence(),
        }
    }

    /// The code recorded in a page.
    pub fn code(self) -> u32 {
        match self.0 {
            OrderedKind::Fence => OrderedRead::CODE_FENCE,
            OrderedKind::Rdtscp => OrderedRead::CODE_RDTSCP,
        }
    }

    /// `lfence-rdtsc` or `rdtscp` for the TSC; `fence` for the other sources.
    pub fn name(self, id: SourceId) -> &'static str {
        match (self.0, id) {
            (OrderedKind::Rdtscp, _) => "rdtscp",
            (OrderedKind::Fence, SourceId::Tsc) => "lfence-rdtsc",
            (OrderedKind::Fence, _) => "fence",
        }
    }
}

/// Whether CPUID reports RDTSCP (leaf 0x80000001, EDX bit 27). Some hypervisors
/// hide it; `false` off x86-64.
pub fn rdtscp_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        arch::rdtscp_supported()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`read_ordered`], made the way `how` says.
#[inline(always)]
pub fn read_ordered_by(id: SourceId, how: OrderedRead) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if id == SourceId::Tsc && how.0 == OrderedKind::Rdtscp {
        // Only `OrderedRead::rdtscp` makes this kind, after checking CPUID.
        #[cfg(any(test, feature = "testing"))]
        return super::test_counter::apply(id as usize, arch::read_rdtscp(), || read_unhooked(id));
        #[cfg(not(any(test, feature = "testing")))]
        return arch::read_rdtscp();
    }
    let _ = how;
    read_ordered(id)
}

/// What a creator records for `id`: for the TSC, whichever of `lfence; rdtsc`
/// and `rdtscp` was cheaper here, each timed back to back (each read waits for
/// the previous one, as a stamp's read waits for the loads before it), by the
/// fastest of rounds that alternate the two so both meet the same interference;
/// `rdtscp` only when strictly cheaper. Other sources have one ordered read.
/// Takes some tens of microseconds.
pub fn choose_ordered_read(id: SourceId) -> OrderedRead {
    #[cfg(target_arch = "x86_64")]
    if id == SourceId::Tsc {
        if let Some(rdtscp) = OrderedRead::rdtscp() {
            let (fence, p) = ordered_read_costs();
            if p < fence {
                return rdtscp;
            }
        }
    }
    let _ = id;
    OrderedRead::fence()
}

/// The fastest batch of `lfence; rdtsc` and of `rdtscp` (only call where CPUID
/// reports it), in TSC ticks per batch of the same length.
#[cfg(target_arch = "x86_64")]
fn ordered_read_costs() -> (u64, u64) {
    const ROUNDS: usize = 24;
    let time = |batch: fn()| {
        let t0 = arch::read_fenced();
        batch();
        arch::read_fenced().wrapping_sub(t0)
    };
    let (mut fence, mut rdtscp) = (u64::MAX, u64::MAX);
    for _ in 0..ROUNDS {
        fence = fence.min(time(arch::fenced_batch));
        rdtscp = rdtscp.min(time(arch::rdtscp_batch));
    }
    (fence, rdtscp)
}

/// Fenced read for measurement code (calibration, reliability probes): neither
/// earlier nor later instructions move across it. Slower than [`read_ordered`].
#[inline(always)]
pub fn read_fenced(id: SourceId) -> u64 {
    match id {
        #[cfg(target_arch = "x86_64")]
        SourceId::Tsc => arch::read_fenced(),
        #[cfg(target_arch = "aarch64")]
        SourceId::Cntvct => arch::read_fenced(),
        #[cfg(target_arch = "powerpc64")]
        SourceId::TimeBase => arch::read_fenced(),
        _ => crate::os::monotonic_raw_ns(),
    }
}

/// The frequency the hardware or firmware declares for the counter, in Hz, if it
/// declares one; `calibrate` measures the real one. `MonotonicRaw` is exactly 1 GHz.
///
/// - TSC: CPUID leaf 0x15 (crystal clock × ratio; exact where present), else the
///   hypervisor timing leaf 0x40000010 (TSC kHz; KVM/VMware), else `None`. Leaf 0x16
///   (base MHz) is deliberately not used: it is a marketing figure, not the TSC rate.
/// - CNTVCT: `CNTFRQ_EL0`, which firmware programs and the kernel trusts.
/// - Time Base: the `timebase` line of `/proc/cpuinfo`.
pub fn nominal_frequency(id: SourceId) -> Option<u64> {
    match id {
        SourceId::MonotonicRaw => Some(1_000_000_000),
        #[cfg(target_arch = "x86_64")]
        SourceId::Tsc => arch::nominal_frequency(),
        #[cfg(target_arch = "aarch64")]
        SourceId::Cntvct => arch::nominal_frequency(),
        #[cfg(target_arch = "powerpc64")]
        SourceId::TimeBase => std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| parse_cpuinfo_timebase(&text)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The value of the first `timebase : <hz>` line of a ppc64 `/proc/cpuinfo`
/// (the kernel takes it from the device tree's `timebase-frequency`).
pub fn parse_cpuinfo_timebase(cpuinfo: &str) -> Option<u64> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        if key.trim() != "timebase" {
            return None;
        }
        value.trim().parse::<u64>().ok().filter(|hz| *hz > 0)
    })
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod arch {
    use core::arch::x86_64::{__cpuid, __cpuid_count, __rdtscp, _mm_lfence, _rdtsc};

    #[inline(always)]
    pub fn read() -> u64 {
        // SAFETY: rdtsc exists on every x86-64 CPU and only reads the counter; the
        // kernel could disable it for user space (PR_SET_TSC), which hrts documents as
        // unsupported, in which case eligibility never selects the TSC.
        unsafe { _rdtsc() }
    }

    #[inline(always)]
    pub fn read_ordered() -> u64 {
        lfence_rdtsc()
    }

    #[inline(always)]
    fn lfence_rdtsc() -> u64 {
        // SAFETY: lfence is part of SSE2, which every x86-64 CPU has; it only orders
        // instruction dispatch. rdtsc as in `read`.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }

    /// Only after CPUID reported RDTSCP (`OrderedRead::rdtscp`).
    #[inline(always)]
    pub fn read_rdtscp() -> u64 {
        let mut aux = 0u32;
        // SAFETY: callers reach this only through an `OrderedRead` of the rdtscp
        // kind, which exists only where CPUID reports RDTSCP; it reads the counter
        // and TSC_AUX into `aux`, a local.
        unsafe { __rdtscp(&mut aux) }
    }

    /// Reads per batch of `ordered_read_costs`.
    const BATCH: u64 = 64;

    /// A batch of `lfence; rdtsc`, back to back. Both batches are assembly so
    /// that they are the same instructions around the read whatever the
    /// build's optimisation: a debug build's calls to the intrinsics cost more
    /// than the reads and made it choose the fence where an optimised build
    /// measured `rdtscp` cheaper.
    pub fn fenced_batch() {
        // SAFETY: lfence (SSE2, on every x86-64 CPU) and rdtsc only order
        // dispatch and read the counter; the loop touches only its counter
        // register and the clobbered eax/edx, no memory and no stack.
        unsafe {
            core::arch::asm!(
                "2:",
                "lfence",
                "rdtsc",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) BATCH => _,
                out("eax") _,
                out("edx") _,
                options(nomem, nostack),
            );
        }
    }

    /// A batch of `rdtscp`, back to back (see `fenced_batch`).
    pub fn rdtscp_batch() {
        // SAFETY: only called where CPUID reports RDTSCP (`ordered_read_costs`'
        // callers check); rdtscp reads the counter and TSC_AUX into the
        // clobbered eax/edx/ecx; no memory and no stack.
        unsafe {
            core::arch::asm!(
                "2:",
                "rdtscp",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) BATCH => _,
                out("eax") _,
                out("edx") _,
                out("ecx") _,
                options(nomem, nostack),
            );
        }
    }

    #[allow(unused_unsafe)]
    pub fn rdtscp_supported() -> bool {
        if max_extended_leaf() < 0x8000_0001 {
            return false;
        }
        // SAFETY: the leaf is within the reported maximum.
        let r = unsafe { __cpuid(0x8000_0001) };
        r.edx & (1 << 27) != 0
    }

    #[inline(always)]
    pub fn read_fenced() -> u64 {
        let t = lfence_rdtsc();
        // SAFETY: as in `lfence_rdtsc`; the trailing lfence keeps later instructions
        // (a CAS publishing this value, the next clock read) from starting before
        // rdtsc has read the counter.
        unsafe { _mm_lfence() };
        t
    }

    // `__cpuid` became a safe function in recent Rust; the unsafe blocks below keep
    // the crate building with the workspace's minimum Rust (1.80), where it is not.
    #[allow(unused_unsafe)]
    fn max_extended_leaf() -> u32 {
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 0x80000000 is always valid.
        unsafe { __cpuid(0x8000_0000).eax }
    }

    #[allow(unused_unsafe)]
    fn max_basic_leaf() -> u32 {
        // SAFETY: CPUID leaf 0 is always valid.
        unsafe { __cpuid(0).eax }
    }

    /// Invariant TSC: CPUID 0x80000007 EDX bit 8 (runs at a constant rate in every
    /// P-, C- and T-state). `None` when the leaf does not exist.
    #[allow(unused_unsafe)]
    pub fn invariant_tsc() -> Option<bool> {
        if max_extended_leaf() < 0x8000_0007 {
            return None;
        }
        // SAFETY: the leaf is within the reported maximum.
        let r = unsafe { __cpuid(0x8000_0007) };
        Some(r.edx & (1 << 8) != 0)
    }

    #[allow(unused_unsafe)]
    pub fn nominal_frequency() -> Option<u64> {
        if max_basic_leaf() >= 0x15 {
            // SAFETY: the leaf is within the reported maximum.
            let r = unsafe { __cpuid_count(0x15, 0) };
            let (den, num, crystal) = (r.eax as u64, r.ebx as u64, r.ecx as u64);
            if den != 0 && num != 0 && crystal != 0 {
                return Some(crystal * num / den);
            }
        }
        // Hypervisor present (CPUID 1 ECX bit 31): leaf 0x40000010 EAX is TSC kHz on
        // KVM and VMware when the hypervisor exposes the leaf.
        // SAFETY: leaf 1 is always valid.
        let hv = unsafe { __cpuid(1) }.ecx & (1 << 31) != 0;
        if hv {
            // SAFETY: hypervisor leaves 0x40000000.. are defined when bit 31 is set;
            // 0x40000000 EAX reports the maximum hypervisor leaf.
            let max_hv = unsafe { __cpuid(0x4000_0000) }.eax;
            if max_hv >= 0x4000_0010 {
                // SAFETY: within the reported hypervisor maximum.
                let khz = unsafe { __cpuid(0x4000_0010) }.eax as u64;
                if khz != 0 {
                    return Some(khz * 1000);
                }
            }
        }
        None
    }
}

#[cfg(target_arch = "aarch64")]
pub(crate) mod arch {
    #[inline(always)]
    pub fn read() -> u64 {
        let v: u64;
        // SAFETY: Linux enables EL0 access to CNTVCT_EL0 (CNTKCTL_EL1.EL0VCTEN) on
        // every aarch64 system it supports; mrs only reads the register.
        unsafe {
            core::arch::asm!("mrs {0}, cntvct_el0", out(reg) v, options(nomem, nostack, preserves_flags))
        };
        v
    }

    #[inline(always)]
    pub fn read_ordered() -> u64 {
        let v: u64;
        // SAFETY: as in `read`; isb only flushes the pipeline so the counter read is
        // not performed before earlier instructions.
        unsafe {
            core::arch::asm!("isb", "mrs {0}, cntvct_el0", out(reg) v, options(nomem, nostack, preserves_flags))
        };
        v
    }

    #[inline(always)]
    pub fn read_fenced() -> u64 {
        let v: u64;
        // SAFETY: as in `read_ordered`. isb alone orders the read after earlier
        // instructions but not after earlier loads that are still in flight, which
        // the reliability probes need (the counter must be read after the load that
        // fetched the sequence number): dsb ish waits for them. The trailing isb
        // keeps later instructions from starting before the read.
        unsafe {
            core::arch::asm!("dsb ish", "isb", "mrs {0}, cntvct_el0", "isb", out(reg) v, options(nostack, preserves_flags))
        };
        v
    }

    pub fn nominal_frequency() -> Option<u64> {
        let v: u64;
        // SAFETY: CNTFRQ_EL0 is readable at EL0 whenever CNTVCT_EL0 is.
        unsafe {
            core::arch::asm!("mrs {0}, cntfrq_el0", out(reg) v, options(nomem, nostack, preserves_flags))
        };
        // Only the low 32 bits are defined.
        let hz = v & 0xffff_ffff;
        (hz != 0).then_some(hz)
    }
}

#[cfg(target_arch = "powerpc64")]
pub(crate) mod arch {
    #[inline(always)]
    pub fn read() -> u64 {
        let v: u64;
        // SAFETY: mftb (mfspr from TBR 268) is a user-mode read of the 64-bit Time
        // Base on every 64-bit Power CPU; it touches no memory.
        unsafe {
            core::arch::asm!("mftb {0}", out(reg) v, options(nomem, nostack, preserves_flags))
        };
        v
    }

    #[inline(always)]
    pub fn read_fenced() -> u64 {
        let v: u64;
        // SAFETY: as in `read`. sync waits for earlier loads and stores to complete
        // (the reliability probes need the read after the load of the sequence
        // number); isync before and after keeps instructions from moving across the
        // Time Base read (context synchronising).
        unsafe {
            core::arch::asm!("sync", "isync", "mftb {0}", "isync", out(reg) v, options(nostack, preserves_flags))
        };
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_u32_and_name() {
        for id in SourceId::ALL {
            assert_eq!(SourceId::from_u32(id as u32), Some(id));
            assert_eq!(SourceId::from_name(id.name()), Some(id));
        }
        assert_eq!(SourceId::from_u32(0), None);
        assert_eq!(SourceId::from_u32(5), None);
        assert_eq!(SourceId::from_name(" TSC\n"), Some(SourceId::Tsc));
        assert_eq!(SourceId::from_name("hpet"), None);
    }

    #[test]
    fn exactly_one_hardware_source_per_supported_arch() {
        let hw: Vec<_> = SourceId::ALL
            .into_iter()
            .filter(|s| *s != SourceId::MonotonicRaw && s.supported())
            .collect();
        let expected = usize::from(cfg!(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "powerpc64"
        )));
        assert_eq!(hw.len(), expected, "{hw:?}");
        assert!(SourceId::MonotonicRaw.supported());
        assert_eq!(SourceId::native(), hw.first().copied());
    }

    #[test]
    fn every_id_reads_without_fault_and_advances() {
        // Unsupported ids fall back to CLOCK_MONOTONIC_RAW; all must tick forward.
        for id in SourceId::ALL {
            for f in [read, read_ordered, read_fenced] {
                let a = f(id);
                let deadline = crate::os::monotonic_raw_ns() + 50_000_000;
                let mut b = f(id);
                while b == a && crate::os::monotonic_raw_ns() < deadline {
                    b = f(id);
                }
                assert!(b > a, "{} did not advance: {a} then {b}", id.name());
            }
        }
    }

    #[test]
    fn unsupported_ids_read_monotonic_raw() {
        for id in SourceId::ALL.into_iter().filter(|s| !s.supported()) {
            let lo = crate::os::monotonic_raw_ns();
            let v = read(id);
            let hi = crate::os::monotonic_raw_ns();
            assert!(lo <= v && v <= hi, "{}: {lo} <= {v} <= {hi}", id.name());
        }
    }

    #[test]
    fn nominal_frequency_is_plausible_when_declared() {
        assert_eq!(
            nominal_frequency(SourceId::MonotonicRaw),
            Some(1_000_000_000)
        );
        if let Some(native) = SourceId::native() {
            if let Some(hz) = nominal_frequency(native) {
                assert!((1_000_000..=20_000_000_000).contains(&hz), "{hz}");
            }
        }
        #[cfg(target_arch = "aarch64")]
        assert!(
            nominal_frequency(SourceId::Cntvct).is_some(),
            "CNTFRQ_EL0 must be programmed"
        );
    }

    #[test]
    fn every_ordered_read_kind_reads_every_id() {
        let kinds = [Some(OrderedRead::fence()), OrderedRead::rdtscp()];
        for how in kinds.into_iter().flatten() {
            assert_eq!(OrderedRead::from_code(how.code()), how);
            for id in SourceId::ALL {
                let a = read_ordered_by(id, how);
                let deadline = crate::os::monotonic_raw_ns() + 50_000_000;
                let mut b = read_ordered_by(id, how);
                while b == a && crate::os::monotonic_raw_ns() < deadline {
                    b = read_ordered_by(id, how);
                }
                assert!(b > a, "{} by {}: {a} then {b}", id.name(), how.name(id));
            }
        }
        assert_eq!(OrderedRead::rdtscp().is_some(), rdtscp_supported());
        // The creator's choice is one of the two, and rdtscp only where it exists.
        let chosen = choose_ordered_read(SourceId::Tsc);
        assert!(chosen == OrderedRead::fence() || rdtscp_supported());
        assert_eq!(
            choose_ordered_read(SourceId::MonotonicRaw),
            OrderedRead::fence()
        );
    }

    #[test]
    fn ordered_and_unordered_tsc_agree() {
        let a = read(SourceId::Tsc);
        let b = read_ordered(SourceId::Tsc);
        let c = read_fenced(SourceId::Tsc);
        let d = read(SourceId::Tsc);
        assert!(a <= b && b <= c && c <= d, "{a} {b} {c} {d}");
        if let Some(rdtscp) = OrderedRead::rdtscp() {
            let e = read_ordered_by(SourceId::Tsc, rdtscp);
            let f = read_fenced(SourceId::Tsc);
            assert!(d <= e && e <= f, "{d} {e} {f}");
        }
    }
}
