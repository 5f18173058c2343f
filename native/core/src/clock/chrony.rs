//! chronyd's `tracking` report, asked for over chronyd's command interface the
//! way `chronyc tracking` asks: one request datagram, one reply, on chronyd's
//! Unix command socket or its UDP command port.
//!
//! The wire format is chrony's command protocol version 6, from chrony's
//! `candm.h` (`CMD_Request`, `CMD_Reply`, `RPY_Tracking`, `Timespec`, `Float`),
//! `addressing.h` (`IPAddr`), `pktlength.c` (request padding) and `util.c`
//! (`UTI_FloatNetworkToHost`, `UTI_TimespecNetworkToHost`). Every field is
//! big-endian. A request is a 20-byte header, zero-padded to the length of the
//! reply it asks for, so that chronyd's answer is never larger than the
//! question (chronyd drops shorter tracking requests):
//!
//! | offset | size | request field |
//! |---|---|---|
//! | 0 | 1 | version (6) |
//! | 1 | 1 | packet type (1, request) |
//! | 2 | 2 | reserved (0, 0) |
//! | 4 | 2 | command (33, `REQ_TRACKING`) |
//! | 6 | 2 | attempt (resends of this sequence number) |
//! | 8 | 4 | sequence number, echoed in the reply |
//! | 12 | 8 | padding (0) |
//! | 20 | 84 | padding to the reply's 104 bytes (0) |
//!
//! | offset | size | reply field |
//! |---|---|---|
//! | 0 | 1 | version (6) |
//! | 1 | 1 | packet type (2, reply) |
//! | 2 | 2 | reserved (0, 0) |
//! | 4 | 2 | command answered (33) |
//! | 6 | 2 | reply type (5, `RPY_TRACKING`) |
//! | 8 | 2 | status (0, `STT_SUCCESS`) |
//! | 10 | 6 | padding |
//! | 16 | 4 | sequence number of the request |
//! | 20 | 8 | padding |
//! | 28 | 4 | reference ID |
//! | 32 | 20 | reference's `IPAddr`: 16 address bytes, family (2), padding (2) |
//! | 52 | 2 | stratum |
//! | 54 | 2 | leap status (0 normal, 1 insert, 2 delete, 3 unsynchronised) |
//! | 56 | 12 | reference time: `Timespec` (seconds high, seconds low, nanoseconds) |
//! | 68 | 4 | current correction (s) |
//! | 72 | 4 | last offset (s) |
//! | 76 | 4 | RMS offset (s) |
//! | 80 | 4 | frequency (ppm) |
//! | 84 | 4 | residual frequency (ppm) |
//! | 88 | 4 | skew (ppm) |
//! | 92 | 4 | root delay (s) |
//! | 96 | 4 | root dispersion (s) |
//! | 100 | 4 | last update interval (s) |
//!
//! The floats are chrony's own 32-bit format: a 7-bit signed exponent above a
//! 25-bit signed coefficient, value = coefficient × 2^(exponent − 25).

use std::fmt;
use std::fs;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// chronyd's Unix command socket where Debian's and upstream's builds put it.
pub const DEFAULT_SOCKET: &str = "/run/chrony/chronyd.sock";

/// chronyd's UDP command port (`cmdport`), on localhost by default.
pub const DEFAULT_PORT: u16 = 323;

const PROTO_VERSION: u8 = 6;
const PKT_TYPE_REQUEST: u8 = 1;
const PKT_TYPE_REPLY: u8 = 2;
const REQ_TRACKING: u16 = 33;
const RPY_TRACKING: u16 = 5;
const STT_SUCCESS: u16 = 0;
const STT_FAILED: u16 = 1;
const STT_UNAUTH: u16 = 2;
const STT_INVALID: u16 = 3;
const STT_NOHOSTACCESS: u16 = 10;
const STT_BADPKTVERSION: u16 = 18;
const STT_BADPKTLENGTH: u16 = 19;
/// `tv_sec_high` of a chronyd with a 32-bit `time_t`.
const TV_NOHIGHSEC: u32 = 0x7fff_ffff;

