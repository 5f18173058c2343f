//! Where a segment lives on Windows: one named, pagefile-backed file mapping
//! (`CreateFileMappingW`) in the session's `Local\` namespace, whose name
//! carries the user's SID, so every user has segments of their own; its
//! security descriptor admits only that user.
//!
//! Windows gives three things the Linux room builds by hand. A mapping cannot
//! shrink under a view, so no access through it can fault. The kernel removes
//! the object when the last handle to it closes, so a segment lives exactly as
//! long as some process uses it, and the next process after that creates it
//! afresh (which is IBMTS's frozen-mode re-pairing, with no presence lock). And
//! a named mutex is released, "abandoned", by the kernel when its holder dies:
//! it serialises creation, so a waiter that acquires it finds the page ready,
//! or half made by a creator that died, which it then makes again itself.

use super::{
    check_identity, corrupt, page_is_ready, state_code, state_word, word_at, OpenArgs, Opened,
    Spec, STATE_EMPTY, STATE_INITIALISING, STATE_READY,
};
use crate::error::{Error, ErrorKind, Result};
use crate::os::windows::{wide, Handle, OwnerOnly};
use std::sync::atomic::Ordering::Release;
use windows_sys::Win32::Foundation::{
    GetLastError, ERROR_ACCESS_DENIED, ERROR_ALREADY_EXISTS, ERROR_FILE_NOT_FOUND,
    INVALID_HANDLE_VALUE, WAIT_ABANDONED, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, OpenFileMappingW, UnmapViewOfFile, VirtualQuery,
    FILE_MAP_ALL_ACCESS, MEMORY_BASIC_INFORMATION, MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READWRITE,
};
use windows_sys::Win32::System::Threading::{CreateMutexW, ReleaseMutex, WaitForSingleObject};

pub use super::{validate_name, Sharing};

/// The record offsets the page's first words share with the Linux room's
/// name record (the layout asserts them).
pub const REC_MAGIC: usize = 0;
pub const REC_VERSION: usize = 8;
pub const REC_HEADER_SIZE: usize = 12;
pub const REC_SEGMENT_SIZE: usize = 16;
pub const REC_STATE: usize = 24;

/// The kernel object name of segment `name` with `suffix` (`""` for the
/// mapping, `.init` for the creation mutex, `.role` for the writer role).
pub fn object_name(name: &str, suffix: &str) -> String {
    format!(
        "Local\\hrts.{}.{}{suffix}",
        crate::os::user_sid(),
        name.trim_start_matches('/')
    )
}

/// A mapped view of a segment's mapping; unmapped and closed on drop.
pub struct Page {
    /// Kept open for as long as the view is mapped, then closed.
    _mapping: Handle,
    ptr: *mut u8,
    size: usize,
}

// SAFETY: the view is shared memory that every access reaches through
// atomics; the handle and address are process-wide.
unsafe impl Send for Page {}
// SAFETY: as above.
unsafe impl Sync for Page {}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page").field("size", &self.size).finish()
    }
}

impl Page {
    /// Maps the whole of `mapping`; it must hold at least `spec.size` bytes
    /// (an object of the same name made by someone else may be smaller).
    fn map(mapping: Handle, name: &str, spec: &Spec) -> Result<Page> {
        // SAFETY: an open mapping handle; 0 bytes maps the whole object.
        let view = unsafe { MapViewOfFile(mapping.0, FILE_MAP_ALL_ACCESS, 0, 0, 0) };
        if view.Value.is_null() {
            return Err(Error::os(
                format!("MapViewOfFile of segment {name}"),
                "check that the segment name is not used by another program",
            ));
        }
        let ptr = view.Value as *mut u8;
        // SAFETY: zeroed is a valid MEMORY_BASIC_INFORMATION.
        let mut info: MEMORY_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `ptr` is the base of the view just mapped; `info` is writable.
        let got = unsafe {
            VirtualQuery(
                ptr.cast(),
                &mut info,
                std::mem::size_of::<MEMORY_BASIC_INFORMATION>(),
            )
        };
        let page = Page {
            _mapping: mapping,
            ptr,
            size: spec.size,
        };
        if got == 0 || info.RegionSize < spec.size {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "segment {name} is truncated: {} bytes, {} has {}; another program made \
                     an object of that name: choose another segment name ({})",
                    info.RegionSize, spec.what, spec.size, spec.name_env
                ),
            ));
        }
        Ok(page)
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The page's size in bytes (fixed for its life).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Windows does not count a mapping's views for other processes.
    pub fn attachments(&self) -> Option<u64> {
        None
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: the view was mapped by `map` and is unmapped once; the
        // mapping handle closes after it (the field's drop).
        unsafe {
            UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS {
                Value: self.ptr.cast(),
            })
        };
    }
}

