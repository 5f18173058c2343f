/*
 * The shared statistics from C, through include/hrts.h only: a typed snapshot
 * of the statistics segment, shared timer instances, removing a segment. Also
 * the C side of the cross-language tests (tests/java/io/hrts/stats/SharedStatsTest).
 *
 *   shared_test check          in-process checks on the segment HRTS_STATS_SEGMENT
 *                              names; last line "shared_test: N passed, N failed"
 *   shared_test record SEED    records the e2e.* metrics (the recipe TestMains
 *                              stats-record follows too), prints "pid PID" and
 *                              "dump JSON", then waits for stdin to close
 *   shared_test read [SEGMENT] prints a snapshot from the typed accessors:
 *                              "segment NAME TAKEN", per process "process PID
 *                              INSTANCE PROGRAM STATE TIMESTAMP" and its "metric
 *                              ..." lines, then "aggregate ..." lines (see
 *                              print_metric)
 *   shared_test timer-start INSTANCE
 *                              starts shared instance INSTANCE of timer e2e.span,
 *                              prints "start_before NS" and "start_after NS"
 *                              (hrts stamps around the call), waits for stdin
 *   shared_test unlink SEGMENT removes the segment; prints "existed 0|1"
 */
#define _POSIX_C_SOURCE 200809L

#include "hrts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAIL: %s (last error: %s)\n", what, hrts_last_error());
  }
}

static void die(const char *what, int status) {
  fprintf(stderr, "shared_test: %s: %s (%s)\n", what, hrts_status_name(status), hrts_last_error());
  exit(1);
}

static uint64_t metric(const char *name, uint32_t kind) {
  uint64_t id = 0;
  int s = hrts_stats_metric(name, kind, &id);
  if (s != HRTS_SUCCESS) die(name, s);
  return id;
}

static uint64_t now(void) {
  uint64_t ns = 0;
  int s = hrts_get_epoch_nanoseconds(&ns);
  if (s != HRTS_SUCCESS) die("hrts_get_epoch_nanoseconds", s);
  return ns;
}

/* Waits until the parent closes stdin: the process stays live (and its cells
 * with it) while the reader reads. */
static void wait_for_eof(void) {
  char buf[256];
  while (fgets(buf, sizeof buf, stdin) != NULL) {
  }
}

/* The metrics every writer of the cross-language test records, from its seed:
 * shared names (aggregated across processes) and one of its own. */
static void record(int seed) {
  uint64_t requests = metric("e2e.requests", HRTS_STATS_COUNTER);
  uint64_t errors = metric("e2e.errors", HRTS_STATS_COUNTER);
  uint64_t queue = metric("e2e.queue", HRTS_STATS_GAUGE);
  uint64_t latency = metric("e2e.latency", HRTS_STATS_TIMER);
  char own[64];
  snprintf(own, sizeof own, "e2e.c.%d", seed);
  uint64_t mine = metric(own, HRTS_STATS_COUNTER);
  for (int i = 0; i < 20 + seed; i++) hrts_stats_counter_add(requests, i % 5 + 1);
  hrts_stats_counter_add(errors, 2 * seed);
  hrts_stats_counter_add(errors, -seed);
  for (int i = 0; i < 15; i++) hrts_stats_gauge_set(queue, seed * 10 + i * 0.5);
  for (int i = 0; i < 30 + seed; i++) hrts_stats_timer_record(latency, 1000u * (uint64_t)seed + 37u * (uint64_t)i);
  hrts_stats_counter_add(mine, seed);
}

static void print_number(double v) {
  if (isnan(v)) {
    printf(" NaN");
  } else {
    printf(" %.17g", v);
  }
}

/* "PREFIX NAME KIND TIMESTAMP COUNTER_VALUE VALUE COUNT SUM MIN MAX MEAN P50 P90
 * P99 P99.9" of the metric's values statistics. */
static void print_metric(const char *prefix, const hrts_stats_metric_dump *m) {
  const hrts_stats_statistics *v = &m->statistics[0];
  printf("%s %s %u %llu %lld", prefix, m->name, m->kind, (unsigned long long)m->timestamp,
         (long long)m->counter_value);
  print_number(m->value);
  printf(" %llu", (unsigned long long)v->count);
  double rest[] = {v->sum, v->min, v->max, v->mean, v->p50, v->p90, v->p99, v->p99_9};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) print_number(rest[i]);
  printf("\n");
}

