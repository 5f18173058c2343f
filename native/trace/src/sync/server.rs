//! The master's side: answer every request with its clock, until idle.

use super::wire::{Reply, Request, REQUEST_LEN, T2_AT};
use crate::clock::{wall_ns, Clock};
use hrts_core::{Error, ErrorKind, Result};
use std::collections::HashSet;
use std::net::UdpSocket;
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

/// What the master saw: the run as its gettimeofday measured it, from the
/// first answered exchange to the last.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServeSummary {
    pub exchanges: u64,
    /// Distinct clients (by their per-round nonce).
    pub rounds: u64,
    /// Datagrams that were not sync requests.
    pub ignored: u64,
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
/// caller announce the address before serving) with `clock`'s readings.
pub fn serve(
    socket: &UdpSocket,
    clock: &dyn Clock,
    host: &str,
    clock_id: u64,
    opts: ServeOptions,
) -> Result<ServeSummary> {
    let started = Instant::now();
    let mut last_request: Option<Instant> = None;
    let mut summary = ServeSummary::default();
    let mut nonces = HashSet::new();
    let mut buf = [0u8; 512];
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
        let Some(req) = (n == REQUEST_LEN)
            .then(|| Request::decode(&buf[..n]))
            .flatten()
        else {
            summary.ignored += 1;
            continue;
        };
        let mut reply = Reply {
            seq: req.seq,
            nonce: req.nonce,
            t1,
            t2: 0,
            wall,
            clock_id,
            host: host.to_string(),
        }
        .encode();
        let t2 = clock.now_ns();
        reply[T2_AT..T2_AT + 8].copy_from_slice(&t2.to_le_bytes());
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
                 machine, e.g. 0.0.0.0:7700"
            ),
        )
    })
}
