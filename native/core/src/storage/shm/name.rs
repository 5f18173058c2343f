//! The name: a POSIX shared-memory object, only ever read and written with
//! `pread`/`pwrite` (never mapped), whose lock serialises creation and whose
//! first bytes are the record naming the page.

use super::page::{IpcNamespace, PageId};
use super::{owner_and_mode_problem, Sharing, Stat};
use crate::error::{Error, ErrorKind, Result};
use crate::storage::Spec;
use std::ffi::CString;

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
/// Applies to the name object (the page has [`Page::attach`](super::Page::attach)'s message).
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

/// Removes the name only (no page to look up: used while creating).
pub(super) fn unlink_name(name: &CString) -> std::io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(name.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
