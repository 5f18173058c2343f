//! The master's side: answer every request of the run with its clock, until
//! idle. Only requests that carry the run's key (and, with a peer list, come
//! from a listed address) get an answer, never longer than the request, and
//! at most [`Access::rate`] a second per source address.

use super::wire::{Reply, Request, SyncKey, T2_AT};
use crate::clock::{wall_ns, Clock};
use hrts_core::{Error, ErrorKind, Result};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, UdpSocket};
use std::time::{Duration, Instant};

/// When the master stops: it always does, by itself.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Stop after this long without a request (after the first one).
    pub idle_exit: Duration,
    /// Stop after this long in all, whatever happens.
    pub max_duration: Duration,
    /// Stop after answering this many requests.
    pub max_exchanges: u64,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            idle_exit: Duration::from_secs(30),
            max_duration: Duration::from_secs(3600),
            max_exchanges: 10_000_000,
        }
    }
}

/// Default answers per second per source address: one largest round
/// ([`super::client::MAX_EXCHANGES`]) a second.
pub const DEFAULT_RATE: u32 = 10_000;
/// Most source addresses the rate limit keeps track of at once.
pub const MAX_SOURCES: usize = 4096;

/// Who gets an answer.
#[derive(Clone, Debug)]
pub struct Access {
    /// The run's key: a request must carry its code.
    pub key: SyncKey,
    /// When not empty, only these source addresses (or networks) are answered.
    pub peers: Vec<Peer>,
    /// Answers per second per source address (also the burst: one second's
    /// worth); requests beyond it get nothing.
    pub rate: u32,
}

impl Access {
    pub fn new(key: SyncKey) -> Access {
        Access {
            key,
            peers: Vec::new(),
            rate: DEFAULT_RATE,
        }
    }

    fn admits(&self, ip: IpAddr) -> bool {
        self.peers.is_empty() || self.peers.iter().any(|p| p.contains(ip))
    }
}

/// An address, or a network as ADDRESS/BITS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub addr: IpAddr,
    pub bits: u8,
}

impl Peer {
    /// `10.0.0.7`, `10.0.0.0/24`, `fd00::1`, `fd00::/64`.
    pub fn parse(text: &str) -> Result<Peer> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("sync peer {text:?} {why}: write an address or ADDRESS/BITS, e.g. 10.0.0.7 or 10.0.0.0/24"),
            )
        };
        let (a, bits) = match text.trim().split_once('/') {
            Some((a, b)) => (
                a,
                Some(
                    b.parse::<u8>()
                        .map_err(|_| bad("has no valid prefix length"))?,
                ),
            ),
            None => (text.trim(), None),
        };
        let addr: IpAddr = a.parse().map_err(|_| bad("is not an IP address"))?;
        let addr = addr.to_canonical();
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = bits.unwrap_or(max);
        if bits > max {
            return Err(bad("has a prefix longer than the address"));
        }
        Ok(Peer { addr, bits })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let keep = |len: u32, v: u128| -> u128 {
            if self.bits == 0 {
                0
            } else {
                v >> (len - self.bits as u32)
            }
        };
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(p), IpAddr::V4(a)) => {
                keep(32, u32::from(p) as u128) == keep(32, u32::from(a) as u128)
            }
            (IpAddr::V6(p), IpAddr::V6(a)) => keep(128, u128::from(p)) == keep(128, u128::from(a)),
            _ => false,
        }
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

/// Token buckets per source address.
struct Limiter {
    rate: f64,
    buckets: HashMap<IpAddr, (f64, Instant)>,
}

impl Limiter {
    fn allow(&mut self, ip: IpAddr, now: Instant) -> bool {
        let rate = self.rate;
        if !self.buckets.contains_key(&ip) && self.buckets.len() >= MAX_SOURCES {
            // Forget the sources whose bucket has refilled: they are idle.
            self.buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < rate
            });
            if self.buckets.len() >= MAX_SOURCES {
                return false;
            }
        }
        let (tokens, at) = self.buckets.entry(ip).or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(rate);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What the master saw: the run as its gettimeofday measured it, from the
/// first answered exchange to the last.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServeSummary {
    pub exchanges: u64,
    /// Distinct clients (by their per-round nonce).
    pub rounds: u64,
    /// Datagrams that were not sync requests (size, version, form).
    pub ignored: u64,
    /// Requests without the run's key or from an address not in the peer list.
    pub refused: u64,
    /// Requests over the rate limit of their source address.
    pub limited: u64,
    pub first_wall_ns: u64,
    pub last_wall_ns: u64,
    pub first_clock_ns: u64,
    pub last_clock_ns: u64,
}

impl ServeSummary {
    /// The run's length by the master's gettimeofday.
    pub fn run_wall_ns(&self) -> u64 {
        self.last_wall_ns - self.first_wall_ns
    }
}

/// Answers sync requests on `socket` (see [`bind`]: binding first lets the
/// caller announce the address before serving) with `clock`'s readings, for
/// clients of this process or with its `HRTS_SYNC_KEY` ([`SyncKey::current`]).
pub fn serve(
    socket: &UdpSocket,
    clock: &dyn Clock,
    host: &str,
    clock_id: u64,
    opts: ServeOptions,
) -> Result<ServeSummary> {
    let access = Access::new(SyncKey::current()?);
    serve_with(socket, clock, host, clock_id, opts, &access)
}

