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
  stats [--json | --prometheus] [--watch [SECONDS] [--count N]]
                       every metric of every process that publishes hrts
                       statistics, per process and aggregated by name
  stats serve --listen HOST:PORT
                       serve /metrics (Prometheus) and /stats.json over HTTP
  stats unlink         remove the statistics segment; says whether it existed
                       (`hrts stats --help`)
  help                 print this help

Options:
  --segment NAME       the segment to use (default: $HRTS_SEGMENT, else /hrts-<uid>);
                       for `hrts stats` the statistics segment (default:
                       $HRTS_STATS_SEGMENT, else /hrts-stats-<uid>)
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
  HRTS_STATS_SEGMENT   statistics segment name (`hrts stats`)
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

pub const STATS_USAGE: &str = "\
Usage: hrts stats [--segment NAME] [--json | --prometheus] [--watch [SECONDS]]
                  [--count N]
       hrts stats serve --listen HOST:PORT [--segment NAME]
       hrts stats unlink [--segment NAME]

Every process that uses hrts statistics (Rust, C or Java) publishes its
metrics in the statistics segment; these commands read it without the
processes doing anything.

`hrts stats` prints a table of every metric of every process (processes that
exited stay, marked so, until their cells are reclaimed), with durations in
human units, then every name aggregated over all processes (counters summed,
gauges and timers at their latest value, statistics merged; quantiles only
when one process has data).
  --json               one JSON document instead: {\"segment\", \"timestamp\",
                       \"processes\": [{\"pid\", \"instance\", \"program\",
                       \"state\", \"timestamp\", \"metrics\"}], \"aggregate\"},
                       metrics and aggregate in the handystats dump shape
  --prometheus         the Prometheus text exposition format 0.0.4: counters
                       hrts_NAME_total, gauges hrts_NAME, timers summaries
                       hrts_NAME_seconds, labelled pid, instance and program;
                       plus hrts_stats_processes{state=\"live\"|\"exited\"}
  --watch [SECONDS]    print anew every SECONDS (default 1) until interrupted;
                       on a terminal each frame replaces the last, otherwise
                       frames follow one another (one line each with --json)
  --count N            with --watch: stop after N frames
  --segment NAME       the statistics segment (default: $HRTS_STATS_SEGMENT,
                       else /hrts-stats-<uid>)
With no segment (no process has published statistics yet) it says so on
stderr and prints an empty result; exit status 0.

`hrts stats serve` answers HTTP on HOST:PORT (port 0: any free port) with a
fresh snapshot per request: GET /metrics in the Prometheus format (content
type text/plain; version=0.0.4), GET /stats.json as --json; 404 for other
paths, 405 for other methods. It prints `listening on http://HOST:PORT` (the
port it got) and serves until SIGINT or SIGTERM.

`hrts stats unlink` removes the statistics segment (processes that have it
open keep using it) and says whether it existed.

Exit status: as `hrts --help` says; 3 if the segment is not a statistics
segment, truncated, of another layout version, or corrupt.
";

/// `hrts debug stats-record --help` (test builds only).
#[cfg(feature = "testing")]
pub const STATS_RECORD_USAGE: &str = "\
Usage: hrts debug stats-record [--segment NAME] [--counter NAME=DELTA[,...]]
                               [--gauge NAME=VALUE[,...]] [--timer NAME=NS[,...]]
                               [--repeat N]

Test builds only: starts the global statistics instance (publishing to the
statistics segment --segment, default $HRTS_STATS_SEGMENT), then N times
(default 1) adds each DELTA to its counter, sets each gauge to VALUE and
records NS nanoseconds in each timer, in that order. Prints the instance's
JSON dump (`json_dump()`) as one line, then waits until stdin is closed (or
the process is killed). Options may repeat; a NAME is split from its value at
its last `=` and cannot contain a comma.
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
