//! Where a segment lives: a *name* and a *page*.
//!
//! - The name is a POSIX shared-memory object (`/dev/shm/<name>`): it carries the
//!   owner, the mode, the creation race and a small record naming the page. It is
//!   only ever read and written with `pread`/`pwrite`, never mapped, so whoever
//!   truncates, grows or replaces it gives the next opener an error, never a signal.
//! - The page is a System V shared-memory segment (`shmget`), the memory every
//!   process maps. Its size is fixed when it is created: no process, not even
//!   its owner, can shrink it under an attached reader, so no access through a
//!   mapping can raise SIGBUS. Only its owner can remove it (`IPC_RMID`), and
//!   attached processes keep their mapping until they detach.
//!
//! The record stores the page's id and the IPC namespace it lives in (System V
//! ids mean something only inside one IPC namespace, while `/dev/shm` may be
//! shared by several). A process in another IPC namespace is refused: it cannot
//! reach the page, and making a page of its own would give the name two
//! timelines. Inside the namespace, the page at the recorded id is the name's
//! page if it carries the name's tag (below) and is not marked for removal; an
//! id that was freed and reused by another segment is treated as gone. A page
//! that exists but cannot be inspected or attached, or whose owner or mode was
//! changed (`IPC_SET`), is an error, never "gone". A page that is still there
//! but lost its tag (a stray write) is gone too, and the open that decides so
//! removes it before making a new one ([`remove_gone`]): nobody else would.
//!
//! The page is also found without the record: it is created under a System V key
//! derived from the owner and the name, and carries a tag (a 64-bit hash of the
//! same) in its last bytes. A name whose record was lost (truncated, rewritten,
//! or the name removed with `rm` instead of `hrts unlink`) is linked again to its
//! page, so processes that open it later join the timeline of those attached, and
//! no page is left behind. If a foreign segment holds the key, the page is made
//! without one (`IPC_PRIVATE`) and only the record links it.
//!
//! Nothing here knows a page's meaning beyond the first 32 bytes it shares with
//! the record ([`Spec`]); the segment kinds built on it (the time segment, the
//! statistics segment) do.

use super::Spec;
use crate::error::{Error, ErrorKind, Result};
use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

/// Who may use a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Owner only, mode 0600 (the default).
    Private,
    /// Owner and members of this group, mode 0660.
    Group(u32),
}

impl Sharing {
    pub fn mode(self) -> libc::mode_t {
        match self {
            Sharing::Private => 0o600,
            Sharing::Group(_) => 0o660,
        }
    }
}

/// Checks a segment name: one leading '/', no other '/', at most 255 bytes.
pub fn validate_name(name: &str) -> Result<CString> {
    let ok = name.len() > 1
        && name.len() <= 255
        && name.starts_with('/')
        && !name[1..].contains('/')
        && !name.contains('\0');
    if !ok {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "invalid segment name {name:?}: it must start with '/', contain no other '/' \
                 and be at most 255 bytes, e.g. \"/hrts-myapp\""
            ),
        ));
    }
    // The check above excluded interior NULs.
    CString::new(name).map_err(|_| Error::new(ErrorKind::InvalidArgument, "NUL in segment name"))
}

// ---------------------------------------------------------------- the name

/// An owned file descriptor of a segment's name object.
pub struct Fd(libc::c_int);

impl Fd {
    pub fn raw(&self) -> libc::c_int {
        self.0
    }

    /// Takes the object's exclusive `flock`, waiting for it. The kernel releases
    /// it when its holder's descriptor closes, which includes being killed, and
    /// a zombie holds no descriptors: a held lock means a live holder.
    pub fn lock(&self) -> Result<NameLock<'_>> {
        loop {
            // SAFETY: the descriptor is open for the whole call.
            if unsafe { libc::flock(self.0, libc::LOCK_EX) } == 0 {
                return Ok(NameLock(self));
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return Err(Error::os("flock of segment name", ""));
            }
        }
    }

    /// The exclusive lock if nobody holds it now.
    pub fn try_lock(&self) -> Result<Option<NameLock<'_>>> {
        // SAFETY: the descriptor is open for the whole call.
        if unsafe { libc::flock(self.0, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Some(NameLock(self)));
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => Ok(None),
            _ => Err(Error::os("flock of segment name", "")),
        }
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it exactly once.
        unsafe { libc::close(self.0) };
    }
}

/// The name object's exclusive lock, released on drop.
pub struct NameLock<'a>(&'a Fd);

impl Drop for NameLock<'_> {
    fn drop(&mut self) {
        // SAFETY: the descriptor outlives this guard.
        unsafe { libc::flock(self.0.raw(), libc::LOCK_UN) };
    }
}

