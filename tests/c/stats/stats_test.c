/*
 * C-side checks of hrts runtime statistics through include/hrts.h only.
 *
 *   stats_test DUMP.json   run the checks and the cross-language scenario, write
 *                          the scenario's JSON dump to DUMP.json; the last line
 *                          is "stats_test: N passed, N failed"
 *
 * Run it with its own segment (HRTS_SEGMENT); tests/c/stats/run.sh does.
 */
#define _POSIX_C_SOURCE 200809L

#include "hrts.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAIL: %s (last error: %s)\n", what, hrts_last_error());
  }
}

static const hrts_stats_metric_dump *find(const hrts_stats_dump *d, const char *name) {
  for (size_t i = 0; i < hrts_stats_dump_len(d); i++) {
    const hrts_stats_metric_dump *m = hrts_stats_dump_metric(d, i);
    if (strcmp(m->name, name) == 0) return m;
  }
  return NULL;
}

static void check_configuration_errors(void) {
  check(hrts_stats_configure_json("{\"handystats\": {\"timer\": {\"idle-timout\": 5}}}") ==
            HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "handystats.timer.idle-timout") != NULL,
        "an unknown key is an error that names it");
  check(hrts_stats_configure_json("{\"json-dump\": {\"interval\": \"soon\"}}") == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "json-dump.interval") != NULL,
        "a bad value is an error that names its key");
  check(hrts_stats_configure_json(NULL) == HRTS_E_NULL_POINTER, "NULL configuration");
  check(hrts_stats_configure_file("/nonexistent/hrts-stats.json") == HRTS_E_OS &&
            strstr(hrts_last_error(), "/nonexistent/hrts-stats.json") != NULL,
        "a missing configuration file names it");
}

static void check_bad_input(void) {
  uint64_t id = 0;
  check(hrts_stats_metric("", HRTS_STATS_COUNTER, &id) == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "empty") != NULL,
        "an empty name is refused");
  char huge[1000];
  memset(huge, 'x', sizeof huge - 1);
  huge[sizeof huge - 1] = 0;
  check(hrts_stats_metric(huge, HRTS_STATS_GAUGE, &id) == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "too long") != NULL,
        "a huge name is refused");
  check(hrts_stats_metric("\xff\xfe", HRTS_STATS_GAUGE, &id) == HRTS_E_INVALID_ARGUMENT,
        "a non-UTF-8 name is refused");
  check(hrts_stats_metric("c.bad.kind", 42, &id) == HRTS_E_INVALID_ARGUMENT, "an unknown kind is refused");
  check(hrts_stats_metric(NULL, HRTS_STATS_GAUGE, &id) == HRTS_E_NULL_POINTER, "NULL name");
  check(hrts_stats_metric("c.x", HRTS_STATS_GAUGE, NULL) == HRTS_E_NULL_POINTER, "NULL out");
  check(hrts_stats_metric("c.gauge", HRTS_STATS_GAUGE, &id) == HRTS_SUCCESS && id != 0, "a gauge id");
  uint64_t other = 0;
  check(hrts_stats_metric("c.gauge", HRTS_STATS_TIMER, &other) == HRTS_E_INVALID_ARGUMENT &&
            strstr(hrts_last_error(), "is a gauge") != NULL,
        "a name has one kind");
  check(hrts_stats_gauge_set(id, NAN) == HRTS_E_INVALID_ARGUMENT && strstr(hrts_last_error(), "NaN") != NULL,
        "NaN is refused");
  /* Ids that are no metric's are ignored, never a crash. */
  hrts_stats_counter_add(0, 1);
  hrts_stats_counter_add(UINT64_MAX, 1);
  hrts_stats_counter_add(((uint64_t)HRTS_STATS_COUNTER << 32) | 0xffffffffu, 1);
  /* An id no metric has yet, often enough to fill the queue and fold. */
  for (int i = 0; i < 5000; i++) hrts_stats_counter_add(((uint64_t)HRTS_STATS_COUNTER << 32) | 60000u, 1);
  hrts_stats_timer_stop(12345, 1);
  check(hrts_stats_dump_len(NULL) == 0 && hrts_stats_dump_metric(NULL, 0) == NULL &&
            strcmp(hrts_stats_dump_json(NULL), "") == 0,
        "NULL dumps are empty");
  hrts_stats_dump_free(NULL);
}

static void *increment(void *arg) {
  (void)arg;
  for (int i = 0; i < 250000; i++) HRTS_COUNTER_INCREMENT("c.threads", 1);
  return NULL;
}

