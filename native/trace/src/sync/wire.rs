//! The sync datagrams (UDP, little-endian) and the run's key.
//!
//! A request is `"HRSQ", version u8, kind u8, 2 zero bytes, seq u64, nonce
//! u64, mac u64`, then zero bytes up to its length: [`REQUEST_LEN`] (64) for a
//! plain exchange (kind 0), [`HOST_REQUEST_LEN`] (320) for one that also asks
//! for the master's host name (kind 1). `mac` is SipHash-2-4 of the first 24
//! bytes under the run's key ([`SyncKey`]).
//!
//! A reply is `"HRSP", version u8, kind u8, 2 zero bytes, seq u64, nonce u64,
//! t1 u64, t2 u64, wall u64, master clock id u64`, for kind 1 also `host
//! length u8, host bytes`, then `mac u64`: SipHash-2-4 of all the bytes before
//! it under the same key. A reply is never longer than the request it answers
//! (64 bytes for kind 0, at most 320 for kind 1), so the master cannot be
//! used to amplify traffic towards a forged source address.

use hrts_core::{Error, ErrorKind, Result};
use std::sync::OnceLock;

pub const VERSION: u8 = 2;
/// A plain exchange request (kind 0), and its reply.
pub const REQUEST_LEN: usize = 64;
/// A request that also asks for the master's host name (kind 1).
pub const HOST_REQUEST_LEN: usize = 320;
/// A reply without the host name.
pub const REPLY_FIXED_LEN: usize = 64;
/// The reply's host name is cut to this many bytes.
pub const MAX_HOST: usize = 255;
/// Byte offset of `t2` in a reply: written last, just before sealing.
pub const T2_AT: usize = 32;
/// The environment variable that holds the run's key (32 hex digits).
pub const ENV_KEY: &str = "HRTS_SYNC_KEY";

const KIND_EXCHANGE: u8 = 0;
const KIND_HOST: u8 = 1;
const BODY: usize = 24;

/// The run's key: 16 bytes that the master and its clients share, written
/// as 32 hex digits. Requests without a valid code under it get no answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SyncKey([u8; 16]);

impl std::fmt::Debug for SyncKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SyncKey(..)")
    }
}

impl std::fmt::Display for SyncKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl SyncKey {
    pub const fn from_bytes(bytes: [u8; 16]) -> SyncKey {
        SyncKey(bytes)
    }

    /// 32 hex digits.
    pub fn parse(text: &str) -> Result<SyncKey> {
        let t = text.trim();
        let bad = || {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{ENV_KEY}: a sync key is 32 hex digits (16 bytes), not {} characters; use \
                     the key `hrts sync serve` printed",
                    t.len()
                ),
            )
        };
        if t.len() != 32 || !t.is_ascii() {
            return Err(bad());
        }
        let mut k = [0u8; 16];
        for (i, b) in k.iter_mut().enumerate() {
            *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(SyncKey(k))
    }

    /// A fresh key from the kernel's random source.
    pub fn random() -> Result<SyncKey> {
        use std::io::Read;
        let mut k = [0u8; 16];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut k))
            .map_err(|e| {
                Error::from_io(
                    "a sync key from /dev/urandom",
                    &e,
                    "set HRTS_SYNC_KEY to 32 hex digits instead",
                )
            })?;
        Ok(SyncKey(k))
    }

    /// `HRTS_SYNC_KEY` when set.
    pub fn from_env() -> Result<Option<SyncKey>> {
        match std::env::var(ENV_KEY) {
            Ok(v) => SyncKey::parse(&v).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => SyncKey::parse("-").map(Some),
        }
    }

    /// `HRTS_SYNC_KEY` when set, else a random key of this process (the same
    /// for every master and client in it).
    pub fn current() -> Result<SyncKey> {
        static OWN: OnceLock<SyncKey> = OnceLock::new();
        if let Some(k) = SyncKey::from_env()? {
            return Ok(k);
        }
        if let Some(k) = OWN.get() {
            return Ok(*k);
        }
        let k = SyncKey::random()?;
        Ok(*OWN.get_or_init(|| k))
    }

    /// The message authentication code of `data`: SipHash-2-4 under this key.
    pub fn mac(&self, data: &[u8]) -> u64 {
        siphash24(&self.0, data)
    }
}

