/* A traced process written in C: syncs with the master, records a few events
 * through libhrts's trace writer, syncs again and closes. tests/trace/run.sh
 * runs it on one of its hosts and merges its file with the others.
 * Usage: c_writer OUT.htr MASTER_HOST:PORT HOST_NAME */
#include <stdio.h>
#include <stdlib.h>
#include "hrts.h"

static int check(int rc, const char *what) {
    if (rc != HRTS_SUCCESS) {
        fprintf(stderr, "c_writer: %s: %s (%s)\n", what, hrts_last_error(), hrts_status_name(rc));
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: c_writer OUT.htr MASTER_HOST:PORT HOST_NAME\n");
        return 2;
    }
    hrts_trace *t = NULL;
    double offset = 0, bound = 0;
    uint64_t stamp = 0;
    check(hrts_trace_open(argv[1], argv[3], "c writer", &t), "open");
    check(hrts_trace_sync(t, argv[2], HRTS_SYNC_START, 50, &offset, &bound), "start sync");
    printf("c_writer: start offset %.1f ns +- %.1f\n", -offset, bound);
    check(hrts_trace_event(t, HRTS_TRACE_BEGIN, "c work", 0, NULL, 0, &stamp), "begin");
    for (int i = 0; i < 100; i++) {
        char payload[32];
        int n = snprintf(payload, sizeof payload, "step %d", i);
        check(hrts_trace_event(t, HRTS_TRACE_INSTANT, "c step", (uint64_t)i, (const uint8_t *)payload,
                               (size_t)n, &stamp),
              "instant");
    }
    check(hrts_trace_event(t, HRTS_TRACE_END, "c work", 0, NULL, 0, &stamp), "end");
    check(hrts_trace_sync(t, argv[2], HRTS_SYNC_END, 50, &offset, &bound), "end sync");
    printf("c_writer: end offset %.1f ns +- %.1f, last stamp %llu\n", -offset, bound,
           (unsigned long long)stamp);
    check(hrts_trace_close(t), "close");
    return 0;
}