static int read_snapshot(const char *segment) {
  hrts_stats_snapshot *snap = NULL;
  int s = hrts_stats_snapshot_take(segment, &snap);
  if (s != HRTS_SUCCESS) die("hrts_stats_snapshot_take", s);
  printf("segment %s %llu\n", hrts_stats_snapshot_segment(snap),
         (unsigned long long)hrts_stats_snapshot_taken(snap));
  for (size_t i = 0; i < hrts_stats_snapshot_len(snap); i++) {
    const hrts_stats_process *p = hrts_stats_snapshot_process(snap, i);
    printf("process %u %u %s %s %llu\n", p->pid, p->instance, p->program,
           p->state == HRTS_STATS_LIVE ? "live" : "exited", (unsigned long long)p->timestamp);
    for (size_t j = 0; j < hrts_stats_dump_len(p->dump); j++) {
      char prefix[32];
      snprintf(prefix, sizeof prefix, "metric %u", p->pid);
      print_metric(prefix, hrts_stats_dump_metric(p->dump, j));
    }
  }
  const hrts_stats_dump *agg = hrts_stats_snapshot_aggregate(snap);
  for (size_t j = 0; j < hrts_stats_dump_len(agg); j++) print_metric("aggregate", hrts_stats_dump_metric(agg, j));
  hrts_stats_snapshot_free(snap);
  return 0;
}

static const hrts_stats_metric_dump *find(const hrts_stats_dump *d, const char *name) {
  for (size_t i = 0; i < hrts_stats_dump_len(d); i++) {
    const hrts_stats_metric_dump *m = hrts_stats_dump_metric(d, i);
    if (strcmp(m->name, name) == 0) return m;
  }
  return NULL;
}

static int same_number(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* The fields that do not change between two publications of unchanged metrics
 * (the interval statistics and the moving average decay with time). */
static int same_metric(const hrts_stats_metric_dump *a, const hrts_stats_metric_dump *b) {
  if (a == NULL || b == NULL) return 0;
  const hrts_stats_statistics *x = &a->statistics[0], *y = &b->statistics[0];
  return strcmp(a->name, b->name) == 0 && a->kind == b->kind && a->timestamp == b->timestamp &&
         a->counter_value == b->counter_value && same_number(a->value, b->value) && x->count == y->count &&
         same_number(x->sum, y->sum) && same_number(x->min, y->min) && same_number(x->max, y->max) &&
         same_number(x->mean, y->mean) && same_number(x->p50, y->p50) && same_number(x->p90, y->p90) &&
         same_number(x->p99, y->p99) && same_number(x->p99_9, y->p99_9);
}

static void check_null_pointers(void) {
  check(hrts_stats_snapshot_take(NULL, NULL) == HRTS_E_NULL_POINTER, "snapshot_take: NULL out");
  check(hrts_stats_snapshot_len(NULL) == 0 && hrts_stats_snapshot_process(NULL, 0) == NULL &&
            hrts_stats_snapshot_aggregate(NULL) == NULL && hrts_stats_snapshot_taken(NULL) == 0 &&
            strcmp(hrts_stats_snapshot_segment(NULL), "") == 0 &&
            hrts_stats_snapshot_damaged(NULL, NULL, NULL) == 0,
        "the accessors take NULL");
  hrts_stats_snapshot_free(NULL);
  check(hrts_stats_timer_start_shared(0, 1) == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "metric id") != NULL,
        "a shared timer with id 0 is refused, with a message");
}

static void check_missing_segment(void) {
  char name[64];
  snprintf(name, sizeof name, "/hrts-stats-none-%d", (int)getpid());
  hrts_stats_snapshot *snap = NULL;
  check(hrts_stats_snapshot_take(name, &snap) == HRTS_SUCCESS && snap != NULL, "no segment is no error");
  check(hrts_stats_snapshot_len(snap) == 0 && hrts_stats_snapshot_taken(snap) == 0 &&
            hrts_stats_dump_len(hrts_stats_snapshot_aggregate(snap)) == 0 &&
            strcmp(hrts_stats_snapshot_segment(snap), name) == 0,
        "no segment: no process, taken 0, the name asked for");
  size_t slots = 9, cells = 9;
  check(hrts_stats_snapshot_damaged(snap, &slots, &cells) == 0 && slots == 0 && cells == 0,
        "no segment: nothing damaged");
  check(hrts_stats_snapshot_process(snap, 0) == NULL, "out of range: NULL");
  hrts_stats_snapshot_free(snap);
  int existed = -1;
  check(hrts_stats_segment_unlink(name, &existed) == HRTS_SUCCESS && existed == 0, "unlinking no segment");
}

