//! The chronyd client (`hrts_core::clock::chrony`) against real chronyd
//! processes and real sockets (issue 23):
//!
//! - in a network namespace of the test's own (only a loopback interface), one
//!   chronyd serves its clock as stratum 1 (`local stratum 1`) on port 11123 and
//!   a second one follows it every 1/16 s; both run with `-x`, so neither ever
//!   adjusts the system clock, with configurations, sockets and pid files in a
//!   directory of the test's own (the system's chronyd, if any, is never
//!   asked). Once the follower reports stratum 2, its report over the Unix
//!   socket is checked for plausibility, field by field against
//!   `chronyc -c tracking` of the same update, against the UDP command port,
//!   and as a non-root member of chronyd's group asks it (whose reply socket
//!   goes to a private directory under the temporary directory);
//! - the error paths: a socket path that does not exist, a socket file nobody
//!   serves, a socket this user may not open, a UDP port with nobody behind it
//!   and one whose owner never answers (each within its timeout), and a peer of
//!   the test's own that answers with garbage, short, foreign or refusing
//!   replies: each is an error that says what happened, nothing panics.
//!
//! What needs chronyd, namespaces or another user's view needs root (as CI
//! runs them); without it those tests say so and are skipped. chronyd comes
//! from Debian's `chrony` package (scripts/bootstrap.sh installs it).
// chronyd and its Unix socket are Linux only.
#![cfg(not(windows))]

use hrts_core::clock::chrony::{self, Leap, Tracking};
use hrts_core::ErrorKind;
use hrts_test_support::chrony::{
    in_new_netns, program, root_or_skip, server_conf, Chronyd, TestDir,
};
use hrts_test_support::Rng;
use std::fs;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The port the serving chronyd answers NTP on, inside the test's namespace.
const NTP_PORT: u16 = 11123;
/// The follower's UDP command port, inside the test's namespace.
const CMD_PORT: u16 = 11323;
/// chronyd's reference ID for its `local` reference ("LOCL" in chronyc).
const LOCAL_REF_ID: u32 = 0x7f7f_0101;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// `chronyc -c tracking` on the socket `on`, as its comma-separated fields.
fn chronyc_tracking(on: &Path) -> Vec<String> {
    let out = Command::new(program("chronyc"))
        .args(["-n", "-c", "-h"])
        .arg(on)
        .arg("tracking")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "chronyc: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fields: Vec<String> = text.trim_end().split(',').map(String::from).collect();
    assert_eq!(fields.len(), 14, "chronyc -c tracking: {text}");
    fields
}

