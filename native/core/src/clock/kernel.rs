//! `CLOCK_REALTIME` as the kernel keeps it, read without going through an
//! interposable libc symbol: the vDSO's `clock_gettime`, found through the
//! auxiliary vector (`getauxval(AT_SYSINFO_EHDR)`), or the `clock_gettime`
//! system call itself. An `LD_PRELOAD` library (libfaketime, a test's shifted
//! clock) replaces `clock_gettime` by symbol; it cannot replace either of these,
//! so one process with a shifted view of the calendar cannot pass it on to the
//! shared line through a tie.
//!
//! x86-64 and aarch64 use the vDSO (`__vdso_clock_gettime`,
//! `__kernel_clock_gettime`), else the system call through inline assembly;
//! other targets use libc's `syscall(SYS_clock_gettime, ...)`.

use once_cell::sync::OnceCell;

type ClockGettime = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;

#[cfg(target_arch = "x86_64")]
const VDSO_SYMBOL: Option<&[u8]> = Some(b"__vdso_clock_gettime");
#[cfg(target_arch = "aarch64")]
const VDSO_SYMBOL: Option<&[u8]> = Some(b"__kernel_clock_gettime");
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const VDSO_SYMBOL: Option<&[u8]> = None;

/// How this process reads the kernel's calendar (diagnostics, tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelRead {
    /// The vDSO's `clock_gettime`, called directly.
    Vdso,
    /// The `clock_gettime` system call.
    Syscall,
}

fn vdso_clock_gettime() -> Option<ClockGettime> {
    static FOUND: OnceCell<Option<usize>> = OnceCell::new();
    let addr = (*FOUND.get_or_init(|| {
        let name = VDSO_SYMBOL?;
        // SAFETY: getauxval only reads the auxiliary vector.
        let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
        if base == 0 {
            return None;
        }
        // SAFETY: a non-zero AT_SYSINFO_EHDR is the address of the vDSO's ELF
        // image, mapped readable for the life of the process.
        let f = unsafe { elf_symbol(base, name) }?;
        // One trial call: the symbol must answer like the system call does.
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `f` is the vDSO's clock_gettime, whose signature is ClockGettime.
        let f: ClockGettime = unsafe { std::mem::transmute::<usize, ClockGettime>(f) };
        // SAFETY: `ts` is a valid, writable timespec.
        let ok = unsafe { f(libc::CLOCK_REALTIME, &mut ts) } == 0 && ts.tv_sec > 0;
        ok.then_some(f as usize)
    }))?;
    // SAFETY: the address was checked above to be the vDSO's clock_gettime.
    Some(unsafe { std::mem::transmute::<usize, ClockGettime>(addr) })
}

