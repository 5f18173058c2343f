//! `hrts stats serve --listen HOST:PORT`: the statistics segment over HTTP for
//! a Prometheus server or an OpenTelemetry collector to scrape. GET `/metrics`
//! (Prometheus text format 0.0.4, or OpenMetrics 1.0 text for clients that
//! accept it) and `/stats.json` (as `hrts stats --json`);
//! 404 for other paths, 405 for other methods. Runs until SIGINT or SIGTERM
//! ends the process.
//!
//! HTTP/1.1 is hyper's, on a tokio runtime with a thread per CPU. A request
//! head must arrive within `--head-timeout-ms` of the accept and fit in
//! [`MAX_HEAD`] bytes (hyper answers 431 to a larger one); a connection is
//! closed after one request (so there is no idle keep-alive to bound) and in
//! any case `--request-timeout-ms` after its accept. Those deadlines free what
//! slow clients hold; they cannot keep a scrape from getting in while a
//! thousand such clients re-open their connections as fast as they are
//! closed. What does is [`admission`]: at most `--max-connections` sockets are
//! open, and a connection accepted beyond that closes the oldest one that has
//! not sent its request head (else the oldest of all) instead of being
//! refused. The file descriptors that takes are checked at start.
//!
//! Each format is rendered at most once per `--refresh-ms`, on tokio's
//! blocking pool, and the rendering is shared by every request in that time,
//! so a client that reads slowly or not at all holds only its own connection
//! and a reference to the shared text, never the others.

mod admission;

use super::snapshot::{empty, render, take, Format};
use crate::commands::print;
use crate::exit::CliError;
use admission::Admission;
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
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, Instant};

pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// What `/metrics` answers a client that accepts OpenMetrics (Prometheus does).
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const JSON_TYPE: &str = "application/json";
/// The largest request head (request line and headers) read; larger: 431.
pub const MAX_HEAD: usize = 16 * 1024;
/// Connections the kernel holds for the server to accept (as far as
/// net.core.somaxconn allows): room for a thousand clients re-opening at
/// once, so that a scrape's connection is queued rather than dropped (its
/// client would try again only a second later).
pub const BACKLOG: u32 = 1024;
/// File descriptors the server needs besides its connections' sockets: the
/// sockets of evicted connections still closing, and (well under 32) stdio,
/// the listener, the runtime's epoll and wakers, the segment.
pub const SPARE_DESCRIPTORS: u64 = admission::CLOSING as u64 + 32;

/// What `hrts stats serve` is told.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Each format is rendered at most once per this (0: per request).
    pub refresh: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// From the accept to the end of the request head.
    pub head_timeout: Duration,
    /// From the accept to the end of the answer.
    pub request_timeout: Duration,
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

/// What a request does about one format's rendering.
enum Turn<'a> {
    /// Answers with this one: fresh, or the previous one while another
    /// request renders anew.
    Take(Bytes),
    /// Renders anew, holding the format's turn.
    Render(MutexGuard<'a, ()>),
    /// No rendering yet: waits for the turn (another request may be making
    /// the first one).
    Wait,
}

impl Shared {
    fn cache(&self, format: Format) -> &Cache {
        match format {
            Format::Json => &self.json,
            Format::OpenMetrics => &self.openmetrics,
            _ => &self.prometheus,
        }
    }

    /// The latest rendering of `format` and whether it is younger than the
    /// refresh interval.
    fn latest(&self, cache: &Cache) -> Option<(bool, Bytes)> {
        let c = cache.latest.lock().unwrap_or_else(|p| p.into_inner());
        c.as_ref()
            .map(|c| (c.at.elapsed() < self.limits.refresh, c.body.clone()))
    }

