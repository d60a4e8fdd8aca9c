/* ref_llama.c — kiln_ref_llama, the command line of the reference decoder (issue 14's second
 * oracle, beside llama.cpp): the logits or greedy tokens of a llama / qwen2 GGUF for token ids
 * given on the command line (no tokenizer: the ids come from the test).
 *
 *   kiln_ref_llama logits MODEL.gguf --tokens 1,2,3 [--out LOGITS.npy]
 *       f32 [n, vocab], row i the logits after tokens 0..i (teacher-forced, no BOS added); without
 *       --out, one line per row on stdout (%.9g, space-separated)
 *   kiln_ref_llama greedy MODEL.gguf --tokens 1,2,3 -n N
 *       the N argmax tokens after the prompt (lowest id on a tie), stopping after the model's
 *       EOS (tokenizer.ggml.eos_token_id), space-separated on one line
 *
 * Layer: tests (tests/llm/ref). Exit 0, 2 for usage, 4 for a bad or unsupported model, 1 otherwise;
 * every failure prints one line on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/gguf/gguf_reader.h"
#include "core/alloc.h"
#include "io/npy.h"
#include "ref_model.h"

enum { EXIT_USAGE = 2, EXIT_MODEL = 4 };

static int usage(void)
{
    fprintf(stderr, "usage: kiln_ref_llama logits MODEL.gguf --tokens a,b,c [--out F.npy] | "
                    "greedy MODEL.gguf --tokens a,b,c -n N\n");
    return EXIT_USAGE;
}

/* "1,2,3" -> ids (malloc'd); 0 on a malformed list. */
static int64_t parse_tokens(const char *text, int64_t **out)
{
    int64_t n = 1;
    for (const char *p = text; *p; p++) n += *p == ',';
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    if (!ids) return 0;
    const char *p = text;
    for (int64_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno != 0 || v < 0 || (*end != ',' && *end != '\0')) {
            free(ids);
            return 0;
        }
        ids[i] = v;
        p = end + (*end == ',');
    }
    *out = ids;
    return n;
}

static int64_t argmax(const float *row, int64_t n)
{
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

typedef struct mapped_file {
    void *bytes;
    size_t size;
} mapped_file;

static int map_file(const char *path, mapped_file *f)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        fprintf(stderr, "kiln_ref_llama: %s: %s\n", path, fd < 0 ? strerror(errno) : "not a non-empty regular file");
        if (fd >= 0) close(fd);
        return 0;
    }
    f->size = (size_t)st.st_size;
    f->bytes = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->bytes == MAP_FAILED) {
        fprintf(stderr, "kiln_ref_llama: %s: mmap: %s\n", path, strerror(errno));
        return 0;
    }
    return 1;
}

static int64_t eos_token(const kiln_gguf *gguf)
{
    int64_t eos;
    return kiln_gguf_get_int(gguf, "tokenizer.ggml.eos_token_id", &eos, NULL, 0) == KILN_OK ? eos : -1;
}

static int run(const char *command, const kiln_gguf *gguf, const ref_model *model, const int64_t *tokens,
               int64_t n_tokens, int64_t n_generate, const char *out_path)
{
    const ref_config *c = &model->config;
    bool logits_mode = strcmp(command, "logits") == 0;
    int64_t capacity = n_tokens + (logits_mode ? 0 : n_generate);
    int64_t rows = logits_mode ? n_tokens : 1;
    for (int64_t i = 0; i < n_tokens; i++)
        if (tokens[i] >= c->vocab) {
            fprintf(stderr, "kiln_ref_llama: token %lld is outside the vocabulary of %lld\n", (long long)tokens[i],
                    (long long)c->vocab);
            return EXIT_USAGE;
        }
    ref_state st;
    float *logits = malloc((size_t)(rows * c->vocab) * sizeof(float));
    if (!logits || ref_state_init(&st, model, capacity) != KILN_OK) {
        free(logits);
        fprintf(stderr, "kiln_ref_llama: out of memory for %lld positions\n", (long long)capacity);
        return 1;
    }
    for (int64_t i = 0; i < n_tokens; i++)
        ref_forward(model, &st, tokens[i], i, logits + (logits_mode ? i : 0) * c->vocab);
    int rc = 0;
    if (logits_mode && out_path) {
        kiln_tensor t = {KILN_DTYPE_F32, 2, {n_tokens, c->vocab}, logits};
        char message[KILN_NPY_MESSAGE_SIZE];
        kiln_status s = kiln_npy_write_io(NULL, out_path, &t, message, sizeof message);
        if (s != KILN_OK) {
            fprintf(stderr, "kiln_ref_llama: %s\n", message[0] ? message : kiln_status_str(s));
            rc = 1;
        }
    } else if (logits_mode) {
        for (int64_t i = 0; i < n_tokens; i++)
            for (int64_t j = 0; j < c->vocab; j++)
                printf("%.9g%c", logits[i * c->vocab + j], j + 1 == c->vocab ? '\n' : ' ');
    } else {
        int64_t eos = eos_token(gguf);
        for (int64_t step = 0; step < n_generate; step++) {
            int64_t next = argmax(logits, c->vocab);
            printf("%s%lld", step ? " " : "", (long long)next);
            if (next == eos || step + 1 == n_generate) break;
            ref_forward(model, &st, next, n_tokens + step, logits);
        }
        printf("\n");
    }
    ref_state_deinit(&st);
    free(logits);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "logits") != 0 && strcmp(argv[1], "greedy") != 0)) return usage();
    const char *tokens_text = NULL, *out_path = NULL;
    long long n_generate = -1;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (strcmp(argv[i], "--tokens") == 0) tokens_text = argv[++i];
        else if (strcmp(argv[i], "--out") == 0) out_path = argv[++i];
        else if (strcmp(argv[i], "-n") == 0) n_generate = strtoll(argv[++i], NULL, 10);
        else return usage();
    }
    bool greedy = strcmp(argv[1], "greedy") == 0;
    if (!tokens_text || (greedy && (n_generate < 1 || out_path)) || (!greedy && n_generate >= 0)) return usage();
    int64_t *tokens = NULL;
    int64_t n_tokens = parse_tokens(tokens_text, &tokens);
    if (n_tokens == 0) {
        fprintf(stderr, "kiln_ref_llama: --tokens wants non-negative ids separated by commas, not \"%s\"\n",
                tokens_text);
        return EXIT_USAGE;
    }
    mapped_file file;
    if (!map_file(argv[2], &file)) {
        free(tokens);
        return 1;
    }
    char message[KILN_GGUF_MESSAGE_SIZE];
    kiln_gguf *gguf = NULL;
    ref_model model;
    int rc = EXIT_MODEL;
    kiln_status s = kiln_gguf_open(file.bytes, file.size, NULL, &gguf, message, sizeof message);
    if (s == KILN_OK) s = ref_model_load(gguf, NULL, &model, message, sizeof message);
    if (s == KILN_OK) {
        rc = run(argv[1], gguf, &model, tokens, n_tokens, greedy ? n_generate : 0, out_path);
        ref_model_deinit(&model);
    } else {
        fprintf(stderr, "kiln_ref_llama: %s: %s\n", argv[2], message[0] ? message : kiln_status_str(s));
    }
    kiln_gguf_destroy(gguf);
    munmap(file.bytes, file.size);
    free(tokens);
    return rc;
}
