/*
 * C-side checks of libhrts through its public header only, as a C user sees it.
 *
 *   hrts_test                          run the checks; last line "c: N passed, N failed"
 *   hrts_test set-base NAME            open a handle on segment NAME and set its base
 *                                      (the other process of the handle checks)
 *   hrts_test stamp-events FILE COUNT  append COUNT lines "<epoch_ns> c <i>" to FILE
 *   hrts_test drive N CMD [ARG...]     causality driver: starts CMD, then N times stamps,
 *                                      writes a line to CMD's stdin, reads the stamp CMD
 *                                      prints back, stamps again, and checks
 *                                      before <= child <= after; prints a summary line
 *                                      "drive: N rounds, N ordered, N violations" and
 *                                      exits 0 only if every round was ordered
 *
 * Run it with its own segment (HRTS_SEGMENT): it calls hrts_set_base_info, which
 * would move every other process's base on a shared one. The handle checks open
 * segments named HRTS_SEGMENT plus "-a", "-b", "-foreign" and "-truncated", remove
 * them, and persist sequence numbers under XDG_STATE_HOME (run.sh sets all three).
 */
#define _POSIX_C_SOURCE 200809L

#include "hrts.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

static void check(int ok, const char *what, const char *detail) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  }
}

/* Checks a status and shows hrts_last_error() when it is not HRTS_SUCCESS. */
static int check_ok(int rc, const char *what) {
  char detail[512];
  snprintf(detail, sizeof detail, "%s: %s", hrts_status_name(rc), hrts_last_error());
  check(rc == HRTS_SUCCESS, what, rc == HRTS_SUCCESS ? NULL : detail);
  return rc == HRTS_SUCCESS;
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* A mode's count or length argument: 1 and *out set if `arg` is a whole positive number. */
static int positive_arg(const char *arg, long *out) {
  char *end;
  long v = strtol(arg, &end, 10);
  if (*end != '\0' || v <= 0) return 0;
  *out = v;
  return 1;
}

static void check_version(void) {
  uint64_t v = hrts_get_version();
  check(v == HRTS_HEADER_VERSION, "hrts_get_version equals the header's packed version", NULL);
  check(v == HRTS_PACK_VERSION(v >> 48, (v >> 32) & 0xffff, (v >> 16) & 0xffff, v & 0xffff),
        "packing round-trips", NULL);
  check(strstr(hrts_copyright(), "hrts") != NULL, "copyright names hrts", NULL);
}

static void check_base_info(void) {
  uint64_t freq = 0, counter = 0, sec = 0, usec = 0;
  if (!check_ok(hrts_get_base_info(&freq, &counter, &sec, &usec), "hrts_get_base_info")) return;
  check(freq > 0, "frequency > 0", NULL);
  check(counter != 0, "base counter nonzero", NULL);
  check(sec > 1600000000u, "base seconds are a plausible epoch time", NULL);
  check(usec < 1000000u, "base microseconds below one second", NULL);
  /* The base was taken at or before now, and the segment is new (ours). */
  uint64_t base_ns = sec * 1000000000u + usec * 1000u;
  check(base_ns <= realtime_ns() + 1000000u, "base time not in the future", NULL);
}

static void check_calc_time_stamp(void) {
  uint32_t sec = 0, usec = 0;
  uint64_t before = realtime_ns();
  if (!check_ok(hrts_calc_time_stamp(&sec, &usec), "hrts_calc_time_stamp")) return;
  uint64_t after = realtime_ns();
  uint64_t stamp = (uint64_t)sec * 1000000000u + (uint64_t)usec * 1000u;
  char detail[128];
  snprintf(detail, sizeof detail, "stamp %" PRIu64 " vs clock %" PRIu64 "..%" PRIu64, stamp,
           before, after);
  /* A fresh segment's calendar base is CLOCK_REALTIME at creation; only
     calibration error and NTP slew since then separate the two. */
  check(stamp + 5000000u >= before && stamp <= after + 5000000u,
        "calc_time_stamp within 5 ms of CLOCK_REALTIME", detail);
  check(usec < 1000000u, "microseconds below one second", NULL);

  uint64_t sec64 = 0;
  uint32_t usec64 = 0;
  if (check_ok(hrts_calc_time_stamp64(&sec64, &usec64), "hrts_calc_time_stamp64")) {
    check(sec64 >= sec && sec64 - sec <= 1, "64-bit seconds agree with 32-bit", NULL);
  }
}

static void check_epoch_monotonic(void) {
  uint64_t prev_us = 0, prev_ns = 0, prev_ord = 0, us = 0, ns = 0, ord = 0;
  int backwards = 0, errors = 0;
  for (int i = 0; i < 100000; i++) {
    errors += hrts_get_epoch_microseconds(&us) != HRTS_SUCCESS;
    errors += hrts_get_epoch_nanoseconds(&ns) != HRTS_SUCCESS;
    errors += hrts_get_epoch_nanoseconds_ordered(&ord) != HRTS_SUCCESS;
    backwards += us < prev_us || ns < prev_ns || ord < prev_ord;
    prev_us = us;
    prev_ns = ns;
    prev_ord = ord;
  }
  check(errors == 0, "3 x 100000 epoch reads succeed", NULL);
  check(backwards == 0, "epoch us, ns and ordered ns never go backwards", NULL);
  check(absdiff(ns, realtime_ns()) < 5000000u, "epoch ns within 5 ms of CLOCK_REALTIME", NULL);
  check(ns / 1000u >= us && ns / 1000u - us < 1000000u, "ns and us agree", NULL);
}

static void check_unique_and_sequence(void) {
  uint64_t prev = 0, u = 0, now = 0;
  int errors = 0, not_increasing = 0;
  hrts_get_epoch_nanoseconds_ordered(&now);
  for (int i = 0; i < 100000; i++) {
    errors += hrts_get_unique_nanoseconds(&u) != HRTS_SUCCESS;
    not_increasing += u <= prev;
    prev = u;
  }
  check(errors == 0, "100000 unique stamps succeed", hrts_last_error());
  check(not_increasing == 0, "unique stamps strictly increase", NULL);
  check(prev > now && prev - now < 1000000000u, "unique stamps are real time", NULL);

  uint64_t first = 0, n = 0;
  int seq_ok = check_ok(hrts_next_sequence(&first), "hrts_next_sequence");
  for (int i = 0; seq_ok && i < 2500; i++) {
    uint64_t next;
    if (hrts_next_sequence(&next) != HRTS_SUCCESS || next <= n) {
      seq_ok = 0;
      break;
    }
    n = next;
  }
  check(seq_ok && n > first, "2500 sequence numbers strictly increase (across persists)",
        hrts_last_error());
}

static void check_itc(void) {
  /* A millisecond clock: many stamps share a tick, the event counter tells them apart. */
  setenv("HRTS_ITC_TICK_NS", "1000000", 1);
  uint64_t prev = 0, stamp = 0, tick = 0, event = 0, max_event = 0, most = 0, ns = 0;
  int errors = 0, not_increasing = 0;
  for (int i = 0; i < 20000; i++) {
    errors += hrts_itc_next(&stamp) != HRTS_SUCCESS;
    not_increasing += i > 0 && stamp <= prev;
    prev = stamp;
    errors += hrts_itc_decode(stamp, &tick, &event) != HRTS_SUCCESS;
    if (event > max_event) max_event = event;
  }
  check(errors == 0, "20000 ITC stamps and decodes succeed", hrts_last_error());
  check(not_increasing == 0, "ITC stamps strictly increase", NULL);
  check(max_event > 0, "events on one millisecond tick are counted", NULL);
  check(tick == stamp >> 13 && event == (stamp & 8191u), "ITC stamps have 13 event bits", NULL);
  check_ok(hrts_itc_max_events_per_tick(&most), "hrts_itc_max_events_per_tick");
  check(most == max_event, "the most events on one tick is reported as ITC counts it", NULL);
  check_ok(hrts_itc_to_epoch_nanoseconds(stamp, &ns), "hrts_itc_to_epoch_nanoseconds");
  check(absdiff(ns, realtime_ns()) < 10000000u, "an ITC stamp converts to the epoch time", NULL);
}

static void check_set_base_info(void) {
  uint64_t g0 = 0, g1 = 0, before = 0, after = 0;
  check_ok(hrts_get_generation(&g0), "hrts_get_generation");
  check_ok(hrts_get_epoch_nanoseconds(&before), "stamp before reset");
  if (!check_ok(hrts_set_base_info(), "hrts_set_base_info")) return;
  check_ok(hrts_get_generation(&g1), "hrts_get_generation after reset");
  check(g1 == g0 + 1, "hrts_set_base_info bumps the generation by one", NULL);
  check_ok(hrts_get_epoch_nanoseconds(&after), "stamp after reset");
  check(absdiff(after, realtime_ns()) < 5000000u, "after reset, stamps follow CLOCK_REALTIME",
        NULL);
}

static void check_null_pointers(void) {
  uint64_t v = 0;
  uint32_t w = 0;
  struct {
    const char *name;
    int rc;
  } cases[] = {
      {"hrts_get_base_info", hrts_get_base_info(NULL, &v, &v, &v)},
      {"hrts_get_generation", hrts_get_generation(NULL)},
      {"hrts_calc_time_stamp", hrts_calc_time_stamp(&w, NULL)},
      {"hrts_calc_time_stamp64", hrts_calc_time_stamp64(NULL, &w)},
      {"hrts_get_epoch_microseconds", hrts_get_epoch_microseconds(NULL)},
      {"hrts_get_epoch_nanoseconds", hrts_get_epoch_nanoseconds(NULL)},
      {"hrts_get_epoch_nanoseconds_ordered", hrts_get_epoch_nanoseconds_ordered(NULL)},
      {"hrts_get_unique_nanoseconds", hrts_get_unique_nanoseconds(NULL)},
      {"hrts_next_sequence", hrts_next_sequence(NULL)},
      {"hrts_itc_next", hrts_itc_next(NULL)},
      {"hrts_itc_decode", hrts_itc_decode(1, &v, NULL)},
      {"hrts_itc_to_epoch_nanoseconds", hrts_itc_to_epoch_nanoseconds(1, NULL)},
      {"hrts_itc_max_events_per_tick", hrts_itc_max_events_per_tick(NULL)},
      {"hrts_get_segment_name", hrts_get_segment_name(NULL, 64)},
      {"hrts_get_timeline", hrts_get_timeline(NULL, 64)},
      {"hrts_get_mode", hrts_get_mode(NULL)},
      {"hrts_get_tracking_state", hrts_get_tracking_state(NULL)},
      {"hrts_get_disruption_state", hrts_get_disruption_state(NULL)},
      {"hrts_get_offset_nanoseconds", hrts_get_offset_nanoseconds(NULL)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char what[128];
    snprintf(what, sizeof what, "%s(NULL) gives HRTS_E_NULL_POINTER", cases[i].name);
    check(cases[i].rc == HRTS_E_NULL_POINTER, what, hrts_status_name(cases[i].rc));
  }
  /* Initialisers are evaluated in no fixed order: make the last failure explicit. */
  hrts_get_segment_name(NULL, 64);
  const char *msg = hrts_last_error();
  check(msg != NULL && strlen(msg) > 0, "hrts_last_error is non-empty after a failure", NULL);
  check(msg != NULL && strstr(msg, "hrts_get_segment_name") != NULL,
        "hrts_last_error names the failing function", msg);
}

static void check_status_names(void) {
  check(strcmp(hrts_status_name(HRTS_SUCCESS), "HRTS_SUCCESS") == 0, "name of HRTS_SUCCESS", NULL);
  check(strcmp(hrts_status_name(HRTS_E_NULL_POINTER), "HRTS_E_NULL_POINTER") == 0,
        "name of HRTS_E_NULL_POINTER", NULL);
  check(strcmp(hrts_status_name(HRTS_E_FOREIGN), "HRTS_E_FOREIGN") == 0, "name of HRTS_E_FOREIGN",
        NULL);
  check(strcmp(hrts_status_name(-5), "HRTS_E_UNKNOWN_STATUS") == 0, "name of an unknown status",
        NULL);
}

static void check_segment_name(void) {
  char buf[256];
  const char *want = getenv("HRTS_SEGMENT");
  if (!check_ok(hrts_get_segment_name(buf, sizeof buf), "hrts_get_segment_name")) return;
  check(want != NULL && strcmp(buf, want) == 0, "segment name is HRTS_SEGMENT", buf);
  char small[4];
  int rc = hrts_get_segment_name(small, sizeof small);
  check(rc == HRTS_E_BUFFER_TOO_SMALL, "a too-small buffer gives HRTS_E_BUFFER_TOO_SMALL",
        hrts_status_name(rc));
  /* An explicit HRTS_SEGMENT is never the host page. */
  char timeline[1024], expect[300];
  if (!check_ok(hrts_get_timeline(timeline, sizeof timeline), "hrts_get_timeline")) return;
  snprintf(expect, sizeof expect, "per-user segment %s", want ? want : "");
  check(strcmp(timeline, expect) == 0, "the timeline is the per-user segment HRTS_SEGMENT names",
        timeline);
  rc = hrts_get_timeline(small, sizeof small);
  check(rc == HRTS_E_BUFFER_TOO_SMALL, "hrts_get_timeline: a too-small buffer is refused",
        hrts_status_name(rc));
}

/* An interval that holds the system clock, or HRTS_E_UNSYNCHRONIZED with a
   message when the clock's service gives no bound (this machine's kernel may
   say STA_UNSYNC); never a torn or inverted interval. */
static void check_bounded(void) {
  uint64_t earliest = 0, latest = 0;
  uint32_t status = 99;
  check(hrts_get_bounded_epoch_nanoseconds(NULL, &latest, &status) == HRTS_E_NULL_POINTER,
        "hrts_get_bounded_epoch_nanoseconds(NULL, ...) gives HRTS_E_NULL_POINTER", NULL);
  check(hrts_get_bounded_epoch_nanoseconds(&earliest, &latest, NULL) == HRTS_E_NULL_POINTER,
        "hrts_get_bounded_epoch_nanoseconds(..., NULL) gives HRTS_E_NULL_POINTER", NULL);
  uint64_t before = realtime_ns();
  int rc = hrts_get_bounded_epoch_nanoseconds(&earliest, &latest, &status);
  uint64_t after = realtime_ns();
  if (rc == HRTS_SUCCESS) {
    check(status == HRTS_BOUND_SYNCHRONIZED || status == HRTS_BOUND_FREE_RUNNING,
          "a bounded stamp is synchronized or free-running", NULL);
    /* The clock at the stamp's instant lies between the two readings. */
    check(earliest <= after && before <= latest, "the interval holds the system clock", NULL);
  } else {
    check(rc == HRTS_E_UNSYNCHRONIZED, "no interval is HRTS_E_UNSYNCHRONIZED",
          hrts_status_name(rc));
    check(strlen(hrts_last_error()) > 20, "and says why", hrts_last_error());
    check(status == 99 && earliest == 0, "and writes nothing", NULL);
  }
}

static void *failing_thread(void *arg) {
  (void)arg;
  uint64_t tid = hrts_get_thread_id();
  hrts_get_epoch_nanoseconds(NULL);
  return (void *)(uintptr_t)tid;
}

static void check_threads(void) {
  check(hrts_get_pid() == (uint32_t)getpid(), "hrts_get_pid is getpid", NULL);
  uint64_t ok = 0;
  hrts_get_epoch_nanoseconds(&ok); /* no failure on this thread: message unchanged */
  const char *before = hrts_last_error();
  char saved[512];
  snprintf(saved, sizeof saved, "%s", before);
  pthread_t t;
  void *tid = NULL;
  pthread_create(&t, NULL, failing_thread, NULL);
  pthread_join(t, &tid);
  check((uint32_t)(uintptr_t)tid != hrts_get_thread_id(), "threads have distinct ids", NULL);
  check(strcmp(hrts_last_error(), saved) == 0,
        "another thread's failure does not change this thread's last error", NULL);
}

/*
 * Opening is per process (the library opens its segment once), so the refusal
 * cases run in children forked before this process touches the library.
 * Child exit codes: 0 as expected, 10 + step that failed otherwise.
 */
static int child_foreign_segment(void) {
  char name[64];
  snprintf(name, sizeof name, "/hrts-ctest-foreign-%d", (int)getpid());
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return 10;
  unsigned char junk[4096];
  memset(junk, 0xA5, sizeof junk);
  int wrote = write(fd, junk, sizeof junk) == (ssize_t)sizeof junk;
  close(fd);
  int result = 0;
  uint64_t ns = 0;
  if (!wrote) result = 11;
  else if (setenv("HRTS_SEGMENT", name, 1) != 0) result = 12;
  else if (hrts_get_epoch_nanoseconds(&ns) != HRTS_E_FOREIGN) result = 13;
  else if (strstr(hrts_last_error(), "not an hrts segment") == NULL) result = 14;
  /* A failure is not cached: the next call tries again, and fails again. */
  else if (hrts_get_generation(&ns) != HRTS_E_FOREIGN) result = 15;
  shm_unlink(name);
  return result;
}

static int child_invalid_name(void) {
  uint64_t ns = 0;
  if (setenv("HRTS_SEGMENT", "no-leading-slash", 1) != 0) return 10;
  if (hrts_get_epoch_nanoseconds(&ns) != HRTS_E_INVALID_ARGUMENT) return 11;
  if (strstr(hrts_last_error(), "no-leading-slash") == NULL) return 12;
  return 0;
}

static void check_in_child(int (*body)(void), const char *what) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  char detail[64] = "fork failed";
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    snprintf(detail, sizeof detail, "child exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  check(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, what, detail);
}

/* ---------------------------------------------------------------- segment handles */

/* check() with the checked object's label in front of what was checked. */
static void check_labelled(int ok, const char *label, const char *what, const char *detail) {
  char text[256];
  snprintf(text, sizeof text, "%s: %s", label, what);
  check(ok, text, detail);
}

/* "<HRTS_SEGMENT>-<tag>": a segment of this run alone. */
static void test_segment_name(char *buf, size_t size, const char *tag) {
  const char *base = getenv("HRTS_SEGMENT");
  snprintf(buf, size, "%s-%s", base ? base : "/hrts-ctest-unset", tag);
}

static hrts_segment *open_handle(const char *name, const char *what) {
  hrts_segment *seg = NULL;
  if (check_ok(hrts_segment_open(name, &seg), what)) {
    check(seg != NULL, "a successful hrts_segment_open gives a handle", what);
  }
  return seg;
}

/* What `hrts now` shows, through one handle: every stamp kind succeeds, none goes
   backwards, and all agree with CLOCK_REALTIME and with each other. */
static void check_handle_stamps(hrts_segment *seg, const char *label) {
  uint64_t prev_ns = 0, prev_ord = 0, prev_us = 0, ns = 0, ord = 0, us = 0;
  int errors = 0, backwards = 0;
  for (int i = 0; i < 100000; i++) {
    errors += hrts_segment_epoch_nanoseconds(seg, &ns) != HRTS_SUCCESS;
    errors += hrts_segment_epoch_nanoseconds_ordered(seg, &ord) != HRTS_SUCCESS;
    errors += hrts_segment_epoch_microseconds(seg, &us) != HRTS_SUCCESS;
    backwards += ns < prev_ns || ord < prev_ord || us < prev_us;
    prev_ns = ns;
    prev_ord = ord;
    prev_us = us;
  }
  uint64_t now = realtime_ns();
  char detail[128];
  snprintf(detail, sizeof detail, "stamp %" PRIu64 " vs clock %" PRIu64, ord, now);
  check_labelled(errors == 0, label, "3 x 100000 epoch reads succeed", hrts_last_error());
  check_labelled(backwards == 0, label, "epoch us, ns and ordered ns never go backwards", NULL);
  check_labelled(absdiff(ord, now) < 5000000u, label, "epoch ns within 5 ms of CLOCK_REALTIME",
                 detail);
  /* us was read after ord: within the same microsecond or later. */
  check_labelled(absdiff(ord / 1000u, us) < 1000000u, label, "ns and us agree", NULL);

  uint32_t sec = 0, usec = 0, usec64 = 0;
  uint64_t sec64 = 0;
  int rc = hrts_segment_calc_time_stamp(seg, &sec, &usec);
  check_labelled(rc == HRTS_SUCCESS, label, "hrts_segment_calc_time_stamp", hrts_last_error());
  rc = hrts_segment_calc_time_stamp64(seg, &sec64, &usec64);
  check_labelled(rc == HRTS_SUCCESS, label, "hrts_segment_calc_time_stamp64", hrts_last_error());
  uint64_t stamp = sec64 * 1000000000u + (uint64_t)usec64 * 1000u;
  check_labelled(sec64 >= sec && sec64 - sec <= 1 && usec < 1000000u && usec64 < 1000000u, label,
                 "32- and 64-bit calc_time_stamp agree", NULL);
  check_labelled(absdiff(stamp, realtime_ns()) < 5000000u, label,
                 "calc_time_stamp64 within 5 ms of CLOCK_REALTIME", NULL);

  uint64_t freq = 0, counter = 0, base_sec = 0, base_usec = 0;
  rc = hrts_segment_base_info(seg, &freq, &counter, &base_sec, &base_usec);
  check_labelled(rc == HRTS_SUCCESS, label, "hrts_segment_base_info", hrts_last_error());
  check_labelled(freq > 0 && counter != 0 && base_usec < 1000000u, label,
                 "base info: frequency and counter set, microseconds below one second", NULL);
  check_labelled(base_sec > 1600000000u &&
                     base_sec * 1000000000u + base_usec * 1000u <= realtime_ns() + 1000000u,
                 label, "the base is a plausible past epoch time", NULL);
}

static void check_name_is(hrts_segment *seg, const char *want, const char *label) {
  char got[256] = "";
  int rc = hrts_segment_name(seg, got, sizeof got);
  check_labelled(rc == HRTS_SUCCESS && strcmp(got, want) == 0, label,
                 "hrts_segment_name is the name it was opened with", got);
  char small[4];
  rc = hrts_segment_name(seg, small, sizeof small);
  check_labelled(rc == HRTS_E_BUFFER_TOO_SMALL, label,
                 "a too-small buffer gives HRTS_E_BUFFER_TOO_SMALL", hrts_status_name(rc));
}

static void check_handle_null_pointers(hrts_segment *live) {
  uint64_t v = 0;
  uint32_t w = 0;
  int64_t i = 0;
  char buf[256];
  hrts_tracking_state st;
  memset(&st, 0, sizeof st);
  hrts_disruption_state ds;
  memset(&ds, 0, sizeof ds);
  hrts_open_options opts;
  memset(&opts, 0, sizeof opts);
  opts.version = HRTS_OPEN_OPTIONS_VERSION;
  /* A NULL handle with valid outputs, then a live handle with a NULL output. */
  struct {
    const char *name;
    int rc;
  } cases[] = {
      {"hrts_segment_open(name, NULL)", hrts_segment_open("/hrts-ctest-never-opened", NULL)},
      {"hrts_segment_epoch_nanoseconds(NULL, &v)", hrts_segment_epoch_nanoseconds(NULL, &v)},
      {"hrts_segment_epoch_nanoseconds_ordered(NULL, &v)",
       hrts_segment_epoch_nanoseconds_ordered(NULL, &v)},
      {"hrts_segment_epoch_microseconds(NULL, &v)", hrts_segment_epoch_microseconds(NULL, &v)},
      {"hrts_segment_calc_time_stamp(NULL, ...)", hrts_segment_calc_time_stamp(NULL, &w, &w)},
      {"hrts_segment_calc_time_stamp64(NULL, ...)", hrts_segment_calc_time_stamp64(NULL, &v, &w)},
      {"hrts_segment_base_info(NULL, ...)", hrts_segment_base_info(NULL, &v, &v, &v, &v)},
      {"hrts_segment_set_base_info(NULL)", hrts_segment_set_base_info(NULL)},
      {"hrts_segment_generation(NULL, &v)", hrts_segment_generation(NULL, &v)},
      {"hrts_segment_unique_nanoseconds(NULL, &v)", hrts_segment_unique_nanoseconds(NULL, &v)},
      {"hrts_segment_next_sequence(NULL, &v)", hrts_segment_next_sequence(NULL, &v)},
      {"hrts_segment_name(NULL, buf, 256)", hrts_segment_name(NULL, buf, sizeof buf)},
      {"hrts_segment_open_with(name, &opts, NULL)",
       hrts_segment_open_with("/hrts-ctest-never-opened", &opts, NULL)},
      {"hrts_segment_mode(NULL, &w)", hrts_segment_mode(NULL, &w)},
      {"hrts_segment_tracking_state(NULL, &st)", hrts_segment_tracking_state(NULL, &st)},
      {"hrts_segment_disruption_state(NULL, &ds)", hrts_segment_disruption_state(NULL, &ds)},
      {"hrts_segment_offset_nanoseconds(NULL, &i)", hrts_segment_offset_nanoseconds(NULL, &i)},
      {"hrts_segment_validate(NULL)", hrts_segment_validate(NULL)},
      {"hrts_segment_epoch_nanoseconds(seg, NULL)", hrts_segment_epoch_nanoseconds(live, NULL)},
      {"hrts_segment_epoch_nanoseconds_ordered(seg, NULL)",
       hrts_segment_epoch_nanoseconds_ordered(live, NULL)},
      {"hrts_segment_epoch_microseconds(seg, NULL)", hrts_segment_epoch_microseconds(live, NULL)},
      {"hrts_segment_calc_time_stamp(seg, &w, NULL)", hrts_segment_calc_time_stamp(live, &w, NULL)},
      {"hrts_segment_calc_time_stamp64(seg, NULL, &w)",
       hrts_segment_calc_time_stamp64(live, NULL, &w)},
      {"hrts_segment_base_info(seg, ..., NULL)", hrts_segment_base_info(live, &v, &v, &v, NULL)},
      {"hrts_segment_generation(seg, NULL)", hrts_segment_generation(live, NULL)},
      {"hrts_segment_unique_nanoseconds(seg, NULL)", hrts_segment_unique_nanoseconds(live, NULL)},
      {"hrts_segment_next_sequence(seg, NULL)", hrts_segment_next_sequence(live, NULL)},
      {"hrts_segment_name(seg, NULL, 256)", hrts_segment_name(live, NULL, 256)},
      {"hrts_segment_mode(seg, NULL)", hrts_segment_mode(live, NULL)},
      {"hrts_segment_tracking_state(seg, NULL)", hrts_segment_tracking_state(live, NULL)},
      {"hrts_segment_disruption_state(seg, NULL)", hrts_segment_disruption_state(live, NULL)},
      {"hrts_segment_offset_nanoseconds(seg, NULL)", hrts_segment_offset_nanoseconds(live, NULL)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_labelled(cases[i].rc == HRTS_E_NULL_POINTER, cases[i].name, "HRTS_E_NULL_POINTER",
                   hrts_status_name(cases[i].rc));
  }
  check(v == 0 && w == 0 && i == 0 && st.mode == 0 && ds.count == 0 && ds.recorded == 0,
        "nothing is written when a pointer is NULL", NULL);
  hrts_segment_generation(NULL, &v);
  check(strstr(hrts_last_error(), "hrts_segment_generation: the segment handle is NULL") != NULL,
        "a NULL handle's message names the function and the handle", hrts_last_error());
  hrts_segment_close(NULL); /* a no-op, like free(NULL): reaching the next check shows it */
}

/* A shared memory object `name` of `size` bytes of `fill`, as another program might leave. */
static int make_shm(const char *name, size_t size, unsigned char fill) {
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return 0;
  unsigned char junk[4096];
  memset(junk, fill, sizeof junk);
  int ok = size <= sizeof junk && write(fd, junk, size) == (ssize_t)size;
  close(fd);
  return ok;
}

/* hrts_segment_open(name) must fail with `status`, leave *out NULL, and say `needle`. */
static void check_open_refused(const char *name, int status, const char *needle,
                               const char *what) {
  hrts_segment *seg = (hrts_segment *)(uintptr_t)1; /* the failure must reset it */
  int rc = hrts_segment_open(name, &seg);
  const char *msg = hrts_last_error();
  char detail[600];
  snprintf(detail, sizeof detail, "%s, *out %s: %s", hrts_status_name(rc),
           seg ? "not NULL" : "NULL", msg);
  check(rc == status && seg == NULL && strstr(msg, needle) != NULL, what, detail);
  if (rc == HRTS_SUCCESS) hrts_segment_close(seg);
}

static void check_handle_refusals(void) {
  check_open_refused("no-leading-slash", HRTS_E_INVALID_ARGUMENT, "must start with '/'",
                     "an invalid name gives HRTS_E_INVALID_ARGUMENT and how to fix it");

  char name[256];
  test_segment_name(name, sizeof name, "foreign");
  int made = make_shm(name, 4096, 0xA5);
  check(made, "create a foreign shared memory object", name);
  if (made) {
    check_open_refused(name, HRTS_E_FOREIGN, "not an hrts segment",
                       "a foreign object gives HRTS_E_FOREIGN");
    check_open_refused(name, HRTS_E_FOREIGN, "not an hrts segment",
                       "a failed open is not cached: the next one is refused again");
    shm_unlink(name);
  }
  test_segment_name(name, sizeof name, "truncated");
  made = make_shm(name, 100, 0);
  check(made, "create a truncated shared memory object", name);
  if (made) {
    check_open_refused(name, HRTS_E_TRUNCATED, "remove it with `hrts unlink`",
                       "a truncated segment gives HRTS_E_TRUNCATED and how to fix it");
    shm_unlink(name);
  }
  uint64_t ns = 0;
  check_ok(hrts_get_epoch_nanoseconds(&ns), "the default segment works after refused handles");
}

struct unique_run {
  hrts_segment *seg;
  int errors, not_increasing;
};

static void *unique_thread(void *arg) {
  struct unique_run *run = arg;
  uint64_t prev = 0, u = 0;
  for (int i = 0; i < 100000; i++) {
    run->errors += hrts_segment_unique_nanoseconds(run->seg, &u) != HRTS_SUCCESS;
    run->not_increasing += u <= prev;
    prev = u;
  }
  return NULL;
}

/* Sequence numbers of `seg` strictly increase across persists (interval 1000);
   returns the last one. */
static uint64_t check_handle_sequence(hrts_segment *seg, const char *label, uint64_t *first) {
  int ok = hrts_segment_next_sequence(seg, first) == HRTS_SUCCESS;
  uint64_t n = *first;
  for (int i = 0; ok && i < 2500; i++) {
    uint64_t next;
    ok = hrts_segment_next_sequence(seg, &next) == HRTS_SUCCESS && next > n;
    n = next;
  }
  check_labelled(ok, label, "2500 sequence numbers strictly increase (across persists)",
                 hrts_last_error());
  return n;
}

/* Another process (this program, `set-base NAME`) sets the base of `name`; our handle
   on it must see the new generation and stamp on the new base. */
static void check_base_set_elsewhere(hrts_segment *seg, const char *name) {
  uint64_t g0 = 0, g1 = 0, ns = 0;
  check_ok(hrts_segment_generation(seg, &g0), "hrts_segment_generation before");
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "hrts_test", "set-base", name, (char *)NULL);
    _exit(127);
  }
  int status = -1;
  char detail[64] = "fork failed";
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    snprintf(detail, sizeof detail, "child exit status %d",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  check(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "another process sets the base of a named segment", detail);
  check_ok(hrts_segment_generation(seg, &g1), "hrts_segment_generation after");
  snprintf(detail, sizeof detail, "generation %" PRIu64 " -> %" PRIu64, g0, g1);
  check(g1 == g0 + 1, "a handle sees the generation another process set", detail);
  check_ok(hrts_segment_epoch_nanoseconds(seg, &ns), "stamp after the other process's base");
  check(absdiff(ns, realtime_ns()) < 5000000u, "stamps on the new base follow CLOCK_REALTIME",
        NULL);
}

/* Stamps the default segment (HRTS_SEGMENT) in a tight loop for MS milliseconds,
   after printing "attached": the C reader of the resize tests. Prints
   "stamps N backwards B"; exit 0 if no stamp went backwards and none failed. */
static int stamp_for(const char *ms_arg) {
  long ms;
  if (!positive_arg(ms_arg, &ms)) {
    fprintf(stderr, "hrts_test stamp-for: MS must be a positive number of milliseconds\n");
    return 2;
  }
  uint64_t ns = 0, last = 0, count = 0, backwards = 0, errors = 0;
  if (hrts_get_epoch_nanoseconds(&ns) != HRTS_SUCCESS) {
    fprintf(stderr, "hrts_test stamp-for: %s\n", hrts_last_error());
    return 1;
  }
  printf("attached\n");
  fflush(stdout);
  uint64_t stop = monotonic_ns() + (uint64_t)ms * 1000000u;
  do {
    for (int i = 0; i < 1000; i++) {
      if (hrts_get_epoch_nanoseconds(&ns) != HRTS_SUCCESS) errors++;
      if (ns < last) backwards++;
      last = ns;
      count++;
    }
  } while (monotonic_ns() < stop);
  printf("stamps %llu backwards %llu errors %llu\n", (unsigned long long)count,
         (unsigned long long)backwards, (unsigned long long)errors);
  return backwards == 0 && errors == 0 ? 0 : 1;
}

/* `bounded N [PAUSE_US]`: N bounded stamps, each between two CLOCK_REALTIME readings,
   PAUSE_US microseconds apart (default 0), one line each: "bounded c: earliest E latest
   L status S before B after A" (BoundAcrossLanguagesTest compares them with Java's and
   the command line's). */
static int bounded(const char *n_arg, const char *pause_arg) {
  long n;
  if (!positive_arg(n_arg, &n)) {
    fprintf(stderr, "hrts_test bounded: N must be a positive number\n");
    return 2;
  }
  char *end;
  long pause_us = pause_arg ? strtol(pause_arg, &end, 10) : 0;
  if ((pause_arg && *end != '\0') || pause_us < 0 || pause_us > 1000000) {
    fprintf(stderr, "hrts_test bounded: PAUSE_US must be 0 to 1000000\n");
    return 2;
  }
  for (long i = 0; i < n; i++) {
    if (i > 0 && pause_us > 0) {
      struct timespec pause = {0, pause_us * 1000};
      if (pause_us == 1000000) pause = (struct timespec){1, 0};
      nanosleep(&pause, NULL);
    }
    uint64_t earliest = 0, latest = 0;
    uint32_t status = 0;
    uint64_t before = realtime_ns();
    int rc = hrts_get_bounded_epoch_nanoseconds(&earliest, &latest, &status);
    uint64_t after = realtime_ns();
    if (rc != HRTS_SUCCESS) {
      fprintf(stderr, "hrts_test bounded: %s: %s\n", hrts_status_name(rc), hrts_last_error());
      return 1;
    }
    printf("bounded c: earliest %llu latest %llu status %s before %llu after %llu\n",
           (unsigned long long)earliest, (unsigned long long)latest,
           status == HRTS_BOUND_SYNCHRONIZED ? "synchronized" : "free-running",
           (unsigned long long)before, (unsigned long long)after);
  }
  return 0;
}

/* `bound-check MS`: bounded stamps back to back for MS milliseconds, each between two
   CLOCK_REALTIME readings, summed up as `hrts debug bound-check` sums up the Rust
   reader's (DisruptionAcrossLanguagesTest reads the three alike): "bound-check c: samples
   N misses M unbounded U first-unbounded A last-unbounded B misses-after-unbounded E".
   A miss is an interval that excludes the whole bracket; an unbounded stamp is one the
   library refused with HRTS_E_UNSYNCHRONIZED (no interval: unknown, unsynchronized or
   disrupted); first and last are the clock just after such a stamp, 0 for none. Any
   other error ends the run (exit 1). */
static int bound_check(const char *ms_arg) {
  long ms;
  if (!positive_arg(ms_arg, &ms)) {
    fprintf(stderr, "hrts_test bound-check: MS must be a positive number\n");
    return 2;
  }
  uint64_t stop = monotonic_ns() + (uint64_t)ms * 1000000u;
  uint64_t samples = 0, misses = 0, unbounded = 0, misses_after = 0;
  uint64_t first_unbounded = 0, last_unbounded = 0;
  while (monotonic_ns() < stop) {
    for (int i = 0; i < 64; i++) {
      uint64_t earliest = 0, latest = 0;
      uint32_t status = 0;
      uint64_t before = realtime_ns();
      int rc = hrts_get_bounded_epoch_nanoseconds(&earliest, &latest, &status);
      uint64_t after = realtime_ns();
      samples++;
      if (rc == HRTS_E_UNSYNCHRONIZED) {
        unbounded++;
        if (first_unbounded == 0) first_unbounded = after;
        last_unbounded = after;
        continue;
      }
      if (rc != HRTS_SUCCESS) {
        fprintf(stderr, "hrts_test bound-check: %s: %s\n", hrts_status_name(rc), hrts_last_error());
        return 1;
      }
      if (earliest > after || latest < before) {
        misses++;
        if (first_unbounded != 0) misses_after++;
        if (misses <= 5)
          fprintf(stderr, "hrts_test bound-check: miss: [%llu, %llu], clock in [%llu, %llu]\n",
                  (unsigned long long)earliest, (unsigned long long)latest,
                  (unsigned long long)before, (unsigned long long)after);
      }
    }
  }
  printf("bound-check c: samples %llu misses %llu unbounded %llu first-unbounded %llu "
         "last-unbounded %llu misses-after-unbounded %llu\n",
         (unsigned long long)samples, (unsigned long long)misses, (unsigned long long)unbounded,
         (unsigned long long)first_unbounded, (unsigned long long)last_unbounded,
         (unsigned long long)misses_after);
  return 0;
}

/* `seq NAME N`: opens a handle on the segment NAME (as hrts_segment_open resolves it, so
   its sequence file is the one `hrts --segment NAME` and -Dhrts.segment=NAME use) and prints
   N of its sequence numbers, one a line: "seq c: N". */
static int seq_numbers(const char *name, const char *n_arg) {
  long n;
  if (!positive_arg(n_arg, &n)) {
    fprintf(stderr, "hrts_test seq: N must be a positive number\n");
    return 2;
  }
  hrts_segment *seg = NULL;
  int rc = hrts_segment_open(name, &seg);
  if (rc != HRTS_SUCCESS) {
    fprintf(stderr, "hrts_test seq: %s: %s\n", hrts_status_name(rc), hrts_last_error());
    return 1;
  }
  for (long i = 0; i < n; i++) {
    uint64_t number = 0;
    rc = hrts_segment_next_sequence(seg, &number);
    if (rc != HRTS_SUCCESS) {
      fprintf(stderr, "hrts_test seq: %s: %s\n", hrts_status_name(rc), hrts_last_error());
      hrts_segment_close(seg);
      return 1;
    }
    printf("seq c: %llu\n", (unsigned long long)number);
  }
  hrts_segment_close(seg);
  return 0;
}

/* The C reader of the fuzz stage: stamps the default segment for MS milliseconds
   while another process damages it, and counts stamps more than 1 ms away from
   CLOCK_REALTIME (read right before and after each stamp), stamps that went
   backwards, failed calls, and stamps that used over 1 ms of the thread's CPU time (one
   that waited for a writer would; a preempted one does not). Prints "attached (timeline: T)" first,
   then "reader c: stamps N off M backwards B errors E slow S longest L" (L: the longest
   wall-clock bracket, ns, preemption included). Exit 0 unless it could not start.
   It also stops early once the file HRTS_FUZZ_STOP names exists (looked for every
   65536 stamps): the fuzz stage ends its readers when its damages end. */
static int fuzz_read(const char *ms_arg) {
  long ms;
  if (!positive_arg(ms_arg, &ms)) {
    fprintf(stderr, "hrts_test fuzz-read: MS must be a positive number of milliseconds\n");
    return 2;
  }
  uint64_t ns = 0, last = 0, count = 0, off = 0, backwards = 0, errors = 0;
  if (hrts_get_epoch_nanoseconds(&ns) != HRTS_SUCCESS) {
    fprintf(stderr, "hrts_test fuzz-read: %s\n", hrts_last_error());
    return 1;
  }
  char timeline[1024] = "";
  hrts_get_timeline(timeline, sizeof timeline);
  printf("attached (timeline: %s)\n", timeline);
  fflush(stdout);
  uint64_t stop = realtime_ns() + (uint64_t)ms * 1000000u;
  uint64_t slow = 0, longest = 0;
  const char *stop_file = getenv("HRTS_FUZZ_STOP");
  for (;;) {
    uint64_t before = realtime_ns();
    if (before >= stop) break;
    if (stop_file && (count & 0xffff) == 0 && access(stop_file, F_OK) == 0) break;
    uint64_t cpu = thread_cpu_ns();
    int rc = hrts_get_epoch_nanoseconds(&ns);
    cpu = thread_cpu_ns() - cpu;
    uint64_t after = realtime_ns();
    count++;
    if (cpu > 1000000u) slow++;
    if (after - before > longest) longest = after - before;
    if (rc != HRTS_SUCCESS) {
      errors++;
      continue;
    }
    if (ns + 1000000u < before || ns > after + 1000000u) off++;
    if (ns < last) backwards++;
    last = ns;
  }
  printf("reader c: stamps %llu off %llu backwards %llu errors %llu slow %llu longest %llu\n",
         (unsigned long long)count, (unsigned long long)off, (unsigned long long)backwards,
         (unsigned long long)errors, (unsigned long long)slow, (unsigned long long)longest);
  return 0;
}

/* Another process damages the page (a word of the header's calibration, freq_hz at
   offset 56, held there by a core test): hrts_segment_validate says so, a fresh open
   refuses, and the next base write repairs it from the copy validated at attach. The
   page is found as hrts finds it: the record in /dev/shm/NAME names its System V id
   at offset 32. */
static uint64_t *attach_page(const char *name) {
  char path[300];
  snprintf(path, sizeof path, "/dev/shm%s", name);
  int32_t shmid = -1;
  int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    if (pread(fd, &shmid, sizeof shmid, 32) != (ssize_t)sizeof shmid) shmid = -1;
    close(fd);
  }
  return shmid > 0 ? shmat(shmid, NULL, 0) : (void *)-1;
}

/* `hrts_test damage NAME`: adds 1 to the header's freq_hz word of segment NAME, as
   another process damaging it would (for the JVM's validate() test). */
static int damage(const char *name) {
  uint64_t *page = attach_page(name);
  if (page == (void *)-1) {
    fprintf(stderr, "hrts_test damage: cannot attach the page of %s\n", name);
    return 1;
  }
  __atomic_fetch_add(&page[7], 1, __ATOMIC_SEQ_CST);
  shmdt(page);
  return 0;
}

static void check_damage_is_reported(void) {
  char name[256];
  test_segment_name(name, sizeof name, "damage");
  hrts_segment *seg = open_handle(name, "hrts_segment_open(damage)");
  if (!seg) return;
  uint64_t *page = attach_page(name);
  check(page != (void *)-1, "attach the segment's page to damage it", name);
  if (page != (void *)-1) {
    uint64_t freq = __atomic_load_n(&page[7], __ATOMIC_SEQ_CST);
    __atomic_store_n(&page[7], freq + 1, __ATOMIC_SEQ_CST);
    check(hrts_segment_validate(seg) == HRTS_E_CORRUPT,
          "hrts_segment_validate reports a damaged header as HRTS_E_CORRUPT", hrts_last_error());
    hrts_segment *fresh = NULL;
    check(hrts_segment_open(name, &fresh) == HRTS_E_CORRUPT && fresh == NULL,
          "a fresh open of the damaged segment is refused with HRTS_E_CORRUPT", hrts_last_error());
    check(hrts_segment_set_base_info(seg) == HRTS_SUCCESS &&
              hrts_segment_validate(seg) == HRTS_SUCCESS &&
              __atomic_load_n(&page[7], __ATOMIC_SEQ_CST) == freq,
          "the next base write repairs the header from the copy validated at attach",
          hrts_last_error());
    shmdt(page);
  }
  hrts_segment_close(seg);
  hrts_segment_unlink(name, NULL);
}

static int set_base(const char *name) {
  hrts_segment *seg = NULL;
  int rc = hrts_segment_open(name, &seg);
  if (rc == HRTS_SUCCESS) rc = hrts_segment_set_base_info(seg);
  if (rc != HRTS_SUCCESS) {
    fprintf(stderr, "hrts_test set-base %s: %s: %s\n", name, hrts_status_name(rc),
            hrts_last_error());
  }
  hrts_segment_close(seg);
  return rc == HRTS_SUCCESS ? 0 : 1;
}

static void check_handles(void) {
  char name_a[256], name_b[256];
  test_segment_name(name_a, sizeof name_a, "a");
  test_segment_name(name_b, sizeof name_b, "b");
  const char *default_name = getenv("HRTS_SEGMENT");
  const char *state = getenv("XDG_STATE_HOME");
  if (!default_name || !state) {
    check(0, "the handle checks need HRTS_SEGMENT and XDG_STATE_HOME", "run tests/c/run.sh");
    return;
  }
  /* Two named segments and the default one, open at once in one process. */
  hrts_segment *a = open_handle(name_a, "hrts_segment_open(a)");
  hrts_segment *b = open_handle(name_b, "hrts_segment_open(b)");
  hrts_segment *dflt = open_handle(NULL, "hrts_segment_open(NULL): the default segment");
  if (a && b && dflt) {
    check_name_is(a, name_a, "segment a");
    check_name_is(b, name_b, "segment b");
    check_name_is(dflt, default_name, "default segment handle");
    check_handle_stamps(a, "segment a");
    check_handle_stamps(b, "segment b");
    check_handle_stamps(dflt, "default segment handle");
    check_handle_null_pointers(a);

    /* Each segment calibrated its own counter against CLOCK_REALTIME: one instant
       read through every handle and the default functions agrees. */
    uint64_t na = 0, nb = 0, nd = 0, ng = 0;
    hrts_segment_epoch_nanoseconds_ordered(a, &na);
    hrts_segment_epoch_nanoseconds_ordered(b, &nb);
    hrts_segment_epoch_nanoseconds_ordered(dflt, &nd);
    hrts_get_epoch_nanoseconds_ordered(&ng);
    char detail[160];
    snprintf(detail, sizeof detail, "a %" PRIu64 " b %" PRIu64 " handle %" PRIu64
             " default %" PRIu64, na, nb, nd, ng);
    check(absdiff(na, nb) < 5000000u && absdiff(nb, nd) < 5000000u,
          "stamps of two named segments and the default agree within 5 ms", detail);
    check(ng >= nd && ng - nd < 5000000u,
          "the default handle and hrts_get_* read one timeline, in order", detail);

    /* The NULL-name handle is the default segment: one unique order, one sequence,
       one generation with the hrts_get_* functions. */
    uint64_t prev = 0, u = 0, g_handle = 0, g_default = 0;
    int not_increasing = 0, errors = 0;
    for (int i = 0; i < 10000; i++) {
      errors += (i % 2 ? hrts_get_unique_nanoseconds(&u)
                       : hrts_segment_unique_nanoseconds(dflt, &u)) != HRTS_SUCCESS;
      not_increasing += u <= prev;
      prev = u;
    }
    check(errors == 0 && not_increasing == 0,
          "unique stamps alternating between the default handle and functions strictly increase",
          hrts_last_error());
    prev = 0;
    not_increasing = errors = 0;
    for (int i = 0; i < 100; i++) {
      errors += (i % 2 ? hrts_next_sequence(&u) : hrts_segment_next_sequence(dflt, &u)) !=
                HRTS_SUCCESS;
      not_increasing += i > 0 && u <= prev;
      prev = u;
    }
    check(errors == 0 && not_increasing == 0,
          "sequence numbers alternating between the default handle and functions increase",
          hrts_last_error());
    check_ok(hrts_segment_generation(dflt, &g_handle), "hrts_segment_generation(default)");
    check_ok(hrts_get_generation(&g_default), "hrts_get_generation");
    check(g_handle == g_default, "the default handle has the default segment's generation", NULL);

    /* A base set through one handle moves that segment only. */
    uint64_t ga = 0, gb = 0, ga1 = 0, gb1 = 0, gd1 = 0;
    hrts_segment_generation(a, &ga);
    hrts_segment_generation(b, &gb);
    check_ok(hrts_segment_set_base_info(a), "hrts_segment_set_base_info(a)");
    hrts_segment_generation(a, &ga1);
    hrts_segment_generation(b, &gb1);
    hrts_get_generation(&gd1);
    check(ga1 == ga + 1 && gb1 == gb && gd1 == g_default,
          "hrts_segment_set_base_info bumps its own segment's generation only", NULL);

    /* Sequences are per segment: b starts afresh while a counts on, and a named
       segment persists to its own file in the state directory, not HRTS_SEQ_FILE. */
    uint64_t a_first = 0, b_first = 0;
    uint64_t a_last = check_handle_sequence(a, "segment a", &a_first);
    check_handle_sequence(b, "segment b", &b_first);
    check(a_last >= 2500 && b_first == 0, "segments a and b number their sequences apart", NULL);
    char seq_file[512];
    snprintf(seq_file, sizeof seq_file, "%s/hrts/%s.seq", state, name_a + 1);
    check(access(seq_file, R_OK) == 0, "segment a persists its sequence to its own file", seq_file);

    /* Handles may be used by several threads at once. */
    struct unique_run runs[2] = {{a, 0, 0}, {b, 0, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, unique_thread, &runs[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    check(runs[0].errors + runs[1].errors == 0 &&
              runs[0].not_increasing + runs[1].not_increasing == 0,
          "two threads on two handles take strictly increasing unique stamps", NULL);

    check_base_set_elsewhere(b, name_b);
  }
  hrts_segment_close(a);
  hrts_segment_close(b);
  hrts_segment_close(dflt);
  /* Closing leaves the segments to others; this run created them, so remove them
     (page and name: shm_unlink alone would leave the page behind). */
  int existed_a = -1, existed_b = -1, again = -1;
  check(hrts_segment_unlink(name_a, &existed_a) == HRTS_SUCCESS &&
            hrts_segment_unlink(name_b, &existed_b) == HRTS_SUCCESS && existed_a == 1 &&
            existed_b == 1,
        "hrts_segment_unlink removes the named segments", hrts_last_error());
  check(hrts_segment_unlink(name_a, &again) == HRTS_SUCCESS && again == 0,
        "hrts_segment_unlink of a removed segment says it did not exist", NULL);
  check(hrts_segment_unlink("no-slash", NULL) == HRTS_E_INVALID_ARGUMENT,
        "hrts_segment_unlink refuses an invalid name", NULL);
}

/* ---------------------------------------------------------------- mode and tracking state */

/* A whole number from the environment (the creator's HRTS_* settings), else `fallback`. */
static uint64_t env_or(const char *var, uint64_t fallback) {
  const char *v = getenv(var);
  return v && *v ? strtoull(v, NULL, 10) : fallback;
}

static uint64_t abs64(int64_t v) { return v < 0 ? 0u - (uint64_t)v : (uint64_t)v; }

/* The state of a fresh, undamaged segment: the settings it was created with, ties and
   steps that fit them, a slope correction within its bounds, no repairs. */
static void check_tracking_state(const hrts_tracking_state *st, uint32_t mode, uint64_t tie_ms,
                                 uint64_t slew_ppm, const char *label) {
  char detail[320];
  snprintf(detail, sizeof detail,
           "mode %" PRIu32 " tie %" PRIu64 " ns slew %" PRIu64 " ppb step %" PRIu64
           " ns ties %" PRIu64 " last tie %" PRIu64 " correction %" PRId64 " = %" PRId64
           " + %" PRId64 " ppb steps %" PRIu64 " repairs %" PRIu64,
           st->mode, st->tie_interval_ns, st->max_slew_ppb, st->step_threshold_ns, st->ties,
           st->last_tie_ns, st->correction_ppb, st->frequency_ppb, st->slew_ppb, st->steps,
           st->repairs);
  check_labelled(st->mode == mode, label, "the tracking state carries the segment's mode", detail);
  check_labelled(st->tie_interval_ns == tie_ms * 1000000u &&
                     st->max_slew_ppb == slew_ppm * 1000u &&
                     st->step_threshold_ns == env_or("HRTS_STEP_THRESHOLD_MS", 100) * 1000000u,
                 label, "tie interval, largest slew and step threshold are the creator's",
                 detail);
  uint64_t now = realtime_ns();
  /* Before the first tie, the pairing that made the base is the last one. */
  check_labelled(mode == HRTS_MODE_FROZEN ? st->last_tie_ns == 0
                                          : st->last_tie_ns <= now + 5000000u &&
                                                st->last_tie_ns + 600000000000u > now,
                 label, "the last tie is a recent time (frozen: none)", detail);
  check_labelled(abs64(st->frequency_ppb) <= st->max_slew_ppb &&
                     abs64(st->correction_ppb) <= 2 * st->max_slew_ppb + 2 &&
                     abs64(st->correction_ppb - st->frequency_ppb - st->slew_ppb) <= 2,
                 label, "the slope's correction is frequency plus slew, within the bounds",
                 detail);
  check_labelled(st->steps > 0 || (st->last_step_ns == 0 && st->largest_step_ns == 0), label,
                 "no step sizes without steps", detail);
  check_labelled(st->repairs == 0, label, "a fresh segment has had no repairs", detail);
}

/* The disruption state of a segment this run created: none seen (count 0, last 0, kind
   HRTS_DISRUPTION_NONE), the bound not disrupted, and a page that records them. */
static void check_fresh_disruption_state(const hrts_disruption_state *ds, const char *label) {
  char detail[160];
  snprintf(detail, sizeof detail,
           "count %" PRIu64 " last %" PRIu64 " kind %" PRIu32 " pending %" PRIu32
           " recorded %" PRIu32 " reserved %" PRIu32,
           ds->count, ds->last_ns, ds->last_kind, ds->pending, ds->recorded, ds->reserved);
  check_labelled(ds->count == 0 && ds->last_ns == 0 && ds->last_kind == HRTS_DISRUPTION_NONE,
                 label, "a fresh segment has seen no disruption (count 0, last 0, kind none)",
                 detail);
  check_labelled(ds->pending == 0, label, "a fresh segment's bound is not disrupted", detail);
  check_labelled(ds->recorded == 1 && ds->reserved == 0, label,
                 "a segment of this library records disruptions (reserved 0)", detail);
}

/* The default segment: created by this run, with the environment's mode (run.sh sets none:
   tracking) and settings. */
static void check_mode_and_tracking_state(void) {
  const char *env_mode = getenv("HRTS_MODE");
  uint32_t want = env_mode && strcmp(env_mode, "frozen") == 0 ? HRTS_MODE_FROZEN
                                                              : HRTS_MODE_TRACKING;
  uint32_t mode = 0;
  if (check_ok(hrts_get_mode(&mode), "hrts_get_mode")) {
    check(mode == want, "the default segment's mode is HRTS_MODE (default tracking)",
          mode == HRTS_MODE_FROZEN ? "frozen" : "not frozen");
  }
  hrts_tracking_state st;
  memset(&st, 0xA5, sizeof st); /* every field must be written */
  if (check_ok(hrts_get_tracking_state(&st), "hrts_get_tracking_state")) {
    check_tracking_state(&st, want, env_or("HRTS_TIE_INTERVAL_MS", 1000),
                         env_or("HRTS_MAX_SLEW_PPM", 500), "default segment");
  }
  hrts_disruption_state ds;
  memset(&ds, 0xA5, sizeof ds); /* every field must be written */
  if (check_ok(hrts_get_disruption_state(&ds), "hrts_get_disruption_state")) {
    check_fresh_disruption_state(&ds, "default segment");
  }
  int64_t offset = INT64_MIN;
  if (check_ok(hrts_get_offset_nanoseconds(&offset), "hrts_get_offset_nanoseconds")) {
    char detail[64];
    snprintf(detail, sizeof detail, "offset %" PRId64 " ns", offset);
    check(abs64(offset) < 5000000u, "the default segment is within 5 ms of CLOCK_REALTIME",
          detail);
  }
  check_ok(hrts_validate(), "hrts_validate: the default segment is undamaged");
}

static hrts_segment *open_with(const char *name, const hrts_open_options *opts,
                               const char *what) {
  hrts_segment *seg = NULL;
  if (check_ok(hrts_segment_open_with(name, opts, &seg), what)) {
    check(seg != NULL, "a successful hrts_segment_open_with gives a handle", what);
  }
  return seg;
}

/* hrts_segment_open_with: the creator chooses the mode and tracking settings. Uses the
   names of check_handles (which removed them), so run.sh's cleanup covers a crash. */
static void check_open_with_mode(void) {
  char frozen_name[256], tracked_name[256];
  test_segment_name(frozen_name, sizeof frozen_name, "a");
  test_segment_name(tracked_name, sizeof tracked_name, "b");
  hrts_open_options opts;
  memset(&opts, 0, sizeof opts);
  opts.version = HRTS_OPEN_OPTIONS_VERSION;
  opts.mode = HRTS_MODE_FROZEN;
  hrts_segment *frozen = open_with(frozen_name, &opts, "hrts_segment_open_with(frozen)");
  /* It exists now: an open without options (the environment says tracking) keeps it frozen. */
  hrts_segment *again = open_handle(frozen_name, "hrts_segment_open(the frozen segment)");
  opts.mode = HRTS_MODE_TRACKING;
  opts.tie_interval_ms = 20;
  opts.max_slew_ppm = 100;
  hrts_segment *tracked = open_with(tracked_name, &opts, "hrts_segment_open_with(tracking, 20 ms)");
  if (frozen && again && tracked) {
    uint32_t m1 = 0, m2 = 0, m3 = 0;
    check_ok(hrts_segment_mode(frozen, &m1), "hrts_segment_mode(frozen)");
    check_ok(hrts_segment_mode(again, &m2), "hrts_segment_mode(second handle)");
    check_ok(hrts_segment_mode(tracked, &m3), "hrts_segment_mode(tracked)");
    check(m1 == HRTS_MODE_FROZEN && m2 == HRTS_MODE_FROZEN,
          "a segment created frozen reports frozen through every handle", NULL);
    check(m3 == HRTS_MODE_TRACKING, "a segment created tracking reports tracking", NULL);

    hrts_tracking_state st;
    memset(&st, 0xA5, sizeof st);
    if (check_ok(hrts_segment_tracking_state(frozen, &st), "hrts_segment_tracking_state(frozen)")) {
      check_tracking_state(&st, HRTS_MODE_FROZEN, env_or("HRTS_TIE_INTERVAL_MS", 1000),
                           env_or("HRTS_MAX_SLEW_PPM", 500), "frozen segment");
      check(st.ties == 0 && st.last_tie_ns == 0, "a frozen segment never ties", NULL);
    }
    hrts_disruption_state ds;
    memset(&ds, 0xA5, sizeof ds);
    if (check_ok(hrts_segment_disruption_state(frozen, &ds),
                 "hrts_segment_disruption_state(frozen)")) {
      check_fresh_disruption_state(&ds, "frozen segment");
    }

    /* The first stamp past a tie interval ties. */
    hrts_tracking_state before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    uint64_t ns = 0;
    check_ok(hrts_segment_tracking_state(tracked, &before), "hrts_segment_tracking_state before");
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    check_ok(hrts_segment_epoch_nanoseconds(tracked, &ns), "a stamp past the tie interval");
    check_ok(hrts_segment_tracking_state(tracked, &after), "hrts_segment_tracking_state after");
    check_tracking_state(&after, HRTS_MODE_TRACKING, 20, 100, "tracked segment");
    char detail[128];
    snprintf(detail, sizeof detail, "ties %" PRIu64 " -> %" PRIu64 ", last tie %" PRIu64
             " offset %" PRId64, before.ties, after.ties, after.last_tie_ns, after.last_offset_ns);
    check(after.ties > before.ties && absdiff(after.last_tie_ns, ns) < 5000000u &&
              abs64(after.last_offset_ns) < 5000000u,
          "a stamp 50 ms after creation ties a 20 ms segment to the clock", detail);

    hrts_segment *both[2] = {frozen, tracked};
    for (int k = 0; k < 2; k++) {
      int64_t offset = INT64_MIN;
      const char *label = k ? "tracked segment" : "frozen segment";
      check_labelled(hrts_segment_offset_nanoseconds(both[k], &offset) == HRTS_SUCCESS &&
                         abs64(offset) < 5000000u,
                     label, "within 5 ms of CLOCK_REALTIME", hrts_last_error());
      check_labelled(hrts_segment_validate(both[k]) == HRTS_SUCCESS, label,
                     "hrts_segment_validate: undamaged", hrts_last_error());
    }
  }

  /* Options of an unknown version or out of range are refused, *out NULL. */
  hrts_open_options bad[5];
  memset(bad, 0, sizeof bad);
  bad[1].version = bad[2].version = bad[3].version = bad[4].version = HRTS_OPEN_OPTIONS_VERSION;
  bad[1].mode = 7;
  bad[2].tie_interval_ms = 60001;
  bad[3].bound_drift_ppm = 1000001;
  bad[4].bound_void_s = 604801;
  const char *why[5] = {"version 0", "mode 7", "tie interval 60001 ms", "bound drift 1000001 ppm",
                        "bound void-after 604801 s"};
  for (int k = 0; k < 5; k++) {
    hrts_segment *seg = (hrts_segment *)(uintptr_t)1;
    int rc = hrts_segment_open_with(tracked_name, &bad[k], &seg);
    check_labelled(rc == HRTS_E_INVALID_ARGUMENT && seg == NULL &&
                       strstr(hrts_last_error(), "hrts_segment_open_with") != NULL,
                   why[k], "hrts_segment_open_with refuses it (HRTS_E_INVALID_ARGUMENT)",
                   hrts_last_error());
    if (rc == HRTS_SUCCESS) hrts_segment_close(seg);
  }
  /* The bound settings (version 2), and a caller of version 1, whose struct ends before
     them: what lies there is not read (these values would be refused). */
  hrts_open_options bound;
  memset(&bound, 0, sizeof bound);
  bound.version = HRTS_OPEN_OPTIONS_VERSION;
  bound.bound_drift_ppm = 20;
  bound.bound_void_s = 5;
  hrts_segment *with_bound = open_with(tracked_name, &bound, "hrts_segment_open_with(bound 20 ppm, 5 s)");
  hrts_segment_close(with_bound);
  hrts_open_options v1;
  memset(&v1, 0, sizeof v1);
  v1.version = 1;
  v1.bound_drift_ppm = 1000001;
  v1.bound_void_s = 604801;
  hrts_segment *old_caller = open_with(tracked_name, &v1, "hrts_segment_open_with(version 1)");
  hrts_segment_close(old_caller);
  hrts_segment_close(frozen);
  hrts_segment_close(again);
  hrts_segment_close(tracked);
  check(hrts_segment_unlink(frozen_name, NULL) == HRTS_SUCCESS &&
            hrts_segment_unlink(tracked_name, NULL) == HRTS_SUCCESS,
        "remove the frozen and tracked segments", hrts_last_error());
}

static int stamp_events(const char *path, const char *count_arg) {
  char *end;
  long count = strtol(count_arg, &end, 10);
  if (*end != '\0' || count < 0) {
    fprintf(stderr, "hrts_test: COUNT must be a non-negative integer, not %s\n", count_arg);
    return 2;
  }
  FILE *f = fopen(path, "a");
  if (!f) {
    perror(path);
    return 1;
  }
  for (long i = 0; i < count; i++) {
    uint64_t ns;
    /* Ordered: these stamps are compared with other processes' stamps. */
    int rc = hrts_get_epoch_nanoseconds_ordered(&ns);
    if (rc != HRTS_SUCCESS) {
      fprintf(stderr, "hrts_test: %s: %s\n", hrts_status_name(rc), hrts_last_error());
      fclose(f);
      return 1;
    }
    fprintf(f, "%" PRIu64 " c %ld\n", ns, i);
  }
  return fclose(f) == 0 ? 0 : 1;
}

/* Reads one line from f into buf (without the newline); 0 at EOF or error. */
static int read_line(FILE *f, char *buf, size_t size) {
  if (!fgets(buf, (int)size, f)) return 0;
  buf[strcspn(buf, "\n")] = '\0';
  return 1;
}

static int drive(const char *rounds_arg, char **cmd) {
  char *end;
  long rounds;
  if (!positive_arg(rounds_arg, &rounds)) {
    fprintf(stderr, "hrts_test: N must be a positive integer, not %s\n", rounds_arg);
    return 2;
  }
  int to_child[2], from_child[2];
  signal(SIGPIPE, SIG_IGN); /* a child that dies is reported, not fatal */
  if (pipe(to_child) != 0 || pipe(from_child) != 0) {
    perror("pipe");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[0]);
    close(to_child[1]);
    close(from_child[0]);
    close(from_child[1]);
    execvp(cmd[0], cmd);
    perror(cmd[0]);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  FILE *out = fdopen(to_child[1], "w");
  FILE *in = fdopen(from_child[0], "r");
  if (!out || !in) {
    perror("fdopen");
    return 1;
  }
  long ordered = 0, violations = 0, done = 0;
  char line[128];
  for (long i = 0; i < rounds; i++) {
    uint64_t before = 0, after = 0;
    /* Unordered is enough before the write (an early read only makes it smaller);
       the stamp after the reply must not be taken before the reply arrived. */
    if (hrts_get_epoch_nanoseconds(&before) != HRTS_SUCCESS) break;
    if (fprintf(out, "%ld\n", i) < 0 || fflush(out) != 0) break;
    if (!read_line(in, line, sizeof line)) break;
    if (hrts_get_epoch_nanoseconds_ordered(&after) != HRTS_SUCCESS) break;
    uint64_t child = strtoull(line, &end, 10);
    done++;
    if (*end == '\0' && before <= child && child <= after) {
      ordered++;
    } else {
      violations++;
      if (violations <= 5) {
        fprintf(stderr, "drive: round %ld not ordered: %" PRIu64 " <= %s <= %" PRIu64 "\n", i, before,
                line, after);
      }
    }
  }
  fclose(out);
  fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  printf("drive: %ld rounds, %ld ordered, %ld violations\n", done, ordered, violations);
  if (done != rounds) fprintf(stderr, "drive: child stopped after %ld of %ld rounds\n", done, rounds);
  return done == rounds && violations == 0 ? 0 : 1;
}

/* WTMLIB's operations (hrts_evaluate_reliability, hrts_get_creation_reliability,
   hrts_get_counter, hrts_get_conversion_params, hrts_ticks_to_ns) on the default segment.
   The conversion parameters must be exactly what the Rust core derives from the segment's
   frequency (native/core/src/clock/wtmlib.rs, recomputed here in 128-bit arithmetic). */
static void check_wtmlib(void) {
  uint64_t hz = 0, counter = 0, s = 0, us = 0;
  check_ok(hrts_get_base_info(&hz, &counter, &s, &us), "hrts_get_base_info (for wtmlib)");
  hrts_conversion_params p;
  uint64_t wrap = 0;
  memset(&p, 0xA5, sizeof p);
  uint64_t before = 0, after = 0;
  check_ok(hrts_get_counter(&before), "hrts_get_counter");
  int got = check_ok(hrts_get_conversion_params(&p, &wrap), "hrts_get_conversion_params");
  check_ok(hrts_get_counter(&after), "hrts_get_counter");
  if (got) {
    unsigned __int128 one_s = (unsigned __int128)1000000000u << 32;
    uint64_t mult = (uint64_t)((one_s + hz / 2) / hz);
    uint64_t max_delta = (UINT64_MAX - 0xffffffffu) / mult;
    uint32_t ms = 63 - (uint32_t)__builtin_clzll(max_delta);
    uint64_t per_modulus = (uint64_t)(((unsigned __int128)1 << ms) * mult >> 32);
    char detail[200];
    snprintf(detail, sizeof detail, "freq %" PRIu64 " mult %" PRIu64 "/%" PRIu64 " shift %u "
             "modulus 2^%u/2^%u ns %" PRIu64 "/%" PRIu64, p.frequency, p.mult, mult, p.shift,
             p.modulus_shift, ms, p.ns_per_modulus, per_modulus);
    check(p.frequency == hz && p.mult == mult && p.shift == 32 && p.modulus_shift == ms &&
              p.ns_per_modulus == per_modulus,
          "the conversion parameters are the Rust core's for the segment's frequency", detail);
    snprintf(detail, sizeof detail, "%" PRIu64 " s", wrap);
    check(wrap >= (UINT64_MAX - after) / hz && wrap <= (UINT64_MAX - before) / hz,
          "seconds before wrap: the counter's distance to 2^64 at the frequency", detail);
    uint64_t ticks[] = {0, 1, 999, hz, hz * 5 + 7, hz * 86400, UINT64_MAX >> 8};
    int same = 1, close = 1;
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
      uint64_t f = hrts_ticks_to_ns(&p, ticks[i]);
      uint64_t inl = hrts_ticks_to_ns_inline(&p, ticks[i]);
      unsigned __int128 exact = (unsigned __int128)ticks[i] * mult >> 32;
      uint64_t moduli = ticks[i] >> ms;
      same &= f == inl;
      close &= f <= exact && exact - f <= moduli + 1;
    }
    check(same, "hrts_ticks_to_ns and hrts_ticks_to_ns_inline agree", NULL);
    check(close, "ticks convert to the exact ns, less under 1 ns per modulus", NULL);
    check(hrts_ticks_to_ns(NULL, 5) == 0, "hrts_ticks_to_ns(NULL) is 0", NULL);
    /* A measured interval: a 20 ms sleep is 20 ms by the counter too. */
    uint64_t c0 = 0, c1 = 0, n0 = realtime_ns();
    check_ok(hrts_get_counter(&c0), "hrts_get_counter");
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    check_ok(hrts_get_counter(&c1), "hrts_get_counter");
    uint64_t by_counter = hrts_ticks_to_ns(&p, c1 - c0), by_clock = realtime_ns() - n0;
    snprintf(detail, sizeof detail, "%" PRIu64 " ns by the counter, %" PRIu64 " by the clock",
             by_counter, by_clock);
    check(by_counter >= 20000000u && absdiff(by_counter, by_clock) < 5000000u,
          "a 20 ms sleep measured with hrts_get_counter and hrts_ticks_to_ns", detail);
  }

  hrts_reliability created;
  memset(&created, 0xA5, sizeof created);
  if (check_ok(hrts_get_creation_reliability(&created), "hrts_get_creation_reliability")) {
    check(created.evaluated <= 1 && created.significant == HRTS_SIGNIFICANCE_UNKNOWN &&
              memchr(created.note, 0, sizeof created.note) != NULL,
          "the creation-time result says what it does not record", (const char *)created.note);
    check(!created.evaluated || (created.monotonic && created.cpus >= 1),
          "the segment's creator found its counter monotonic on >= 1 CPU", NULL);
  }
  hrts_reliability_options opts;
  memset(&opts, 0, sizeof opts);
  opts.version = HRTS_RELIABILITY_OPTIONS_VERSION;
  opts.budget_ms = 20;
  uint32_t methods[] = {HRTS_RELIABILITY_COP, HRTS_RELIABILITY_CPU_SWITCHING};
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int k = 0; k < 2; k++) {
    hrts_reliability r;
    memset(&r, 0xA5, sizeof r);
    const char *label = k ? "cpu switching" : "cas-ordered probes";
    if (!check_ok(hrts_evaluate_reliability(methods[k], &opts, &r), label)) continue;
    check_labelled(r.method == methods[k] && r.evaluated == 1 && r.probes >= 2, label,
                   "an evaluation ran", NULL);
    check_labelled(r.monotonic && r.violations == 0, label, "this machine's counter is monotonic",
                   (const char *)r.note);
    check_labelled(r.cpus >= 1 && (long)r.cpus <= online, label, "CPUs took part", NULL);
    check_labelled(created.source == r.source, label, "the segment's counter was evaluated", NULL);
    int single = r.cpus == 1;
    check_labelled(single ? (r.max_shift_ticks == 0 && r.min_pair_handovers == UINT64_MAX)
                          : (r.min_pair_handovers != UINT64_MAX),
                   label, "one CPU has no shift; several have hand-overs", NULL);
    check_labelled(r.significant == (single || r.min_pair_handovers >= 16), label,
                   "significant by the default setting (16 hand-overs per pair)",
                   (const char *)r.note);
  }
  /* The significance setting: no sequence shows 2^64 - 1 hand-overs per pair. */
  opts.min_handovers = UINT64_MAX;
  hrts_reliability strict;
  if (check_ok(hrts_evaluate_reliability(HRTS_RELIABILITY_COP, &opts, &strict), "strict")) {
    check(strict.cpus == 1 ? strict.significant == 1
                           : strict.significant == 0 &&
                                 strstr((const char *)strict.note, "not significant") != NULL,
          "a significance the sequence cannot meet is reported as not significant",
          (const char *)strict.note);
  }
  opts.version = 77;
  check(hrts_evaluate_reliability(HRTS_RELIABILITY_COP, &opts, &strict) ==
            HRTS_E_INVALID_ARGUMENT,
        "options of another version are refused", hrts_last_error());
  check(hrts_evaluate_reliability(9, NULL, &strict) == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "HRTS_RELIABILITY_COP") != NULL,
        "an unknown method is refused, naming the methods", hrts_last_error());
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "stamp-events") == 0) return stamp_events(argv[2], argv[3]);
  if (argc >= 4 && strcmp(argv[1], "drive") == 0) return drive(argv[2], argv + 3);
  if (argc == 3 && strcmp(argv[1], "set-base") == 0) return set_base(argv[2]);
  if (argc == 3 && strcmp(argv[1], "stamp-for") == 0) return stamp_for(argv[2]);
  if (argc == 3 && strcmp(argv[1], "fuzz-read") == 0) return fuzz_read(argv[2]);
  if ((argc == 3 || argc == 4) && strcmp(argv[1], "bounded") == 0)
    return bounded(argv[2], argc == 4 ? argv[3] : NULL);
  if (argc == 3 && strcmp(argv[1], "bound-check") == 0) return bound_check(argv[2]);
  if (argc == 3 && strcmp(argv[1], "damage") == 0) return damage(argv[2]);
  if (argc == 4 && strcmp(argv[1], "seq") == 0) return seq_numbers(argv[2], argv[3]);
  if (argc >= 2 && strcmp(argv[1], "unlink") == 0) {
    /* Cleanup for run.sh: removes each named segment, page and name. */
    for (int i = 2; i < argc; i++) hrts_segment_unlink(argv[i], NULL);
    return 0;
  }
  if (argc != 1) {
    fprintf(stderr,
            "usage: hrts_test [stamp-events FILE COUNT | drive N CMD [ARG...] | set-base NAME | "
            "stamp-for MS | fuzz-read MS | bounded N [PAUSE_US] | bound-check MS | damage NAME | "
            "seq NAME N | "
            "unlink NAME...]\n");
    return 2;
  }
  /* Before anything opens the segment in this process (see check_in_child). */
  check_in_child(child_foreign_segment, "a foreign segment gives HRTS_E_FOREIGN, every time");
  check_in_child(child_invalid_name, "an invalid HRTS_SEGMENT gives HRTS_E_INVALID_ARGUMENT");
  check_version();
  check_status_names();
  check_null_pointers();
  check_base_info();
  check_calc_time_stamp();
  check_epoch_monotonic();
  check_unique_and_sequence();
  check_itc();
  check_set_base_info();
  check_segment_name();
  check_bounded();
  check_threads();
  check_handle_refusals();
  check_handles();
  check_damage_is_reported();
  check_mode_and_tracking_state();
  check_open_with_mode();
  check_wtmlib();
  printf("c: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