/// Which way [`realtime_ns`] reads the clock in this process.
pub fn kernel_read() -> KernelRead {
    if vdso_clock_gettime().is_some() {
        KernelRead::Vdso
    } else {
        KernelRead::Syscall
    }
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch, from the kernel (see the
/// module's documentation).
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match vdso_clock_gettime() {
        // SAFETY: the vDSO's clock_gettime with a valid clock id and a valid,
        // writable timespec.
        Some(f) => unsafe {
            f(libc::CLOCK_REALTIME, &mut ts);
        },
        None => syscall_clock_gettime(libc::CLOCK_REALTIME, &mut ts),
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

#[cfg(target_arch = "x86_64")]
fn syscall_clock_gettime(clock: libc::clockid_t, ts: &mut libc::timespec) {
    let _ret: i64;
    // SAFETY: clock_gettime(2) writes one timespec to the pointer it is given,
    // which is valid and writable; the syscall instruction clobbers rcx and r11
    // and nothing else the compiler relies on.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_clock_gettime => _ret,
            in("rdi") clock as i64,
            in("rsi") ts as *mut libc::timespec,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
}

#[cfg(target_arch = "aarch64")]
fn syscall_clock_gettime(clock: libc::clockid_t, ts: &mut libc::timespec) {
    let _ret: i64;
    // SAFETY: clock_gettime(2) writes one timespec to the pointer it is given,
    // which is valid and writable; `svc 0` returns in x0 and preserves every
    // other register.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") libc::SYS_clock_gettime,
            inlateout("x0") clock as i64 => _ret,
            in("x1") ts as *mut libc::timespec,
            options(nostack)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn syscall_clock_gettime(clock: libc::clockid_t, ts: &mut libc::timespec) {
    // SAFETY: clock_gettime(2) with a valid clock id writes one timespec to the
    // valid, writable pointer it is given.
    unsafe {
        libc::syscall(libc::SYS_clock_gettime, clock, ts as *mut libc::timespec);
    }
}

/// `Elf64_Dyn`.
#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: i64 = 0;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const STT_FUNC: u8 = 2;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;

/// The address of the defined function `name` in the ELF image at `base`, as
/// the kernel's own `parse_vdso.c` finds it: the first `PT_LOAD` gives the load
/// offset, `PT_DYNAMIC` the symbol and string tables and the SysV hash table,
/// whose chain count is the number of symbols.
///
/// # Safety
///
/// `base` must be the address of a complete ELF image mapped readable (the
/// vDSO).
unsafe fn elf_symbol(base: usize, name: &[u8]) -> Option<usize> {
    // SAFETY (whole function): every address read lies inside the vDSO image,
    // as its own headers describe it; reads are unaligned-safe where the ELF
    // format does not guarantee alignment.
    let eh = std::ptr::read_unaligned(base as *const libc::Elf64_Ehdr);
    if eh.e_ident[..4] != [0x7f, b'E', b'L', b'F'] || eh.e_ident[4] != 2 {
        return None;
    }
    let mut load_offset = None;
    let mut dynamic = None;
    for i in 0..eh.e_phnum as usize {
        let at = base + eh.e_phoff as usize + i * eh.e_phentsize as usize;
        let ph = std::ptr::read_unaligned(at as *const libc::Elf64_Phdr);
        if ph.p_type == PT_LOAD && load_offset.is_none() {
            load_offset = Some(
                base.wrapping_add(ph.p_offset as usize)
                    .wrapping_sub(ph.p_vaddr as usize),
            );
        } else if ph.p_type == PT_DYNAMIC {
            dynamic = Some(base + ph.p_offset as usize);
        }
    }
    let (load_offset, dynamic) = (load_offset?, dynamic?);
    let (mut strtab, mut symtab, mut hash) = (0usize, 0usize, 0usize);
    for i in 0..256 {
        let d = std::ptr::read_unaligned((dynamic as *const Dyn).add(i));
        let at = load_offset.wrapping_add(d.val as usize);
        match d.tag {
            DT_NULL => break,
            DT_STRTAB => strtab = at,
            DT_SYMTAB => symtab = at,
            DT_HASH => hash = at,
            _ => {}
        }
    }
    if strtab == 0 || symtab == 0 || hash == 0 {
        return None;
    }
    let nchain = std::ptr::read_unaligned((hash as *const u32).add(1)) as usize;
    for i in 0..nchain.min(4096) {
        let sym = std::ptr::read_unaligned((symtab as *const libc::Elf64_Sym).add(i));
        let (kind, bind) = (sym.st_info & 0xf, sym.st_info >> 4);
        if kind != STT_FUNC || !(bind == STB_GLOBAL || bind == STB_WEAK) || sym.st_shndx == 0 {
            continue;
        }
        let s = std::ffi::CStr::from_ptr((strtab + sym.st_name as usize) as *const libc::c_char);
        if s.to_bytes() == name {
            return Some(load_offset.wrapping_add(sym.st_value as usize));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_read_agrees_with_libc_on_an_unshifted_clock() {
        // libc's clock_gettime reads the same vDSO when nothing interposes it.
        for _ in 0..100 {
            let a = crate::os::realtime_ns();
            let k = realtime_ns();
            let b = crate::os::realtime_ns();
            if a <= k && k <= b && b - a < 1_000_000 {
                return;
            }
        }
        panic!("the kernel read never fell between two libc reads");
    }

    #[test]
    fn the_system_call_agrees_with_libc_too() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let a = crate::os::realtime_ns();
        syscall_clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        let b = crate::os::realtime_ns();
        let k = (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64;
        assert!(a <= k && k <= b, "{a} <= {k} <= {b}");
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_vdso_is_found_where_the_kernel_maps_one() {
        // SAFETY: getauxval only reads the auxiliary vector.
        let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) };
        if base != 0 {
            assert_eq!(kernel_read(), KernelRead::Vdso);
        } else {
            assert_eq!(kernel_read(), KernelRead::Syscall);
        }
    }
}
