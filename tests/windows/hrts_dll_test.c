/*
 * hrts.dll from C under Wine (scripts/windows-test.sh): stamps against the
 * system time, stamps in order, unique stamps, sequence numbers, an invalid
 * segment name refused with a message, and a damaged segment reported, refused
 * and repaired. Prints one `ok: ...` or `FAILED: ...` line per check; exits 1
 * if any failed.
 */
#include <stdio.h>
#include <string.h>
#include <windows.h>
#include <sddl.h>

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

/* The view of segment `name`'s mapping as another process of this user would
   open it: `Local\hrts.<the user's SID>.<name without its slash>` (the core's
   storage/shm_windows.rs), or NULL. */
static volatile uint64_t *map_segment(const char *name, HANDLE *mapping)
{
    HANDLE token;
    char buf[256], *sid = NULL, object[512];
    DWORD len = 0;
    *mapping = NULL;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return NULL;
    int ok = GetTokenInformation(token, TokenUser, buf, sizeof buf, &len) &&
             ConvertSidToStringSidA(((TOKEN_USER *)buf)->User.Sid, &sid);
    CloseHandle(token);
    if (!ok) return NULL;
    snprintf(object, sizeof object, "Local\\hrts.%s.%s", sid, name + 1);
    LocalFree(sid);
    *mapping = OpenFileMappingA(FILE_MAP_ALL_ACCESS, FALSE, object);
    if (*mapping == NULL) return NULL;
    volatile uint64_t *page = MapViewOfFile(*mapping, FILE_MAP_ALL_ACCESS, 0, 0, 0);
    if (page == NULL) CloseHandle(*mapping);
    return page;
}

/* Another process damages the page (the header's freq_hz word, at offset 56, as
   the Linux C test does through its System V page): hrts_segment_validate says
   so, a fresh open refuses, and the next base write repairs it from the copy
   validated at attach. */
static void check_damage(void)
{
    const char *name = "/hrts-wintest-damage";
    struct hrts_segment *seg = NULL, *fresh = NULL;
    HANDLE mapping;
    check(hrts_segment_open(name, &seg) == HRTS_SUCCESS, "hrts_segment_open of a segment to damage");
    if (seg == NULL) return;
    volatile uint64_t *page = map_segment(name, &mapping);
    check(page != NULL, "another view of the segment's mapping (Local\\hrts.<SID>.<name>)");
    if (page != NULL) {
        uint64_t freq = page[7];
        page[7] = freq + 1;
        check(hrts_segment_validate(seg) == HRTS_E_CORRUPT,
              "hrts_segment_validate reports a damaged header as HRTS_E_CORRUPT");
        check(hrts_segment_open(name, &fresh) == HRTS_E_CORRUPT && fresh == NULL,
              "a fresh open of the damaged segment is refused with HRTS_E_CORRUPT");
        check(hrts_segment_set_base_info(seg) == HRTS_SUCCESS && hrts_segment_validate(seg) == HRTS_SUCCESS &&
                  page[7] == freq,
              "the next base write repairs the header from the copy validated at attach");
        UnmapViewOfFile((const void *)page);
        CloseHandle(mapping);
    }
    hrts_segment_close(seg);
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

    check_damage();

    return failures ? 1 : 0;
}
