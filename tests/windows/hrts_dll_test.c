/*
 * hrts.dll from C under Wine (scripts/windows-test.sh): stamps against the
 * system time, stamps in order, unique stamps, sequence numbers, and an
 * invalid segment name refused with a message. Prints one `ok: ...` or
 * `FAILED: ...` line per check; exits 1 if any failed.
 */
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "hrts.h"

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok) {
        failures++;
        printf("  last error: %s\n", hrts_last_error());
    }
}

static uint64_t system_ns(void)
{
    FILETIME ft;
    GetSystemTimePreciseAsFileTime(&ft);
    uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
    return (t - 116444736000000000ULL) * 100;
}

int main(void)
{
    uint64_t a = 0, b = 0, stamp = 0, before, after;
    int ordered = 1, rc;

    before = system_ns();
    rc = hrts_get_epoch_nanoseconds(&stamp);
    after = system_ns();
    check(rc == HRTS_SUCCESS && stamp + 1000000 >= before && stamp <= after + 1000000,
          "a stamp lies within 1 ms of GetSystemTimePreciseAsFileTime around it");

    for (int i = 0; i < 100000 && ordered; i++) {
        rc = hrts_get_epoch_nanoseconds(&b);
        ordered = rc == HRTS_SUCCESS && b >= a;
        a = b;
    }
    check(ordered, "100000 stamps never go back");

    ordered = 1;
    a = 0;
    for (int i = 0; i < 100000 && ordered; i++) {
        rc = hrts_get_unique_nanoseconds(&b);
        ordered = rc == HRTS_SUCCESS && b > a;
        a = b;
    }
    check(ordered, "100000 unique stamps, each greater than the last");

    ordered = 1;
    a = 0;
    for (int i = 0; i < 3000 && ordered; i++) {
        rc = hrts_next_sequence(&b);
        ordered = rc == HRTS_SUCCESS && (i == 0 || b > a);
        a = b;
    }
    check(ordered, "3000 sequence numbers, each greater than the last");

    struct hrts_segment *seg = (struct hrts_segment *)1;
    rc = hrts_segment_open("no-slash", &seg);
    check(rc == HRTS_E_INVALID_ARGUMENT && seg == NULL && strlen(hrts_last_error()) > 0,
          "an invalid segment name is refused with a message");

    return failures ? 1 : 0;
}