/// [`serve`] with the key, peers and rate limit of `access`.
pub fn serve_with(
    socket: &UdpSocket,
    clock: &dyn Clock,
    host: &str,
    clock_id: u64,
    opts: ServeOptions,
    access: &Access,
) -> Result<ServeSummary> {
    let started = Instant::now();
    let mut last_request: Option<Instant> = None;
    let mut summary = ServeSummary::default();
    let mut nonces = HashSet::new();
    let mut limiter = Limiter {
        rate: access.rate.max(1) as f64,
        buckets: HashMap::new(),
    };
    let mut buf = [0u8; 1024];
    let io = |what: &str, e: std::io::Error| {
        Error::from_io(
            format!("sync master: {what}"),
            &e,
            "the master stopped; restart `hrts sync serve`",
        )
    };
    while summary.exchanges < opts.max_exchanges {
        let now = Instant::now();
        let deadline = match last_request {
            None => started + opts.max_duration,
            Some(t) => (t + opts.idle_exit).min(started + opts.max_duration),
        };
        let Some(wait) = deadline
            .checked_duration_since(now)
            .filter(|w| !w.is_zero())
        else {
            break;
        };
        socket
            .set_read_timeout(Some(wait))
            .map_err(|e| io("setting the receive timeout", e))?;
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e) if super::is_wait(&e) => continue,
            Err(e) => return Err(io("receiving", e)),
        };
        let t1 = clock.now_ns();
        let wall = wall_ns();
        let got = &buf[..n];
        if !Request::well_formed(got) {
            summary.ignored += 1;
            continue;
        }
        let Some(req) = Request::decode(got, &access.key).filter(|_| access.admits(from.ip()))
        else {
            summary.refused += 1;
            continue;
        };
        if !limiter.allow(from.ip().to_canonical(), Instant::now()) {
            summary.limited += 1;
            continue;
        }
        let mut reply = Reply {
            seq: req.seq,
            nonce: req.nonce,
            t1,
            t2: 0,
            wall,
            clock_id,
            host: req.host.then(|| host.to_string()),
        }
        .encode_unsealed();
        // Never more bytes out than in: no amplification towards a forged source.
        if reply.len() > n {
            summary.refused += 1;
            continue;
        }
        let t2 = clock.now_ns();
        reply[T2_AT..T2_AT + 8].copy_from_slice(&t2.to_le_bytes());
        Reply::seal(&mut reply, &access.key);
        // A client that went away is its own problem, not the master's.
        if socket.send_to(&reply, from).is_err() {
            continue;
        }
        last_request = Some(Instant::now());
        if summary.exchanges == 0 {
            summary.first_wall_ns = wall;
            summary.first_clock_ns = t1;
        }
        summary.last_wall_ns = wall;
        summary.last_clock_ns = t1;
        summary.exchanges += 1;
        if nonces.insert(req.nonce) {
            summary.rounds += 1;
        }
    }
    Ok(summary)
}

/// Binds the master's socket, with a message that says what to do if it fails.
pub fn bind(addr: &str) -> Result<UdpSocket> {
    UdpSocket::bind(addr).map_err(|e| {
        Error::new(
            if e.kind() == std::io::ErrorKind::InvalidInput {
                ErrorKind::InvalidArgument
            } else {
                ErrorKind::Os
            },
            format!(
                "sync master cannot listen on {addr}: {e}; give a free HOST:PORT of this \
                 machine on the trace network only, e.g. 10.0.0.1:7700"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_match_addresses_and_networks() {
        let p = Peer::parse("10.0.0.0/24").unwrap();
        assert!(p.contains("10.0.0.200".parse().unwrap()));
        assert!(p.contains("::ffff:10.0.0.9".parse().unwrap()));
        assert!(!p.contains("10.0.1.1".parse().unwrap()));
        let one = Peer::parse("127.0.0.2").unwrap();
        assert!(one.contains("127.0.0.2".parse().unwrap()));
        assert!(!one.contains("127.0.0.1".parse().unwrap()));
        assert!(Peer::parse("::/0")
            .unwrap()
            .contains("fd00::1".parse().unwrap()));
        assert!(!Peer::parse("::/0")
            .unwrap()
            .contains("10.0.0.1".parse().unwrap()));
        assert!(Peer::parse("10.0.0.0/33").is_err());
        assert!(Peer::parse("host").is_err());
    }

    #[test]
    fn the_rate_limit_allows_a_burst_then_the_rate() {
        let mut l = Limiter {
            rate: 100.0,
            buckets: HashMap::new(),
        };
        let t = Instant::now();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!((0..150).filter(|_| l.allow(ip, t)).count(), 100);
        let later = t + Duration::from_millis(500);
        assert_eq!((0..150).filter(|_| l.allow(ip, later)).count(), 50);
        assert!(l.allow("10.0.0.2".parse().unwrap(), later));
    }
}