/// SipHash-2-4 (Aumasson and Bernstein) of `data` under `key`, from the
/// `siphasher` crate.
pub fn siphash24(key: &[u8; 16], data: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = siphasher::sip::SipHasher24::new_with_key(key);
    h.write(data);
    h.finish()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub seq: u64,
    pub nonce: u64,
    /// Whether the master's host name is asked for (the longer request).
    pub host: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub seq: u64,
    pub nonce: u64,
    pub t1: u64,
    pub t2: u64,
    pub wall: u64,
    pub clock_id: u64,
    /// The master's host name: only in answer to a host request.
    pub host: Option<String>,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

impl Request {
    /// The datagram: 64 bytes, or 320 for a host request.
    pub fn encode(&self, key: &SyncKey) -> Vec<u8> {
        let mut b = vec![
            0u8;
            if self.host {
                HOST_REQUEST_LEN
            } else {
                REQUEST_LEN
            }
        ];
        b[..4].copy_from_slice(b"HRSQ");
        b[4] = VERSION;
        b[5] = if self.host { KIND_HOST } else { KIND_EXCHANGE };
        b[8..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.nonce.to_le_bytes());
        let mac = key.mac(&b[..BODY]);
        b[BODY..BODY + 8].copy_from_slice(&mac.to_le_bytes());
        b
    }

    /// Whether `b` has the exact shape of a request (length, magic, version,
    /// kind, zero padding); says nothing about its key.
    pub fn well_formed(b: &[u8]) -> bool {
        let len = match b.get(5) {
            Some(&KIND_EXCHANGE) => REQUEST_LEN,
            Some(&KIND_HOST) => HOST_REQUEST_LEN,
            _ => return false,
        };
        b.len() == len
            && &b[..4] == b"HRSQ"
            && b[4] == VERSION
            && b[6..8] == [0, 0]
            && b[BODY + 8..].iter().all(|&x| x == 0)
    }

    /// A request made with `key`, or `None` for any datagram that is not one.
    pub fn decode(b: &[u8], key: &SyncKey) -> Option<Request> {
        (Request::well_formed(b) && key.mac(&b[..BODY]) == u64_at(b, BODY)).then(|| Request {
            seq: u64_at(b, 8),
            nonce: u64_at(b, 16),
            host: b[5] == KIND_HOST,
        })
    }
}

impl Reply {
    /// The datagram with its code left zero: write `t2` at [`T2_AT`], then
    /// [`Reply::seal`] it.
    pub fn encode_unsealed(&self) -> Vec<u8> {
        let host = self
            .host
            .as_deref()
            .map(|h| &h.as_bytes()[..h.len().min(MAX_HOST)]);
        let mut b = Vec::with_capacity(REPLY_FIXED_LEN + 1 + MAX_HOST);
        b.extend_from_slice(b"HRSP");
        b.extend_from_slice(&[VERSION, host.map_or(KIND_EXCHANGE, |_| KIND_HOST), 0, 0]);
        for v in [
            self.seq,
            self.nonce,
            self.t1,
            self.t2,
            self.wall,
            self.clock_id,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        if let Some(h) = host {
            b.push(h.len() as u8);
            b.extend_from_slice(h);
        }
        b.extend_from_slice(&[0; 8]);
        b
    }

    /// Writes the code of everything before the last 8 bytes into them.
    pub fn seal(b: &mut [u8], key: &SyncKey) {
        let at = b.len() - 8;
        let mac = key.mac(&b[..at]);
        b[at..].copy_from_slice(&mac.to_le_bytes());
    }

    pub fn encode(&self, key: &SyncKey) -> Vec<u8> {
        let mut b = self.encode_unsealed();
        Reply::seal(&mut b, key);
        b
    }

    /// A reply sealed with `key`, or `None`.
    pub fn decode(b: &[u8], key: &SyncKey) -> Option<Reply> {
        if b.len() < REPLY_FIXED_LEN || &b[..4] != b"HRSP" || b[4] != VERSION {
            return None;
        }
        let host = match b[5] {
            KIND_EXCHANGE if b.len() == REPLY_FIXED_LEN => None,
            KIND_HOST if b.len() > REPLY_FIXED_LEN && b[56] as usize == b.len() - 65 => {
                Some(String::from_utf8_lossy(&b[57..b.len() - 8]).into_owned())
            }
            _ => return None,
        };
        let at = b.len() - 8;
        if key.mac(&b[..at]) != u64_at(b, at) {
            return None;
        }
        Some(Reply {
            seq: u64_at(b, 8),
            nonce: u64_at(b, 16),
            t1: u64_at(b, 24),
            t2: u64_at(b, T2_AT),
            wall: u64_at(b, 40),
            clock_id: u64_at(b, 48),
            host,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siphash_matches_the_reference_vectors() {
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let msg: Vec<u8> = (0..15).collect();
        assert_eq!(siphash24(&key, &[]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(&key, &msg[..1]), 0x74f8_39c5_93dc_67fd);
        assert_eq!(siphash24(&key, &msg[..8]), 0x93f5_f579_9a93_2462);
        assert_eq!(siphash24(&key, &msg), 0xa129_ca61_49be_45e5);
    }

    #[test]
    fn datagrams_round_trip_and_strangers_are_ignored() {
        let key = SyncKey::parse("000102030405060708090a0b0c0d0e0f").unwrap();
        assert_eq!(key.to_string(), "000102030405060708090a0b0c0d0e0f");
        let other = SyncKey::from_bytes([7; 16]);
        let q = Request {
            seq: 7,
            nonce: 9,
            host: false,
        };
        let b = q.encode(&key);
        assert_eq!(b.len(), REQUEST_LEN);
        assert_eq!(Request::decode(&b, &key), Some(q));
        assert_eq!(Request::decode(&b, &other), None);
        let h = Request { host: true, ..q };
        assert_eq!(h.encode(&key).len(), HOST_REQUEST_LEN);
        assert_eq!(Request::decode(&h.encode(&key), &key), Some(h));
        let r = Reply {
            seq: 1,
            nonce: 2,
            t1: 3,
            t2: 4,
            wall: 5,
            clock_id: 6,
            host: None,
        };
        let mut b = r.encode(&key);
        assert_eq!(b.len(), REPLY_FIXED_LEN);
        assert_eq!(Reply::decode(&b, &key), Some(r.clone()));
        assert_eq!(Reply::decode(&b, &other), None);
        b[T2_AT..T2_AT + 8].copy_from_slice(&44u64.to_le_bytes());
        assert_eq!(Reply::decode(&b, &key), None, "changed after sealing");
        Reply::seal(&mut b, &key);
        assert_eq!(Reply::decode(&b, &key).unwrap().t2, 44);
        let long = Reply {
            host: Some("m".repeat(400)),
            ..r
        };
        let b = long.encode(&key);
        assert_eq!(b.len(), HOST_REQUEST_LEN);
        assert_eq!(
            Reply::decode(&b, &key).unwrap().host.unwrap().len(),
            MAX_HOST
        );
        // Wrong size, version, kind or padding: not a request.
        let mut v = q.encode(&key);
        assert!(!Request::well_formed(&v[..REQUEST_LEN - 1]));
        v[4] = 1;
        assert!(!Request::well_formed(&v));
        let mut v = q.encode(&key);
        v[40] = 1;
        assert!(!Request::well_formed(&v));
        let mut v = q.encode(&key);
        v[5] = 1;
        assert!(!Request::well_formed(&v));
        assert!(!Request::well_formed(b"HRSQ"));
        assert!(SyncKey::parse("00").is_err());
        assert!(SyncKey::parse(&"g".repeat(32)).is_err());
    }
}