const REPLY_HEADER_LEN: usize = 28;
const TRACKING_REPLY_LEN: usize = 104;
/// Requests are padded to the length of their reply (`pktlength.c`).
const TRACKING_REQUEST_LEN: usize = TRACKING_REPLY_LEN;

/// How long the first request waits before it is sent again; doubled each time
/// (chronyc: 1 s, 2 s, 4 s). Only a lost datagram needs it.
const FIRST_RESEND: Duration = Duration::from_millis(250);

/// chronyd's leap-second status for the end of the current UTC day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Leap {
    /// No leap second pending.
    Normal,
    /// A second is inserted at the end of the day (23:59:60).
    InsertSecond,
    /// The day's last second is deleted.
    DeleteSecond,
    /// chronyd is not synchronised to any source.
    Unsynchronised,
}

/// chronyd's `tracking` report: what `chronyc tracking` prints, as numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracking {
    /// The reference ID of the source followed (an IPv4 address for NTP
    /// servers, a hash of the address for IPv6, `0x7F7F0101` for `local`; 0
    /// when unsynchronised).
    pub ref_id: u32,
    /// Stratum of this host: the source's plus one (0 when unsynchronised).
    pub stratum: u16,
    /// The leap-second status.
    pub leap: Leap,
    /// When the last update of the clock's estimate was made, in nanoseconds
    /// since the Unix epoch (0 when there was none).
    pub ref_time_ns: u64,
    /// What chronyd is still slewing out of the system clock, in seconds:
    /// positive when the clock is slow of true time.
    pub current_correction_s: f64,
    /// The offset measured at the last update, in seconds.
    pub last_offset_s: f64,
    /// The long-term average of the offset, in seconds.
    pub rms_offset_s: f64,
    /// The system clock's frequency error as chronyd corrects it, in ppm
    /// (positive: the clock would run fast without correction).
    pub freq_ppm: f64,
    /// The residual frequency of the current source, in ppm.
    pub resid_freq_ppm: f64,
    /// The estimated error bound on the frequency, in ppm.
    pub skew_ppm: f64,
    /// The total network path delay to the stratum-1 computer, in seconds.
    pub root_delay_s: f64,
    /// The total dispersion accumulated through all hops up to the stratum-1
    /// computer, grown since the last update, in seconds.
    pub root_dispersion_s: f64,
    /// The interval between the last two clock updates, in seconds.
    pub last_update_interval_s: f64,
}

impl Tracking {
    /// The bound on the system clock's error that AWS ClockBound derives from
    /// this report: root delay / 2 + root dispersion + |current correction|, in
    /// nanoseconds, rounded up. A negative delay or dispersion (which chronyd
    /// never sends) counts as 0, so the bound never shrinks below the correction.
    pub fn bound_ns(&self) -> u64 {
        let s = self.root_delay_s.max(0.0) / 2.0
            + self.root_dispersion_s.max(0.0)
            + self.current_correction_s.abs();
        // `as` saturates: a bound beyond u64 nanoseconds is u64::MAX.
        (s * 1e9).ceil() as u64
    }
}

/// Asks chronyd for its tracking report on its Unix command socket (chronyd's
/// own default is [`DEFAULT_SOCKET`]), waiting at most `timeout`.
///
/// chronyd answers to the address the request came from, so this binds a
/// socket of its own for the reply, as chronyc does: next to chronyd's socket
/// when this process may create one there (root), else in a private directory
/// under the temporary directory. Either is removed before returning. chronyd
/// lets only root (and its own user) use the socket; other users can ask the
/// UDP port with [`tracking_udp`].
pub fn tracking(socket: &Path, timeout: Duration) -> Result<Tracking> {
    check_timeout(timeout)?;
    let reply = ReplySocket::bind(socket)?;
    let server = socket.display();
    reply
        .sock
        .connect(socket)
        .map_err(|e| unix_error(socket, &e))?;
    let hint = match &reply.own_dir {
        Some(dir) => format!(
            "chronyd may be unable to reach this process's reply socket in {} (systemd's \
             PrivateTmp hides /tmp from the service): run as root, which puts the reply \
             socket next to chronyd's own, or use chronyd's UDP command port",
            dir.display()
        ),
        None => "is chronyd hung, or is this socket served by something else?".to_string(),
    };
    exchange(&reply.sock, &server, timeout, &hint).map_err(|e| match e {
        Failure::Io(e) => unix_error(socket, &e),
        Failure::Done(e) => e,
    })
}

