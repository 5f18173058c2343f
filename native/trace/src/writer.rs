//! Writing a process's trace file: events with local ITC stamps, and the sync
//! rounds that let `hrts merge` map them onto the master's timeline.

use crate::clock::{Clock, ClockInfo, HostClock};
use crate::format::{
    encode_event, read_file, EventKind, Header, ReadOptions, Record, SyncRecord, FORMAT_VERSION,
    MAX_PAYLOAD_LEN,
};
use crate::sync::{sync_round, RoundResult, SyncOptions, SyncPhase};
use hrts_core::{Error, ErrorKind, Result};
use hrts_core::{ItcFormat, ItcStamper};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a new trace file is set up.
#[derive(Clone, Debug, Default)]
pub struct WriterOptions {
    /// Host name for the header (default: `HRTS_TRACE_HOST`, else the hostname).
    pub host: Option<String>,
    /// Free text naming the writer.
    pub label: String,
    /// Stamp layout (default: `HRTS_ITC_EVENT_BITS` / `HRTS_ITC_TICK_NS`).
    pub format: Option<ItcFormat>,
}

/// What a closed writer wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterSummary {
    pub events: u64,
    pub sync_rounds: u64,
    /// The maximum number of events on one clock tick, as Intel Trace Collector
    /// counts it (0: no two events shared a tick); also in the file's header.
    pub max_events_per_tick: u64,
}

/// A process's trace file. Thread-safe: events from any thread are stamped and
/// written under one lock, so the file holds them in stamp order.
pub struct TraceWriter {
    path: PathBuf,
    clock: Arc<dyn Clock>,
    stamper: ItcStamper,
    /// The most events on one tick among the records the file held before this
    /// writer (`append`); 0 for a new file.
    prior_max_events: u64,
    /// Whether the file takes BOUND records (not a version-1 file continued).
    records_bounds: bool,
    inner: Mutex<Inner>,
}

struct Inner {
    out: Option<BufWriter<File>>,
    names: HashMap<String, u32>,
    records: u64,
    events: u64,
    sync_rounds: u64,
    buf: Vec<u8>,
    /// The word of the last bound record and when it stops being fresh;
    /// `None` while the writer records no bounds.
    bound_watch: Option<(u64, u64)>,
}

impl TraceWriter {
    /// Creates (or replaces) `path`, stamping with this host's hrts timeline
    /// (`HRTS_SEGMENT`; skewed by `HRTS_TEST_CLOCK_SKEW` in tests).
    pub fn create(path: impl AsRef<Path>, opts: WriterOptions) -> Result<TraceWriter> {
        let clock = HostClock::from_env()?;
        let info = clock.info().clone();
        TraceWriter::with_clock(path, Arc::new(clock), info, opts)
    }

    /// Creates (or replaces) `path`, stamping with `clock`, described by `info`.
    pub fn with_clock(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        mut info: ClockInfo,
        opts: WriterOptions,
    ) -> Result<TraceWriter> {
        let path = path.as_ref().to_path_buf();
        if let Some(h) = &opts.host {
            info.host = h.clone();
        }
        let format = match opts.format {
            Some(f) => f,
            None => ItcFormat::from_env()?,
        };
        let origin = clock.now_ns();
        let header = Header {
            version: FORMAT_VERSION,
            flags: 0,
            event_bits: format.event_bits,
            pid: std::process::id(),
            tick_num: format.tick_ns,
            tick_den: 1,
            origin_ns: origin,
            clock: info,
            label: opts.label,
            max_events_per_tick: None,
        };
        let file = File::create(&path).map_err(|e| {
            Error::from_io(
                format!("cannot create trace file {}", path.display()),
                &e,
                "check that its directory exists and is writable",
            )
        })?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        out.write_all(&header.encode())
            .map_err(|e| write_error(&path, &e))?;
        let w = TraceWriter {
            path,
            clock,
            stamper: ItcStamper::new(format, origin),
            prior_max_events: 0,
            records_bounds: true,
            inner: Mutex::new(Inner {
                out: Some(out),
                names: HashMap::new(),
                records: 0,
                events: 0,
                sync_rounds: 0,
                buf: Vec::with_capacity(256),
                bound_watch: None,
            }),
        };
        w.record_bound()?;
        Ok(w)
    }

