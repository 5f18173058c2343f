//! `hrts stats serve --listen HOST:PORT`: the statistics segment over HTTP for
//! a Prometheus server or an OpenTelemetry collector to scrape. GET `/metrics`
//! (Prometheus text format 0.0.4) and `/stats.json` (as `hrts stats --json`);
//! 404 for other paths, 405 for other methods. Runs until SIGINT or SIGTERM
//! ends the process.
//!
//! Each connection has a thread of its own (a small stack), up to
//! `--max-connections`; beyond that a connection gets 503 at once. A request
//! head must arrive whole within [`HEAD_TIMEOUT`] and fit in [`MAX_HEAD`]
//! bytes (else 408 or 431); an answer must leave within [`WRITE_TIMEOUT`] of
//! its last progress and [`RESPONSE_DEADLINE`] in all; then the connection is
//! closed (one request per connection). Each format is rendered at most once
//! per `--refresh-ms` and the rendering is shared by every request in that
//! time, so a client that reads slowly or not at all holds only its own
//! thread and a reference to the shared text, never the others.

use super::snapshot::{empty, render, take, Format};
use crate::commands::print;
use crate::exit::CliError;
use hrts_core::{Error, ErrorKind};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const JSON_TYPE: &str = "application/json";
/// The largest request head (request line and headers) read; larger: 431.
pub const MAX_HEAD: usize = 16 * 1024;
/// The request head must arrive within this; else 408.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// An answer that makes no progress for this long is abandoned.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// An answer still not sent after this long is abandoned.
pub const RESPONSE_DEADLINE: Duration = Duration::from_secs(60);
/// Stack of a connection's thread: it parses one head and writes shared bytes.
const STACK: usize = 128 * 1024;

/// What `hrts stats serve` is told.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each format is rendered at most once per this (0: per request).
    pub refresh: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

/// One format's latest rendering.
struct Cached {
    at: Instant,
    body: Arc<Vec<u8>>,
}

/// One format's rendering and the lock that one renderer at a time holds.
#[derive(Default)]
struct Cache {
    latest: Mutex<Option<Cached>>,
    rendering: Mutex<()>,
}

struct Shared {
    name: String,
    limits: Limits,
    prometheus: Cache,
    json: Cache,
    open: AtomicUsize,
}

impl Shared {
    /// The rendering of `format`: the latest if it is younger than the
    /// refresh interval; else this request renders anew, while the others
    /// that come meanwhile take the previous one (only the first request of
    /// all waits for another's rendering).
    fn body(&self, format: Format) -> Result<Arc<Vec<u8>>, CliError> {
        let cache = match format {
            Format::Json => &self.json,
            _ => &self.prometheus,
        };
        let latest = || {
            let c = cache.latest.lock().unwrap_or_else(|p| p.into_inner());
            c.as_ref()
                .map(|c| (c.at.elapsed() < self.limits.refresh, c.body.clone()))
        };
        let _turn = match latest() {
            Some((true, body)) => return Ok(body),
            Some((false, stale)) => match cache.rendering.try_lock() {
                Ok(turn) => turn,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return Ok(stale),
            },
            None => cache.rendering.lock().unwrap_or_else(|p| p.into_inner()),
        };
        // Another request may have rendered while this one waited.
        if let Some((true, body)) = latest() {
            return Ok(body);
        }
        let snap = take(&self.name)?.unwrap_or_else(|| empty(&self.name));
        let body = Arc::new(render(&snap, format).into_bytes());
        *cache.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(Cached {
            at: Instant::now(),
            body: body.clone(),
        });
        Ok(body)
    }
}