/// Asks chronyd for its tracking report on its UDP command port, waiting at
/// most `timeout` (e.g. `127.0.0.1:323`, see [`DEFAULT_PORT`]). chronyd answers
/// monitoring requests such as this one from localhost, and from other hosts
/// only where its `cmdallow` lets them.
pub fn tracking_udp(addr: SocketAddr, timeout: Duration) -> Result<Tracking> {
    check_timeout(timeout)?;
    let local = if addr.is_ipv4() {
        SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0))
    };
    let sock = UdpSocket::bind(local)
        .map_err(|e| Error::from_io("binding a UDP socket for chronyd's reply", &e, ""))?;
    sock.connect(addr)
        .map_err(|e| Error::from_io(format!("connecting to chronyd at {addr}"), &e, ""))?;
    let hint = "is chronyd running with its command port open on this address (cmdport, \
                bindcmdaddress), and does it allow this host (cmdallow; localhost always is)?";
    exchange(&sock, &addr, timeout, hint).map_err(|e| match e {
        Failure::Io(e) if e.kind() == io::ErrorKind::ConnectionRefused => Error::from_io(
            format!("asking chronyd at {addr}"),
            &e,
            "nothing listens on that UDP port: is chronyd running, with cmdport and \
             bindcmdaddress set to it (chronyd's default is port 323 on localhost)?",
        ),
        Failure::Io(e) => Error::from_io(format!("asking chronyd at {addr}"), &e, ""),
        Failure::Done(e) => e,
    })
}

fn check_timeout(timeout: Duration) -> Result<()> {
    if timeout.is_zero() {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "a chronyd request needs a timeout above zero",
        ));
    }
    Ok(())
}

/// A socket error the caller explains (it knows which socket), or a finished error.
enum Failure {
    Io(io::Error),
    Done(Error),
}

/// What both transports offer: a connected datagram socket.
trait Datagram {
    fn send(&self, buf: &[u8]) -> io::Result<usize>;
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize>;
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
}

impl Datagram for UnixDatagram {
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        UnixDatagram::send(self, buf)
    }
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        UnixDatagram::recv(self, buf)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UnixDatagram::set_write_timeout(self, timeout)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UnixDatagram::set_read_timeout(self, timeout)
    }
}

impl Datagram for UdpSocket {
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        UdpSocket::send(self, buf)
    }
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        UdpSocket::recv(self, buf)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UdpSocket::set_write_timeout(self, timeout)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UdpSocket::set_read_timeout(self, timeout)
    }
}

