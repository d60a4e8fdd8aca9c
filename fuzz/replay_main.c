/* replay_main.c — runs a fuzz target's LLVMFuzzerTestOneInput over files, without libFuzzer.
 *
 * Layer: fuzz. Linked with each target into fuzz_replay_<target>, built in every configuration
 * (any compiler, with or without sanitizers) so ordinary CI replays the seed corpora and every
 * crash reproducer committed to fuzz/corpus/ (zstd tests/fuzz, SQLite fuzzcheck). Arguments are
 * files or directories (read one level deep, in name order so runs are reproducible). A crash
 * or abort inside the target fails the test; the exit status is non-zero also when an argument
 * cannot be read or no input was found at all (an empty corpus would test nothing).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    struct stat st;
    int ok = fstat(fileno(f), &st) == 0 && st.st_size >= 0;
    size_t size = ok ? (size_t)st.st_size : 0;
    /* An exact-size buffer, so reads past the end are caught under ASan as they would be by
       libFuzzer. */
    uint8_t *buf = ok ? malloc(size ? size : 1) : NULL;
    ok = buf && fread(buf, 1, size, f) == size;
    fclose(f);
    if (!ok) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 0;
    }
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    return 1;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Replays every regular file of dir; returns the number replayed, -1 on a read error. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    long result = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **bigger = realloc(names, cap * sizeof *names);
            if (!bigger) {
                result = -1;
                break;
            }
            names = bigger;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) {
            result = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (result == 0 && n) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && result >= 0; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        struct stat st;
        if (!path) {
            result = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) result = replay_file(path) ? result + 1 : -1;
        free(path);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return result;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        long n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) ? 1 : -1);
        if (n < 0) {
            fprintf(stderr, "replay: could not replay %s\n", argv[i]);
            return 1;
        }
        total += n;
    }
    printf("replayed %ld inputs without a crash\n", total);
    return total > 0 ? 0 : 1;
}
