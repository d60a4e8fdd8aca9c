/* llm_model.c — opening the model of the LLM commands (llm_model.h). */
#include "llm_model.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "core/alloc.h"
#include "llm/gguf/vocab_gguf.h"
#include "llm/runner/llm_vocab_program.h"
#include "read_file.h"
#include "run_shards.h"
#include "shard_manifest.h"

void cli_llm_close(cli_llm *m)
{
    kiln_llm_destroy(m->llm);
    kiln_program_close(m->program);   /* the runner's module kept what it needed until here */
    for (size_t i = 0; i < m->n_shards; i++) kiln_program_close(m->shards[i]);
    kiln_free(kiln_allocator_default(), m->shards);
    kiln_free(kiln_allocator_default(), m->bytes);
    memset(m, 0, sizeof *m);
}

/* A model (a GGUF LLM: the compiler makes it the prefill/decode program) compiled in memory. */
static int compile_in_memory(const char *cmd, const char *path, const char *target, cli_llm *m)
{
    kiln_compile_options opt = {.struct_size = sizeof opt, .target = target};
    kiln_compile_method method = {.name = "forward", .model_path = path};
    char message[1024];
    size_t size = 0;
    double t0 = cli_now();
    kiln_status st = kiln_compile_memory(&opt, &method, 1, &m->bytes, &size, message, sizeof message);
    m->compile_ms = 1e3 * (cli_now() - t0);
    if (st != KILN_OK) {
        cli_error("%s: compile failed: %s", cmd, message);
        return cli_exit_status(st);
    }
    st = kiln_program_open_memory(m->bytes, size, &m->program);
    if (st != KILN_OK) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        cli_error("%s: the program compiled from '%s' does not open: %s", cmd, cli_esc(shown, path), kiln_status_str(st));
        return cli_exit_status(st);
    }
    return 0;
}

/* The programs a shard manifest lists, opened in order into m->shards. */
static int open_shards(const char *cmd, const char *path, cli_llm *m)
{
    char why[512], shown[KILN_ESCAPED_NAME_SIZE];
    shard_manifest man;
    if (shard_manifest_read(path, &man, why, sizeof why) != 0) {
        cli_error("%s: shard manifest '%s': %s", cmd, cli_esc(shown, path), why);
        return KILN_EXIT_INVALID;
    }
    int rc = 0;
    m->shards = kiln_alloc_zero(kiln_allocator_default(), man.n_shards * sizeof *m->shards, 16);
    if (!m->shards) {
        cli_error("%s: out of memory", cmd);
        rc = KILN_EXIT_FAILURE;
    }
    for (size_t i = 0; !rc && i < man.n_shards; i++) {
        rc = cli_open_program(cmd, man.shards[i].path, &m->shards[i]);
        if (!rc) m->n_shards = i + 1;
    }
    shard_manifest_free(&man);
    return rc;
}

int cli_llm_open(const char *cmd, const char *path, int threads, const char *target, cli_llm *m)
{
    memset(m, 0, sizeof *m);
    char shown[KILN_ESCAPED_NAME_SIZE];
    double t0 = cli_now();
    int rc;
    if (shard_manifest_detect(path)) {
        rc = open_shards(cmd, path, m);
    } else if (cli_file_kind_of(path, NULL) == CLI_FILE_PROGRAM) {
        rc = cli_open_program(cmd, path, &m->program);
    } else {
        rc = compile_in_memory(cmd, path, target, m);
        t0 = cli_now();
    }
    if (rc) {
        cli_llm_close(m);
        return rc;
    }
    kiln_llm_options o = {.struct_size = sizeof o, .num_threads = threads, .target = target};
    char message[1024];
    kiln_status st = m->program ? kiln_llm_create(m->program, &o, &m->llm, message, sizeof message)
                                : kiln_llm_create_sharded(m->shards, m->n_shards, &o, &m->llm, message, sizeof message);
    if (st != KILN_OK) {
        cli_error("%s: '%s': %s", cmd, cli_esc(shown, path), message);
        cli_llm_close(m);
        /* A target the program lacks is the caller's mistake, as for kiln run. */
        return st == KILN_ERROR_NO_RUNNABLE_TARGET && target ? KILN_EXIT_USAGE : cli_exit_status(st);
    }
    m->load_ms = 1e3 * (cli_now() - t0);
    return 0;
}

static int vocab_from_gguf_bytes(const char *cmd, const char *path, const uint8_t *bytes, size_t size, kiln_vocab **out)
{
    char shown[KILN_ESCAPED_NAME_SIZE], why[512];
    kiln_gguf *gguf = NULL;
    kiln_status st = kiln_gguf_open(bytes, size, NULL, &gguf, why, sizeof why);
    if (st == KILN_OK) {
        st = kiln_vocab_from_gguf(gguf, NULL, out, why, sizeof why);
        kiln_gguf_destroy(gguf);
    }
    if (st == KILN_OK) return 0;
    cli_error("%s: '%s': %s", cmd, cli_esc(shown, path), why);
    return st == KILN_ERROR_NOT_SUPPORTED ? KILN_EXIT_INVALID : cli_exit_status(st);
}

int cli_vocab_open(const char *cmd, const char *path, kiln_vocab **out)
{
    *out = NULL;
    char shown[KILN_ESCAPED_NAME_SIZE], why[512];
    bool manifest = shard_manifest_detect(path);
    if (manifest || cli_file_kind_of(path, NULL) == CLI_FILE_PROGRAM) {
        kiln_program *program = NULL;
        cli_llm shards = {0};
        int rc = manifest ? open_shards(cmd, path, &shards) : cli_open_program(cmd, path, &program);
        if (manifest && !rc) {
            program = shards.shards[0]; /* every shard carries the vocabulary */
            shards.shards[0] = NULL;
        }
        cli_llm_close(&shards);
        if (rc) return rc;
        kiln_diag d = kiln_diag_over(why, sizeof why);
        kiln_diag_clear(&d); /* a diag keeps the first message: an uncleared buffer's garbage would win */
        kiln_status st = llm_vocab_from_program(program, NULL, out, &d);
        kiln_program_close(program);
        if (st == KILN_OK) return 0;
        cli_error("%s: '%s': %s", cmd, cli_esc(shown, path), why);
        return st == KILN_ERROR_NOT_SUPPORTED ? KILN_EXIT_INVALID : cli_exit_status(st);
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    kiln_status st = cli_read_file(path, kiln_allocator_default(), SIZE_MAX, &bytes, &size, why, sizeof why);
    if (st != KILN_OK) {
        cli_error("%s: cannot read '%s': %s", cmd, cli_esc(shown, path), why[0] ? why : kiln_status_str(st));
        return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
    }
    int rc;
    if (size >= 4 && memcmp(bytes, "GGUF", 4) == 0) {
        rc = vocab_from_gguf_bytes(cmd, path, bytes, size, out);
    } else {
        cli_error("%s: '%s' is neither a GGUF model nor a kiln program", cmd, cli_esc(shown, path));
        rc = KILN_EXIT_INVALID;
    }
    kiln_free(kiln_allocator_default(), bytes);
    return rc;
}

unsigned long long cli_peak_rss_bytes(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return (unsigned long long)u.ru_maxrss * 1024ull; /* Linux reports kilobytes */
}