/// A wait that ran out (or a signal): the exchange goes on until its deadline.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Sends the request until a reply comes or `timeout` is over. The socket is
/// connected, so whatever arrives is chronyd's (or its impostor's) answer to
/// this request and is judged, never skipped.
fn exchange(
    sock: &impl Datagram,
    server: &dyn fmt::Display,
    timeout: Duration,
    hint: &str,
) -> std::result::Result<Tracking, Failure> {
    let sequence = random_u32();
    let deadline = Instant::now().checked_add(timeout).ok_or_else(|| {
        Failure::Done(Error::new(
            ErrorKind::InvalidArgument,
            format!("a timeout of {timeout:?} for chronyd is beyond this clock's range"),
        ))
    })?;
    let mut resend = FIRST_RESEND;
    // Larger than any chronyd reply, so a longer datagram still shows its header.
    let mut buf = [0u8; 1024];
    let mut attempt = 0u16;
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let wait = resend.min(deadline - now);
        resend = resend.saturating_mul(2);
        // A peer's full queue blocks a Unix socket's send.
        sock.set_write_timeout(Some(wait)).map_err(Failure::Io)?;
        match sock.send(&request(sequence, attempt)) {
            Ok(TRACKING_REQUEST_LEN) => {}
            Ok(sent) => {
                return Err(Failure::Done(Error::new(
                    ErrorKind::Os,
                    format!(
                        "sending to chronyd at {server}: {sent} of {TRACKING_REQUEST_LEN} \
                         bytes went out"
                    ),
                )))
            }
            Err(e) if transient(&e) => continue,
            Err(e) => return Err(Failure::Io(e)),
        }
        attempt = attempt.wrapping_add(1);
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        sock.set_read_timeout(Some(wait.min(left)))
            .map_err(Failure::Io)?;
        match sock.recv(&mut buf) {
            Ok(n) => {
                return parse_reply(&buf[..n], sequence).map_err(|e| {
                    Failure::Done(Error::new(
                        e.kind(),
                        format!("tracking report from chronyd at {server}: {}", e.message()),
                    ))
                })
            }
            Err(e) if transient(&e) => {}
            Err(e) => return Err(Failure::Io(e)),
        }
    }
    Err(Failure::Done(Error::new(
        ErrorKind::Timeout,
        format!("no reply from chronyd at {server} within {timeout:?}; {hint}"),
    )))
}

fn request(sequence: u32, attempt: u16) -> [u8; TRACKING_REQUEST_LEN] {
    let mut r = [0u8; TRACKING_REQUEST_LEN];
    r[0] = PROTO_VERSION;
    r[1] = PKT_TYPE_REQUEST;
    r[4..6].copy_from_slice(&REQ_TRACKING.to_be_bytes());
    r[6..8].copy_from_slice(&attempt.to_be_bytes());
    r[8..12].copy_from_slice(&sequence.to_be_bytes());
    r
}

/// Decodes chronyd's answer to the tracking request numbered `sequence`. Any
/// bytes at all give a report or an error, never a panic.
fn parse_reply(reply: &[u8], sequence: u32) -> Result<Tracking> {
    let bad = |what: String| {
        Error::new(
            ErrorKind::Corrupt,
            format!(
                "{what}; is this chronyd's command socket or port, of chrony 2.2 or newer \
                 (command protocol version {PROTO_VERSION})?"
            ),
        )
    };
    if reply.len() < REPLY_HEADER_LEN {
        return Err(bad(format!(
            "a reply of {} bytes, shorter than the {REPLY_HEADER_LEN}-byte header",
            reply.len()
        )));
    }
    let u16_at = |at: usize| u16::from_be_bytes([reply[at], reply[at + 1]]);
    let u32_at =
        |at: usize| u32::from_be_bytes([reply[at], reply[at + 1], reply[at + 2], reply[at + 3]]);
    if reply[1] != PKT_TYPE_REPLY || reply[2] != 0 || reply[3] != 0 {
        return Err(bad("a datagram that is not a command reply".into()));
    }
    let (command, echoed) = (u16_at(4), u32_at(16));
    if command != REQ_TRACKING || echoed != sequence {
        return Err(bad(format!(
            "a reply to another request (command {command}, sequence {echoed:#010x}; \
             asked: command {REQ_TRACKING}, sequence {sequence:#010x})"
        )));
    }
    let status = u16_at(8);
    if reply[0] != PROTO_VERSION {
        return Err(Error::new(
            ErrorKind::Version,
            format!(
                "chronyd answers in command protocol version {} (status {status}); hrts speaks \
                 version {PROTO_VERSION}, that of chrony 2.2 and newer: update chrony",
                reply[0]
            ),
        ));
    }
    if status != STT_SUCCESS {
        return Err(status_error(status));
    }
    let kind = u16_at(6);
    if kind != RPY_TRACKING {
        return Err(bad(format!(
            "reply type {kind} to a tracking request (expected {RPY_TRACKING})"
        )));
    }
    if reply.len() < TRACKING_REPLY_LEN {
        return Err(bad(format!(
            "a tracking reply of {} bytes, expected {TRACKING_REPLY_LEN}",
            reply.len()
        )));
    }
    let leap = match u16_at(54) {
        0 => Leap::Normal,
        1 => Leap::InsertSecond,
        2 => Leap::DeleteSecond,
        3 => Leap::Unsynchronised,
        other => return Err(bad(format!("leap status {other}, not one of 0 to 3"))),
    };
    let high = match u32_at(56) {
        TV_NOHIGHSEC => 0,
        high => u64::from(high),
    };
    let seconds = high << 32 | u64::from(u32_at(60));
    // chronyd's own reading caps the nanoseconds the same way.
    let nanos = u64::from(u32_at(64).min(999_999_999));
    let ref_time_ns = seconds
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(nanos))
        .ok_or_else(|| {
            bad(format!(
                "a reference time of {seconds} s, beyond 64-bit nanoseconds"
            ))
        })?;
    let float_at = |at: usize| chrony_float(u32_at(at));
    Ok(Tracking {
        ref_id: u32_at(28),
        stratum: u16_at(52),
        leap,
        ref_time_ns,
        current_correction_s: float_at(68),
        last_offset_s: float_at(72),
        rms_offset_s: float_at(76),
        freq_ppm: float_at(80),
        resid_freq_ppm: float_at(84),
        skew_ppm: float_at(88),
        root_delay_s: float_at(92),
        root_dispersion_s: float_at(96),
        last_update_interval_s: float_at(100),
    })
}

