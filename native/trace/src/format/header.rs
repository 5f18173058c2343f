//! The file header: what converting a file's stamps needs, and where they came from.

use super::bytes::{put_str, put_u16, put_u32, put_u64, Cursor};
use super::{FLAG_GLOBAL, FLAG_TEST_SKEW, FORMAT_VERSION, MAGIC, OLDEST_READ_VERSION};
use crate::clock::ClockInfo;
use hrts_core::{Error, ErrorKind, Result};

/// Bytes before the header's strings.
pub const HEADER_FIXED_LEN: usize = 88;

/// A trace file's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub flags: u32,
    /// Low-order bits of a stamp holding the event counter.
    pub event_bits: u32,
    /// The writing process (0 in a global trace).
    pub pid: u32,
    /// One clock tick is `tick_num / tick_den` nanoseconds: exact, so that a
    /// global trace's sub-nanosecond ticks need no rounding.
    pub tick_num: u64,
    pub tick_den: u64,
    /// Epoch nanoseconds (on the file's clock) of tick 0.
    pub origin_ns: u64,
    /// The clock the stamps came from (a global trace: the master's).
    pub clock: ClockInfo,
    /// Free text naming the writer (program, rank, role).
    pub label: String,
    /// The maximum number of events on one clock tick in the file, counted as
    /// Intel Trace Collector counts it (0: no two events shared a tick). `None`
    /// while the writer has not closed the file, and in files written before the
    /// field existed.
    pub max_events_per_tick: Option<u64>,
}

/// The header field's value for "not known" ([`Header::max_events_per_tick`] `None`).
pub const MAX_EVENTS_UNKNOWN: u64 = u64::MAX;

/// Bytes of the header extension that follows the strings (the maximum
/// events per tick); a header whose length stops before it has none.
pub const HEADER_EXTENSION_LEN: usize = 8;

impl Header {
    pub fn is_global(&self) -> bool {
        self.flags & FLAG_GLOBAL != 0
    }

    /// The nominal clock period of one stamp unit in seconds, as ITC headers
    /// give it: the tick length divided by 2^event_bits. Multiplying a raw
    /// stamp by it is the legacy conversion.
    pub fn nominal_period_s(&self) -> f64 {
        self.tick_num as f64 / self.tick_den as f64 * 1e-9 / (1u64 << self.event_bits) as f64
    }

    /// The clock tick of a stamp (event counter shifted away).
    pub fn tick_of(&self, stamp: u64) -> u64 {
        stamp >> self.event_bits
    }

    /// Nanoseconds from tick 0 to a stamp's tick, exact as a fraction
    /// (numerator over `tick_den`).
    pub fn ns_num(&self, stamp: u64) -> u128 {
        self.tick_of(stamp) as u128 * self.tick_num as u128
    }