    /// Opens an existing complete trace file of the same clock to add records
    /// (the CLI's `hrts sync --out FILE`, run at the start and again at the end).
    /// A file of another clock is refused: its stamps would not mean the same.
    pub fn append(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        info: &ClockInfo,
    ) -> Result<TraceWriter> {
        let path = path.as_ref().to_path_buf();
        let old = read_file(&path, ReadOptions::default())?;
        let h = &old.header;
        if h.is_global() || h.clock.clock_id != info.clock_id || h.tick_den != 1 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{} was written on another clock (host {}, segment {}): its records cannot \
                     be continued from here; write to a new file",
                    path.display(),
                    h.clock.host,
                    h.clock.segment
                ),
            ));
        }
        let format = ItcFormat::new(h.event_bits, h.tick_num)?;
        let names: HashMap<String, u32> = old.names.iter().map(|(k, v)| (v.clone(), *k)).collect();
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| write_error(&path, &e))?;
        let stamper = ItcStamper::new(format, h.origin_ns);
        let mask = (1u64 << h.event_bits) - 1;
        let prior_max_events = old.events.iter().map(|e| e.stamp & mask).max();
        let prior_max_events = prior_max_events.unwrap_or(0);
        // Stamps continue after the file's last one, so they stay unique: the
        // stamper issues stamps on the last stamp's tick until it has issued
        // that stamp (one per event the file holds on that tick), so the next
        // stamp is at least the last one + 1.
        if let Some(last) = old.events.iter().map(|e| e.stamp).max() {
            // Every stamp on a tick belongs to an event of the file, so the
            // loop below runs at most once per event; a larger counter is damage.
            if last & mask >= old.events.len() as u64 {
                return Err(Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "{}: its last stamp has event counter {} but the file holds only {} \
                         events, so it is damaged: write to a new file",
                        path.display(),
                        last & mask,
                        old.events.len()
                    ),
                ));
            }
            let at = h.origin_ns + (last >> h.event_bits) * h.tick_num;
            while stamper.stamp_at(at)? < last {}
        }
        let w = TraceWriter {
            path,
            clock,
            stamper,
            prior_max_events,
            // A file of format version 1 stays one that its own hrts reads.
            records_bounds: h.version >= 2,
            inner: Mutex::new(Inner {
                out: Some(BufWriter::with_capacity(1 << 16, file)),
                names,
                records: old.records,
                events: old.events.len() as u64,
                sync_rounds: old.syncs.len() as u64,
                buf: Vec::with_capacity(256),
                bound_watch: None,
            }),
        };
        w.record_bound()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stamp format (for converting stamps this writer returned).
    pub fn format(&self) -> ItcFormat {
        self.stamper.format()
    }

    /// Records an event stamped now; returns its local ITC stamp.
    pub fn event(&self, kind: EventKind, name: &str, id: u64, payload: &[u8]) -> Result<u64> {
        if payload.len() > MAX_PAYLOAD_LEN {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "an event payload of {} bytes is larger than the {MAX_PAYLOAD_LEN} a trace \
                     record holds: store large data elsewhere and record a reference",
                    payload.len()
                ),
            ));
        }
        let mut inner = self.lock()?;
        let name = inner.name_id(&self.path, name)?;
        // Stamped under the lock: file order is stamp order.
        let now = self.clock.now_ns();
        let stamp = self.stamper.stamp_at(now)?;
        inner.buf.clear();
        encode_event(&mut inner.buf, kind, name, stamp, id, payload);
        inner.write_buf(&self.path)?;
        inner.events += 1;
        if let Some((version, stale_at_ns)) = inner.bound_watch {
            if now >= stale_at_ns || self.clock.bound_version() != version {
                self.put_bound(&mut inner)?;
            }
        }
        Ok(stamp)
    }

    /// Runs one sync round with the master and records it. Events from other
    /// threads go on meanwhile.
    pub fn sync(&self, master: &str, phase: SyncPhase, opts: SyncOptions) -> Result<RoundResult> {
        drop(self.lock()?); // refuse early on a closed writer
        let round = sync_round(master, self.clock.as_ref(), opts)?;
        self.record_round(&round, phase)?;
        Ok(round)
    }

    /// Records a round taken elsewhere (with this writer's clock).
    pub fn record_round(&self, round: &RoundResult, phase: SyncPhase) -> Result<()> {
        let mut inner = self.lock()?;
        inner.put(
            &self.path,
            Record::Sync(SyncRecord {
                phase,
                master_host: round.master_host.clone(),
                master_clock_id: round.master_clock_id,
                exchanges: round.exchanges.clone(),
            }),
        )?;
        inner.sync_rounds += 1;
        Ok(())
    }

    /// Records what the clock's time service says of its error now (a BOUND
    /// record), if a time service vouches for the clock. Called when the file
    /// is opened and when it is closed, and by an event that finds the word
    /// changed since the last record (a new one published, or the last one
    /// no longer fresh): `hrts merge` then sees every word the file's events
    /// were stamped under.
    pub fn record_bound(&self) -> Result<()> {
        let mut inner = self.lock()?;
        self.put_bound(&mut inner)
    }

    fn put_bound(&self, inner: &mut Inner) -> Result<()> {
        let Some(r) = self.clock.bound_reading().filter(|_| self.records_bounds) else {
            return Ok(());
        };
        inner.bound_watch = Some((r.version, r.stale_at_ns));
        inner.put(&self.path, Record::Bound(r.record))
    }

    /// Writes buffered records to the file.
    pub fn flush(&self) -> Result<()> {
        let mut inner = self.lock()?;
        let path = self.path.clone();
        match inner.out.as_mut() {
            Some(out) => out.flush().map_err(|e| write_error(&path, &e)),
            None => Ok(()),
        }
    }

    /// Writes the END record and closes the file. Later calls fail.
    pub fn close(&self) -> Result<WriterSummary> {
        self.record_bound()?;
        let mut inner = self.lock()?;
        let end = Record::End {
            records: inner.records,
            events: inner.events,
        };
        inner.put(&self.path, end)?;
        let mut out = inner.out.take().ok_or_else(|| closed(&self.path))?;
        out.flush().map_err(|e| write_error(&self.path, &e))?;
        let most = self
            .stamper
            .max_events_per_tick()
            .max(self.prior_max_events);
        crate::header_patch::record_max_events(&self.path, most)?;
        out.get_ref()
            .sync_data()
            .map_err(|e| write_error(&self.path, &e))?;
        Ok(WriterSummary {
            events: inner.events,
            sync_rounds: inner.sync_rounds,
            max_events_per_tick: most,
        })
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>> {
        // A panic while holding the lock (only a bug could cause one) leaves
        // a consistent file: records are written whole or not at all.
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.out.is_none() {
            return Err(closed(&self.path));
        }
        Ok(inner)
    }
}