/// Counts a connection while its thread lives.
struct Open(Arc<Shared>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

pub fn run(listen: &str, name: &str, limits: Limits) -> Result<(), CliError> {
    let listener = TcpListener::bind(listen).map_err(|e| {
        Error::new(
            if e.kind() == std::io::ErrorKind::InvalidInput {
                ErrorKind::InvalidArgument
            } else {
                ErrorKind::Os
            },
            format!(
                "hrts stats serve cannot listen on {listen}: {e}; give a free HOST:PORT of \
                 this machine, e.g. 127.0.0.1:9464 (port 0: any free port)"
            ),
        )
    })?;
    let addr = listener.local_addr()?;
    print(&format!("listening on http://{addr}\n"))?;
    let shared = Arc::new(Shared {
        name: name.to_string(),
        limits,
        prometheus: Cache::default(),
        json: Cache::default(),
        open: AtomicUsize::new(0),
    });
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors, or a connection reset before accept:
            // wait a moment rather than spin.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if shared.open.fetch_add(1, Ordering::AcqRel) >= limits.max_connections {
            shared.open.fetch_sub(1, Ordering::AcqRel);
            busy(stream);
            continue;
        }
        let open = Open(shared.clone());
        let spawned = std::thread::Builder::new()
            .name("hrts-http".into())
            .stack_size(STACK)
            .spawn(move || {
                // A client that went away is its own problem, not the server's.
                let _ = connection(stream, &open.0);
                drop(open);
            });
        if spawned.is_err() {
            // No thread to be had: the connection closes (its `Open` dropped).
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

/// 503 without waiting for the client: at most one short non-blocking write.
fn busy(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(true);
    let _ = stream.write(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n\
          Connection: close\r\n\r\n",
    );
}

/// The status line and headers of an answer with a body of `len` bytes.
fn head(status: &str, content_type: &str, len: usize, extra: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\n\
         {extra}Connection: close\r\n\r\n"
    )
}

/// Reads the request head: `Ok(None)` when the client closed first.
fn read_head(stream: &mut TcpStream) -> std::io::Result<Result<Option<Vec<u8>>, &'static str>> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        else {
            return Ok(Err("408 Request Timeout"));
        };
        stream.set_read_timeout(Some(left))?;
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Ok(Ok(None)),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Err("408 Request Timeout"))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(from + end);
            return Ok(Ok(Some(buf)));
        }
        if buf.len() > MAX_HEAD {
            return Ok(Err("431 Request Header Fields Too Large"));
        }
    }
}

/// Writes `parts` within the timeouts, then closes the connection politely.
fn send(stream: &mut TcpStream, parts: &[&[u8]]) -> std::io::Result<()> {
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let deadline = Instant::now() + RESPONSE_DEADLINE;
    for part in parts {
        for piece in part.chunks(64 * 1024) {
            if Instant::now() > deadline {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            stream.write_all(piece)?;
        }
    }
    stream.flush()?;
    stream.shutdown(Shutdown::Write)?;
    // Read what the client still sends (at most 1 MiB, 1 s) so that closing
    // does not reset the connection before it has read the answer.
    stream.set_read_timeout(Some(Duration::from_secs(1)))?;
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < 1 << 20 {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
    Ok(())
}

fn text(stream: &mut TcpStream, status: &str, extra: &str, body: &str) -> std::io::Result<()> {
    let h = head(status, "text/plain; charset=utf-8", body.len(), extra);
    send(stream, &[h.as_bytes(), body.as_bytes()])
}

fn connection(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let raw = match read_head(&mut stream)? {
        Ok(Some(raw)) => raw,
        Ok(None) => return Ok(()),
        Err(status) => {
            let why = format!(
                "{status}: send a request head of at most {MAX_HEAD} bytes within {} s\n",
                HEAD_TIMEOUT.as_secs()
            );
            return text(&mut stream, status, "", &why);
        }
    };
    let line =
        String::from_utf8_lossy(raw.split(|&b| b == b'\r').next().unwrap_or(&[])).into_owned();
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return text(
            &mut stream,
            "400 Bad Request",
            "",
            "not an HTTP request line\n",
        );
    };
    if !version.starts_with("HTTP/1.") {
        return text(
            &mut stream,
            "400 Bad Request",
            "",
            "HTTP/1.0 or HTTP/1.1 only\n",
        );
    }
    let path = target.split('?').next().unwrap_or("");
    let (format, content_type) = match path {
        "/metrics" => (Format::Prometheus, PROMETHEUS_TYPE),
        "/stats.json" => (Format::Json, JSON_TYPE),
        _ => {
            let msg = format!("no such page {path:?}: use /metrics or /stats.json\n");
            return text(&mut stream, "404 Not Found", "", &msg);
        }
    };
    if method != "GET" && method != "HEAD" {
        let msg = format!("{method} is not served here: use GET\n");
        return text(
            &mut stream,
            "405 Method Not Allowed",
            "Allow: GET, HEAD\r\n",
            &msg,
        );
    }
    match shared.body(format) {
        Ok(body) => {
            let h = head("200 OK", content_type, body.len(), "");
            let body: &[u8] = if method == "HEAD" { &[] } else { &body };
            send(&mut stream, &[h.as_bytes(), body])
        }
        Err(e) => {
            eprintln!("hrts: error: {path}: {e}");
            text(
                &mut stream,
                "500 Internal Server Error",
                "",
                &format!("{e}\n"),
            )
        }
    }
}