/// Creates the name exclusively. `Ok(None)` means it already exists.
pub fn create_exclusive(name: &CString, sharing: Sharing) -> Result<Option<Fd>> {
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
    // SAFETY: `name` is a valid NUL-terminated string; shm_open only reads it.
    let fd = unsafe { libc::shm_open(name.as_ptr(), flags, sharing.mode() as libc::c_uint) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EEXIST) {
            return Ok(None);
        }
        return Err(open_error(name, &err));
    }
    let fd = Fd(fd);
    // The umask may have cleared bits of the mode, and group sharing needs the group.
    if let Sharing::Group(gid) = sharing {
        // SAFETY: fd is an open descriptor we own; -1 keeps the owner.
        if unsafe { libc::fchown(fd.raw(), u32::MAX, gid) } != 0 {
            let e = Error::os(
                format!(
                    "fchown of segment {} to group {gid}",
                    name.to_string_lossy()
                ),
                "the creating user must be a member of that group",
            );
            let _ = unlink_name(name);
            return Err(e);
        }
    }
    // SAFETY: fd is an open descriptor we own.
    if unsafe { libc::fchmod(fd.raw(), sharing.mode()) } != 0 {
        let e = Error::os(format!("fchmod of segment {}", name.to_string_lossy()), "");
        let _ = unlink_name(name);
        return Err(e);
    }
    Ok(Some(fd))
}

/// Opens an existing name. `Ok(None)` means it vanished (unlinked meanwhile).
pub fn open_existing(name: &CString) -> Result<Option<Fd>> {
    // O_NONBLOCK: a FIFO planted under the name must not block the open.
    let flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: `name` is a valid NUL-terminated string.
    let fd = unsafe { libc::shm_open(name.as_ptr(), flags, 0) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ENOENT) {
            return Ok(None);
        }
        return Err(open_error(name, &err));
    }
    Ok(Some(Fd(fd)))
}

fn open_error(name: &CString, err: &std::io::Error) -> Error {
    let name = name.to_string_lossy();
    match err.raw_os_error() {
        Some(libc::EACCES) => Error::new(
            ErrorKind::Permission,
            format!(
                "segment {name} exists but this user may not open it ({err}); it belongs to \
                 another user: choose another segment name, or ask its owner to share it with \
                 a group (HRTS_GROUP)"
            ),
        ),
        // shm_open refuses to follow a link (O_NOFOLLOW).
        Some(libc::ELOOP) => Error::new(
            ErrorKind::Foreign,
            format!(
                "segment name {name} is a symbolic link in /dev/shm, which hrts never follows; \
                 remove it (rm /dev/shm{name}) or choose another segment name"
            ),
        ),
        _ => Error::from_io(
            format!("shm_open {name}"),
            err,
            "check that /dev/shm is mounted and writable",
        ),
    }
}

pub struct Stat {
    pub size: u64,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

/// The name object's owner, mode and size; anything but a regular file is refused.
pub fn fstat(name: &str, fd: &Fd) -> Result<Stat> {
    // SAFETY: zeroed is a valid bit pattern for the plain-data struct stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open and `st` is a valid, writable struct stat.
    if unsafe { libc::fstat(fd.raw(), &mut st) } != 0 {
        return Err(Error::os("fstat of segment", ""));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Error::new(
            ErrorKind::Foreign,
            format!(
                "segment name {name} is not a shared-memory object but another kind of file \
                 (a FIFO, socket or device); remove it (rm /dev/shm{name}) or choose another \
                 segment name"
            ),
        ));
    }
    Ok(Stat {
        size: st.st_size as u64,
        uid: st.st_uid,
        gid: st.st_gid,
        mode: st.st_mode & 0o7777,
    })
}

/// Refuses a segment another user owns or whose mode gives away more than
/// `sharing` allows: a writable base would let any process move everyone's time.
/// Applies to the name object (the page has [`Page::attach`]'s message).
pub fn check_owner_and_mode(name: &str, spec: &Spec, st: &Stat, sharing: Sharing) -> Result<()> {
    match owner_and_mode_problem(spec, st, sharing) {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing segment {name}: {why}; remove it with {} (as its owner) or \
                 choose another segment name ({})",
                spec.unlink_command, spec.name_env
            ),
        )),
    }
}

/// What is wrong with an object's owner and mode for `sharing`, if anything.
fn owner_and_mode_problem(spec: &Spec, st: &Stat, sharing: Sharing) -> Option<String> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if st.mode & 0o007 != 0 {
        return Some(format!(
            "its mode {:04o} gives access to every user",
            st.mode
        ));
    }
    match sharing {
        Sharing::Private => {
            if st.uid != euid {
                return Some(format!("it belongs to uid {}, not to uid {euid}", st.uid));
            }
            if st.mode & 0o077 != 0 {
                return Some(format!(
                    "its mode {:04o} is not 0600 (set {} to share a segment with a group)",
                    st.mode, spec.group_env
                ));
            }
        }
        Sharing::Group(gid) => {
            if st.gid != gid {
                return Some(format!("its group is {}, not {gid}", st.gid));
            }
            if st.mode & 0o777 != 0o660 {
                return Some(format!("its mode {:04o} is not 0660", st.mode));
            }
        }
    }
    None
}

