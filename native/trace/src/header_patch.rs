//! Filling in the header field a writer only knows at the end: the maximum
//! number of events on one clock tick (written as "not known" when the file is
//! created, so a file whose writer never closed it says so).

use crate::format::{Header, HEADER_FIXED_LEN};
use hrts_core::{Error, Result};
use std::fs::OpenOptions;
use std::io::Read;
use std::path::Path;

#[cfg(not(windows))]
fn write_all_at(file: &std::fs::File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

/// Windows's positioned write (it moves the file's offset, which nothing
/// here reads after).
#[cfg(windows)]
fn write_all_at(file: &std::fs::File, mut bytes: &[u8], mut at: u64) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, bytes, at)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
        at += n as u64;
    }
    Ok(())
}

/// Writes `most` into the header of the trace file at `path`. A file whose
/// header predates the field (one continued with `TraceWriter::append`) is left
/// as it is. The file is opened anew so that a writer in append mode (whose
/// positioned writes would land at the end) can patch it too.
pub(crate) fn record_max_events(path: &Path, most: u64) -> Result<()> {
    let io = |e: std::io::Error| {
        Error::from_io(
            format!(
                "cannot record the maximum events per tick in trace file {}",
                path.display()
            ),
            &e,
            "check that the file is still there and writable; its records are complete",
        )
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let mut head = vec![0u8; HEADER_FIXED_LEN];
    file.read_exact(&mut head).map_err(io)?;
    let len = Header::encoded_len(&head);
    head.resize(len.max(HEADER_FIXED_LEN), 0);
    file.read_exact(&mut head[HEADER_FIXED_LEN..]).map_err(io)?;
    if let Some(at) = Header::max_events_offset(&head) {
        write_all_at(&file, &most.to_le_bytes(), at as u64).map_err(io)?;
    }
    Ok(())
}