    /// Epoch nanoseconds of a local stamp's tick (whole-ns ticks, as local
    /// files have: exact).
    pub fn epoch_ns(&self, stamp: u64) -> u64 {
        let ns = self.ns_num(stamp) / self.tick_den.max(1) as u128;
        (self.origin_ns as u128 + ns).min(u64::MAX as u128) as u64
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_FIXED_LEN + 64);
        out.extend_from_slice(&MAGIC);
        put_u16(&mut out, self.version);
        put_u16(&mut out, 0); // header length, patched below
        let flags = (self.flags & !FLAG_TEST_SKEW)
            | if self.clock.test_skew {
                FLAG_TEST_SKEW
            } else {
                0
            };
        put_u32(&mut out, flags);
        put_u32(&mut out, self.event_bits);
        put_u32(&mut out, self.pid);
        put_u64(&mut out, self.tick_num);
        put_u64(&mut out, self.tick_den);
        put_u64(&mut out, self.origin_ns);
        put_u64(&mut out, self.clock.clock_id);
        put_u64(&mut out, self.clock.frequency_hz);
        put_u64(&mut out, self.clock.calibration_spread_ppb);
        put_u64(&mut out, self.clock.segment_created_ns);
        put_u64(&mut out, self.clock.generation);
        debug_assert_eq!(out.len(), HEADER_FIXED_LEN);
        // Strings are cut so the whole header fits its u16 length.
        let budget = (u16::MAX as usize - HEADER_FIXED_LEN - HEADER_EXTENSION_LEN) / 4 - 2;
        for s in [
            &self.clock.host,
            &self.clock.segment,
            &self.clock.source,
            &self.label,
        ] {
            put_str(&mut out, cut(s, budget));
        }
        put_u64(
            &mut out,
            self.max_events_per_tick.unwrap_or(MAX_EVENTS_UNKNOWN),
        );
        let len = out.len() as u16;
        out[10..12].copy_from_slice(&len.to_le_bytes());
        out
    }

    /// Parses a header from the start of a file. `file_len` tells a file cut
    /// inside its header (Truncated) from one that is not a trace (Foreign).
    pub fn decode(buf: &[u8], what: &str) -> Result<Header> {
        let prefix = buf.len().min(MAGIC.len());
        if buf[..prefix] != MAGIC[..prefix] {
            return Err(Error::new(
                ErrorKind::Foreign,
                format!(
                    "{what} is not an hrts trace file (it does not start with the hrts trace \
                     magic): pass the files `hrts trace record` or a trace writer made"
                ),
            ));
        }
        if buf.len() < 12 {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "{what} ends inside its header ({} bytes): the file was cut short",
                    buf.len()
                ),
            ));
        }
        let mut c = Cursor::new(buf, "the trace header");
        c.take(8)?;
        let version = c.u16()?;
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(Error::new(
                ErrorKind::Version,
                format!(
                    "{what} is trace format version {version}; this hrts reads versions \
                     {OLDEST_READ_VERSION} to {FORMAT_VERSION}: use the hrts that wrote it"
                ),
            ));
        }
        let len = c.u16()? as usize;
        if len < HEADER_FIXED_LEN {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("{what} has a header length of {len} bytes, below the minimum {HEADER_FIXED_LEN}: the file is damaged"),
            ));
        }
        if buf.len() < len {
            return Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "{what} ends inside its header ({} of {len} bytes): the file was cut short",
                    buf.len()
                ),
            ));
        }
        let mut c = Cursor::new(&buf[..len], "the trace header");
        c.take(12)?;
        let flags = c.u32()?;
        let event_bits = c.u32()?;
        let pid = c.u32()?;
        let tick_num = c.u64()?;
        let tick_den = c.u64()?;
        let origin_ns = c.u64()?;
        let clock_id = c.u64()?;
        let frequency_hz = c.u64()?;
        let calibration_spread_ppb = c.u64()?;
        let segment_created_ns = c.u64()?;
        let generation = c.u64()?;
        let host = c.str()?;
        let segment = c.str()?;
        let source = c.str()?;
        let label = c.str()?;
        // The extension after the strings: absent in files that predate it.
        let max_events_per_tick = if c.remaining() >= HEADER_EXTENSION_LEN {
            Some(c.u64()?).filter(|&v| v != MAX_EVENTS_UNKNOWN)
        } else {
            None
        };
        if !(1..=32).contains(&event_bits) || tick_num == 0 || tick_den == 0 {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "{what} has an impossible stamp format ({event_bits} event bits, tick \
                     {tick_num}/{tick_den} ns): the file is damaged"
                ),
            ));
        }
        Ok(Header {
            version,
            flags,
            event_bits,
            pid,
            tick_num,
            tick_den,
            origin_ns,
            clock: ClockInfo {
                host,
                clock_id,
                segment,
                source,
                frequency_hz,
                calibration_spread_ppb,
                segment_created_ns,
                generation,
                test_skew: flags & FLAG_TEST_SKEW != 0,
            },
            label,
            max_events_per_tick,
        })
    }

    /// Where the maximum events per tick lies in an encoded header (`buf` its
    /// bytes), if the header has the field: the writer patches it on close.
    pub fn max_events_offset(buf: &[u8]) -> Option<usize> {
        let len = Header::encoded_len(buf);
        let mut at = HEADER_FIXED_LEN;
        for _ in 0..4 {
            let n = buf.get(at..at + 2)?;
            at += 2 + u16::from_le_bytes([n[0], n[1]]) as usize;
        }
        (at + HEADER_EXTENSION_LEN <= len).then_some(at)
    }

    /// The length the header occupies at the start of its file.
    pub fn encoded_len(buf: &[u8]) -> usize {
        buf.get(10..12)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize)
    }
}

fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Header {
        Header {
            version: FORMAT_VERSION,
            flags: 0,
            event_bits: 13,
            pid: 4242,
            tick_num: 1,
            tick_den: 1,
            origin_ns: 1_700_000_000_123_456_789,
            clock: ClockInfo {
                host: "node-ä".into(),
                clock_id: 0xfeed,
                segment: "/hrts-0".into(),
                source: "tsc".into(),
                frequency_hz: 2_445_000_000,
                calibration_spread_ppb: 12,
                segment_created_ns: 1_699_999_999_000_000_000,
                generation: 3,
                test_skew: true,
            },
            label: "rank 0".into(),
            max_events_per_tick: Some(3),
        }
    }

    #[test]
    fn header_round_trips_and_converts() {
        let h = sample();
        let b = h.encode();
        assert_eq!(Header::encoded_len(&b), b.len());
        let back = Header::decode(&b, "t").unwrap();
        assert_eq!(back.flags, FLAG_TEST_SKEW);
        assert_eq!(
            Header {
                flags: 0,
                ..back.clone()
            },
            h
        );
        // ITC's two conversions: exact via the tick, legacy via the period.
        let stamp = (1_500u64 << 13) | 7;
        assert_eq!(back.epoch_ns(stamp), h.origin_ns + 1_500);
        let legacy = stamp as f64 * back.nominal_period_s();
        assert!((legacy - 1.5e-6).abs() < 1e-9, "{legacy}");
    }

    #[test]
    fn the_max_events_field_round_trips_and_old_headers_read_without_it() {
        let mut h = sample();
        for v in [Some(0), Some(8191), None] {
            h.max_events_per_tick = v;
            let b = h.encode();
            assert_eq!(Header::decode(&b, "t").unwrap().max_events_per_tick, v);
            let at = Header::max_events_offset(&b).unwrap();
            assert_eq!(at + HEADER_EXTENSION_LEN, b.len());
        }
        // A header as the format's first writers made it: the strings end it.
        h.max_events_per_tick = Some(5);
        let mut old = h.encode();
        old.truncate(old.len() - HEADER_EXTENSION_LEN);
        let len = old.len() as u16;
        old[10..12].copy_from_slice(&len.to_le_bytes());
        let back = Header::decode(&old, "old").unwrap();
        assert_eq!(back.max_events_per_tick, None);
        assert_eq!(back.label, h.label);
        assert_eq!(Header::max_events_offset(&old), None);
        // Fields a later writer adds after it are skipped.
        let mut newer = h.encode();
        newer.extend_from_slice(&[9; 16]);
        let len = newer.len() as u16;
        newer[10..12].copy_from_slice(&len.to_le_bytes());
        assert_eq!(
            Header::decode(&newer, "newer").unwrap().max_events_per_tick,
            Some(5)
        );
    }

    #[test]
    fn foreign_versioned_and_cut_headers_are_told_apart() {
        let b = sample().encode();
        let kind = |buf: &[u8]| Header::decode(buf, "f").unwrap_err().kind();
        assert_eq!(kind(b"#!/bin/sh\necho hello\n"), ErrorKind::Foreign);
        assert_eq!(kind(b""), ErrorKind::Truncated);
        assert_eq!(kind(&b[..5]), ErrorKind::Truncated);
        assert_eq!(kind(&b[..40]), ErrorKind::Truncated);
        let mut v3 = b.clone();
        v3[8] = 3;
        assert_eq!(kind(&v3), ErrorKind::Version);
        let mut v0 = b.clone();
        v0[8] = 0;
        assert_eq!(kind(&v0), ErrorKind::Version);
        let mut v1 = b.clone();
        v1[8] = 1;
        assert_eq!(Header::decode(&v1, "v1").unwrap().version, 1);
        let mut bits = b.clone();
        bits[16] = 0;
        assert_eq!(kind(&bits), ErrorKind::Corrupt);
        let mut short = b.clone();
        short[10..12].copy_from_slice(&10u16.to_le_bytes());
        assert_eq!(kind(&short), ErrorKind::Corrupt);
    }
}