/// chrony's 32-bit float (`UTI_FloatNetworkToHost`): the top 7 bits are a
/// signed exponent, the low 25 a signed coefficient; coefficient × 2^(exponent − 25).
fn chrony_float(bits: u32) -> f64 {
    let exponent = (bits as i32) >> 25;
    let coefficient = ((bits << 7) as i32) >> 7;
    f64::from(coefficient) * 2f64.powi(exponent - 25)
}

fn status_error(status: u16) -> Error {
    let (kind, what) = match status {
        STT_FAILED => (ErrorKind::Os, "\"failure\": see chronyd's log"),
        STT_UNAUTH => (
            ErrorKind::Permission,
            "\"not authorised\": ask on chronyd's Unix command socket, as root",
        ),
        STT_INVALID => (
            ErrorKind::Version,
            "\"invalid command\": this chronyd does not know the tracking request; update chrony",
        ),
        STT_NOHOSTACCESS => (
            ErrorKind::Permission,
            "\"no command access from this host\": allow this host with cmdallow in \
             chrony.conf, or ask from localhost",
        ),
        STT_BADPKTVERSION | STT_BADPKTLENGTH => (
            ErrorKind::Version,
            "\"protocol mismatch\": this chronyd does not speak command protocol version 6, \
             that of chrony 2.2 and newer",
        ),
        _ => (
            ErrorKind::Corrupt,
            "that hrts does not expect: see chronyd's log",
        ),
    };
    Error::new(
        kind,
        format!("chronyd answered the tracking request with status {status}, {what}"),
    )
}

fn unix_error(socket: &Path, e: &io::Error) -> Error {
    let path = socket.display();
    match e.kind() {
        io::ErrorKind::NotFound => Error::new(
            ErrorKind::Os,
            format!(
                "no chronyd command socket at {path} ({e}): is chronyd running? its command \
                 socket is {DEFAULT_SOCKET} unless bindcmdaddress in chrony.conf says otherwise"
            ),
        ),
        io::ErrorKind::PermissionDenied => Error::new(
            ErrorKind::Permission,
            format!(
                "no access to chronyd's command socket {path} ({e}): chronyd's Unix socket is for \
                 root (and chronyd's own user) only; run as root, or ask chronyd's UDP command \
                 port instead (tracking_udp, 127.0.0.1:{DEFAULT_PORT}), which answers this \
                 request from localhost"
            ),
        ),
        io::ErrorKind::ConnectionRefused => Error::new(
            ErrorKind::Os,
            format!(
                "nothing serves the socket {path} ({e}): the file is left from a chronyd that \
                 has stopped; is chronyd running?"
            ),
        ),
        _ => Error::from_io(format!("asking chronyd at {path}"), e, ""),
    }
}

