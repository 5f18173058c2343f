//! Where hrts keeps what processes share: a named page of shared memory that no
//! process can shrink under another, created once by whoever comes first and
//! attached by everyone after (see [`shm`] for the name and the page).
//!
//! The protocol here knows nothing of what a page holds beyond a [`Spec`]: its
//! magic, layout version and size, and the state word every page keeps at the
//! same offset as its name's record. The time segment (`segment`) and the
//! statistics segment (`hrts-stats`) are both built on it, so a truncated,
//! foreign, other-version or half-made object is refused, replaced or relinked
//! by one set of rules.

#[cfg(not(windows))]
pub mod host;
#[cfg(windows)]
#[path = "host_windows.rs"]
pub mod host;
#[cfg(not(windows))]
pub mod shm;
#[cfg(windows)]
#[path = "shm_windows.rs"]
pub mod shm;

pub use shm::Page;
#[cfg(windows)]
pub use shm::{attach_existing, open, unlink};

use crate::error::{Error, ErrorKind, Result};
use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Acquire;
use std::time::Duration;

/// Who may use a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Owner only, mode 0600 (the default).
    Private,
    /// Owner and members of this group, mode 0660.
    Group(u32),
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

/// What kind of segment a name holds, as the storage layer needs to know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// For messages: "an hrts time segment".
    pub what: &'static str,
    /// The first eight bytes of the page and of the name's record.
    pub magic: u64,
    pub version: u32,
    /// The size of the page's fixed header (recorded, for diagnostics).
    pub header_size: u32,
    /// The page's size: a multiple of 4096, its last [`shm::TAG_LEN`] bytes
    /// belong to the storage layer.
    pub size: usize,
    /// For messages: how a user removes such a segment.
    pub unlink_command: &'static str,
    /// For messages: the environment variables that choose the name and the group.
    pub name_env: &'static str,
    pub group_env: &'static str,
}

/// Bytes of the name object (it holds only the record, but keeps the size the
/// first hrts versions gave it, so they read newer names as ours and refuse them
/// by version).
pub const NAME_SIZE: usize = 4096;

/// State word (in the record and in the page): high 32 bits a `STATE_*` code,
/// low 32 bits the pid of the process that initialises (or initialised) it.
pub const STATE_EMPTY: u64 = 0;
pub const STATE_INITIALISING: u64 = 1;
pub const STATE_READY: u64 = 2;

pub fn state_word(code: u64, pid: u32) -> u64 {
    (code << 32) | pid as u64
}
pub fn state_code(word: u64) -> u64 {
    word >> 32
}
pub fn state_pid(word: u64) -> u32 {
    word as u32
}

/// How this process came to use the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// It created the segment and calibrated the counter.
    Created,
    /// It attached to a ready segment (no calibration).
    Attached,
    /// The creator died before `ready`; this process initialised it instead.
    TookOver,
}

/// How to open: the name, who may share it, and how long to wait for another
/// process's initialisation.
#[derive(Clone, Copy, Debug)]
pub struct OpenArgs<'a> {
    pub name: &'a str,
    pub sharing: Sharing,
    pub ready_timeout: Duration,
}

/// Writes a fresh, zeroed page's contents and publishes its state word as
/// ready (`state_word(STATE_READY, pid)` at [`shm::REC_STATE`], release) last.
pub type Initialise<'a> = &'a dyn Fn(&Page) -> Result<()>;

/// A poll interval while waiting on another process: short next to a creator's
/// calibration, long enough not to burn a core.
#[cfg(not(windows))]
const POLL: Duration = Duration::from_millis(1);

#[cfg(not(windows))]
/// Creates the segment `args.name` of kind `spec` (running `init` on its fresh
/// page), or attaches to it if it exists. The page's contents beyond magic,
/// version and state are for the caller to validate.
pub fn open(spec: &Spec, args: &OpenArgs<'_>, init: Initialise<'_>) -> Result<(Page, Opened)> {
    let cname = shm::validate_name(args.name)?;
    let deadline = crate::os::monotonic_ns() + args.ready_timeout.as_nanos() as u64;
    loop {
        if let Some(fd) = shm::create_exclusive(&cname, args.sharing)? {
            // The creator holds the name's lock from before the object has a
            // size until the page is ready, so a waiter that finds the lock free
            // and no ready record knows the creator is gone.
            let created = fd.lock().and_then(|lock| {
                shm::set_size(&fd, NAME_SIZE)?;
                initialise_locked(spec, args, &fd, lock, init, Opened::Created)
            });
            if created.is_err() {
                let _ = shm::unlink(&cname, spec);
            }
            return created;
        }
        let Some(fd) = shm::open_existing(&cname)? else {
            continue; // removed between our two calls: try creating again
        };
        return attach_named(spec, args, &fd, init, deadline);
    }
}