    /// The latest rendering if it is younger than the refresh interval;
    /// else this request renders anew, while the others that come meanwhile
    /// take the previous one (only the first request of all waits for
    /// another's rendering).
    fn turn<'a>(&self, cache: &'a Cache) -> Turn<'a> {
        match self.latest(cache) {
            Some((true, body)) => Turn::Take(body),
            Some((false, stale)) => match cache.rendering.try_lock() {
                Ok(turn) => Turn::Render(turn),
                Err(std::sync::TryLockError::Poisoned(p)) => Turn::Render(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => Turn::Take(stale),
            },
            None => Turn::Wait,
        }
    }

    /// Without waiting: the rendering of `format` this request takes; `None`
    /// if this request is the one to render ([`body`](Shared::body)).
    fn ready(&self, format: Format) -> Option<Bytes> {
        match self.turn(self.cache(format)) {
            Turn::Take(body) => Some(body),
            Turn::Render(_) | Turn::Wait => None,
        }
    }

    /// The rendering of `format` (as [`turn`](Shared::turn) says), rendered
    /// here if it is this request's turn.
    fn body(&self, format: Format) -> Result<Bytes, CliError> {
        let cache = self.cache(format);
        let _turn = match self.turn(cache) {
            Turn::Take(body) => return Ok(body),
            Turn::Render(turn) => turn,
            Turn::Wait => cache.rendering.lock().unwrap_or_else(|p| p.into_inner()),
        };
        // Another request may have rendered while this one waited.
        if let Some((true, body)) = self.latest(cache) {
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
    descriptors(limits.max_connections)?;
    let socket = bind(listen)?;
    let addr = socket.local_addr()?;
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
        let listener = socket.listen(BACKLOG)?;
        print(&format!("listening on http://{addr}\n"))?;
        let admission = Admission::new(limits.max_connections);
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // A connection reset before accept, or (despite the
                    // check at start) out of descriptors: wait a moment
                    // rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let (mut ticket, _) = admission.admit();
            let (shared, places) = (shared.clone(), admission.clone());
            tokio::spawn(async move {
                let id = ticket.id;
                let service = service_fn(move |req| {
                    places.answering(id);
                    answer(shared.clone(), req)
                });
                let connection = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(limits.head_timeout)
                    .max_buf_size(MAX_HEAD)
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service);
                let mut connection =
                    std::pin::pin!(tokio::time::timeout(limits.request_timeout, connection));
                // Until it ends, runs out of time or is evicted; either way
                // dropping it closes the socket. A client that went away, or
                // never read, is its own problem.
                std::future::poll_fn(|cx| {
                    if Pin::new(&mut ticket.evicted).poll(cx).is_ready()
                        || connection.as_mut().poll(cx).is_ready()
                    {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    }
                })
                .await;
            });
            admission.settled().await;
        }
    })
}

/// A socket bound to the first address `listen` names that can be bound.
fn bind(listen: &str) -> Result<tokio::net::TcpSocket, CliError> {
    let refuse = |e: std::io::Error| {
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
    };
    let mut last = std::io::Error::new(std::io::ErrorKind::InvalidInput, "the name has no address");
    for addr in std::net::ToSocketAddrs::to_socket_addrs(listen).map_err(refuse)? {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()
        } else {
            tokio::net::TcpSocket::new_v6()
        }?;
        // As std's TcpListener::bind: a restarted server gets its port back
        // while the last one's connections are in TIME_WAIT.
        socket.set_reuseaddr(true)?;
        match socket.bind(addr) {
            Ok(()) => return Ok(socket),
            Err(e) => last = e,
        }
    }
    Err(refuse(last).into())
}

/// Raises this process's soft limit on open files to its hard limit (the
/// soft default, often 1,024, suits programs that use select(); this one
/// holds a socket per connection) and checks that `--max-connections` fits.
fn descriptors(max_connections: usize) -> Result<(), CliError> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given, which outlives the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given, which outlives the
        // call. When it fails (a hard limit of "unlimited" above the kernel's
        // nr_open) the soft limit stays as it was and is checked below.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    let need = max_connections as u64 + SPARE_DESCRIPTORS;
    if limit.rlim_cur < need {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "--max-connections {max_connections} needs {need} file descriptors, but this \
                 process may open only {} (ulimit -Hn; LimitNOFILE= for a systemd service): \
                 give --max-connections {} or less, or raise the limit",
                limit.rlim_cur,
                limit.rlim_cur.saturating_sub(SPARE_DESCRIPTORS)
            ),
        )
        .into());
    }
    Ok(())
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
    // Nearly every request takes a rendering already made, right here.
    // Rendering reads the segment and formats thousands of metrics: off the
    // runtime's threads, so other connections go on meanwhile. Only renderings
    // go to the blocking pool, so it keeps a thread or two, and with them few
    // malloc arenas: a thread for every answer had each arena keep a
    // rendering's worth of freed memory, and the server grew by 50 MB under
    // load.
    let rendered = match shared.ready(format) {
        Some(body) => Ok(Ok(body)),
        None => tokio::task::spawn_blocking(move || shared.body(format)).await,
    };
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