static void check_threads(void) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, increment, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  hrts_stats_dump *d = NULL;
  check(hrts_stats_dump_now(&d) == HRTS_SUCCESS && d != NULL, "a dump now");
  const hrts_stats_metric_dump *m = find(d, "c.threads");
  check(m && m->kind == HRTS_STATS_COUNTER && m->counter_value == 1000000 && m->statistics_count == 4 &&
            m->statistics[1].count == 1000000,
        "4 C threads x 250000 increments give the exact count");
  hrts_stats_dump_free(d);
}

/* The cross-language scenario (native/stats/examples/scenario.rs). */
static void scenario(const char *out_path) {
  for (int i = 0; i < 10; i++) HRTS_COUNTER_INCREMENT("scenario.requests", 1);
  HRTS_COUNTER_DECREMENT("scenario.requests", 3);
  HRTS_COUNTER_CHANGE("scenario.requests", 5);
  HRTS_COUNTER_INIT("scenario.balance", 100);
  HRTS_COUNTER_CHANGE("scenario.balance", -150);
  HRTS_COUNTER_CHANGE("scenario.balance", 20);
  for (int i = 1; i <= 20; i++) HRTS_GAUGE_SET("scenario.queue", i * 0.5);
  uint64_t latency = 0;
  check(hrts_stats_metric("scenario.latency", HRTS_STATS_TIMER, &latency) == HRTS_SUCCESS, "timer id");
  for (uint64_t i = 1; i <= 10; i++) hrts_stats_timer_record(latency, 1000 * i);
  HRTS_TIMER_START_INSTANCE("scenario.spans", 1);
  HRTS_TIMER_START_INSTANCE("scenario.spans", 2);
  HRTS_TIMER_START("scenario.spans");
  HRTS_TIMER_STOP_INSTANCE("scenario.spans", 2);
  HRTS_TIMER_STOP_INSTANCE("scenario.spans", 1);
  HRTS_TIMER_STOP("scenario.spans");
  HRTS_TIMER_STOP_INSTANCE("scenario.spans", 9);

  hrts_stats_dump *d = NULL;
  check(hrts_stats_dump_now(&d) == HRTS_SUCCESS, "scenario dump");
  const hrts_stats_metric_dump *r = find(d, "scenario.requests");
  check(r && r->counter_value == 12 && r->value == 12.0, "requests counter value");
  /* values 0,1,...,10,7,12: min 0, max 12 */
  check(r && r->statistics[0].count == 13 && r->statistics[0].min == 0 && r->statistics[0].max == 12,
        "requests values statistics");
  check(r && r->statistics[2].count == 1 && r->statistics[2].sum == 3, "requests decreasing deltas");
  const hrts_stats_metric_dump *b = find(d, "scenario.balance");
  check(b && b->counter_value == -30 && b->statistics[0].min == -50, "a counter goes below zero");
  const hrts_stats_metric_dump *q = find(d, "scenario.queue");
  check(q && q->kind == HRTS_STATS_GAUGE && q->value == 10.0 && q->statistics_count == 1 &&
            q->statistics[0].mean == 5.25,
        "gauge");
  const hrts_stats_metric_dump *l = find(d, "scenario.latency");
  check(l && l->kind == HRTS_STATS_TIMER && l->statistics[0].count == 10 && l->statistics[0].sum == 55000 &&
            fabs(l->statistics[0].p50 - 5000) <= 50,
        "timer durations and quantile");
  const hrts_stats_metric_dump *s = find(d, "scenario.spans");
  check(s && s->statistics[0].count == 3 && s->timestamp > 0, "overlapping instances");
  check(isnan(find(d, "scenario.requests")->statistics[0].interval_mean) == 0, "interval mean present");
  /* rate, per second over the default 1 s moving interval: a values set's interval
   * count, a counter's delta sets' interval sums (the scenario ran well within 1 s:
   * at most 13 values, increments of 15 in all, one decrement of 3). */
  if (r && q && l) {
    const hrts_stats_statistics *rv = &r->statistics[0], *ri = &r->statistics[1], *rdec = &r->statistics[2],
                                *rd = &r->statistics[3];
    check(rv->rate == rv->interval_count && rv->rate > 0 && rv->rate <= 13, "counter values: changes per second");
    check(ri->rate == ri->interval_sum && ri->rate > 0 && ri->rate <= 15, "counter incr-deltas: amount added per second");
    check(rdec->rate == rdec->interval_sum && rdec->rate > 0 && rdec->rate <= 3,
          "counter decr-deltas: amount taken away per second");
    check(rd->rate == rd->interval_sum && rd->rate <= 12, "counter deltas: net change per second");
    check(q->statistics[0].rate == q->statistics[0].interval_count && q->statistics[0].rate > 0, "gauge: sets per second");
    check(l->statistics[0].rate == l->statistics[0].interval_count && l->statistics[0].rate > 0 &&
              l->statistics[0].rate <= 10,
          "timer: measurements per second");
  }
  const char *json = hrts_stats_dump_json(d);
  check(strstr(json, "\"scenario.requests\":{") != NULL && strstr(json, "\"incr-deltas\"") != NULL &&
            strstr(json, "\"rate\":") != NULL,
        "JSON dump");
  FILE *f = fopen(out_path, "w");
  check(f != NULL, "open the dump file");
  if (f) {
    fputs(json, f);
    fclose(f);
  }
  hrts_stats_dump_free(d);
}