#[cfg(not(windows))]
/// Attaches an existing, ready segment without ever creating or initialising
/// one (readers). `Ok(None)`: no object has that name, or its page is gone.
pub fn attach_existing(spec: &Spec, name: &str, sharing: Option<Sharing>) -> Result<Option<Page>> {
    let cname = shm::validate_name(name)?;
    let Some(fd) = shm::open_existing(&cname)? else {
        return Ok(None);
    };
    let st = shm::fstat(name, &fd)?;
    let sharing = sharing.unwrap_or(if st.mode & 0o070 == 0 {
        Sharing::Private
    } else {
        Sharing::Group(st.gid)
    });
    shm::check_owner_and_mode(name, spec, &st, sharing)?;
    if st.size == 0 {
        return Ok(None); // its creator is a moment away
    }
    if (st.size as usize) < NAME_SIZE {
        return Err(truncated(spec, name, st.size));
    }
    let rec = shm::read_record(&fd)?;
    if !check_identity(spec, rec.magic, rec.layout_version, name)?
        || state_code(rec.state) != STATE_READY
    {
        return Ok(None);
    }
    shm::Page::attach(name, spec, rec.page, sharing)
}

#[cfg(not(windows))]
fn truncated(spec: &Spec, name: &str, size: u64) -> Error {
    Error::new(
        ErrorKind::Truncated,
        format!(
            "segment {name} is truncated: {size} bytes, {} has {NAME_SIZE}; remove it with {} \
             and retry",
            spec.what, spec.unlink_command
        ),
    )
}

#[cfg(not(windows))]
/// Waits, bounded, for an existing name to name a ready page and attaches it;
/// takes over initialisation when its initialiser is gone, or when nobody
/// started it by `deadline`.
fn attach_named(
    spec: &Spec,
    args: &OpenArgs<'_>,
    fd: &shm::Fd,
    init: Initialise<'_>,
    deadline: u64,
) -> Result<(Page, Opened)> {
    let name = args.name;
    loop {
        let st = shm::fstat(name, fd)?;
        shm::check_owner_and_mode(name, spec, &st, args.sharing)?;
        let timed_out = crate::os::monotonic_ns() >= deadline;
        if st.size == 0 {
            // Not sized yet: its creator is a moment away, or died right after
            // creating the name.
            if timed_out {
                return initialise_locked(spec, args, fd, fd.lock()?, init, Opened::TookOver);
            }
            std::thread::sleep(POLL);
            continue;
        }
        if (st.size as usize) < NAME_SIZE {
            return Err(truncated(spec, name, st.size));
        }
        let rec = shm::read_record(fd)?;
        check_identity(spec, rec.magic, rec.layout_version, name)?;
        match state_code(rec.state) {
            STATE_READY => {
                if let Some(page) = shm::Page::attach(name, spec, rec.page, args.sharing)? {
                    return Ok((page, Opened::Attached));
                }
                // The page is gone (removed with ipcrm, or its IPC namespace
                // was reset and a process of the new one finds the record of a
                // page made there, or a lost record relinked) while the name
                // stayed: make a new one. A page of another IPC namespace, or
                // one that exists but cannot be reached, was an error above.
                return initialise_locked(spec, args, fd, fd.lock()?, init, Opened::TookOver);
            }
            STATE_INITIALISING | STATE_EMPTY => {
                if let Some(lock) = fd.try_lock()? {
                    return initialise_locked(spec, args, fd, lock, init, Opened::TookOver);
                }
            }
            _ => {
                return Err(corrupt(
                    spec,
                    name,
                    format!("state word {:#x} is invalid", rec.state),
                ));
            }
        }
        if timed_out {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "segment {name} is still being initialised by pid {} after {} ms; if that \
                     process is stuck, stop it or remove the segment with {}",
                    state_pid(rec.state),
                    args.ready_timeout.as_millis(),
                    spec.unlink_command
                ),
            ));
        }
        std::thread::sleep(POLL);
    }
}

