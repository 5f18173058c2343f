/*
 * librealtime_shift.so: an LD_PRELOAD library that moves one process's view of the system clock
 * by HRTS_TEST_REALTIME_SHIFT_S seconds (clock_gettime of CLOCK_REALTIME and its coarse and TAI
 * variants, gettimeofday, time), and nothing else: the host's clock is never changed, the
 * monotonic clocks and the CPU counter stay as they are.
 *
 * The adapter tests run their child JVMs with it: there the JDK's clocks (and so each library's
 * default clock) are an hour off, while hrts, which reads the counter and the base in the shared
 * segment, is not. Time stamps that still agree with the C driver's hrts stamps came from hrts.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);

static long shift_seconds(void) {
  const char *s = getenv("HRTS_TEST_REALTIME_SHIFT_S");
  return s ? strtol(s, NULL, 10) : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  static clock_gettime_fn next;
  if (!next) next = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
  int rc = next(id, ts);
  if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI)) {
    ts->tv_sec += shift_seconds();
  }
  return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
  static gettimeofday_fn next;
  if (!next) next = (gettimeofday_fn)dlsym(RTLD_NEXT, "gettimeofday");
  int rc = next(tv, tz);
  if (rc == 0) tv->tv_sec += shift_seconds();
  return rc;
}

time_t time(time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t) *t = ts.tv_sec;
  return ts.tv_sec;
}