pub fn set_size(fd: &Fd, size: usize) -> Result<()> {
    // SAFETY: fd is an open descriptor we own.
    if unsafe { libc::ftruncate(fd.raw(), size as libc::off_t) } != 0 {
        return Err(Error::os(
            "ftruncate of segment name",
            "check that /dev/shm is mounted, writable and not full",
        ));
    }
    Ok(())
}

/// What the name object says, read from its first bytes. The first 32 bytes
/// mirror a page's (magic, layout version, sizes, state word: `REC_*` offsets),
/// so any hrts version recognises any other's name and refuses it clearly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub magic: u64,
    pub layout_version: u32,
    pub state: u64,
    /// The page: its System V id and the kernel's creator pid and creation time.
    pub page: PageId,
}

/// A System V segment as the kernel identifies it: its id inside its IPC
/// namespace, and (for diagnostics only) its creator pid and last change time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageId {
    pub shmid: i32,
    /// `shm_cpid` as the process that wrote the record saw it (a pid reads
    /// differently in another pid namespace, so it identifies nothing).
    pub cpid: u32,
    /// `shm_ctime` when the record was written (`IPC_SET` changes it).
    pub ctime: i64,
    /// The IPC namespace the page lives in; [`IpcNamespace::UNKNOWN`] in a
    /// record written without one.
    pub ns: IpcNamespace,
}

impl PageId {
    /// The id of segment `shmid` of namespace `ns` as `IPC_STAT` describes it now.
    fn of(shmid: i32, ds: &libc::shmid_ds, ns: IpcNamespace) -> PageId {
        PageId {
            shmid,
            cpid: ds.shm_cpid as u32,
            ctime: ds.shm_ctime,
            ns,
        }
    }
}

/// An IPC namespace as the kernel names it: the device and inode of
/// `/proc/thread-self/ns/ipc` (namespaces(7): two processes share a namespace
/// exactly when both are equal). Inode numbers of namespaces are never 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpcNamespace {
    pub dev: u64,
    pub ino: u64,
}

impl IpcNamespace {
    /// What a record written without a namespace holds.
    pub const UNKNOWN: IpcNamespace = IpcNamespace { dev: 0, ino: 0 };

    /// The calling thread's IPC namespace (a thread may have left its process's
    /// namespace with setns, so not `/proc/self`).
    pub fn current() -> Result<IpcNamespace> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata("/proc/thread-self/ns/ipc")
            .or_else(|_| std::fs::metadata("/proc/self/ns/ipc"))
            .map_err(|e| {
                Error::from_io(
                    "reading /proc/self/ns/ipc",
                    &e,
                    "hrts needs /proc to tell which IPC namespace a segment's page lives in; \
                     mount /proc in this process's mount namespace",
                )
            })?;
        Ok(IpcNamespace {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    pub fn is_known(self) -> bool {
        self.ino != 0
    }
}

impl std::fmt::Display for IpcNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As `readlink /proc/PID/ns/ipc` and `lsns` show it.
        write!(f, "ipc:[{}]", self.ino)
    }
}

pub const REC_MAGIC: usize = 0;
pub const REC_VERSION: usize = 8;
pub const REC_HEADER_SIZE: usize = 12;
pub const REC_SEGMENT_SIZE: usize = 16;
pub const REC_STATE: usize = 24;
const REC_SHMID: usize = 32;
const REC_CPID: usize = 36;
const REC_CTIME: usize = 40;
const REC_IPC_NS: usize = 48;
const REC_IPC_NS_DEV: usize = 56;
/// Bytes of the name's record (the fuzz harness restores exactly these).
pub const REC_LEN: usize = 64;

/// Reads the record (the object's size was checked by the caller).
pub fn read_record(fd: &Fd) -> Result<Record> {
    let mut b = [0u8; REC_LEN];
    // SAFETY: `b` is a valid, writable buffer of REC_LEN bytes.
    let n = unsafe { libc::pread(fd.raw(), b.as_mut_ptr().cast(), REC_LEN, 0) };
    if n < 0 {
        return Err(Error::os("read of segment name", ""));
    }
    // A short read means the object shrank since fstat: it reads as zeros,
    // which is what an object nobody has written yet holds.
    let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap_or_default());
    let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap_or_default());
    Ok(Record {
        magic: u64_at(REC_MAGIC),
        layout_version: u32_at(REC_VERSION),
        state: u64_at(REC_STATE),
        page: PageId {
            shmid: u32_at(REC_SHMID) as i32,
            cpid: u32_at(REC_CPID),
            ctime: u64_at(REC_CTIME) as i64,
            ns: IpcNamespace {
                dev: u64_at(REC_IPC_NS_DEV),
                ino: u64_at(REC_IPC_NS),
            },
        },
    })
}

