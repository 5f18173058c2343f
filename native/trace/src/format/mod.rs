//! The trace file format (version 2), byte for byte in `native/trace/FORMAT.md`.
//!
//! A file is a header followed by records. Every integer is little-endian.
//! Each record is `type: u8, length: u32, body[length]`; the file ends with an
//! END record that counts the records before it, so a file cut short (a
//! crashed writer, a partial copy) is told apart from a complete one.

mod header;
mod reader;
mod record;

pub use header::{Header, HEADER_EXTENSION_LEN, HEADER_FIXED_LEN, MAX_EVENTS_UNKNOWN};
pub use reader::{read_file, ReadOptions, TraceFile};
pub use record::{
    encode_event, map_flag_names, BoundRecord, Event, EventKind, GlobalEvent, ProcRecord, Record,
    RunRecord, SyncRecord, MAP_BOUNDS, MAP_DISAGREEMENT, MAP_EXTRAPOLATED, MAP_INCOMPLETE,
    MAP_MASTER, MAP_UNSYNCED,
};

/// The first 8 bytes of every hrts trace file.
pub const MAGIC: [u8; 8] = *b"HRTSTRC\0";
/// The format version this crate writes; it reads every version from
/// [`OLDEST_READ_VERSION`] up (version 2 added the BOUND record).
pub const FORMAT_VERSION: u16 = 2;
/// The oldest format version this crate reads.
pub const OLDEST_READ_VERSION: u16 = 1;
/// Largest record body a reader accepts: larger lengths are damage, not data.
pub const MAX_RECORD_LEN: u32 = 16 << 20;
/// Largest payload a writer accepts for one event.
pub const MAX_PAYLOAD_LEN: usize = 1 << 20;

/// Header flag: the file is a merged, global trace.
pub const FLAG_GLOBAL: u32 = 1;
/// Header flag: the local clock was skewed by `HRTS_TEST_CLOCK_SKEW` (tests only).
pub const FLAG_TEST_SKEW: u32 = 2;

/// Little-endian encoding helpers shared by the header and the records.
pub(crate) mod bytes {
    use hrts_core::{Error, ErrorKind, Result};

    pub fn put_u16(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn put_u32(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn put_u64(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn put_f64(out: &mut Vec<u8>, v: f64) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    /// A string of at most 65535 bytes, u16 length first (longer ones are cut
    /// at a character boundary: names and labels, never data).
    pub fn put_str(out: &mut Vec<u8>, s: &str) {
        let mut end = s.len().min(u16::MAX as usize);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        put_u16(out, end as u16);
        out.extend_from_slice(&s.as_bytes()[..end]);
    }

    /// Reads fields off a byte slice; running out is a `Corrupt` error naming
    /// `what` (the record or header being read).
    pub struct Cursor<'a> {
        buf: &'a [u8],
        pos: usize,
        what: &'static str,
    }

    impl<'a> Cursor<'a> {
        pub fn new(buf: &'a [u8], what: &'static str) -> Cursor<'a> {
            Cursor { buf, pos: 0, what }
        }
        pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
            let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
            let Some(end) = end else {
                return Err(Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "{} is shorter than its fields ({} bytes, needs {} more at offset {}): \
                         the trace file is damaged",
                        self.what,
                        self.buf.len(),
                        n,
                        self.pos
                    ),
                ));
            };
            let s = &self.buf[self.pos..end];
            self.pos = end;
            Ok(s)
        }
        pub fn u8(&mut self) -> Result<u8> {
            Ok(self.take(1)?[0])
        }
        pub fn u16(&mut self) -> Result<u16> {
            Ok(u16::from_le_bytes(
                self.take(2)?.try_into().unwrap_or([0; 2]),
            ))
        }
        pub fn u32(&mut self) -> Result<u32> {
            Ok(u32::from_le_bytes(
                self.take(4)?.try_into().unwrap_or([0; 4]),
            ))
        }
        pub fn u64(&mut self) -> Result<u64> {
            Ok(u64::from_le_bytes(
                self.take(8)?.try_into().unwrap_or([0; 8]),
            ))
        }
        pub fn f64(&mut self) -> Result<f64> {
            Ok(f64::from_bits(self.u64()?))
        }
        pub fn str(&mut self) -> Result<String> {
            let n = self.u16()? as usize;
            let b = self.take(n)?;
            String::from_utf8(b.to_vec()).map_err(|_| {
                Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "{} holds a name that is not UTF-8: the trace file is damaged",
                        self.what
                    ),
                )
            })
        }
        pub fn rest(&mut self) -> &'a [u8] {
            let s = &self.buf[self.pos..];
            self.pos = self.buf.len();
            s
        }
        pub fn remaining(&self) -> usize {
            self.buf.len() - self.pos
        }
    }
}
