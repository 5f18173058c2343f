/* A C program built as a user of an installed hrts builds it:
 *   cc app.c $(pkg-config --cflags --libs hrts)
 * Prints the library's version, which must be the header's, and a stamp. */
#include <hrts.h>
#include <inttypes.h>
#include <stdio.h>

int main(void) {
    uint64_t version = hrts_get_version();
    if (version != HRTS_HEADER_VERSION) {
        fprintf(stderr, "app: library version %#" PRIx64 " is not the header's %#" PRIx64 "\n",
                version, (uint64_t)HRTS_HEADER_VERSION);
        return 1;
    }
    uint64_t ns;
    int rc = hrts_get_epoch_nanoseconds(&ns);
    if (rc != HRTS_SUCCESS) {
        fprintf(stderr, "app: %s: %s\n", hrts_status_name(rc), hrts_last_error());
        return 1;
    }
    printf("hrts %u.%u.%u: %" PRIu64 " ns since the epoch\n", (unsigned)(version >> 48),
           (unsigned)(version >> 32 & 0xffff), (unsigned)(version >> 16 & 0xffff), ns);
    return 0;
}