/// chronyc's `seconds.nanoseconds` as nanoseconds.
fn csv_time_ns(field: &str) -> u64 {
    let (s, ns) = field.split_once('.').unwrap();
    assert_eq!(ns.len(), 9, "{field}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap()
}

fn csv_f64(field: &str) -> f64 {
    field.parse().unwrap_or_else(|e| panic!("{field:?}: {e}"))
}

/// `x` within `tol` of chronyc's printed `field` (chronyc rounds to its digits).
fn close(what: &str, x: f64, field: &str, tol: f64) {
    let printed = csv_f64(field);
    assert!(
        (x - printed).abs() <= tol,
        "{what}: hrts {x:e}, chronyc {field}"
    );
}

/// Between two readings (a value that grows or moves between updates).
fn between(what: &str, a: f64, b: f64, field: &str) {
    let printed = csv_f64(field);
    let (lo, hi) = (a.min(b) - 1e-9, a.max(b) + 1e-9);
    assert!(
        (lo..=hi).contains(&printed),
        "{what}: chronyc {field} outside hrts's {a:e} .. {b:e}"
    );
}

#[test]
fn tracking_from_a_real_chronyd() {
    if !root_or_skip("two chronyd in a network namespace of the test's") {
        return;
    }
    in_new_netns(real_chronyd);
}

fn real_chronyd() {
    let started = Instant::now();
    let dir = TestDir::new("real");
    let server_sock = dir.path("server/chronyd.sock");
    let client_sock = dir.path("client/chronyd.sock");
    let mut server = Chronyd::start(dir.root(), "server", &server_conf(NTP_PORT, &server_sock));
    let mut client = Chronyd::start(
        dir.root(),
        "client",
        &format!(
            "server 127.0.0.1 port {NTP_PORT} iburst minpoll -4 maxpoll -4\nport 0\n\
             bindcmdaddress 127.0.0.1\nbindcmdaddress {}\ncmdport {CMD_PORT}\n\
             cmdallow 127.0.0.1\n",
            client_sock.display()
        ),
    );

    // Until the follower has selected the server (chronyd needs a few samples) and
    // settled: its first update after selecting a source can carry the skew of a
    // single sample (1e6 ppm) and a root dispersion of over a second.
    let mut first: Option<Tracking> = None;
    let mut last_error = None;
    let t = loop {
        match chrony::tracking(&client_sock, Duration::from_millis(500)) {
            Ok(t) => {
                let synced = t.stratum == 2 && t.ref_id != 0 && t.root_dispersion_s < 1.0;
                first.get_or_insert_with(|| t.clone());
                if synced {
                    break t;
                }
            }
            Err(e) => last_error = Some(e),
        }
        server.assert_running();
        client.assert_running();
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the follower reported no settled stratum 2 within 30 s; first report {first:?}, last \
             error {last_error:?}\n{}\n{}",
            server.log(),
            client.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "the follower synchronised {:.1} s after the start: {t:?}",
        started.elapsed().as_secs_f64()
    );
    let first = first.unwrap();
    if first.ref_id == 0 {
        // Asked before its first update: chronyd's unsynchronised report.
        assert_eq!(first.leap, Leap::Unsynchronised, "{first:?}");
        assert_eq!(first.stratum, 0, "{first:?}");
    }

    // The report itself.
    assert_eq!(t.ref_id, 0x7f00_0001, "the server's IPv4 address");
    assert_eq!(t.stratum, 2);
    assert_eq!(t.leap, Leap::Normal);
    let age_s = (now_ns() as f64 - t.ref_time_ns as f64) / 1e9;
    assert!(age_s.abs() < 60.0, "ref time {age_s} s ago: {t:?}");
    for (what, v) in [
        ("root delay", t.root_delay_s),
        ("root dispersion", t.root_dispersion_s),
        ("|current correction|", t.current_correction_s.abs()),
        ("rms offset", t.rms_offset_s),
        ("last update interval", t.last_update_interval_s),
    ] {
        assert!((0.0..1.0).contains(&v), "{what} {v}: {t:?}");
    }
    assert!(t.skew_ppm >= 0.0, "{t:?}");
    let formula = t.root_delay_s / 2.0 + t.root_dispersion_s + t.current_correction_s.abs();
    assert!(t.bound_ns() > 0, "{t:?}");
    assert_eq!(t.bound_ns(), (formula * 1e9).ceil() as u64);

    // chronyc's view of the same update: hrts before and after it, until no
    // update (every 1/16 s) fell between the three readings.
    let mut tries = 0;
    loop {
        tries += 1;
        let a = chrony::tracking(&client_sock, Duration::from_secs(2)).unwrap();
        let c = chronyc_tracking(&client_sock);
        let b = chrony::tracking(&client_sock, Duration::from_secs(2)).unwrap();
        let c_time = csv_time_ns(&c[3]);
        if a.ref_time_ns != b.ref_time_ns || c_time != a.ref_time_ns {
            assert!(tries < 50, "chronyd updated during every one of 50 tries");
            continue;
        }
        assert_eq!(u32::from_str_radix(&c[0], 16).unwrap(), a.ref_id, "{c:?}");
        assert_eq!(c[2].parse::<u16>().unwrap(), a.stratum, "{c:?}");
        assert_eq!(c[13], "Normal");
        assert_eq!(a.leap, Leap::Normal);
        between(
            "current correction",
            a.current_correction_s,
            b.current_correction_s,
            &c[4],
        );
        close("last offset", a.last_offset_s, &c[5], 0.51e-9);
        close("rms offset", a.rms_offset_s, &c[6], 0.51e-9);
        close("frequency", a.freq_ppm, &c[7], 0.51e-3);
        close("residual frequency", a.resid_freq_ppm, &c[8], 0.51e-3);
        close("skew", a.skew_ppm, &c[9], 0.51e-3);
        close("root delay", a.root_delay_s, &c[10], 0.51e-9);
        between(
            "root dispersion",
            a.root_dispersion_s,
            b.root_dispersion_s,
            &c[11],
        );
        close("update interval", a.last_update_interval_s, &c[12], 0.051);
        eprintln!("chronyc agreed on try {tries}: {c:?}");
        break;
    }

    // The UDP command port gives the same report.
    let udp = SocketAddr::from(([127, 0, 0, 1], CMD_PORT));
    let u = chrony::tracking_udp(udp, Duration::from_secs(2)).unwrap();
    let unix = chrony::tracking(&client_sock, Duration::from_secs(2)).unwrap();
    assert_eq!(
        (u.ref_id, u.stratum, u.leap),
        (unix.ref_id, 2, Leap::Normal)
    );
    assert!(
        u.ref_time_ns.abs_diff(unix.ref_time_ns) < 2_000_000_000,
        "{u:?} {unix:?}"
    );
    assert!(u.bound_ns() > 0);

    // A user of chronyd's group who is not root, where the socket is opened to
    // the group (chronyd makes it 0755; an administrator may add g+w for a
    // monitoring service): it may use the socket but not create its reply
    // socket next to it, so that goes to a private directory under the
    // temporary directory, where chronyd (as _chrony) still answers.
    let group = fs::metadata(dir.path("client")).unwrap().gid();
    fs::set_permissions(&client_sock, fs::Permissions::from_mode(0o770)).unwrap();
    let sock = client_sock.clone();
    let one = private_dirs();
    let g = std::thread::spawn(move || {
        as_fs_user(65534, group);
        chrony::tracking(&sock, Duration::from_secs(2))
    })
    .join()
    .unwrap()
    .unwrap();
    assert_eq!((g.ref_id, g.stratum, g.leap), (t.ref_id, 2, Leap::Normal));
    assert!(private_dirs_left().is_empty(), "{:?}", private_dirs_left());
    drop(one);

    // And the server reports its local reference.
    let s = chrony::tracking(&server_sock, Duration::from_secs(2)).unwrap();
    assert_eq!(
        (s.ref_id, s.stratum, s.leap),
        (LOCAL_REF_ID, 1, Leap::Normal),
        "{s:?}"
    );

    server.assert_running();
    client.assert_running();
    drop((server, client));
    // The reply sockets went with their requests: only chronyd's own are left.
    for (sub, sock) in [("server", "chronyd.sock"), ("client", "chronyd.sock")] {
        let left: Vec<String> = fs::read_dir(dir.path(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != sock)
            .collect();
        assert!(left.is_empty(), "left in {sub}/: {left:?}");
    }
    eprintln!("took {:.1} s", started.elapsed().as_secs_f64());
}

/// Makes the calling thread's file-system identity `uid`:`gid`, so that what
/// it opens and creates is checked as that user's would be (root's file
/// capabilities go with the user ID 0).
fn as_fs_user(uid: u32, gid: u32) {
    // SAFETY: setfsgid and setfsuid change the file-system IDs of the calling
    // thread alone (glibc does not spread them to other threads); no memory is
    // involved.
    unsafe {
        libc::setfsgid(gid);
        libc::setfsuid(uid);
    }
    // SAFETY: as above; a second call returns the ID now in force.
    let now = unsafe { (libc::setfsgid(gid), libc::setfsuid(uid)) };
    assert_eq!(now, (gid as i32, uid as i32), "setfsgid, setfsuid");
}

/// Held by the tests whose reply socket goes to a private directory, so each
/// sees only its own.
static PRIVATE_DIRS: Mutex<()> = Mutex::new(());

fn private_dirs() -> MutexGuard<'static, ()> {
    PRIVATE_DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's private reply directories that are still there.
fn private_dirs_left() -> Vec<String> {
    let prefix = format!("hrts-chrony.{}.", std::process::id());
    fs::read_dir(std::env::temp_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn a_missing_socket_asks_whether_chronyd_runs() {
    let _one = private_dirs();
    let e = chrony::tracking(
        Path::new("/nonexistent-hrts-test/chronyd.sock"),
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Os, "{e}");
    assert!(e.message().contains("is chronyd running?"), "{e}");
    assert!(
        e.message().contains("/nonexistent-hrts-test/chronyd.sock"),
        "{e}"
    );
    assert!(private_dirs_left().is_empty(), "{:?}", private_dirs_left());
}

#[test]
fn a_socket_file_nobody_serves_is_refused() {
    let dir = TestDir::new("stale");
    let path = dir.path("chronyd.sock");
    drop(UnixDatagram::bind(&path).unwrap());
    let e = chrony::tracking(&path, Duration::from_secs(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Os, "{e}");
    assert!(e.message().contains("nothing serves"), "{e}");
    assert_eq!(dir.entries(), ["chronyd.sock"]);
}

#[test]
fn a_socket_of_root_and_chronyd_alone_is_a_permission_error() {
    if !root_or_skip("another user's view of a socket (setfsuid)") {
        return;
    }
    let _one = private_dirs();
    let dir = TestDir::new("perm");
    // Like /run/chrony: a directory only its owner and group may enter.
    let inner = dir.path("run");
    fs::create_dir(&inner).unwrap();
    fs::set_permissions(&inner, fs::Permissions::from_mode(0o750)).unwrap();
    let path = inner.join("chronyd.sock");
    let _served = UnixDatagram::bind(&path).unwrap();
    let e = std::thread::spawn(move || {
        as_fs_user(65534, 65534);
        chrony::tracking(&path, Duration::from_secs(1))
    })
    .join()
    .unwrap()
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Permission, "{e}");
    assert!(e.message().contains("UDP command port"), "{e}");
    assert!(private_dirs_left().is_empty(), "{:?}", private_dirs_left());
}

#[test]
fn a_udp_port_nobody_has_is_refused() {
    let addr = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let t0 = Instant::now();
    let e = chrony::tracking_udp(addr, Duration::from_secs(2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Os, "{e}");
    assert!(e.message().contains("nothing listens"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

#[test]
fn a_udp_port_that_never_answers_times_out() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let t0 = Instant::now();
    let e = chrony::tracking_udp(addr, Duration::from_millis(600)).unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.message().contains("no reply from chronyd"), "{e}");
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_secs(2),
        "{took:?}"
    );
    // The request went out again while no answer came, as chronyc's does.
    silent.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 512];
    let mut got = Vec::new();
    while let Ok(n) = silent.recv(&mut buf) {
        got.push(buf[..n].to_vec());
    }
    assert!(got.len() >= 2, "{} requests", got.len());
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.len(), 104);
        assert_eq!(&r[..8], &[6, 1, 0, 0, 0, 33, 0, i as u8]);
        assert_eq!(
            r[8..12],
            got[0][8..12],
            "one sequence number for every resend"
        );
    }
}

/// What the fake server answers one request with.
enum Answer {
    Bytes(Vec<u8>),
    Silence,
}

/// How the fake server answers a request, given its sequence number's bytes.
type Responder = Box<dyn Fn(&[u8]) -> Answer + Send>;

/// A reply header that passes every check for the request numbered `seq`.
fn header(seq: &[u8], status: u16, reply: u16) -> Vec<u8> {
    let mut r = vec![6, 2, 0, 0, 0, 33];
    r.extend(reply.to_be_bytes());
    r.extend(status.to_be_bytes());
    r.extend([0; 6]);
    r.extend(seq);
    r.extend([0; 8]);
    r
}

#[test]
fn a_fake_server_s_garbage_is_an_error_never_a_panic() {
    let dir = TestDir::new("fake");
    let path = dir.path("chronyd.sock");
    let fake = UnixDatagram::bind(&path).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Responder>();
    // Answers each new request (a new sequence number) with the next answer;
    // resends of a request it keeps silent on get silence again.
    let server = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut answer: Option<Responder> = None;
        let mut last_seq = None;
        loop {
            let (n, from) = fake.recv_from(&mut buf).unwrap();
            if n == 0 {
                return; // the test's stop signal
            }
            let req = &buf[..n];
            assert_eq!(n, 104, "a request padded to the reply's length");
            assert_eq!(&req[..6], &[6, 1, 0, 0, 0, 33]);
            let seq = req[8..12].to_vec();
            if last_seq.as_ref() != Some(&seq) {
                answer = Some(rx.recv().unwrap());
                last_seq = Some(seq.clone());
            }
            if let Answer::Bytes(bytes) = answer.as_ref().unwrap()(&seq) {
                fake.send_to(&bytes, from.as_pathname().unwrap()).unwrap();
            }
        }
    });
    let ask = |answer: Responder| {
        tx.send(answer).unwrap();
        chrony::tracking(&path, Duration::from_millis(700))
    };
    let fails = |answer: Responder, kind: ErrorKind, says: &str| {
        let e = ask(answer).unwrap_err();
        assert_eq!(e.kind(), kind, "{e}");
        assert!(e.message().contains(says), "{e}");
    };

    fails(
        Box::new(|_| Answer::Bytes(Vec::new())),
        ErrorKind::Corrupt,
        "a reply of 0 bytes",
    );
    fails(
        Box::new(|seq| Answer::Bytes(header(seq, 0, 5)[..27].to_vec())),
        ErrorKind::Corrupt,
        "shorter than the 28-byte header",
    );
    fails(
        Box::new(|_| Answer::Bytes(header(&[1, 2, 3, 4], 0, 5))),
        ErrorKind::Corrupt,
        "a reply to another request",
    );
    fails(
        Box::new(|seq| Answer::Bytes(header(seq, 2, 1))),
        ErrorKind::Permission,
        "not authorised",
    );
    fails(
        Box::new(|seq| {
            let mut r = header(seq, 18, 1);
            r[0] = 5;
            Answer::Bytes(r)
        }),
        ErrorKind::Version,
        "protocol version 5",
    );
    fails(
        Box::new(|seq| {
            let mut r = header(seq, 0, 5);
            r.extend([0; 32]);
            Answer::Bytes(r)
        }),
        ErrorKind::Corrupt,
        "a tracking reply of 60 bytes, expected 104",
    );
    fails(
        Box::new(|seq| Answer::Bytes(header(seq, 0, 3))),
        ErrorKind::Corrupt,
        "reply type 3",
    );
    fails(
        Box::new(|seq| {
            let mut r = header(seq, 0, 5);
            r.extend([0; 76]);
            r[54..56].copy_from_slice(&9u16.to_be_bytes());
            Answer::Bytes(r)
        }),
        ErrorKind::Corrupt,
        "leap status 9",
    );
    let t0 = Instant::now();
    fails(
        Box::new(|_| Answer::Silence),
        ErrorKind::Timeout,
        "no reply from chronyd",
    );
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());

    // A well-formed reply, through the socket: every field where candm.h puts it.
    let t = ask(Box::new(|seq| {
        let mut r = header(seq, 0, 5);
        r.extend(0x0a00_0002u32.to_be_bytes()); // ref ID
        r.extend([0; 20]); // IPAddr
        r.extend(3u16.to_be_bytes()); // stratum
        r.extend(2u16.to_be_bytes()); // leap: delete second
        r.extend([0, 0, 0, 0]); // seconds, high
        r.extend(1_750_000_000u32.to_be_bytes()); // seconds, low
        r.extend(123_456_789u32.to_be_bytes()); // nanoseconds
        for i in 1..=9u32 {
            // exponent -20 (0x6c in 7 bits), coefficient -i: -i × 2^-45
            r.extend(((0x6c << 25) | (i.wrapping_neg() & 0x01ff_ffff)).to_be_bytes());
        }
        Answer::Bytes(r)
    }))
    .unwrap();
    let f = |i: f64| -i * 2f64.powi(-45);
    assert_eq!(t.ref_id, 0x0a00_0002);
    assert_eq!(t.stratum, 3);
    assert_eq!(t.leap, Leap::DeleteSecond);
    assert_eq!(t.ref_time_ns, 1_750_000_000_123_456_789);
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
            t.last_update_interval_s,
        ],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0].map(f)
    );
    // Negative delay and dispersion (chronyd sends none) add nothing.
    assert_eq!(t.bound_ns(), (-f(1.0) * 1e9).ceil() as u64);

    // Random bytes of any length, half of them behind a header that passes.
    let mut rng = Rng(0x2300);
    for round in 0..300 {
        let len = (rng.next() % 300) as usize;
        let body = rng.bytes(len);
        let with_header = round % 2 == 0;
        let r = ask(Box::new(move |seq| {
            let mut r = if with_header {
                header(seq, 0, 5)
            } else {
                Vec::new()
            };
            r.extend(&body);
            Answer::Bytes(r)
        }));
        if let Ok(t) = &r {
            assert!(with_header && len >= 76, "{t:?} from {len} random bytes");
        }
    }

    let stop = UnixDatagram::unbound().unwrap();
    stop.send_to(&[], &path).unwrap();
    server.join().unwrap();
    // Every reply socket went with its request.
    assert_eq!(dir.entries(), ["chronyd.sock"]);
}