/* The periodic JSON dump, readable from C (hrts_stats_json_last) and written to the file
   the configuration names (json-dump.file), both whole dumps of the same metrics. */
static void check_periodic_json(const char *dir_of) {
  char path[512], config[1024];
  snprintf(path, sizeof path, "%s.periodic.json", dir_of);
  snprintf(config, sizeof config,
           "{\"json-dump\": {\"interval\": 20, \"file\": \"%s\"}, \"metrics-dump\": {\"interval\": 0}}",
           path);
  check(hrts_stats_configure_json(config) == HRTS_SUCCESS, "configure a periodic JSON dump to a file");
  check(HRTS_STATS_INIT() == HRTS_SUCCESS, "start for the periodic JSON dump");
  HRTS_COUNTER_INCREMENT("c.periodic", 7);
  char small[4];
  size_t need = 0;
  int seen = 0;
  for (int i = 0; i < 100 && !seen; i++) {
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    if (hrts_stats_json_last(small, sizeof small, &need) == HRTS_E_BUFFER_TOO_SMALL && need > 4) {
      char *text = malloc(need);
      if (text && hrts_stats_json_last(text, need, &need) == HRTS_SUCCESS &&
          strstr(text, "\"c.periodic\":{") != NULL) {
        seen = 1;
      }
      free(text);
    }
  }
  check(seen, "the periodic JSON dump is readable from C and holds the metric");
  FILE *f = fopen(path, "r");
  char buf[65536];
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  buf[n] = 0;
  if (f) fclose(f);
  check(n > 0 && buf[0] == '{' && strstr(buf, "\"c.periodic\":{") != NULL,
        "json-dump.file holds the periodic dump");
  char err[256];
  check(hrts_stats_json_file_error(err, sizeof err, NULL) == HRTS_SUCCESS && err[0] == 0,
        "no JSON dump file error");
  check(hrts_stats_json_last(NULL, 0, NULL) == HRTS_E_NULL_POINTER, "NULL buffer");
  check(HRTS_STATS_FINALIZE() == HRTS_SUCCESS, "stop after the periodic JSON dump");
  remove(path);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stats_test DUMP.json\n");
    return 2;
  }
  check_configuration_errors();
  check(hrts_stats_configure_json("{\"handystats\": {\"incremental-statistics\": {\"moving-average-alpha\": 0.25},"
                                  " \"json-dump\": {\"interval\": 0}, \"metrics-dump\": {\"interval\": 0},"
                                  " \"exact-stamps\": [\"scenario.*\"]}}") ==
            HRTS_SUCCESS,
        "configure");
  HRTS_COUNTER_INCREMENT("c.before.start", 1); /* not recorded */
  check(HRTS_STATS_INIT() == HRTS_SUCCESS && HRTS_STATS_INIT() == HRTS_SUCCESS && hrts_stats_is_running() == 1,
        "start is idempotent");
  check(hrts_stats_configure_json("{}") == HRTS_E_INVALID_ARGUMENT, "no configuration while running");
  scenario(argv[1]);
  check_bad_input();
  check_threads();
  hrts_stats_dump *last = NULL;
  check(HRTS_STATS_FINALIZE() == HRTS_SUCCESS && HRTS_STATS_FINALIZE() == HRTS_SUCCESS &&
            hrts_stats_is_running() == 0,
        "stop is idempotent");
  check(hrts_stats_dump_last(&last) == HRTS_SUCCESS && last != NULL && find(last, "c.threads") != NULL &&
            find(last, "c.before.start") == NULL,
        "the final dump stays readable; nothing before start");
  hrts_stats_dump_free(last);
  check_periodic_json(argv[1]);
  printf("stats_test: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