/// Writes the whole record; only under the name's lock.
pub fn write_record(fd: &Fd, spec: &Spec, state: u64, page: PageId) -> Result<()> {
    let mut b = [0u8; REC_LEN];
    b[REC_MAGIC..REC_MAGIC + 8].copy_from_slice(&spec.magic.to_ne_bytes());
    b[REC_VERSION..REC_VERSION + 4].copy_from_slice(&spec.version.to_ne_bytes());
    b[REC_HEADER_SIZE..REC_HEADER_SIZE + 4].copy_from_slice(&spec.header_size.to_ne_bytes());
    b[REC_SEGMENT_SIZE..REC_SEGMENT_SIZE + 8].copy_from_slice(&(spec.size as u64).to_ne_bytes());
    b[REC_STATE..REC_STATE + 8].copy_from_slice(&state.to_ne_bytes());
    b[REC_SHMID..REC_SHMID + 4].copy_from_slice(&page.shmid.to_ne_bytes());
    b[REC_CPID..REC_CPID + 4].copy_from_slice(&page.cpid.to_ne_bytes());
    b[REC_CTIME..REC_CTIME + 8].copy_from_slice(&page.ctime.to_ne_bytes());
    b[REC_IPC_NS..REC_IPC_NS + 8].copy_from_slice(&page.ns.ino.to_ne_bytes());
    b[REC_IPC_NS_DEV..REC_IPC_NS_DEV + 8].copy_from_slice(&page.ns.dev.to_ne_bytes());
    // SAFETY: `b` is a valid buffer of REC_LEN bytes.
    let n = unsafe { libc::pwrite(fd.raw(), b.as_ptr().cast(), REC_LEN, 0) };
    if n != REC_LEN as isize {
        return Err(Error::os(
            "write of segment name",
            "check that /dev/shm is writable and not full",
        ));
    }
    Ok(())
}

/// Writes only the state word of the record; only under the name's lock.
pub fn write_state(fd: &Fd, state: u64) -> Result<()> {
    let b = state.to_ne_bytes();
    // SAFETY: `b` is a valid 8-byte buffer.
    let n = unsafe { libc::pwrite(fd.raw(), b.as_ptr().cast(), 8, REC_STATE as libc::off_t) };
    if n != 8 {
        return Err(Error::os("write of segment name", ""));
    }
    Ok(())
}

// ---------------------------------------------------------------- the page

/// The storage layer's tag sits in a page's last 64 bytes, which no layout built
/// on it may use (each layout checks that at compile time).
pub const TAG_LEN: usize = 64;

/// FNV-1a over the creating user's uid and the name: the page tag, and (its
/// low 32 bits) the System V key.
fn name_hash(uid: u32, name: &str) -> u64 {
    uid.to_le_bytes()
        .iter()
        .chain(name.as_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The System V key of a name's page made by this user: never IPC_PRIVATE (0).
fn page_key(name: &str) -> libc::key_t {
    match name_hash(euid(), name) as u32 as libc::key_t {
        0 => 1,
        k => k,
    }
}

/// The shared page, attached read-write, detached on drop.
pub struct Page {
    ptr: NonNull<u8>,
    id: PageId,
    size: usize,
    /// A file mapped with `mmap` (the host page, see `storage::host`), not a
    /// System V attachment: unmapped with `munmap`, and `id` names nothing.
    mapped: bool,
}

// SAFETY: the page is plain shared memory accessed only through atomics.
unsafe impl Send for Page {}
// SAFETY: as above; all access goes through atomic operations.
unsafe impl Sync for Page {}

fn ipc_stat(shmid: i32) -> std::result::Result<libc::shmid_ds, std::io::Error> {
    // SAFETY: zeroed is a valid bit pattern for the plain-data struct shmid_ds.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    // SAFETY: `ds` is a valid, writable shmid_ds; IPC_STAT only writes it.
    if unsafe { libc::shmctl(shmid, libc::IPC_STAT, &mut ds) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ds)
}

/// `IPC_STAT`'s and `shmat`'s answer for an id that names no segment (any
/// more) in this IPC namespace.
fn no_such_page(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EIDRM))
}

