//! The sync datagrams (UDP, little-endian). A request is 24 bytes:
//! `"HRSQ", version u8, 3 zero bytes, seq u64, nonce u64`. A reply is
//! `"HRSP", version u8, 3 zero bytes, seq u64, nonce u64, t1 u64, t2 u64,
//! wall u64, master clock id u64, host length u8, host bytes`.

pub const VERSION: u8 = 1;
pub const REQUEST_LEN: usize = 24;
pub const REPLY_FIXED_LEN: usize = 57;
/// The reply's host name is cut to this many bytes.
pub const MAX_HOST: usize = 255;
/// Byte offset of `t2` in a reply: written last, just before sending.
pub const T2_AT: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub seq: u64,
    pub nonce: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub seq: u64,
    pub nonce: u64,
    pub t1: u64,
    pub t2: u64,
    pub wall: u64,
    pub clock_id: u64,
    pub host: String,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

impl Request {
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[..4].copy_from_slice(b"HRSQ");
        b[4] = VERSION;
        b[8..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.nonce.to_le_bytes());
        b
    }

    /// A request, or `None` for any datagram that is not one (ignored).
    pub fn decode(b: &[u8]) -> Option<Request> {
        (b.len() == REQUEST_LEN && &b[..4] == b"HRSQ" && b[4] == VERSION).then(|| Request {
            seq: u64_at(b, 8),
            nonce: u64_at(b, 16),
        })
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let host = &self.host.as_bytes()[..self.host.len().min(MAX_HOST)];
        let mut b = Vec::with_capacity(REPLY_FIXED_LEN + host.len());
        b.extend_from_slice(b"HRSP");
        b.extend_from_slice(&[VERSION, 0, 0, 0]);
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
        b.push(host.len() as u8);
        b.extend_from_slice(host);
        b
    }

    pub fn decode(b: &[u8]) -> Option<Reply> {
        if b.len() < REPLY_FIXED_LEN || &b[..4] != b"HRSP" || b[4] != VERSION {
            return None;
        }
        let n = b[56] as usize;
        let host = b.get(REPLY_FIXED_LEN..REPLY_FIXED_LEN + n)?;
        Some(Reply {
            seq: u64_at(b, 8),
            nonce: u64_at(b, 16),
            t1: u64_at(b, 24),
            t2: u64_at(b, T2_AT),
            wall: u64_at(b, 40),
            clock_id: u64_at(b, 48),
            host: String::from_utf8_lossy(host).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_round_trip_and_strangers_are_ignored() {
        let q = Request { seq: 7, nonce: 9 };
        assert_eq!(Request::decode(&q.encode()), Some(q));
        let r = Reply {
            seq: 1,
            nonce: 2,
            t1: 3,
            t2: 4,
            wall: 5,
            clock_id: 6,
            host: "master".into(),
        };
        let mut b = r.encode();
        assert_eq!(Reply::decode(&b), Some(r.clone()));
        b[T2_AT..T2_AT + 8].copy_from_slice(&44u64.to_le_bytes());
        assert_eq!(Reply::decode(&b).unwrap().t2, 44);
        assert_eq!(Request::decode(b"HRSQ"), None);
        assert_eq!(Request::decode(&[0u8; REQUEST_LEN]), None);
        assert_eq!(Reply::decode(&b[..b.len() - 1]), None);
        let mut v2 = q.encode();
        v2[4] = 2;
        assert_eq!(Request::decode(&v2), None);
    }
}