impl Drop for TraceWriter {
    /// A writer dropped without `close` is closed here (errors are lost: call
    /// `close` to see them).
    fn drop(&mut self) {
        let open = self
            .inner
            .get_mut()
            .map_or_else(|p| p.into_inner().out.is_some(), |i| i.out.is_some());
        if open {
            let _ = self.close();
        }
    }
}

impl Inner {
    fn name_id(&mut self, path: &Path, name: &str) -> Result<u32> {
        if let Some(&id) = self.names.get(name) {
            return Ok(id);
        }
        let id = u32::try_from(self.names.len()).map_err(|_| {
            Error::new(
                ErrorKind::InvalidArgument,
                "a trace file holds at most 2^32 distinct event names: put varying \
                 parts in the payload",
            )
        })?;
        self.buf.clear();
        Record::Name {
            id,
            name: name.to_string(),
        }
        .encode(&mut self.buf);
        self.write_buf(path)?;
        self.names.insert(name.to_string(), id);
        Ok(id)
    }

    fn put(&mut self, path: &Path, record: Record) -> Result<()> {
        self.buf.clear();
        record.encode(&mut self.buf);
        self.write_buf(path)
    }

    fn write_buf(&mut self, path: &Path) -> Result<()> {
        let out = self.out.as_mut().ok_or_else(|| closed(path))?;
        out.write_all(&self.buf)
            .map_err(|e| write_error(path, &e))?;
        self.records += 1;
        Ok(())
    }
}

/// Syncs a writer with its master every `interval` on a thread of its own,
/// until stopped (or dropped).
pub struct PeriodicSync {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<Result<u64>>>,
}

impl PeriodicSync {
    /// Starts periodic rounds (the first one after `interval`).
    pub fn start(
        writer: Arc<TraceWriter>,
        master: &str,
        interval: Duration,
        opts: SyncOptions,
    ) -> Result<PeriodicSync> {
        if interval < Duration::from_millis(10) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("a sync interval of {interval:?} is too short: use 10 ms or more"),
            ));
        }
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = stop.clone();
        let master = master.to_string();
        let thread = std::thread::Builder::new()
            .name("hrts-trace-sync".into())
            .spawn(move || {
                let mut rounds = 0;
                let (lock, cv) = &*signal;
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let (guard, _) = cv
                        .wait_timeout_while(stopped, interval, |s| !*s)
                        .unwrap_or_else(|p| p.into_inner());
                    stopped = guard;
                    if *stopped {
                        return Ok(rounds);
                    }
                    drop(stopped);
                    writer.sync(&master, SyncPhase::Periodic, opts)?;
                    rounds += 1;
                    stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                }
            })
            .map_err(|e| Error::from_io("cannot start the periodic sync thread", &e, ""))?;
        Ok(PeriodicSync {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the rounds; returns how many were recorded, or the error that
    /// ended them early.
    pub fn stop(mut self) -> Result<u64> {
        self.halt()
    }

    fn halt(&mut self) -> Result<u64> {
        {
            let (lock, cv) = &*self.stop;
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
            cv.notify_all();
        }
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(0),
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::new(
                ErrorKind::Os,
                "internal error: the periodic sync thread panicked; please report this as a bug",
            )),
        }
    }
}

impl Drop for PeriodicSync {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

fn closed(path: &Path) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!(
            "trace file {} is already closed: open a new writer to record more",
            path.display()
        ),
    )
}

fn write_error(path: &Path, e: &std::io::Error) -> Error {
    Error::from_io(
        format!("cannot write trace file {}", path.display()),
        e,
        "check free space and permissions; the file is incomplete",
    )
}
