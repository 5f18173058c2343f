//! `hrts sync serve` against datagrams that do not come from a real client of
//! the run: it answers only requests made with the run's key (and, with
//! `--peers`, from a listed address), never with more bytes than it received,
//! at most `--rate` a second per source address, and keeps serving real
//! clients through 100,000 random datagrams. Real processes, loopback only.

mod common;

use common::Segment;
use hrts_trace::sync::wire::{Reply, Request, SyncKey, HOST_REQUEST_LEN, REQUEST_LEN};
use std::io::{BufRead, BufReader, Lines};
use std::net::UdpSocket;
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

fn key() -> SyncKey {
    SyncKey::parse(KEY).unwrap()
}

/// A master process; killed if the test fails before it ends by itself.
struct Master {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    addr: String,
}

impl Master {
    fn start(seg: &Segment, extra: &[&str]) -> Master {
        let mut c = seg.command();
        c.args([
            "sync",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--idle-exit",
            "8",
        ])
        .args(["--max-seconds", "35"])
        .args(extra)
        .env("HRTS_SYNC_KEY", KEY)
        .stdout(Stdio::piped());
        let mut child = c.spawn().expect("spawn hrts sync serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let addr = first.strip_prefix("listening: ").expect(&first).to_string();
        Master { child, lines, addr }
    }

    /// Waits for the master to stop (idle) and returns what it printed.
    fn finish(mut self) -> String {
        let text: Vec<String> = self.lines.by_ref().map(Result::unwrap).collect();
        assert!(self.child.wait().unwrap().success());
        text.join("\n")
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn value(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key:?} in\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

fn socket(local: &str, master: &str) -> UdpSocket {
    let s = UdpSocket::bind(local).unwrap();
    s.connect(master).unwrap();
    s
}

/// Every datagram that arrives within `wait`, checking each is no longer than
/// `sent_len`.
fn replies(s: &UdpSocket, wait: Duration, sent_len: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let end = Instant::now() + wait;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.recv(&mut buf) {
            Ok(n) => {
                assert!(
                    n <= sent_len,
                    "a reply of {n} bytes to a request of {sent_len}"
                );
                got.push(buf[..n].to_vec());
            }
            Err(_) => break,
        }
    }
    got
}

/// A real client: `hrts sync --master` with (or without) the key.
fn client(seg: &Segment, addr: &str, key: Option<&str>) -> std::process::Output {
    let mut c = seg.command();
    c.args(["sync", "--master", addr, "--exchanges", "20"]);
    match key {
        Some(k) => c.env("HRTS_SYNC_KEY", k),
        None => c.env_remove("HRTS_SYNC_KEY"),
    };
    c.output().unwrap()
}

/// The datagrams the kernel dropped on their way to the UDP socket bound to
/// `addr` (an IPv4 `address:port`) because its receive buffer was full: the
/// last column of its row in `/proc/net/udp`.
fn kernel_drops(addr: &str) -> u64 {
    let addr: std::net::SocketAddrV4 = addr.parse().expect("an IPv4 address:port");
    // /proc/net/udp prints the address's network-order bytes read as a
    // host-order word.
    let ip = u32::from_ne_bytes(addr.ip().octets());
    let local = format!("{ip:08X}:{:04X}", addr.port());
    let table = std::fs::read_to_string("/proc/net/udp").unwrap();
    table
        .lines()
        .skip(1)
        .map(|row| row.split_whitespace().collect::<Vec<_>>())
        .find(|cols| cols.get(1) == Some(&local.as_str()))
        .unwrap_or_else(|| panic!("no socket {local} in /proc/net/udp:\n{table}"))
        .last()
        .unwrap()
        .parse()
        .unwrap()
}

/// xorshift64*: reproducible noise.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn only_the_runs_requests_get_answers_never_longer_than_they_are() {
    let seg = Segment::new();
    let master = Master::start(&seg, &[]);
    let key = key();
    let s = socket("127.0.0.1:0", &master.addr);
    // Both kinds of request get exactly one answer, no longer than they are.
    for (seq, host) in [(1u64, true), (2, false)] {
        let q = Request {
            seq,
            nonce: 77,
            host,
        }
        .encode(&key);
        s.send(&q).unwrap();
        let got = replies(&s, Duration::from_millis(500), q.len());
        assert_eq!(got.len(), 1, "request {seq}");
        let r = Reply::decode(&got[0], &key).expect("a reply sealed with the run's key");
        assert_eq!((r.seq, r.nonce), (seq, 77));
        assert_eq!(r.host.is_some(), host);
    }
    // Without the key (another one, or the right one on a changed request),
    // truncated, padded, of another version: nothing.
    let other = SyncKey::from_bytes([9; 16]);
    let good = Request {
        seq: 3,
        nonce: 78,
        host: true,
    }
    .encode(&key);
    let mut tampered = good.clone();
    tampered[8] ^= 1;
    let mut old_version = good.clone();
    old_version[4] = 1;
    let mut v1 = vec![0u8; 24];
    v1[..5].copy_from_slice(b"HRSQ\x01");
    let strangers: Vec<Vec<u8>> = vec![
        Request {
            seq: 3,
            nonce: 78,
            host: true,
        }
        .encode(&other),
        tampered,
        old_version,
        good[..HOST_REQUEST_LEN - 1].to_vec(),
        [good.as_slice(), &[0]].concat(),
        good[..REQUEST_LEN].to_vec(),
        v1,
        Vec::new(),
    ];
    for q in &strangers {
        s.send(q).unwrap();
    }
    assert!(replies(&s, Duration::from_millis(500), 0).is_empty());
    // A real client without the key gets nothing and says what to check.
    let out = client(&seg, &master.addr, None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HRTS_SYNC_KEY"), "{err}");
    let out = client(&seg, &master.addr, Some(KEY));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // 100,000 random datagrams from 8 sockets: random bytes of random
    // lengths, and random bodies of the exact shape of a request. Nothing
    // answers them; a real client is served during and after.
    let flood: Vec<UdpSocket> = (0..8)
        .map(|_| socket("127.0.0.1:0", &master.addr))
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut sent = 0u64;
    let during = std::thread::scope(|scope| {
        let real = scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            client(&seg, &master.addr, Some(KEY))
        });
        let mut buf = vec![0u8; 1500];
        for i in 0..100_000u32 {
            let len = match i % 4 {
                0 => REQUEST_LEN,
                1 => HOST_REQUEST_LEN,
                _ => (rng.next() % 1500) as usize,
            };
            for b in buf[..len].iter_mut() {
                *b = rng.next() as u8;
            }
            if i % 4 < 2 {
                // The shape of a request (magic, version, kind, zero
                // padding), a random code.
                buf[..8].copy_from_slice(&[b'H', b'R', b'S', b'Q', 2, (i % 4) as u8, 0, 0]);
                buf[32..len].fill(0);
            }
            // A full receive buffer drops datagrams: the kernel counts
            // them, and the count is checked below.
            if flood[i as usize % 8].send(&buf[..len]).is_ok() {
                sent += 1;
            }
        }
        real.join().unwrap()
    });
    assert!(
        during.status.success(),
        "a real client during the flood: {}",
        String::from_utf8_lossy(&during.stderr)
    );
    for f in &flood {
        assert!(replies(f, Duration::from_millis(100), 0).is_empty());
    }
    let out = client(&seg, &master.addr, Some(KEY));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The last client's answers came after every flood datagram was read (one
    // queue, in order), so the drop count is final.
    let dropped = kernel_drops(&master.addr);
    drop(s);
    let summary = master.finish();
    // 2 by hand + 3 client rounds of 20.
    assert_eq!(value(&summary, "exchanges:"), 62, "{summary}");
    assert_eq!(value(&summary, "rate limited:"), 0, "{summary}");
    let refused = value(&summary, "refused:");
    let ignored = value(&summary, "ignored:");
    assert!(refused >= 3, "{summary}");
    assert!(ignored >= 5, "{summary}");
    // Every flood datagram was either turned away or dropped by the kernel
    // before it arrived; how many arrive depends on the machine's load.
    assert!(sent > 0);
    assert!(
        refused + ignored + dropped >= sent,
        "{sent} sent, {dropped} dropped by the kernel\n{summary}"
    );
}

