//! `hrts stats serve --listen HOST:PORT`: the statistics segment over HTTP for
//! a Prometheus server or an OpenTelemetry collector to scrape. GET `/metrics`
//! (Prometheus text format 0.0.4) and `/stats.json` (as `hrts stats --json`),
//! a fresh snapshot per request; 404 for other paths, 405 for other methods.
//! Runs until SIGINT or SIGTERM ends the process.

use super::snapshot::{empty, render, take, Format};
use crate::commands::print;
use crate::exit::CliError;
use hrts_core::{Error, ErrorKind};
use std::net::TcpListener;
use tiny_http::{Header, Method, Request, Response, Server};

pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const JSON_TYPE: &str = "application/json";

pub fn run(listen: &str, name: &str) -> Result<(), CliError> {
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
    let server = Server::from_listener(listener, None)
        .map_err(|e| Error::new(ErrorKind::Os, format!("HTTP server on {addr}: {e}")))?;
    print(&format!("listening on http://{addr}\n"))?;
    for request in server.incoming_requests() {
        // A client that went away is its own problem, not the server's.
        let _ = respond(request, name);
    }
    Ok(())
}

fn header(name: &str, value: &str) -> Header {
    // Both are ASCII constants of this module: the conversion cannot fail.
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("an ASCII header")
}

fn text(status: u16, body: String) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

fn respond(request: Request, name: &str) -> std::io::Result<()> {
    let path = request.url().split('?').next().unwrap_or("");
    let (format, content_type) = match path {
        "/metrics" => (Format::Prometheus, PROMETHEUS_TYPE),
        "/stats.json" => (Format::Json, JSON_TYPE),
        _ => {
            let msg = format!("no such page {path:?}: use /metrics or /stats.json\n");
            return request.respond(text(404, msg));
        }
    };
    if !matches!(request.method(), Method::Get | Method::Head) {
        let msg = format!("{} is not served here: use GET\n", request.method());
        return request.respond(text(405, msg).with_header(header("Allow", "GET, HEAD")));
    }
    match take(name) {
        Ok(snap) => {
            let body = render(&snap.unwrap_or_else(|| empty(name)), format);
            request.respond(
                Response::from_string(body).with_header(header("Content-Type", content_type)),
            )
        }
        Err(e) => {
            eprintln!("hrts: error: {path}: {e}");
            request.respond(text(500, format!("{e}\n")))
        }
    }
}