/// This process's end of a Unix-socket exchange: a socket bound to a path of
/// its own, removed (with its private directory, if any) when dropped.
struct ReplySocket {
    sock: UnixDatagram,
    path: PathBuf,
    own_dir: Option<PathBuf>,
}

impl ReplySocket {
    fn bind(server: &Path) -> Result<ReplySocket> {
        let name = format!("hrts.{}.{:08x}.sock", std::process::id(), random_u32());
        // chronyc's place: chronyd can reach its own directory even where
        // systemd hides the temporary directory from it.
        let server_dir = match server.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        if let Ok(s) = Self::bind_in(server_dir, &name, None) {
            return Ok(s);
        }
        let dir = private_dir()?;
        Self::bind_in(&dir, &name, Some(dir.clone())).map_err(|e| {
            let _ = fs::remove_dir(&dir);
            Error::from_io(
                format!("binding a socket for chronyd's reply in {}", dir.display()),
                &e,
                "set TMPDIR to a short, writable directory",
            )
        })
    }

    fn bind_in(dir: &Path, name: &str, own_dir: Option<PathBuf>) -> io::Result<ReplySocket> {
        let path = dir.join(name);
        let sock = UnixDatagram::bind(&path)?;
        let reply = ReplySocket {
            sock,
            path,
            own_dir,
        };
        // chronyd drops root for its own user, which must still be able to answer.
        fs::set_permissions(&reply.path, fs::Permissions::from_mode(0o666))?;
        Ok(reply)
    }
}

impl Drop for ReplySocket {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        if let Some(dir) = &self.own_dir {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// A new directory under the temporary directory that chronyd's user may pass
/// through but not list (mode 0711).
fn private_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    let mut last = None;
    for _ in 0..8 {
        let dir = base.join(format!(
            "hrts-chrony.{}.{:08x}",
            std::process::id(),
            random_u32()
        ));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                // Set after creation: the umask may have taken the search bits.
                return match fs::set_permissions(&dir, fs::Permissions::from_mode(0o711)) {
                    Ok(()) => Ok(dir),
                    Err(e) => {
                        let _ = fs::remove_dir(&dir);
                        Err(Error::from_io(format!("chmod {}", dir.display()), &e, ""))
                    }
                };
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Error::from_io(
                    format!("creating {}", dir.display()),
                    &e,
                    "set TMPDIR to a writable directory",
                ))
            }
        }
    }
    let e = last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists));
    Err(Error::from_io(
        format!("creating a directory in {}", base.display()),
        &e,
        "",
    ))
}

