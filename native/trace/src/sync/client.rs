//! The client's side: one round of ping-pong exchanges with the master.

use super::wire::{Reply, Request, SyncKey, HOST_REQUEST_LEN};
use super::{Exchange, RoundResult};
use crate::clock::{wall_ns, Clock};
use hrts_core::{Error, ErrorKind, Result};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// How one round runs. Every loop is bounded by these.
#[derive(Clone, Copy, Debug)]
pub struct SyncOptions {
    /// Exchanges per round (ITC-style rounds use a few dozen).
    pub exchanges: u32,
    /// How long to wait for each reply.
    pub reply_timeout: Duration,
    /// How long to keep asking before the master's first answer (it may
    /// still be starting).
    pub first_answer_timeout: Duration,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            exchanges: 50,
            reply_timeout: Duration::from_millis(200),
            first_answer_timeout: Duration::from_secs(5),
        }
    }
}

/// Most exchanges a round may ask for: rounds are short, bounded bursts.
pub const MAX_EXCHANGES: u32 = 10_000;

static NONCES: AtomicU64 = AtomicU64::new(0);

/// Runs one round of exchanges with the master at `master` (HOST:PORT), with
/// the run's key from `HRTS_SYNC_KEY` (or this process's own, for a master
/// in the same process: [`SyncKey::current`]).
pub fn sync_round(master: &str, clock: &dyn Clock, opts: SyncOptions) -> Result<RoundResult> {
    sync_round_with_key(master, clock, opts, &SyncKey::current()?)
}

/// [`sync_round`] with the run's key given.
pub fn sync_round_with_key(
    master: &str,
    clock: &dyn Clock,
    opts: SyncOptions,
    key: &SyncKey,
) -> Result<RoundResult> {
    if !(1..=MAX_EXCHANGES).contains(&opts.exchanges) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "a sync round of {} exchanges is not allowed: use 1..={MAX_EXCHANGES}",
                opts.exchanges
            ),
        ));
    }
    let addr = resolve(master)?;
    let local: SocketAddr = if addr.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let io = |what: &str, e: std::io::Error| {
        Error::from_io(
            format!("sync with master {master}: {what}"),
            &e,
            "check the address and that this host can reach it",
        )
    };
    let socket = UdpSocket::bind(local).map_err(|e| io("binding a local socket", e))?;
    socket.connect(addr).map_err(|e| io("connecting", e))?;
    // One nonce per round: replies to another round (or process) are ignored.
    let nonce = (std::process::id() as u64) << 40
        ^ wall_ns().rotate_left(17)
        ^ NONCES.fetch_add(1, Relaxed);
    let mut exchanges = Vec::with_capacity(opts.exchanges as usize);
    let mut master_host = String::new();
    let mut named = false;
    let mut master_clock_id = 0;
    let mut lost = 0u32;
    let started = Instant::now();
    let mut buf = [0u8; HOST_REQUEST_LEN + 64];
    let mut seq = 0u64;
    // Each request is sent once; a lost one is counted, not retried, except
    // while waiting for the master's first answer. Bounded either way.
    let max_requests = opts.exchanges as u64 * 2 + 64;
    while (exchanges.len() as u32) < opts.exchanges && seq < max_requests.max(1) {
        if exchanges.is_empty() && started.elapsed() > opts.first_answer_timeout {
            break;
        }
        if exchanges.len() as u32 + lost >= opts.exchanges * 2 {
            break;
        }
        seq += 1;
        // Until the master has told its host name, ask for it (the longer request).
        let req = Request {
            seq,
            nonce,
            host: !named,
        }
        .encode(key);
        let t0 = clock.now_ns();
        if let Err(e) = socket.send(&req) {
            // ECONNREFUSED from an earlier ICMP: the master is not up yet.
            if e.kind() == std::io::ErrorKind::ConnectionRefused && exchanges.is_empty() {
                std::thread::sleep(opts.reply_timeout.min(Duration::from_millis(50)));
                continue;
            }
            return Err(io("sending", e));
        }
        let deadline = Instant::now() + opts.reply_timeout;
        let answered = loop {
            let Some(wait) = deadline
                .checked_duration_since(Instant::now())
                .filter(|w| !w.is_zero())
            else {
                break None;
            };
            socket
                .set_read_timeout(Some(wait))
                .map_err(|e| io("setting the receive timeout", e))?;
            match socket.recv(&mut buf) {
                Ok(n) => {
                    let t3 = clock.now_ns();
                    match Reply::decode(&buf[..n], key) {
                        Some(r) if r.nonce == nonce && r.seq == seq => break Some((r, t3)),
                        _ => continue, // late reply to an earlier request, or noise
                    }
                }
                Err(e) if super::is_wait(&e) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    // Nobody listens yet: wait a little, as for a lost reply.
                    std::thread::sleep(wait.min(Duration::from_millis(50)));
                    break None;
                }
                Err(e) => return Err(io("receiving", e)),
            }
        };
        let Some((reply, t3)) = answered else {
            if !exchanges.is_empty() {
                lost += 1;
            }
            continue;
        };
        let x = Exchange {
            t0,
            t1: reply.t1,
            t2: reply.t2,
            t3,
            wall: reply.wall,
        };
        if !named {
            master_host = reply.host.unwrap_or_default();
            named = true;
            master_clock_id = reply.clock_id;
        } else if reply.clock_id != master_clock_id {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "master {master} answered with two different clocks within one round \
                     (another master took over the address?): run the round again"
                ),
            ));
        }
        match x.rtt_ns() {
            Some(_) => exchanges.push(x),
            None => lost += 1,
        }
    }
    if exchanges.is_empty() {
        return Err(Error::new(
            ErrorKind::Timeout,
            format!(
                "sync master {master} did not answer within {:.1} s: is \
                 `hrts sync serve --listen {master}` running and reachable from here, is \
                 HRTS_SYNC_KEY the key it printed, and is this host in its --peers?",
                started.elapsed().as_secs_f64()
            ),
        ));
    }
    let answered = exchanges.len() as u32;
    if answered * 2 < opts.exchanges {
        return Err(Error::new(
            ErrorKind::Timeout,
            format!(
                "sync master {master} answered only {answered} of {} exchanges: the network \
                 or the master is overloaded; try again, or with fewer exchanges",
                opts.exchanges
            ),
        ));
    }
    RoundResult::from_exchanges(master, master_host, master_clock_id, exchanges, lost).ok_or_else(
        || {
            Error::new(
                ErrorKind::Timeout,
                format!("sync master {master}: no valid exchange"),
            )
        },
    )
}

fn resolve(master: &str) -> Result<SocketAddr> {
    let bad = |why: String| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("sync master address {master:?} {why}: give HOST:PORT, e.g. 10.0.0.1:7700"),
        )
    };
    master
        .to_socket_addrs()
        .map_err(|e| bad(format!("cannot be resolved ({e})")))?
        .next()
        .ok_or_else(|| bad("resolves to no address".to_string()))
}