/* Records, dumps, and finds exactly that dump for this process in a snapshot. */
static void check_own_statistics(void) {
  record(3);
  hrts_stats_dump *own = NULL;
  check(hrts_stats_dump_now(&own) == HRTS_SUCCESS, "dump_now");
  hrts_stats_snapshot *snap = NULL;
  check(hrts_stats_snapshot_take(NULL, &snap) == HRTS_SUCCESS, "snapshot of HRTS_STATS_SEGMENT");
  check(strcmp(hrts_stats_snapshot_segment(snap), getenv("HRTS_STATS_SEGMENT")) == 0,
        "NULL reads the segment HRTS_STATS_SEGMENT names");
  const hrts_stats_process *me = NULL;
  for (size_t i = 0; i < hrts_stats_snapshot_len(snap); i++) {
    const hrts_stats_process *p = hrts_stats_snapshot_process(snap, i);
    if (p->pid == (uint32_t)getpid()) me = p;
  }
  check(me != NULL, "this process is in the snapshot");
  if (me == NULL) {
    hrts_stats_snapshot_free(snap);
    hrts_stats_dump_free(own);
    return;
  }
  check(hrts_stats_snapshot_taken(snap) >= me->timestamp, "taken after the process published");
  check(me->state == HRTS_STATS_LIVE && me->instance >= 1, "live, instance from 1");
  check(strncmp(me->program, "shared_test", 15) == 0, "program is the process's comm");
  check(me->timestamp >= hrts_stats_dump_metric(own, 0)->timestamp, "published after the metrics' updates");
  const char *names[] = {"e2e.requests", "e2e.errors", "e2e.queue", "e2e.latency", "e2e.c.3"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const hrts_stats_metric_dump *mine = find(own, names[i]);
    check(mine != NULL, names[i]);
    check(same_metric(mine, find(me->dump, names[i])), "the segment holds the process's dump");
    /* One process: its aggregate is its own values, quantiles included. */
    check(same_metric(mine, find(hrts_stats_snapshot_aggregate(snap), names[i])), "aggregate of one process");
    /* The rates of one snapshot: the aggregate of one process has its rates. */
    const hrts_stats_metric_dump *pub = find(me->dump, names[i]);
    const hrts_stats_metric_dump *agg = find(hrts_stats_snapshot_aggregate(snap), names[i]);
    int same_rates = pub != NULL && agg != NULL && pub->statistics_count == agg->statistics_count;
    for (uint32_t k = 0; same_rates && k < pub->statistics_count; k++)
      same_rates = pub->statistics[k].rate == agg->statistics[k].rate && pub->statistics[k].rate >= 0;
    check(same_rates, "the aggregate's rates of one process are its rates");
  }
  const hrts_stats_metric_dump *req = find(me->dump, "e2e.requests");
  check(req != NULL && req->kind == HRTS_STATS_COUNTER && req->counter_value == 66 && req->statistics_count == 4 &&
            req->statistics[0].count == 24,
        "typed counter: value, sets, count");
  const hrts_stats_metric_dump *lat = find(me->dump, "e2e.latency");
  check(lat != NULL && lat->kind == HRTS_STATS_TIMER && lat->statistics[0].count == 33 &&
            lat->statistics[0].min == 3000 && lat->statistics[0].max == 3000 + 37 * 32 && lat->value == 3000 + 37 * 32,
        "typed timer: count, min, max, last value");
  check(strstr(hrts_stats_dump_json(me->dump), "\"e2e.queue\"") != NULL, "a process's dump has its JSON");
  hrts_stats_snapshot_free(snap);
  hrts_stats_dump_free(own);
}

