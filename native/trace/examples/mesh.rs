//! One process of a message mesh: it traces every message it sends to and
//! receives from the processes of the other hosts, syncing with the master
//! at the start and the end. `tests/trace/run.sh` runs 4 hosts × 4 of these.
//!
//! ```text
//! mesh --index I --peers FILE --messages N --out FILE --master HOST:PORT
//!      --turns DIR [--exchanges N] [--deadline-s S]
//! ```
//! FILE of peers: one line per process, `INDEX HOST ADDR:PORT`. Process I
//! listens on its own line's address and sends N messages round-robin to the
//! processes whose HOST differs from its own. Clock: `HRTS_SEGMENT`, skewed by
//! `HRTS_TEST_CLOCK_SKEW` in tests.
//!
//! As the Intel Trace Collector's master syncs with one process after another
//! at init and finalize, the processes take turns (files in DIR, shared by all
//! hosts): process I syncs once I-1 has, and the end syncs start once every
//! process has finished its messages, so rounds run on a quiet network.

use hrts_trace::{EventKind, SyncOptions, SyncPhase, TraceWriter, WriterOptions};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FRAME: usize = 16;

struct Peer {
    index: u32,
    host: String,
    addr: String,
}

struct Args {
    index: u32,
    peers: Vec<Peer>,
    messages: u64,
    out: String,
    master: String,
    exchanges: u32,
    deadline: Duration,
    turns: std::path::PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let (mut index, mut peers, mut messages, mut out, mut master) = (None, None, None, None, None);
    let mut turns = None;
    let (mut exchanges, mut deadline) = (50, 90.0);
    while let Some(flag) = a.next() {
        let v = a.next().ok_or(format!("{flag} needs a value"))?;
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag} {v:?} is not a number"))
        };
        match flag.as_str() {
            "--index" => index = Some(num(&v)? as u32),
            "--peers" => peers = Some(v),
            "--messages" => messages = Some(num(&v)?),
            "--out" => out = Some(v),
            "--master" => master = Some(v),
            "--exchanges" => exchanges = num(&v)? as u32,
            "--deadline-s" => deadline = num(&v)? as f64,
            "--turns" => turns = Some(std::path::PathBuf::from(v)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    let peers_file = peers.ok_or("--peers FILE is required")?;
    let text = std::fs::read_to_string(&peers_file).map_err(|e| format!("{peers_file}: {e}"))?;
    let peers = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [i, h, addr] => Ok(Peer {
                    index: i.parse().map_err(|_| format!("bad peer line {l:?}"))?,
                    host: h.to_string(),
                    addr: addr.to_string(),
                }),
                _ => Err(format!("bad peer line {l:?}: want INDEX HOST ADDR:PORT")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Args {
        index: index.ok_or("--index I is required")?,
        peers,
        messages: messages.ok_or("--messages N is required")?,
        out: out.ok_or("--out FILE is required")?,
        master: master.ok_or("--master HOST:PORT is required")?,
        exchanges,
        deadline: Duration::from_secs_f64(deadline),
        turns: turns.ok_or("--turns DIR is required")?,
    })
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mesh: {e}");
            std::process::exit(2);
        }
    };
    // Bounded whatever happens: a stuck peer must not hang the test.
    let deadline = args.deadline;
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        eprintln!("mesh: deadline of {deadline:?} passed; giving up");
        std::process::exit(3);
    });
    if let Err(e) = run(&args) {
        eprintln!("mesh {}: {e}", args.index);
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Result<(), String> {
    let me = a
        .peers
        .iter()
        .find(|p| p.index == a.index)
        .ok_or(format!("index {} is not in the peers file", a.index))?;
    let targets: Vec<&Peer> = a.peers.iter().filter(|p| p.host != me.host).collect();
    let opts = WriterOptions {
        host: Some(me.host.clone()),
        label: format!("mesh {}", a.index),
        format: None,
    };
    let writer = Arc::new(TraceWriter::create(&a.out, opts).map_err(|e| e.to_string())?);
    let sync = SyncOptions {
        exchanges: a.exchanges,
        ..SyncOptions::default()
    };
    let start = in_turn(a, "start", || {
        writer.sync(&a.master, SyncPhase::Start, sync)
    })?;

    let listener = TcpListener::bind(&me.addr).map_err(|e| format!("listen {}: {e}", me.addr))?;
    // Every process of the other hosts connects to us once.
    let incoming = a.peers.iter().filter(|p| p.host != me.host).count();
    let w = writer.clone();
    let acceptor = std::thread::spawn(move || -> Result<u64, String> {
        let mut readers = Vec::new();
        for _ in 0..incoming {
            let (s, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
            let w = w.clone();
            readers.push(std::thread::spawn(move || receive(s, &w)));
        }
        let mut n = 0;
        for r in readers {
            n += r.join().map_err(|_| "a reader panicked".to_string())??;
        }
        Ok(n)
    });

    let connect_until = Instant::now() + Duration::from_secs(30);
    let mut conns = Vec::new();
    for t in &targets {
        let s = loop {
            match TcpStream::connect(&t.addr) {
                Ok(s) => break s,
                Err(_) if Instant::now() < connect_until => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => return Err(format!("connect {}: {e}", t.addr)),
            }
        };
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        conns.push(s);
    }

    let ev = |k, name: &str, id| writer.event(k, name, id, b"").map_err(|e| e.to_string());
    ev(EventKind::Begin, "messages", 0)?;
    let mut frame = [0u8; FRAME];
    for n in 0..a.messages {
        let c = (n % conns.len() as u64) as usize;
        let id = (a.index as u64) << 32 | n;
        frame[..8].copy_from_slice(&id.to_le_bytes());
        frame[8..12].copy_from_slice(&a.index.to_le_bytes());
        ev(EventKind::Send, "send", id)?;
        conns[c]
            .write_all(&frame)
            .map_err(|e| format!("send to {}: {e}", targets[c].addr))?;
    }
    ev(EventKind::End, "messages", 0)?;
    for c in &conns {
        c.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
    }
    let received = acceptor
        .join()
        .map_err(|_| "the acceptor panicked".to_string())??;
    mark(a, &format!("done-{}", a.index))?;
    for p in &a.peers {
        wait_for(a, &format!("done-{}", p.index))?;
    }
    let end = in_turn(a, "end", || writer.sync(&a.master, SyncPhase::End, sync))?;
    let summary = writer.close().map_err(|e| e.to_string())?;
    println!(
        "mesh {} ({}): sent {}, received {received}, events {}, offset {:.1} us ± {:.1} at start, \
         {:.1} us ± {:.1} at end",
        a.index,
        me.host,
        a.messages,
        summary.events,
        -start.offset_ns / 1e3,
        start.bound_ns / 1e3,
        -end.offset_ns / 1e3,
        end.bound_ns / 1e3
    );
    Ok(())
}

/// Runs `f` after the process before this one ran its own, then tells the next.
fn in_turn<T>(a: &Args, what: &str, f: impl FnOnce() -> hrts_core::Result<T>) -> Result<T, String> {
    let before = a
        .peers
        .iter()
        .map(|p| p.index)
        .filter(|&i| i < a.index)
        .max();
    if let Some(b) = before {
        wait_for(a, &format!("{what}-{b}"))?;
    }
    let r = f().map_err(|e| e.to_string())?;
    mark(a, &format!("{what}-{}", a.index))?;
    Ok(r)
}

fn mark(a: &Args, name: &str) -> Result<(), String> {
    std::fs::write(a.turns.join(name), b"").map_err(|e| format!("{name}: {e}"))
}

/// Waits for another process's mark (bounded by the deadline watchdog).
fn wait_for(a: &Args, name: &str) -> Result<(), String> {
    let path = a.turns.join(name);
    while !path.exists() {
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Records a receive for every frame from one peer, until it closes.
fn receive(mut s: TcpStream, w: &TraceWriter) -> Result<u64, String> {
    let mut buf = vec![0u8; 64 * FRAME];
    let mut have = 0;
    let mut n = 0;
    loop {
        let got = s
            .read(&mut buf[have..])
            .map_err(|e| format!("receive: {e}"))?;
        if got == 0 {
            return if have == 0 {
                Ok(n)
            } else {
                Err(format!(
                    "a peer closed in the middle of a message ({have} bytes)"
                ))
            };
        }
        have += got;
        let whole = have / FRAME * FRAME;
        for f in buf[..whole].chunks_exact(FRAME) {
            let mut id = [0u8; 8];
            id.copy_from_slice(&f[..8]);
            w.event(EventKind::Receive, "recv", u64::from_le_bytes(id), b"")
                .map_err(|e| e.to_string())?;
            n += 1;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }
}
