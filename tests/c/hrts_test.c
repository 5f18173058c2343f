/*
 * C-side checks of libhrts through its public header only, as a C user sees it.
 *
 *   hrts_test                          run the checks; last line "c: N passed, N failed"
 *   hrts_test stamp-events FILE COUNT  append COUNT lines "<epoch_ns> c <i>" to FILE
 *   hrts_test drive N CMD [ARG...]     causality driver: starts CMD, then N times stamps,
 *                                      writes a line to CMD's stdin, reads the stamp CMD
 *                                      prints back, stamps again, and checks
 *                                      before <= child <= after; prints a summary line
 *                                      "drive: N rounds, N ordered, N violations" and
 *                                      exits 0 only if every round was ordered
 *
 * Run it with its own segment (HRTS_SEGMENT): it calls hrts_set_base_info, which
 * would move every other process's base on a shared one.
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

static uint64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

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
  check(most == max_event + 1, "the most events on one tick is reported", NULL);
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
  long rounds = strtol(rounds_arg, &end, 10);
  if (*end != '\0' || rounds <= 0) {
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

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "stamp-events") == 0) return stamp_events(argv[2], argv[3]);
  if (argc >= 4 && strcmp(argv[1], "drive") == 0) return drive(argv[2], argv + 3);
  if (argc != 1) {
    fprintf(stderr, "usage: hrts_test [stamp-events FILE COUNT | drive N CMD [ARG...]]\n");
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
  check_threads();
  printf("c: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
