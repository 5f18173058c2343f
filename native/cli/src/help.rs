//! `hrts --help` and `hrts --version`.

use hrts_core::ibmts;

pub const USAGE: &str = "\
hrts: one shared high-resolution timeline for every process on this host

Usage: hrts [--segment NAME] COMMAND [ARGS]

Commands:
  now                  print the current time as epoch nanoseconds
  info                 print the segment's facts as `key: value` lines
  test N [DELAY]       IBMTS test loop: a Version=0x... line, then N lines
                       `seconds.micros = HEX.HEX`, DELAY seconds apart (default 0)
  eval [OPTIONS]       evaluate the hardware counter's reliability across CPUs
                       (WTMLIB methods); progress on stderr, results on stdout
      --method cop|switching|both   which method(s) to run (default both)
      --budget-ms N                 probing time per method (default 200)
      --source NAME                 tsc, cntvct, timebase, monotonic-raw
                                    (default: this machine's hardware counter)
  track [SECONDS]       watch the segment follow CLOCK_REALTIME for SECONDS
                       (default 10): one line per tie (offset, correction)
      --csv FILE                    also write the lines as CSV
      --svg FILE                    also plot the offset over time as SVG
  reset                set the base anew (IBMTS setBaseInfo) for every process,
                       bumping the generation; prints the new base; the
                       explicit way to re-pair with the system clock at once
  unlink               remove the segment's name; says whether it existed
  echo                 for every line on stdin print one ordered stamp (epoch ns)
  seq [N]              print N (default 1) sequence numbers shared by every
                       process of the segment, never repeated, even after a
                       reboot (persisted in $HRTS_SEQ_FILE every
                       $HRTS_SEQ_INTERVAL numbers, default 1000)
  unique [N]           print N (default 1) unique stamps: epoch ns, each greater
                       than every unique stamp any process got before
  sync serve --listen HOST:PORT   be the clock-sync master of a traced run
  sync --master HOST:PORT [--out FILE]
                       one ping-pong sync round: this host's offset and its
                       bound; --out records it in a trace file of this clock
  trace record --out FILE [--master HOST:PORT]
                       record stdin lines `KIND NAME [ID [PAYLOAD]]` as events
  trace info|dump FILE show a trace file's header / records
  merge FILE... --out GLOBAL [--json FILE]
                       put process traces of several hosts on one timeline
                       (`hrts sync --help`, `hrts trace --help`, `hrts merge --help`)
  help                 print this help

Options:
  --segment NAME       the segment to use (default: $HRTS_SEGMENT, else /hrts-<uid>)
  -h, --help           print this help
  -V, --version        print the version

Environment:
  HRTS_SEGMENT         segment name, e.g. /hrts-myapp
  HRTS_GROUP           share a new segment with this group (name or gid)
  HRTS_MODE            a new segment's mode: tracking (default; follows
                       CLOCK_REALTIME, slewed, never backward) or frozen
                       (IBMTS: the calendar is read when the base is made)
  HRTS_TIE_INTERVAL_MS tracking: time between ties (default 1000)
  HRTS_MAX_SLEW_PPM    tracking: largest slew and frequency correction (500)
  HRTS_STEP_THRESHOLD_MS tracking: a system clock this far ahead is followed
                       by a step forward (default 100)
  HRTS_WRAP_THRESHOLD  ticks after which the base is moved forward (creator only)
  HRTS_SEQ_FILE        where `seq` persists its high-water mark
                       (default ~/.local/state/hrts/<segment>.seq)
  HRTS_SEQ_INTERVAL    numbers issued between two writes of that file
  HRTS_TRACE_HOST      this host's name in trace files (default: hostname)
  HRTS_TEST_CLOCK_SKEW tests only: OFFSET_NS,DRIFT_PPM[,REF_NS] skews the
                       clock of traces and sync, to play several hosts

Exit status:
  0  success
  1  runtime error (OS error, no usable counter, I/O, damaged sequence file)
  2  usage error (command line, or a malformed HRTS_* value)
  3  segment refused: not an hrts segment, truncated, another layout version,
     corrupt, or owned by another user / unsafe mode
  4  timed out waiting for another process (segment creator or base writer)
Errors are printed to stderr as `hrts: error: <message>`.
";

/// `hrts X.Y.Z (logic version a.b.c.d, 0x...)`.
pub fn version() -> String {
    format!(
        "hrts {} (logic version {}, {:#018x})",
        env!("CARGO_PKG_VERSION"),
        ibmts::version_string(ibmts::LOGIC_VERSION),
        ibmts::LOGIC_VERSION
    )
}