/// The creation mutex of a segment, held while this value lives.
struct InitLock(Handle);

impl Drop for InitLock {
    fn drop(&mut self) {
        // SAFETY: this thread acquired the mutex in `lock_init`.
        unsafe { ReleaseMutex(self.0 .0) };
    }
}

fn denied(name: &str) -> Error {
    Error::new(
        ErrorKind::Permission,
        format!(
            "segment {name} belongs to another user (access denied); choose another segment \
             name (HRTS_SEGMENT)"
        ),
    )
}

/// Takes the creation mutex, waiting at most `timeout_ms`; a mutex its holder
/// died with is ours too (the kernel abandons it).
fn lock_init(name: &str, sa: &OwnerOnly, timeout_ms: u32) -> Result<InitLock> {
    let wname = wide(&object_name(name, ".init"));
    // SAFETY: valid security attributes and a NUL-terminated name.
    let h = unsafe { CreateMutexW(&sa.attrs, 0, wname.as_ptr()) };
    if h.is_null() {
        // SAFETY: reads this thread's last error.
        if unsafe { GetLastError() } == ERROR_ACCESS_DENIED {
            return Err(denied(name));
        }
        return Err(Error::os(format!("CreateMutexW for segment {name}"), ""));
    }
    let h = Handle(h);
    // SAFETY: an open mutex handle.
    match unsafe { WaitForSingleObject(h.0, timeout_ms) } {
        WAIT_OBJECT_0 | WAIT_ABANDONED => Ok(InitLock(h)),
        WAIT_TIMEOUT => Err(Error::new(
            ErrorKind::Timeout,
            format!(
                "segment {name} is still being initialised by another process after {timeout_ms} \
                 ms; if that process is stuck, stop it"
            ),
        )),
        _ => Err(Error::os(
            format!("waiting for segment {name}'s creator"),
            "",
        )),
    }
}

/// Creates the segment `args.name` of kind `spec` (running `init` on its fresh
/// page), or attaches to it if it exists.
pub fn open(
    spec: &Spec,
    args: &OpenArgs<'_>,
    init: super::Initialise<'_>,
) -> Result<(Page, Opened)> {
    validate_name(args.name)?;
    if let Sharing::Group(gid) = args.sharing {
        return Err(Error::windows_lacks(&format!(
            "sharing a segment with a group (gid {gid})"
        )));
    }
    let name = args.name;
    let sa = OwnerOnly::new()
        .map_err(|e| Error::from_io(format!("security descriptor for segment {name}"), &e, ""))?;
    let timeout_ms = args.ready_timeout.as_millis().min(u32::MAX as u128 - 1) as u32;
    let _lock = lock_init(name, &sa, timeout_ms)?;
    let wname = wide(&object_name(name, ""));
    // SAFETY: INVALID_HANDLE_VALUE asks for a pagefile-backed mapping; valid
    // security attributes and a NUL-terminated name.
    let h = unsafe {
        CreateFileMappingW(
            INVALID_HANDLE_VALUE,
            &sa.attrs,
            PAGE_READWRITE,
            0,
            spec.size as u32,
            wname.as_ptr(),
        )
    };
    // SAFETY: reads this thread's last error, set by the call above.
    let last = unsafe { GetLastError() };
    if h.is_null() {
        if last == ERROR_ACCESS_DENIED {
            return Err(denied(name));
        }
        return Err(Error::os(
            format!("CreateFileMappingW for segment {name}"),
            "",
        ));
    }
    let existed = last == ERROR_ALREADY_EXISTS;
    let page = Page::map(Handle(h), name, spec)?;
    let magic = word_at(&page, REC_MAGIC).load(std::sync::atomic::Ordering::Acquire);
    let version = {
        // SAFETY: offset 8 is inside the page and 4-byte aligned.
        unsafe { &*(page.as_ptr().add(REC_VERSION) as *const std::sync::atomic::AtomicU32) }
            .load(std::sync::atomic::Ordering::Acquire)
    };
    if check_identity(spec, magic, version, name)? {
        let state = word_at(&page, REC_STATE).load(std::sync::atomic::Ordering::Acquire);
        match state_code(state) {
            STATE_READY => return Ok((page, Opened::Attached)),
            STATE_EMPTY | STATE_INITIALISING => {}
            _ => {
                // Never made again under the processes that use it: their
                // line would vanish.
                return Err(corrupt(
                    spec,
                    name,
                    format!("its page's state word {state:#x} is invalid"),
                ));
            }
        }
    }
    // Fresh (all zero), or left half made by a creator that died holding the
    // creation mutex (or whose initialisation failed): make it now, from zero.
    let me = crate::os::pid();
    // SAFETY: the view is `spec.size` writable bytes; nobody reads a page that
    // is not ready, and we hold the creation mutex.
    unsafe { std::ptr::write_bytes(page.as_ptr(), 0, spec.size) };
    word_at(&page, REC_STATE).store(state_word(STATE_INITIALISING, me), Release);
    if let Err(e) = init(&page) {
        word_at(&page, REC_STATE).store(STATE_EMPTY, Release);
        return Err(e);
    }
    if !page_is_ready(spec, &page) {
        return Err(corrupt(
            spec,
            name,
            format!(
                "its initialiser left state {:#x}",
                state_code(word_at(&page, REC_STATE).load(std::sync::atomic::Ordering::Acquire))
            ),
        ));
    }
    Ok((
        page,
        if existed {
            Opened::TookOver
        } else {
            Opened::Created
        },
    ))
}