/// The segment holding this user's key for `name`, if it has a page's size and
/// this user created it (whoever owns it now); its `IPC_STAT`. Another user's
/// or another size's key holder is not ours: the caller makes a page without
/// the key. One that cannot be inspected is an error.
fn key_holder(name: &str, spec: &Spec) -> Result<Option<(i32, libc::shmid_ds)>> {
    // SAFETY: plain system call; without IPC_CREAT it only looks up.
    let shmid = unsafe { libc::shmget(page_key(name), 0, 0) };
    if shmid < 0 {
        let e = std::io::Error::last_os_error();
        if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::EIDRM)) {
            return Ok(None);
        }
        return Err(Error::from_io(
            format!("shmget (look-up) for segment {name}"),
            &e,
            "",
        ));
    }
    let ds = match ipc_stat(shmid) {
        Ok(ds) => ds,
        Err(e) if no_such_page(&e) => return Ok(None),
        Err(e) => return Err(unreachable_page(name, spec, shmid, &e)),
    };
    if ds.shm_segsz != spec.size || ds.shm_perm.cuid != euid() {
        return Ok(None);
    }
    Ok(Some((shmid, ds)))
}

/// The page lives in an IPC namespace this process is not in.
fn other_namespace(name: &str, spec: &Spec, theirs: IpcNamespace, here: IpcNamespace) -> Error {
    Error::new(
        ErrorKind::Permission,
        format!(
            "segment {name}: its page lives in another IPC namespace ({theirs}; this process \
             is in {here}), which this process cannot reach: processes that share a segment \
             must share the IPC namespace as well as /dev/shm. Run this process in that IPC \
             namespace (for a container: --ipc=host or --ipc=container:<name>), or give the \
             processes of this namespace a segment name of their own ({}); if no process of \
             that namespace uses the segment any more, remove the name with {}",
            spec.name_env, spec.unlink_command
        ),
    )
}

/// The page exists, but `IPC_STAT` refuses this process.
fn unreachable_page(name: &str, spec: &Spec, shmid: i32, e: &std::io::Error) -> Error {
    let mut err = unreachable_page_at(name, shmid, "cannot be inspected", e);
    if err.kind() == ErrorKind::Permission {
        err = Error::new(
            ErrorKind::Permission,
            format!(
                "{}; or choose another segment name ({})",
                err.message(),
                spec.name_env
            ),
        );
    }
    err
}

fn unreachable_page_at(name: &str, shmid: i32, what: &str, e: &std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => Error::new(
            ErrorKind::Permission,
            format!(
                "segment {name}: its page (System V shm id {shmid}) exists but {what} by this \
                 process ({e}): its owner or mode were changed (IPC_SET), or it belongs to \
                 another user. hrts never makes a second page for a name whose page exists: \
                 restore the page's owner and mode, or have its owner remove it (ipcrm -m \
                 {shmid}) once no process uses it"
            ),
        ),
        _ => Error::from_io(
            format!("segment {name}: its page (System V shm id {shmid}) {what}"),
            e,
            "",
        ),
    }
}

/// Refuses a page whose owner or mode are not the segment's: changed with
/// `IPC_SET` after it was made (hrts makes pages with the name's owner and
/// mode), which may also have taken the owner's own access away.
fn check_page_owner_and_mode(
    name: &str,
    spec: &Spec,
    shmid: i32,
    ds: &libc::shmid_ds,
    sharing: Sharing,
) -> Result<()> {
    let st = Stat {
        size: ds.shm_segsz as u64,
        uid: ds.shm_perm.uid,
        gid: ds.shm_perm.gid,
        mode: ds.shm_perm.mode as u32 & 0o777,
    };
    let why = owner_and_mode_problem(spec, &st, sharing).or_else(|| {
        (st.mode & 0o600 != 0o600).then(|| {
            format!(
                "its mode {:04o} does not let its owner read and write it",
                st.mode
            )
        })
    });
    match why {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing segment {name}: its page (System V shm id {shmid}): {why}; its owner \
                 or mode were changed after it was made (IPC_SET). hrts never makes a second \
                 page for a name whose page exists: restore them (mode {:04o}), or remove the \
                 segment with {} (as its owner) once no process uses it, or choose another \
                 segment name ({})",
                sharing.mode(),
                spec.unlink_command,
                spec.name_env
            ),
        )),
    }
}