#[test]
fn a_peer_list_and_the_rate_limit_turn_requests_away() {
    let seg = Segment::new();
    let key = key();
    let master = Master::start(&seg, &["--peers", "127.0.0.2,10.9.0.0/16", "--rate", "50"]);
    let q = |seq| {
        Request {
            seq,
            nonce: 5,
            host: false,
        }
        .encode(&key)
    };
    // The key from an address not in the list: nothing.
    let stranger = socket("127.0.0.1:0", &master.addr);
    for seq in 1..=20 {
        stranger.send(&q(seq)).unwrap();
    }
    assert!(replies(&stranger, Duration::from_millis(500), 0).is_empty());
    // From a listed address: answered, up to the rate (50 a second, bursts of
    // 50) however fast it asks.
    let peer = socket("127.0.0.2:0", &master.addr);
    let started = Instant::now();
    for seq in 1..=500 {
        peer.send(&q(seq)).unwrap();
    }
    let got = replies(&peer, Duration::from_millis(300), REQUEST_LEN);
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        got.len() >= 40 && (got.len() as f64) <= 50.0 + 50.0 * elapsed + 1.0,
        "{} answers to 500 requests in {elapsed:.2} s",
        got.len()
    );
    assert!(got.iter().all(|r| Reply::decode(r, &key).is_some()));
    drop((stranger, peer));
    let summary = master.finish();
    assert!(
        summary.contains("peers: 127.0.0.2/32,10.9.0.0/16"),
        "{summary}"
    );
    assert_eq!(value(&summary, "refused:"), 20, "{summary}");
    // Every answer sent arrived; the rest of what arrived was over the rate
    // (loopback may drop some of a burst of 500 before the master reads it).
    let (limited, answered) = (
        value(&summary, "rate limited:"),
        value(&summary, "exchanges:"),
    );
    assert_eq!(answered, got.len() as u64, "{summary}");
    assert!(limited > 0 && limited + answered <= 500, "{summary}");
}

#[test]
fn the_master_prints_a_fresh_key_when_none_is_given() {
    let seg = Segment::new();
    let mut c = seg.command();
    c.args([
        "sync",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--idle-exit",
        "2",
    ])
    .args(["--max-seconds", "20", "--max-exchanges", "20"])
    .env_remove("HRTS_SYNC_KEY")
    .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut head = Vec::new();
    for _ in 0..5 {
        head.push(lines.next().unwrap().unwrap());
    }
    let addr = head[0].strip_prefix("listening: ").unwrap().to_string();
    let printed = head
        .iter()
        .find_map(|l| l.strip_prefix("key: "))
        .unwrap_or_else(|| panic!("{head:?}"))
        .to_string();
    assert_eq!(printed.len(), 32);
    assert!(!client(&seg, &addr, Some(KEY)).status.success());
    let out = client(&seg, &addr, Some(&printed));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
