//! Named POSIX shared memory: open, check ownership and mode, map. Nothing here
//! knows the header's meaning; `segment::open` does.

use crate::error::{Error, ErrorKind, Result};
use std::ffi::CString;
use std::ptr::NonNull;

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

/// An owned file descriptor of a shared-memory object.
pub struct Fd(libc::c_int);

impl Fd {
    pub fn raw(&self) -> libc::c_int {
        self.0
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it exactly once.
        unsafe { libc::close(self.0) };
    }
}

/// Creates the object exclusively. `Ok(None)` means it already exists.
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
            unlink(name);
            return Err(e);
        }
    }
    // SAFETY: fd is an open descriptor we own.
    if unsafe { libc::fchmod(fd.raw(), sharing.mode()) } != 0 {
        let e = Error::os(format!("fchmod of segment {}", name.to_string_lossy()), "");
        unlink(name);
        return Err(e);
    }
    Ok(Some(fd))
}

/// Opens an existing object. `Ok(None)` means it vanished (unlinked meanwhile).
pub fn open_existing(name: &CString) -> Result<Option<Fd>> {
    // SAFETY: `name` is a valid NUL-terminated string.
    let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
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
    if err.raw_os_error() == Some(libc::EACCES) {
        return Error::new(
            ErrorKind::Permission,
            format!(
                "segment {name} exists but this user may not open it ({err}); it belongs to \
                 another user: choose another name with HRTS_SEGMENT, or ask its owner to share \
                 it with a group (HRTS_GROUP)"
            ),
        );
    }
    Error::from_io(
        format!("shm_open {name}"),
        err,
        "is /dev/shm mounted and writable?",
    )
}

pub struct Stat {
    pub size: u64,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

pub fn fstat(fd: &Fd) -> Result<Stat> {
    // SAFETY: zeroed is a valid bit pattern for the plain-data struct stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open and `st` is a valid, writable struct stat.
    if unsafe { libc::fstat(fd.raw(), &mut st) } != 0 {
        return Err(Error::os("fstat of segment", ""));
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
pub fn check_owner_and_mode(name: &str, st: &Stat, sharing: Sharing) -> Result<()> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let refuse = |why: String| {
        Err(Error::new(
            ErrorKind::Permission,
            format!(
                "refusing segment {name}: {why}; remove it with `hrts unlink` (as its owner) or \
                 choose another name with HRTS_SEGMENT"
            ),
        ))
    };
    if st.mode & 0o007 != 0 {
        return refuse(format!(
            "its mode {:04o} gives access to every user",
            st.mode
        ));
    }
    match sharing {
        Sharing::Private => {
            if st.uid != euid {
                return refuse(format!("it belongs to uid {}, not to uid {euid}", st.uid));
            }
            if st.mode & 0o077 != 0 {
                return refuse(format!(
                    "its mode {:04o} is not 0600 (set HRTS_GROUP to share a segment with a group)",
                    st.mode
                ));
            }
        }
        Sharing::Group(gid) => {
            if st.gid != gid {
                return refuse(format!("its group is {}, not {gid}", st.gid));
            }
            if st.mode & 0o777 != 0o660 {
                return refuse(format!("its mode {:04o} is not 0660", st.mode));
            }
        }
    }
    Ok(())
}

pub fn set_size(fd: &Fd, size: usize) -> Result<()> {
    // SAFETY: fd is an open descriptor we own.
    if unsafe { libc::ftruncate(fd.raw(), size as libc::off_t) } != 0 {
        return Err(Error::os("ftruncate of segment", "is /dev/shm full?"));
    }
    Ok(())
}

/// A shared read-write mapping, unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory accessed only through atomics.
unsafe impl Send for Mapping {}
// SAFETY: as above; all access goes through atomic operations.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes. The caller has checked that the object is at least that
    /// large, so no access through the mapping can raise SIGBUS.
    pub fn map(fd: &Fd, len: usize) -> Result<Mapping> {
        // SAFETY: a fresh shared mapping of an open descriptor; the kernel picks the
        // address, so no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.raw(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::os("mmap of segment", ""));
        }
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| Error::new(ErrorKind::Os, "mmap returned a null mapping"))?;
        Ok(Mapping { ptr, len })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; nothing borrows the
        // mapping once its owner is dropped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// What [`unlink`] did.
#[derive(Debug)]
pub enum Unlinked {
    Removed,
    /// There was no segment of that name.
    Absent,
    /// The segment is still there (e.g. another user's, which only its owner or
    /// root may remove).
    Failed(Error),
}

/// Removes the name; processes that have it mapped keep their mapping.
pub fn unlink(name: &CString) -> Unlinked {
    // SAFETY: `name` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(name.as_ptr()) } == 0 {
        return Unlinked::Removed;
    }
    let err = std::io::Error::last_os_error();
    let name = name.to_string_lossy();
    match err.raw_os_error() {
        Some(libc::ENOENT) => Unlinked::Absent,
        Some(libc::EPERM | libc::EACCES) => Unlinked::Failed(Error::new(
            ErrorKind::Permission,
            format!(
                "segment {name} was not removed ({err}): it belongs to another user; only \
                 its owner or root may remove it"
            ),
        )),
        _ => Unlinked::Failed(Error::from_io(
            format!("segment {name} was not removed: shm_unlink"),
            &err,
            "",
        )),
    }
}
