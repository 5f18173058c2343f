//! IBMTS compatibility: the packed logic version, the copyright line and the
//! success status that IBM's High Resolution Time Stamp Facility reported.

use crate::segment::layout::LAYOUT_VERSION;

/// Packs a.b.c.d into 16 bits each, as IBMTS did (1.0.0.5 = 0x0001000000000005).
pub const fn pack_version(a: u16, b: u16, c: u16, d: u16) -> u64 {
    (a as u64) << 48 | (b as u64) << 32 | (c as u64) << 16 | d as u64
}

/// "a.b.c.d" of a packed version.
pub fn version_string(v: u64) -> String {
    format!(
        "{}.{}.{}.{}",
        v >> 48,
        (v >> 32) & 0xffff,
        (v >> 16) & 0xffff,
        v & 0xffff
    )
}

const fn parse_u16(s: &str) -> u16 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v: u16 = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u16;
        i += 1;
    }
    v
}

/// The library's logic version: the crate's major.minor.patch and the segment
/// layout version as the fourth part.
pub const LOGIC_VERSION: u64 = pack_version(
    parse_u16(env!("CARGO_PKG_VERSION_MAJOR")),
    parse_u16(env!("CARGO_PKG_VERSION_MINOR")),
    parse_u16(env!("CARGO_PKG_VERSION_PATCH")),
    LAYOUT_VERSION as u16,
);

/// IBMTS's success status.
pub const SUCCESS: i32 = 0;

/// Copyright line reported by `getCopyright`.
pub const COPYRIGHT: &str = "hrts: (c) the hrts authors, Apache-2.0. Inspired by IBM's High Resolution Time Stamp Facility.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_packs_like_ibmts() {
        assert_eq!(pack_version(1, 0, 0, 5), 0x0001_0000_0000_0005);
        assert_eq!(pack_version(1, 0, 0, 5), 281_474_976_710_661);
        assert_eq!(version_string(0x0001_0000_0000_0005), "1.0.0.5");
        assert_eq!(
            version_string(LOGIC_VERSION),
            format!("{}.{LAYOUT_VERSION}", env!("CARGO_PKG_VERSION"))
        );
    }
}