impl Page {
    /// Creates a fresh, zeroed page with the mode `sharing` gives.
    pub fn create(name: &str, spec: &Spec, sharing: Sharing) -> Result<Page> {
        let flags = libc::IPC_CREAT | libc::IPC_EXCL | sharing.mode() as libc::c_int;
        // SAFETY: plain system call; IPC_EXCL never returns an existing segment.
        let mut shmid = unsafe { libc::shmget(page_key(name), spec.size, flags) };
        if shmid < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
            // Another segment holds the key (the caller already tried to link a
            // page of ours): make one only the record can find.
            // SAFETY: plain system call; IPC_PRIVATE always makes a new segment.
            shmid = unsafe { libc::shmget(libc::IPC_PRIVATE, spec.size, flags) };
        }
        if shmid < 0 {
            let err = std::io::Error::last_os_error();
            let hint = format!(
                "the host's System V shared-memory limits (kernel.shmmni, kernel.shmmax, \
                 kernel.shmall, ipcs -m) may be exhausted: remove unused segments with {} or \
                 `ipcrm`",
                spec.unlink_command
            );
            return Err(Error::from_io(
                format!("shmget for segment {name}"),
                &err,
                &hint,
            ));
        }
        let page = IpcNamespace::current()
            .and_then(|ns| Page::attach_id(name, shmid, spec.size, ns))
            .inspect_err(|_| {
                remove_page(shmid);
            })?;
        page.tag().store(name_hash(euid(), name), Relaxed);
        if let Sharing::Group(gid) = sharing {
            let mut ds = ipc_stat(shmid).map_err(|e| {
                remove_page(shmid);
                Error::from_io(format!("IPC_STAT of segment {name}"), &e, "")
            })?;
            ds.shm_perm.gid = gid;
            // SAFETY: `ds` is a valid shmid_ds; IPC_SET reads uid, gid and mode from it.
            if unsafe { libc::shmctl(shmid, libc::IPC_SET, &mut ds) } != 0 {
                let e = Error::os(
                    format!("sharing segment {name} with group {gid}"),
                    "the creating user must be a member of that group",
                );
                remove_page(shmid);
                return Err(e);
            }
        }
        Ok(page)
    }

    /// Attaches the page a record names, after checking that it is still the
    /// name's page and that its owner and mode are the segment's.
    /// `Ok(None)`: the page is gone (removed, or its id now belongs to another
    /// segment). Everything else that keeps this process from the page is an
    /// error, never "gone": the page lives in another IPC namespace, it exists
    /// but cannot be inspected or attached, or its owner or mode were changed.
    pub fn attach(name: &str, spec: &Spec, id: PageId, sharing: Sharing) -> Result<Option<Page>> {
        let here = IpcNamespace::current()?;
        if id.ns.is_known() && id.ns != here {
            return Err(other_namespace(name, spec, id.ns, here));
        }
        let ds = match ipc_stat(id.shmid) {
            Ok(ds) => ds,
            Err(e) if no_such_page(&e) => return Ok(None),
            Err(e) => return Err(unreachable_page(name, spec, id.shmid, &e)),
        };
        // A page never changes its size or its creator (IPC_SET changes the
        // owner, never `cuid`): another size, or (private) another creator,
        // is another segment that got the id after ours was removed.
        if ds.shm_segsz != spec.size || (sharing == Sharing::Private && ds.shm_perm.cuid != euid())
        {
            return Ok(None);
        }
        check_page_owner_and_mode(name, spec, id.shmid, &ds, sharing)?;
        let page = Page::attach_id(name, id.shmid, spec.size, here)?;
        // The tag is made from the creator's uid: a page of this name, also
        // when another member of the group created it.
        if page.tag().load(Relaxed) != name_hash(ds.shm_perm.cuid, name) {
            return Ok(None);
        }
        Ok(Some(page))
    }

    /// The page of `name` found by its key and tag, if one exists and is ours
    /// (the record that linked it may be lost), shared as `sharing` says, or in
    /// any way for `None` (removal). Its contents are for the caller to judge.
    /// A key holder this user created with a page's size that cannot be
    /// inspected, or whose owner or mode were changed, is an error: it may be
    /// this name's page, and making another would give the name two.
    pub fn find(name: &str, spec: &Spec, sharing: Option<Sharing>) -> Result<Option<Page>> {
        let Some((shmid, ds)) = key_holder(name, spec)? else {
            return Ok(None);
        };
        let sharing = sharing.unwrap_or(if ds.shm_perm.mode & 0o070 == 0 {
            Sharing::Private
        } else {
            Sharing::Group(ds.shm_perm.gid)
        });
        check_page_owner_and_mode(name, spec, shmid, &ds, sharing)?;
        let page = Page::attach_id(name, shmid, spec.size, IpcNamespace::current()?)?;
        Ok((page.tag().load(Relaxed) == name_hash(euid(), name)).then_some(page))
    }

    fn tag(&self) -> &AtomicU64 {
        // SAFETY: `size - TAG_LEN` is 8-byte aligned (sizes are multiples of 4096)
        // inside the page, which stays attached while `self` lives; any bit pattern
        // is a valid AtomicU64.
        unsafe { &*(self.ptr.as_ptr().add(self.size - TAG_LEN) as *const AtomicU64) }
    }

    fn attach_id(name: &str, shmid: i32, size: usize, ns: IpcNamespace) -> Result<Page> {
        // SAFETY: the kernel picks the address, so no existing memory is affected;
        // the segment keeps the size it was created with (checked by the callers)
        // for its whole life.
        let ptr = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
        if ptr as isize == -1 {
            let e = std::io::Error::last_os_error();
            return Err(if no_such_page(&e) {
                Error::from_io(
                    format!("shmat of segment {name}"),
                    &e,
                    "its page was removed meanwhile; retry",
                )
            } else {
                unreachable_page_at(name, shmid, "cannot be attached", &e)
            });
        }
        let ds = ipc_stat(shmid).map_err(|e| {
            // SAFETY: `ptr` is the attachment made above, detached once.
            unsafe { libc::shmdt(ptr) };
            Error::from_io(format!("IPC_STAT of segment {name}"), &e, "")
        })?;
        let id = PageId::of(shmid, &ds, ns);
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| Error::new(ErrorKind::Os, "shmat returned a null address"))?;
        Ok(Page {
            ptr,
            id,
            size,
            mapped: false,
        })
    }

    /// Maps `size` bytes of the open file `fd` from offset 0, shared, read-only
    /// unless `writable`. A read-only mapping faults on any store, so a reader
    /// cannot change the page whatever its code does.
    pub fn map_file(fd: libc::c_int, size: usize, writable: bool, what: &str) -> Result<Page> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: the kernel picks the address, so no existing memory is
        // affected; `fd` is open and the callers checked that the file has
        // `size` bytes (a later truncation by its owner would fault a reader:
        // the page's directory is writable only by the service that owns it).
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, libc::MAP_SHARED, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(Error::os(format!("mmap of {what}"), ""));
        }
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| Error::new(ErrorKind::Os, "mmap returned a null address"))?;
        Ok(Page {
            ptr,
            id: PageId {
                shmid: -1,
                cpid: 0,
                ctime: 0,
                ns: IpcNamespace::UNKNOWN,
            },
            size,
            mapped: true,
        })
    }

    pub fn id(&self) -> PageId {
        self.id
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The page's size in bytes (fixed for its life).
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many attachments the page has now (every attached process counts
    /// once per handle), as the kernel counts them; `None` if it cannot say.
    pub fn attachments(&self) -> Option<u64> {
        if self.mapped {
            return None;
        }
        // shmatt_t is an unsigned long: u64 on every 64-bit target hrts builds for.
        #[allow(clippy::useless_conversion)]
        ipc_stat(self.id.shmid)
            .ok()
            .map(|ds| u64::from(ds.shm_nattch))
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: `ptr` and `size` are exactly what mmap was given and
            // returned; nothing borrows the page once its owner is dropped.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.size) };
            return;
        }
        // SAFETY: `ptr` is exactly what shmat returned; nothing borrows the page
        // once its owner is dropped.
        unsafe { libc::shmdt(self.ptr.as_ptr().cast()) };
    }
}

