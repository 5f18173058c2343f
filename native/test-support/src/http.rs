//! The client side of the tests of `hrts stats serve`: plain HTTP/1.1 GETs
//! (one request per connection, read to the end), and connections opened with
//! socket options a well-behaved client would not use.

use std::io::{self, Read, Write};
use std::net::{SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::time::Duration;

/// A whole answer: its status and every byte of it, head and body.
pub struct Response {
    pub status: u16,
    pub raw: Vec<u8>,
}

impl Response {
    /// What follows the head (empty if the head never ended).
    pub fn body(&self) -> &[u8] {
        self.raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(&[], |at| &self.raw[at + 4..])
    }

    /// The whole answer as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }
}

/// One GET of `path` from `addr` (HOST:PORT), read to the end, each read
/// within `timeout` if given; status 0 if the answer has no status line.
pub fn get(addr: &str, path: &str, timeout: Option<Duration>) -> io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(timeout)?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    // "HTTP/1.1 200 OK": the second word of the first line.
    let status = String::from_utf8_lossy(&raw[..raw.len().min(64)])
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(Response { status, raw })
}

/// A connection to `addr` (an IPv4 HOST:PORT) made with plain socket calls:
/// `nonblocking`, it is returned as soon as the handshake has started (as an
/// attacker re-opening hundreds at once would; the stream stays non-blocking);
/// with `receive_buffer`, its receive buffer is set that small (as the kernel
/// allows) before it connects, so that an answer cannot disappear into socket
/// buffers.
pub fn connect_raw(
    addr: &str,
    nonblocking: bool,
    receive_buffer: Option<libc::c_int>,
) -> io::Result<TcpStream> {
    let sa: SocketAddrV4 = addr
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{addr}: {e}")))?;
    let flags = if nonblocking { libc::SOCK_NONBLOCK } else { 0 };
    // SAFETY: plain socket calls on a descriptor this function owns (handed
    // to the TcpStream, or closed on failure); the option value and the
    // sockaddr_in are fully initialised and outlive the calls.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | flags,
            0,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(size) = receive_buffer {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let mut sin: libc::sockaddr_in = std::mem::zeroed();
        sin.sin_family = libc::AF_INET as libc::sa_family_t;
        sin.sin_port = sa.port().to_be();
        sin.sin_addr.s_addr = u32::from(*sa.ip()).to_be();
        let rc = libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        if rc != 0 {
            let e = io::Error::last_os_error();
            if !(nonblocking && e.raw_os_error() == Some(libc::EINPROGRESS)) {
                libc::close(fd);
                return Err(e);
            }
        }
        Ok(TcpStream::from_raw_fd(fd))
    }
}
