//! `hrts stats serve --listen HOST:PORT`: the statistics segment over HTTP for
//! a Prometheus server or an OpenTelemetry collector to scrape. GET `/metrics`
//! (Prometheus text format 0.0.4, or OpenMetrics 1.0 text for clients that
//! accept it) and `/stats.json` (as `hrts stats --json`);
//! 404 for other paths, 405 for other methods. Runs until SIGINT or SIGTERM
//! ends the process.
//!
//! HTTP/1.1 is hyper's, on a tokio runtime with a thread per CPU: up to
//! `--max-connections` connections at once (beyond that a connection gets 503
//! at once); a request head must arrive within [`HEAD_TIMEOUT`] and fit in
//! [`MAX_HEAD`] bytes (hyper answers 431 to a larger one); a connection is
//! closed after one request and in any case after [`RESPONSE_DEADLINE`]. Each
//! format is rendered at most once per `--refresh-ms`, on tokio's blocking
//! pool, and the rendering is shared by every request in that time, so a
//! client that reads slowly or not at all holds only its own connection and a
//! reference to the shared text, never the others.

use super::snapshot::{empty, render, take, Format};
use crate::commands::print;
use crate::exit::CliError;
use bytes::Bytes;
use hrts_core::{Error, ErrorKind};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// What `/metrics` answers a client that accepts OpenMetrics (Prometheus does).
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const JSON_TYPE: &str = "application/json";
/// The largest request head (request line and headers) read; larger: 431.
pub const MAX_HEAD: usize = 16 * 1024;
/// The request head must arrive within this; else the connection is closed.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection still open after this long (an answer its client does not
/// read) is closed.
pub const RESPONSE_DEADLINE: Duration = Duration::from_secs(60);

/// What `hrts stats serve` is told.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each format is rendered at most once per this (0: per request).
    pub refresh: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Label every Prometheus sample with its pid (`--pid-label`).
    pub pid_label: bool,
}

/// One format's latest rendering.
struct Cached {
    at: Instant,
    body: Bytes,
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
    openmetrics: Cache,
    json: Cache,
}

impl Shared {
    /// The rendering of `format`: the latest if it is younger than the
    /// refresh interval; else this request renders anew, while the others
    /// that come meanwhile take the previous one (only the first request of
    /// all waits for another's rendering).
    fn body(&self, format: Format) -> Result<Bytes, CliError> {
        let cache = match format {
            Format::Json => &self.json,
            Format::OpenMetrics => &self.openmetrics,
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
        let body = Bytes::from(render(&snap, format, self.limits.pid_label).into_bytes());
        *cache.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(Cached {
            at: Instant::now(),
            body: body.clone(),
        });
        Ok(body)
    }
}

pub fn run(listen: &str, name: &str, limits: Limits) -> Result<(), CliError> {
    let listener = std::net::TcpListener::bind(listen).map_err(|e| {
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
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        name: name.to_string(),
        limits,
        prometheus: Cache::default(),
        openmetrics: Cache::default(),
        json: Cache::default(),
    });
    // One worker thread per CPU: two hundred scrapers reading a megabyte each
    // are a lot of copying for one thread.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_io()
        .enable_time()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        print(&format!("listening on http://{addr}\n"))?;
        let slots = Arc::new(Semaphore::new(limits.max_connections));
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, or a connection reset before accept:
                    // wait a moment rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                busy(&stream);
                continue;
            };
            let shared = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(shared.clone(), req));
                let connection = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEAD_TIMEOUT)
                    .max_buf_size(MAX_HEAD)
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service);
                // A client that went away, or never read, is its own problem.
                let _ = tokio::time::timeout(RESPONSE_DEADLINE, connection).await;
                drop(slot);
            });
        }
    })
}

/// 503 without waiting for the client: at most one short non-blocking write.
fn busy(stream: &tokio::net::TcpStream) {
    let _ = stream.try_write(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n\
          Connection: close\r\n\r\n",
    );
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Whether the request's Accept header names OpenMetrics text (Prometheus
/// asks for it first and takes the 0.0.4 format otherwise).
fn accepts_openmetrics(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all(hyper::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let mut parts = t.split(';').map(str::trim);
            let kind = parts.next() == Some("application/openmetrics-text");
            // "q=0" declines it; a version other than 1.0.0 or 0.0.1 is not ours.
            kind && parts.all(|p| {
                p != "q=0"
                    && !(p.starts_with("version=") && p != "version=1.0.0" && p != "version=0.0.1")
            })
        })
}

async fn answer(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let (format, content_type) = match path.as_str() {
        "/metrics" if accepts_openmetrics(&req) => (Format::OpenMetrics, OPENMETRICS_TYPE),
        "/metrics" => (Format::Prometheus, PROMETHEUS_TYPE),
        "/stats.json" => (Format::Json, JSON_TYPE),
        _ => {
            let msg = format!("no such page {path:?}: use /metrics or /stats.json\n");
            return Ok(text(StatusCode::NOT_FOUND, msg));
        }
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let msg = format!("{} is not served here: use GET\n", req.method());
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, msg);
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    // Rendering reads the segment and formats thousands of metrics: off the
    // runtime's one thread, so other connections go on meanwhile.
    let rendered = tokio::task::spawn_blocking(move || shared.body(format)).await;
    Ok(match rendered {
        Ok(Ok(body)) => {
            let mut r = Response::new(Full::new(body));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            r
        }
        Ok(Err(e)) => {
            eprintln!("hrts: error: {path}: {e}");
            text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n"))
        }
        Err(_) => {
            let mut r = text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the rendering did not finish; try again\n".to_string(),
            );
            r.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    })
}
