//! Opening the statistics segment (on hrts-core's storage: the same name, page,
//! creation race and refusals as the time segment) and addressing its words.

use super::layout::{self, header, SPEC};
use hrts_core::storage::{self, shm, OpenArgs, Page, STATE_READY};
use hrts_core::{Error, ErrorKind, Result};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::time::Duration;

/// An open statistics segment.
pub struct StatsSegment {
    page: Page,
    name: String,
}

impl std::fmt::Debug for StatsSegment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsSegment")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// How long a writer waits for another process that is creating the segment.
const READY_TIMEOUT: Duration = Duration::from_secs(5);

impl StatsSegment {
    /// Creates the segment or attaches to it (writers).
    pub fn open(cfg: &super::SharedConfig) -> Result<StatsSegment> {
        let args = OpenArgs {
            name: &cfg.name,
            sharing: cfg.sharing,
            ready_timeout: READY_TIMEOUT,
        };
        let (page, _) = storage::open(&SPEC, &args, &initialise)?;
        StatsSegment::checked(page, &cfg.name)
    }

    /// Attaches to an existing segment (readers); `None` if there is none, that
    /// is, no process has published statistics under that name. A segment
    /// shared with a group is attached as such.
    pub fn attach(name: &str) -> Result<Option<StatsSegment>> {
        match storage::attach_existing(&SPEC, name, None)? {
            Some(page) => StatsSegment::checked(page, name).map(Some),
            None => Ok(None),
        }
    }

    /// Removes the segment (name and page); `false` if there was none.
    /// Processes attached keep their page until they detach.
    pub fn unlink(name: &str) -> Result<bool> {
        storage::unlink(&SPEC, name)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A ready page whose header does not describe this layout is refused: its
    /// tables would not be where the header says.
    pub(super) fn checked(page: Page, name: &str) -> Result<StatsSegment> {
        let seg = StatsSegment {
            page,
            name: name.to_string(),
        };
        let expect = [
            (
                shm::REC_SEGMENT_SIZE / 8,
                layout::SEGMENT_SIZE as u64,
                "segment size",
            ),
            (
                header::PROCESS_SLOTS,
                layout::PROCESS_SLOTS as u64,
                "process slots",
            ),
            (
                header::INSTANCE_SLOTS,
                layout::INSTANCE_SLOTS as u64,
                "instance slots",
            ),
            (header::CELLS, layout::CELLS as u64, "cells"),
            (header::CELL_WORDS, layout::CELL_WORDS as u64, "cell words"),
        ];
        for (word, want, what) in expect {
            let got = seg.header(word).load(Relaxed);
            if got != want {
                return Err(storage::corrupt(
                    &SPEC,
                    name,
                    format!("its header gives {got} {what}, this layout has {want}"),
                ));
            }
        }
        if !storage::page_is_ready(&SPEC, &seg.page) {
            return Err(storage::corrupt(
                &SPEC,
                name,
                "its page is not marked ready".into(),
            ));
        }
        Ok(seg)
    }

    /// Word `i` of the page.
    fn word(&self, i: usize) -> &AtomicU64 {
        word_of(&self.page, i)
    }

    pub(crate) fn header(&self, i: usize) -> &AtomicU64 {
        self.word(i)
    }

    /// Word `w` of process slot `slot`.
    pub(crate) fn process(&self, slot: usize, w: usize) -> &AtomicU64 {
        debug_assert!(slot < layout::PROCESS_SLOTS && w < layout::PROCESS_SLOT_WORDS);
        self.word(layout::PROCESSES_OFFSET / 8 + slot * layout::PROCESS_SLOT_WORDS + w)
    }

    /// Word `w` of shared timer instance slot `slot`.
    pub(crate) fn instance(&self, slot: usize, w: usize) -> &AtomicU64 {
        debug_assert!(slot < layout::INSTANCE_SLOTS && w < layout::INSTANCE_SLOT_WORDS);
        self.word(layout::INSTANCES_OFFSET / 8 + slot * layout::INSTANCE_SLOT_WORDS + w)
    }

    /// Word `w` of cell `cell`.
    pub(crate) fn cell(&self, cell: usize, w: usize) -> &AtomicU64 {
        debug_assert!(cell < layout::CELLS && w < layout::CELL_WORDS);
        self.word(layout::CELLS_OFFSET / 8 + cell * layout::CELL_WORDS + w)
    }

    /// Test hook: the whole page as words, for tests that damage it on purpose.
    #[cfg(test)]
    pub(crate) fn page_words(&self) -> &[AtomicU64] {
        // SAFETY: the page is SEGMENT_SIZE bytes (checked at attach), page-aligned
        // and attached while `self` lives; any bit pattern is a valid AtomicU64.
        unsafe {
            std::slice::from_raw_parts(
                self.page.as_ptr() as *const AtomicU64,
                layout::SEGMENT_SIZE / 8,
            )
        }
    }
}

fn word_of(page: &Page, i: usize) -> &AtomicU64 {
    assert!(i < layout::SEGMENT_SIZE / 8, "word {i} is outside the page");
    // SAFETY: the page is SEGMENT_SIZE bytes (the storage layer checks the size
    // of every page it attaches for this Spec), page-aligned, and attached while
    // borrowed; `i` is in range (asserted); any bit pattern is a valid AtomicU64
    // and every access is atomic.
    unsafe { &*(page.as_ptr() as *const AtomicU64).add(i) }
}

/// Writes a fresh (zeroed) page's header and marks it ready.
pub(super) fn initialise(page: &Page) -> Result<()> {
    if page.size() != layout::SEGMENT_SIZE {
        return Err(Error::new(
            ErrorKind::Truncated,
            format!("a new statistics page has {} bytes", page.size()),
        ));
    }
    let w = |i: usize| word_of(page, i);
    let mut version = [0u8; 8];
    version[..4].copy_from_slice(&layout::LAYOUT_VERSION.to_ne_bytes());
    version[4..].copy_from_slice(&(layout::HEADER_BYTES as u32).to_ne_bytes());
    w(shm::REC_VERSION / 8).store(u64::from_ne_bytes(version), Relaxed);
    w(shm::REC_SEGMENT_SIZE / 8).store(layout::SEGMENT_SIZE as u64, Relaxed);
    w(header::PROCESS_SLOTS).store(layout::PROCESS_SLOTS as u64, Relaxed);
    w(header::INSTANCE_SLOTS).store(layout::INSTANCE_SLOTS as u64, Relaxed);
    w(header::CELLS).store(layout::CELLS as u64, Relaxed);
    w(header::CELL_WORDS).store(layout::CELL_WORDS as u64, Relaxed);
    w(shm::REC_MAGIC / 8).store(layout::MAGIC, Release);
    w(shm::REC_STATE / 8).store(
        storage::state_word(STATE_READY, hrts_core::process::pid()),
        Release,
    );
    Ok(())
}
