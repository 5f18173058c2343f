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
//!
//! The code follows that split: `name` (the POSIX object, its lock and its
//! record), `page` (the System V page: made, found, attached, removed when
//! gone) and, here, what both obey (who may use them) and removing a segment,
//! which takes both.

mod name;
mod page;

pub use name::{
    check_owner_and_mode, create_exclusive, fstat, open_existing, read_record, set_size,
    write_record, write_state, Fd, NameLock, Record, REC_HEADER_SIZE, REC_LEN, REC_MAGIC,
    REC_SEGMENT_SIZE, REC_STATE, REC_VERSION,
};
pub use page::{remove_gone, remove_page, IpcNamespace, Page, PageId, TAG_LEN};

use super::Spec;
pub use super::{validate_name, Sharing};
use crate::error::{Error, ErrorKind, Result};
use name::unlink_name;
use page::{carries_tag, ipc_stat, key_holder};
use std::ffi::CString;

impl Sharing {
    pub fn mode(self) -> libc::mode_t {
        match self {
            Sharing::Private => 0o600,
            Sharing::Group(_) => 0o660,
        }
    }
}

pub struct Stat {
    pub size: u64,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

/// What is wrong with an object's owner and mode for `sharing`, if anything.
fn owner_and_mode_problem(spec: &Spec, st: &Stat, sharing: Sharing) -> Option<String> {
    let euid = crate::os::euid();
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
