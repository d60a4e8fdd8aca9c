/* test_golden_reject.c — the committed context binaries of tests/golden/reject/ must be refused,
 * each with exactly the status reject/expected.txt names for it.
 *
 * Layer: tests (format, cpu runtime reader). The files are cut from the golden programs by
 * tests/golden/make_rejects.py: a version this build does not read, truncations, a bad magic,
 * overlapping weight blocks, version 1 files holding version 2 features (KILN_ERROR_FORMAT, not
 * a reading of bytes their writer never gave that meaning) and a signature that does not match
 * the contents. Each line of the manifest says which check gives the status: `open`, the
 * status of kiln_ctxbin_open alone (the files are edited without re-signing, and loading does
 * not hash: ctxbin_reader.h); `verify`, that status or, for a file that opens, what
 * `kiln verify` concludes: KILN_ERROR_FORMAT when the recomputed signature differs.
 * The folder is found next to this source file or given as argv[1].
 */
#include <libgen.h>
#include <stdint.h>
#include <string.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/alloc.h"
#include "unit_expect.h"

static kiln_status status_of(const uint8_t *data, size_t size, bool verify, char *message, size_t message_size)
{
    kiln_ctxbin bin;
    kiln_status st = kiln_ctxbin_open(&bin, data, size, kiln_allocator_default(), message, message_size);
    if (st == KILN_OK) {
        if (verify && kiln_ctx_signature(data, size) != bin.header->signature) st = KILN_ERROR_FORMAT;
        kiln_ctxbin_close(&bin);
    }
    return st;
}

int main(int argc, char **argv)
{
    char here[1024], dir[1100], path[1400], line[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
    else snprintf(dir, sizeof dir, "%s/../golden/reject", dirname(here));
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    FILE *f = fopen(path, "r");
    EXPECT(f != NULL);
    size_t n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char file[256], want[64], check[16];
        if (line[0] == '#' || sscanf(line, "%255s %63s %15s", file, want, check) != 3) continue;
        EXPECT(strcmp(check, "open") == 0 || strcmp(check, "verify") == 0);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        unit_section(path);
        size_t size = 0;
        uint8_t *data = unit_read_file(path, &size); /* malloc: 8-byte aligned, as a segment is */
        EXPECT(data != NULL);
        if (!data) continue;
        char message[256] = "";
        kiln_status st = status_of(data, size, strcmp(check, "verify") == 0, message, sizeof message);
        char got[64];
        snprintf(got, sizeof got, "KILN_%s", kiln_status_name(st));
        if (strcmp(got, want) != 0) fprintf(stderr, "%s: %s (%s), expected %s\n", file, got, message, want);
        EXPECT(strcmp(got, want) == 0);
        free(data);
        n++;
    }
    if (f) fclose(f);
    EXPECT(n >= 9); /* every kind make_rejects.py writes */
    return unit_finish("test_golden_reject");
}