/// Removes the page a fresh open found but will not use because its tag is
/// not the name's (a stray write hit it), before the open makes a new page:
/// otherwise nobody would ever remove it. It must be provably this name's page
/// with its tag damaged, never another segment's: the page the record names,
/// made by this user (private segments) with a page's size, that either holds
/// this user's key for the name, or is exactly the page the record was written
/// for (the same id, creator pid, change time and namespace). The holder of
/// this user's key for the name that the record does not name is removed too
/// if its tag cannot be another name's (a name whose key collides with this
/// one's has a tag whose low half is that key). Attached processes keep the
/// page until they detach. `Err` (`Permission`): the page is this name's but
/// only its owner, its creator or root may remove it; this process makes no
/// second page beside it.
pub fn remove_gone(name: &str, spec: &Spec, recorded: PageId, sharing: Sharing) -> Result<()> {
    let here = IpcNamespace::current()?;
    let key = page_key(name);
    let keyed = key_holder(name, spec)?;
    let mut gone = Vec::new();
    let reachable = !recorded.ns.is_known() || recorded.ns == here;
    if recorded.shmid > 0 && reachable {
        let stat = ipc_stat(recorded.shmid).ok();
        if let Some(ds) = stat.filter(|ds| ds.shm_segsz == spec.size) {
            let mine = sharing != Sharing::Private || ds.shm_perm.cuid == euid();
            let holds_key = keyed.as_ref().is_some_and(|(id, _)| *id == recorded.shmid);
            let exact = PageId::of(recorded.shmid, &ds, recorded.ns) == recorded;
            let lost_tag = tag_value(recorded.shmid, spec.size)
                .is_some_and(|t| t != name_hash(ds.shm_perm.cuid, name));
            if mine && (holds_key || exact) && lost_tag {
                gone.push((recorded.shmid, ds));
            }
        }
    }
    if let Some((shmid, ds)) = keyed {
        let lost_tag = tag_value(shmid, spec.size).is_some_and(|t| {
            t != name_hash(ds.shm_perm.cuid, name) && t as u32 as libc::key_t != key
        });
        if shmid != recorded.shmid && lost_tag {
            gone.push((shmid, ds));
        }
    }
    for (shmid, ds) in gone {
        if !remove_page(shmid) {
            let e = std::io::Error::last_os_error();
            return Err(Error::new(
                ErrorKind::Permission,
                format!(
                    "segment {name}: its page (System V shm id {shmid}, owner uid {}, created \
                     by uid {}) no longer carries the name's tag (something wrote into it), \
                     and this process may not remove it ({e}); hrts never leaves a page behind \
                     beside the new one it would make: have its owner open the segment again \
                     or remove it with {} (or `ipcrm -m {shmid}`) once no process uses it",
                    ds.shm_perm.uid, ds.shm_perm.cuid, spec.unlink_command
                ),
            ));
        }
    }
    Ok(())
}

