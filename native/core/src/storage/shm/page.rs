//! The page: a System V shared-memory segment of fixed size, found by the
//! record's id or by a key derived from the owner and the name, and known for
//! the name's by the tag in its last bytes.

use super::{owner_and_mode_problem, Sharing, Stat};
use crate::error::{Error, ErrorKind, Result};
use crate::storage::Spec;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

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
    pub(super) fn of(shmid: i32, ds: &libc::shmid_ds, ns: IpcNamespace) -> PageId {
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

/// The System V key of a name's page made by this user: never IPC_PRIVATE (0).
fn page_key(name: &str) -> libc::key_t {
    match name_hash(crate::os::euid(), name) as u32 as libc::key_t {
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

pub(super) fn ipc_stat(shmid: i32) -> std::result::Result<libc::shmid_ds, std::io::Error> {
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
pub(super) fn key_holder(name: &str, spec: &Spec) -> Result<Option<(i32, libc::shmid_ds)>> {
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
    if ds.shm_segsz != spec.size || ds.shm_perm.cuid != crate::os::euid() {
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
        page.tag()
            .store(name_hash(crate::os::euid(), name), Relaxed);
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
        if ds.shm_segsz != spec.size
            || (sharing == Sharing::Private && ds.shm_perm.cuid != crate::os::euid())
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
        Ok((page.tag().load(Relaxed) == name_hash(crate::os::euid(), name)).then_some(page))
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
            let mine = sharing != Sharing::Private || ds.shm_perm.cuid == crate::os::euid();
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

/// Whether segment `shmid` carries the tag `name`'s pages get from `cuid`;
/// `None` when it cannot be attached to look.
pub(super) fn carries_tag(shmid: i32, size: usize, cuid: u32, name: &str) -> Option<bool> {
    tag_value(shmid, size).map(|tag| tag == name_hash(cuid, name))
}