/// Attaches an existing, ready segment without ever creating or initialising
/// one (readers). `Ok(None)`: no object has that name, or it is not ready.
pub fn attach_existing(spec: &Spec, name: &str, sharing: Option<Sharing>) -> Result<Option<Page>> {
    validate_name(name)?;
    if let Some(Sharing::Group(gid)) = sharing {
        return Err(Error::windows_lacks(&format!(
            "sharing a segment with a group (gid {gid})"
        )));
    }
    let Some(h) = open_mapping(name)? else {
        return Ok(None);
    };
    let page = Page::map(h, name, spec)?;
    let magic = word_at(&page, REC_MAGIC).load(std::sync::atomic::Ordering::Acquire);
    // SAFETY: offset 8 is inside the page and 4-byte aligned.
    let version =
        unsafe { &*(page.as_ptr().add(REC_VERSION) as *const std::sync::atomic::AtomicU32) }
            .load(std::sync::atomic::Ordering::Acquire);
    if !check_identity(spec, magic, version, name)? || !page_is_ready(spec, &page) {
        return Ok(None);
    }
    Ok(Some(page))
}

fn open_mapping(name: &str) -> Result<Option<Handle>> {
    let wname = wide(&object_name(name, ""));
    // SAFETY: a NUL-terminated name; failure returns null.
    let h = unsafe { OpenFileMappingW(FILE_MAP_ALL_ACCESS, 0, wname.as_ptr()) };
    if h.is_null() {
        // SAFETY: reads this thread's last error.
        return match unsafe { GetLastError() } {
            ERROR_FILE_NOT_FOUND => Ok(None),
            ERROR_ACCESS_DENIED => Err(denied(name)),
            _ => Err(Error::os(
                format!("OpenFileMappingW for segment {name}"),
                "",
            )),
        };
    }
    Ok(Some(Handle(h)))
}

/// A Windows segment cannot be removed: the kernel deletes it when the last
/// process using it closes it. `Ok(true)` says that processes still hold it
/// (it goes when they exit), `Ok(false)` that there is none.
pub fn unlink(_spec: &Spec, name: &str) -> Result<bool> {
    validate_name(name)?;
    Ok(open_mapping(name)?.is_some())
}

/// The segment's writer-role mutex (see `segment::role`), or `None` when it
/// cannot be made: the process then never takes the writer role.
pub fn role_mutex(name: &str) -> Option<Handle> {
    let sa = OwnerOnly::new().ok()?;
    let wname = wide(&object_name(name, ".role"));
    // SAFETY: valid security attributes and a NUL-terminated name.
    let h = unsafe { CreateMutexW(&sa.attrs, 0, wname.as_ptr()) };
    (!h.is_null()).then_some(Handle(h))
}