/// The page's magic and state words (the record's offsets).
fn word_at(page: &Page, offset: usize) -> &AtomicU64 {
    // SAFETY: `offset` is one of the record offsets (0, 24): 8-byte aligned and
    // inside every page (at least 4096 bytes), which stays attached while
    // borrowed; any bit pattern is a valid AtomicU64.
    unsafe { &*(page.as_ptr().add(offset) as *const AtomicU64) }
}

/// Whether a page's own words say it is a ready page of kind `spec`.
pub fn page_is_ready(spec: &Spec, page: &Page) -> bool {
    state_code(word_at(page, shm::REC_STATE).load(Acquire)) == STATE_READY
        && word_at(page, shm::REC_MAGIC).load(Acquire) == spec.magic
}

#[cfg(not(windows))]
/// Under the name's lock: attaches the page if another process finished it
/// meanwhile; otherwise makes a fresh page, records it, initialises it and
/// publishes `ready`. A half-made page of a creator that died is removed.
fn initialise_locked(
    spec: &Spec,
    args: &OpenArgs<'_>,
    fd: &shm::Fd,
    lock: shm::NameLock<'_>,
    init: Initialise<'_>,
    opened: Opened,
) -> Result<(Page, Opened)> {
    let name = args.name;
    // `opened` is what this process did if it initialises a page; attaching one
    // that another process finished (or linking a found one) is `Attached`.
    if (shm::fstat(name, fd)?.size as usize) < NAME_SIZE {
        shm::set_size(fd, NAME_SIZE)?;
    }
    let rec = shm::read_record(fd)?;
    if check_identity(spec, rec.magic, rec.layout_version, name)? {
        if state_code(rec.state) == STATE_READY {
            if let Some(page) = shm::Page::attach(name, spec, rec.page, args.sharing)? {
                return Ok((page, Opened::Attached));
            }
        } else if rec.page.shmid > 0 {
            // A half-made page of a creator that died; one of another IPC
            // namespace cannot be reached and is left to that namespace (it
            // never became ready, so nobody uses it).
            if let Ok(Some(stale)) = shm::Page::attach(name, spec, rec.page, args.sharing) {
                shm::remove_page(stale.id().shmid);
            }
        }
    }
    // The record was lost but the page is there (found by its key): link it
    // again, so everyone keeps sharing one page; a half-made one is replaced.
    if let Some(page) = shm::Page::find(name, spec, Some(args.sharing))? {
        if page_is_ready(spec, &page) {
            let state = word_at(&page, shm::REC_STATE).load(Acquire);
            shm::write_record(fd, spec, state, page.id())?;
            drop(lock);
            return Ok((page, Opened::Attached));
        }
        shm::remove_page(page.id().shmid);
    }
    // This open decided the page is gone: if it is there with its tag
    // damaged, it goes now, or nobody would ever remove it.
    shm::remove_gone(name, spec, rec.page, args.sharing)?;
    let page = shm::Page::create(name, spec, args.sharing)?;
    let me = crate::os::pid();
    let initialised = shm::write_record(fd, spec, state_word(STATE_INITIALISING, me), page.id())
        .and_then(|_| init(&page))
        .and_then(|_| shm::write_state(fd, state_word(STATE_READY, me)));
    if let Err(e) = initialised {
        let _ = shm::write_record(fd, spec, STATE_EMPTY, shm::PageId::default());
        shm::remove_page(page.id().shmid);
        return Err(e);
    }
    drop(lock);
    Ok((page, opened))
}

pub fn corrupt(spec: &Spec, name: &str, what: String) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!(
            "segment {name} is corrupt: {what}; remove it with {} and retry",
            spec.unlink_command
        ),
    )
}