static void check_shared_timer(void) {
  uint64_t span = metric("e2e.check-span", HRTS_STATS_TIMER);
  uint64_t d = 0;
  int found = -1;
  check(hrts_stats_timer_stop_shared(span, 77, &d, &found) == HRTS_SUCCESS && found == 0,
        "stopping an instance nobody started: success, not found");
  uint64_t before = now();
  check(hrts_stats_timer_start_shared(span, 77) == HRTS_SUCCESS, "start_shared");
  uint64_t after_start = now();
  struct timespec pause = {0, 2000000};
  nanosleep(&pause, NULL);
  uint64_t before_stop = now();
  check(hrts_stats_timer_stop_shared(span, 77, &d, &found) == HRTS_SUCCESS && found == 1, "stop_shared finds it");
  uint64_t after = now();
  check(d >= before_stop - after_start && d <= after - before, "the duration lies within the stamps");
  check(hrts_stats_timer_stop_shared(span, 77, NULL, &found) == HRTS_SUCCESS && found == 0, "stopped only once");
  check(hrts_stats_timer_start_shared(span, 78) == HRTS_SUCCESS, "start another");
  check(hrts_stats_timer_discard_shared(span, 78, &found) == HRTS_SUCCESS && found == 1, "discard finds it");
  check(hrts_stats_timer_discard_shared(span, 78, NULL) == HRTS_SUCCESS, "discard with NULL found");
  check(hrts_stats_timer_stop_shared(span, 78, NULL, &found) == HRTS_SUCCESS && found == 0, "discarded: gone");
  hrts_stats_dump *dump = NULL;
  check(hrts_stats_dump_now(&dump) == HRTS_SUCCESS, "dump_now");
  const hrts_stats_metric_dump *m = find(dump, "e2e.check-span");
  check(m != NULL && m->statistics[0].count == 1 && m->value == (double)d, "the stop recorded one duration");
  hrts_stats_dump_free(dump);
}

static int run_checks(void) {
  if (getenv("HRTS_STATS_SEGMENT") == NULL) {
    fprintf(stderr, "shared_test check: set HRTS_STATS_SEGMENT to a segment of its own\n");
    return 2;
  }
  check_null_pointers();
  check_missing_segment();
  uint64_t span = metric("e2e.check-span", HRTS_STATS_TIMER);
  check(hrts_stats_timer_start_shared(span, 1) != HRTS_SUCCESS && strlen(hrts_last_error()) > 0,
        "shared timers need started statistics");
  check(hrts_stats_start() == HRTS_SUCCESS, "start");
  check_own_statistics();
  check_shared_timer();
  check(hrts_stats_stop() == HRTS_SUCCESS, "stop");
  int existed = -1;
  check(hrts_stats_segment_unlink(NULL, &existed) == HRTS_SUCCESS && existed == 1, "unlink the segment");
  check(hrts_stats_segment_unlink(NULL, NULL) == HRTS_SUCCESS, "unlink again, existed NULL");
  printf("shared_test: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *cmd = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(cmd, "check") == 0) return run_checks();
  if (strcmp(cmd, "record") == 0 && argc == 3) {
    int s = hrts_stats_start();
    if (s != HRTS_SUCCESS) die("hrts_stats_start", s);
    record(atoi(argv[2]));
    hrts_stats_dump *dump = NULL;
    s = hrts_stats_dump_now(&dump);
    if (s != HRTS_SUCCESS) die("hrts_stats_dump_now", s);
    printf("pid %d\ndump %s\n", (int)getpid(), hrts_stats_dump_json(dump));
    hrts_stats_dump_free(dump);
    wait_for_eof();
    hrts_stats_stop();
    return 0;
  }
  if (strcmp(cmd, "read") == 0 && argc <= 3) return read_snapshot(argc == 3 ? argv[2] : NULL);
  if (strcmp(cmd, "timer-start") == 0 && argc == 3) {
    int s = hrts_stats_start();
    if (s != HRTS_SUCCESS) die("hrts_stats_start", s);
    uint64_t span = metric("e2e.span", HRTS_STATS_TIMER);
    uint64_t instance = strtoull(argv[2], NULL, 10);
    uint64_t before = now();
    s = hrts_stats_timer_start_shared(span, instance);
    uint64_t after = now();
    if (s != HRTS_SUCCESS) die("hrts_stats_timer_start_shared", s);
    printf("start_before %llu\nstart_after %llu\n", (unsigned long long)before, (unsigned long long)after);
    wait_for_eof();
    hrts_stats_stop();
    return 0;
  }
  if (strcmp(cmd, "unlink") == 0 && argc == 3) {
    int existed = 0;
    int s = hrts_stats_segment_unlink(argv[2], &existed);
    if (s != HRTS_SUCCESS) die("hrts_stats_segment_unlink", s);
    printf("existed %d\n", existed);
    return 0;
  }
  fprintf(stderr, "usage: shared_test check | record SEED | read [SEGMENT] | timer-start INSTANCE | unlink SEGMENT\n");
  return 2;
}