/// The tag word of segment `shmid`, of `size` bytes (checked by the caller
/// with IPC_STAT); `None` when it cannot be attached to look.
fn tag_value(shmid: i32, size: usize) -> Option<u64> {
    // SAFETY: the kernel picks the address; read-only, detached below.
    let ptr = unsafe { libc::shmat(shmid, std::ptr::null(), libc::SHM_RDONLY) };
    if ptr as isize == -1 {
        return None;
    }
    // SAFETY: the segment has `size` bytes (checked by the caller with
    // IPC_STAT; a segment's size never changes); `size - TAG_LEN` is 8-byte
    // aligned; read once, then detached.
    let tag = unsafe {
        let tag = (*(ptr.cast::<u8>().add(size - TAG_LEN) as *const AtomicU64)).load(Relaxed);
        libc::shmdt(ptr);
        tag
    };
    Some(tag)
}

/// Marks a page for removal: it goes when the last process detaches.
pub fn remove_page(shmid: i32) -> bool {
    // SAFETY: IPC_RMID ignores the buffer argument.
    unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) == 0 }
}

/// Removes the name only (no page to look up: used while creating).
fn unlink_name(name: &CString) -> std::io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(name.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether segment `shmid` carries the tag `name`'s pages get from `cuid`;
/// `None` when it cannot be attached to look.
fn carries_tag(shmid: i32, size: usize, cuid: u32, name: &str) -> Option<bool> {
    tag_value(shmid, size).map(|tag| tag == name_hash(cuid, name))
}

/// Removes a segment: its page (if the record names one that is still ours)
/// and its name. Processes that have the page attached keep it until they
/// detach. `Ok(false)`: there was no such name. A page in another IPC
/// namespace is out of reach: only the name is removed.
pub fn unlink(cname: &CString, spec: &Spec) -> Result<bool> {
    let name = cname.to_string_lossy();
    let here = IpcNamespace::current().unwrap_or_default();
    // The record is read without the mode and owner checks: removing a segment
    // someone damaged must stay possible. Only a page that is still the
    // record's (same namespace, size and tag, or the kernel facts the record
    // holds) is removed, never an unrelated one.
    if let Ok(Some(fd)) = open_existing(cname) {
        if let Ok(rec) = read_record(&fd) {
            let reachable = !rec.page.ns.is_known() || rec.page.ns == here;
            if rec.magic == spec.magic && rec.page.shmid > 0 && reachable {
                if let Ok(ds) = ipc_stat(rec.page.shmid) {
                    let same = PageId::of(rec.page.shmid, &ds, rec.page.ns) == rec.page
                        || (ds.shm_segsz == spec.size
                            && carries_tag(rec.page.shmid, spec.size, ds.shm_perm.cuid, &name)
                                == Some(true));
                    if same {
                        remove_page(rec.page.shmid);
                    }
                }
            }
        }
    }
    // A page the record no longer names: the holder of this user's key for
    // the name, made by this user, with the tag (or, if its mode was changed
    // so that it cannot be attached, without looking).
    if let Ok(Some((shmid, ds))) = key_holder(&name, spec) {
        if carries_tag(shmid, spec.size, ds.shm_perm.cuid, &name) != Some(false) {
            remove_page(shmid);
        }
    }
    match unlink_name(cname) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) => Err(Error::new(
            ErrorKind::Permission,
            format!(
                "segment {name} was not removed ({e}): it belongs to another user; only its \
                 owner or root may remove it"
            ),
        )),
        Err(e) => Err(Error::from_io(
            format!("segment {name} was not removed: shm_unlink"),
            &e,
            "",
        )),
    }
}