/// Unpredictable enough for a sequence number or a file name: std's hasher
/// keys come from the operating system's random source.
fn random_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    fn reply(sequence: u32) -> [u8; TRACKING_REPLY_LEN] {
        let mut r = [0u8; TRACKING_REPLY_LEN];
        r[0] = PROTO_VERSION;
        r[1] = PKT_TYPE_REPLY;
        r[4..6].copy_from_slice(&REQ_TRACKING.to_be_bytes());
        r[6..8].copy_from_slice(&RPY_TRACKING.to_be_bytes());
        r[16..20].copy_from_slice(&sequence.to_be_bytes());
        r
    }

    fn put(r: &mut [u8], at: usize, v: u32) {
        r[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    #[test]
    fn floats_decode_as_chrony_encodes_them() {
        // exponent 0, coefficient 2^24 - 1: just under 0.5.
        assert_eq!(
            chrony_float(0x00ff_ffff),
            (2f64.powi(24) - 1.0) / 2f64.powi(25)
        );
        // a coefficient with its sign bit (bit 24) set is negative.
        assert_eq!(chrony_float(0x0100_0000), -0.5);
        assert_eq!(chrony_float(0x01ff_ffff), -(2f64.powi(-25)));
        // exponent -1 (0x7f in 7 bits), coefficient 3: 3 × 2^-26.
        assert_eq!(chrony_float(0xfe00_0003), 3.0 * 2f64.powi(-26));
        // exponent 63 (the largest), coefficient 1.
        assert_eq!(chrony_float(0x7e00_0001), 2f64.powi(38));
        assert_eq!(chrony_float(0), 0.0);
    }

    #[test]
    fn a_reply_is_decoded_field_by_field() {
        let mut r = reply(0xdead_beef);
        put(&mut r, 28, 0x7f00_0001);
        r[52..54].copy_from_slice(&2u16.to_be_bytes());
        r[54..56].copy_from_slice(&1u16.to_be_bytes());
        put(&mut r, 56, TV_NOHIGHSEC);
        put(&mut r, 60, 1_700_000_000);
        put(&mut r, 64, 2_000_000_000); // capped at 999,999,999 as chronyd does
        for (i, at) in (68..104).step_by(4).enumerate() {
            // exponent -20, coefficient i + 1: (i + 1) × 2^-45.
            put(&mut r, at, (0x6c << 25) | (i as u32 + 1));
        }
        let t = parse_reply(&r, 0xdead_beef).unwrap();
        let f = |i: i32| f64::from(i) * 2f64.powi(-45);
        assert_eq!(t.ref_id, 0x7f00_0001);
        assert_eq!(t.stratum, 2);
        assert_eq!(t.leap, Leap::InsertSecond);
        assert_eq!(t.ref_time_ns, 1_700_000_000_999_999_999);
        assert_eq!(
            [
                t.current_correction_s,
                t.last_offset_s,
                t.rms_offset_s,
                t.freq_ppm,
                t.resid_freq_ppm,
                t.skew_ppm,
                t.root_delay_s,
                t.root_dispersion_s,
                t.last_update_interval_s
            ],
            [f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9)]
        );
        let exact = f(7) / 2.0 + f(8) + f(1);
        assert_eq!(t.bound_ns(), (exact * 1e9).ceil() as u64);
    }

    #[test]
    fn the_request_is_chronycs() {
        let r = request(0x0102_0304, 2);
        assert_eq!(r.len(), 104);
        assert_eq!(&r[..12], &[6, 1, 0, 0, 0, 33, 0, 2, 1, 2, 3, 4]);
        assert!(r[12..].iter().all(|&b| b == 0));
    }

    #[test]
    fn bad_replies_are_errors_that_say_why() {
        let seq = 7;
        let kind = |r: &[u8]| parse_reply(r, seq).unwrap_err().kind();
        assert_eq!(kind(&reply(seq)[..27]), ErrorKind::Corrupt);
        assert_eq!(kind(&reply(seq)[..103]), ErrorKind::Corrupt);
        assert_eq!(kind(&reply(seq + 1)), ErrorKind::Corrupt);
        let mut r = reply(seq);
        r[8..10].copy_from_slice(&STT_UNAUTH.to_be_bytes());
        let e = parse_reply(&r[..28], seq).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Permission);
        assert!(e.message().contains("not authorised"), "{e}");
        let mut r = reply(seq);
        r[0] = 5;
        r[8..10].copy_from_slice(&STT_BADPKTVERSION.to_be_bytes());
        assert_eq!(kind(&r[..28]), ErrorKind::Version);
        let mut r = reply(seq);
        r[54..56].copy_from_slice(&4u16.to_be_bytes());
        assert_eq!(kind(&r), ErrorKind::Corrupt);
        let mut r = reply(seq);
        put(&mut r, 56, 0xffff_0000);
        assert_eq!(kind(&r), ErrorKind::Corrupt);
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = Rng(23);
        let mut buf = [0u8; 300];
        for round in 0..20_000 {
            let n = rng.below(buf.len() as u64 + 1) as usize;
            buf.iter_mut().for_each(|b| *b = rng.next() as u8);
            let seq = rng.next() as u32;
            if round % 2 == 0 && n >= REPLY_HEADER_LEN {
                // a header that passes, so the body's checks are reached too
                buf[..REPLY_HEADER_LEN].copy_from_slice(&reply(seq)[..REPLY_HEADER_LEN]);
            }
            if let Ok(t) = parse_reply(&buf[..n], seq) {
                assert!(n >= TRACKING_REPLY_LEN);
                let _ = t.bound_ns();
            }
        }
    }
}