/// Magic and version sit at fixed offsets in every layout version (of the name
/// record and of the page), so this check is safe on anything, ours or not.
/// `Ok(false)`: not initialised yet.
pub fn check_identity(spec: &Spec, magic: u64, version: u32, name: &str) -> Result<bool> {
    if magic == 0 {
        return Ok(false);
    }
    if magic != spec.magic {
        return Err(Error::new(
            ErrorKind::Foreign,
            format!(
                "shared memory object {name} is not {} (magic {magic:#018x}); another program \
                 (or another kind of hrts segment) uses that name: choose another segment name \
                 ({}, `--segment`, or the name passed to open)",
                spec.what, spec.name_env
            ),
        ));
    }
    if version != spec.version {
        let (age, fix) = if version < spec.version {
            (
                "an older",
                format!(
                    "once every process using it has exited, remove it with {}",
                    spec.unlink_command
                ),
            )
        } else {
            (
                "a newer",
                "upgrade this program's hrts library, or use another segment name".to_string(),
            )
        };
        return Err(Error::new(
            ErrorKind::Version,
            format!(
                "segment {name} has layout version {version}, from {age} hrts; this library \
                 understands version {}: {fix}",
                spec.version
            ),
        ));
    }
    Ok(true)
}

/// A group name or numeric gid to a gid.
pub fn resolve_group(group: &str) -> Result<u32> {
    gid_of(group, None)
}

/// The sharing the environment variable `var` asks for: a group (its name or
/// gid) to share with, or private when unset or empty.
pub fn sharing_from_env(var: &str) -> Result<Sharing> {
    sharing_of(var, std::env::var(var).ok().as_deref())
}

/// The sharing a value of the variable `var` asks for (`None`: unset).
pub(crate) fn sharing_of(var: &str, value: Option<&str>) -> Result<Sharing> {
    match value {
        Some(group) if !group.is_empty() => Ok(Sharing::Group(gid_of(group, Some(var))?)),
        _ => Ok(Sharing::Private),
    }
}

/// Windows has no Unix groups: a numeric gid is taken as given (opening a
/// segment with it is refused, see `shm`), a name is no group.
#[cfg(windows)]
fn gid_of(group: &str, var: Option<&str>) -> Result<u32> {
    group.parse::<u32>().map_err(|_| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{}: no such group; Windows has no Unix groups, and hrts there keeps \
                 per-user segments only: leave it unset",
                var.map_or_else(|| format!("group {group:?}"), |v| format!("{v}={group:?}"))
            ),
        )
    })
}

/// `var`: the environment variable the name came from, for the message.
#[cfg(not(windows))]
fn gid_of(group: &str, var: Option<&str>) -> Result<u32> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let cname = std::ffi::CString::new(group)
        .map_err(|_| Error::new(ErrorKind::InvalidArgument, "NUL in group name"))?;
    // SAFETY: zeroed is a valid bit pattern for struct group (pointers null).
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::group = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; `buf` outlives it and its
    // length is passed, so getgrnam_r writes only inside it.
    let rc = unsafe {
        libc::getgrnam_r(
            cname.as_ptr(),
            &mut grp,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{}: no such group; give a group name or numeric gid",
                var.map_or_else(|| format!("group {group:?}"), |v| format!("{v}={group:?}"))
            ),
        ));
    }
    Ok(grp.gr_gid)
}

#[cfg(not(windows))]
/// Removes a segment of kind `spec`: its page and its name (see [`shm::unlink`]).
pub fn unlink(spec: &Spec, name: &str) -> Result<bool> {
    let cname = shm::validate_name(name)?;
    shm::unlink(&cname, spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_errors_name_the_variable_they_came_from() {
        // A variable of this test's own: no other test reads or sets it.
        const VAR: &str = "HRTS_TEST_STORAGE_GROUP";
        std::env::set_var(VAR, "no-such-group-hrts");
        let e = sharing_from_env(VAR).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(
            e.message()
                .starts_with(&format!("{VAR}=\"no-such-group-hrts\": no such group")),
            "{e}"
        );
        std::env::set_var(VAR, "4242");
        assert_eq!(sharing_from_env(VAR).unwrap(), Sharing::Group(4242));
        std::env::set_var(VAR, "");
        assert_eq!(sharing_from_env(VAR).unwrap(), Sharing::Private);
        std::env::remove_var(VAR);
        let e = resolve_group("no-such-group-hrts").unwrap_err();
        assert!(
            e.message()
                .starts_with("group \"no-such-group-hrts\": no such group"),
            "{e}"
        );
    }
}
