/* test_llm_runner_shards.c — the runner over the shards of one model (kiln/llm.h,
 * kiln_llm_create_sharded): the committed fortunes model (5 blocks) compiled whole and with
 * kiln_compile_shards into 2, 4 and 5 programs (C = 64, T = 16):
 *   - greedy tokens after a prompt (a padded prefill chunk, then decode) are exactly the whole
 *     program's, and every position's logits are within 1e-5 of its;
 *   - all shards of one runner hold ONE scratch buffer: kiln_runtime_stats shows one more scratch
 *     group while the runner lives (and none after), a caller's group is used as given;
 *   - shards out of order, a missing shard or a whole program among shards: KILN_ERROR_MODEL
 *     with one line naming the shard; NULL or no programs: KILN_ERROR_INVALID_ARGUMENT.
 * Arguments: the model (models/llm/fortunes-llama-f32.gguf) and a folder for the test's files
 * (a fresh subfolder is made in it and removed at the end).
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "kiln/compiler.h"
#include "kiln/llm.h"
#include "unit_expect.h"

#define CTX 64
#define PREFILL 16
#define N_GEN 40
#define MAX_SHARDS 5

static const char *model_path;
static char dir[1024];

static kiln_compile_options options(void)
{
    kiln_compile_options o = {.struct_size = sizeof o, .llm_context = CTX, .llm_prefill = PREFILL};
    return o;
}

static int32_t argmax(const float *row, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return (int32_t)best;
}

/* Greedy continuation of a fixed prompt (BOS + 20 ids: a padded prefill chunk and 4 decodes),
   every position's logits into logits [(20 + N_GEN) x V]; the ids into ids[N_GEN]. */
static void greedy(kiln_llm *llm, int32_t *ids, float *logits)
{
    size_t V = kiln_llm_n_vocab(llm);
    int32_t prompt[20];
    prompt[0] = kiln_llm_bos(llm);
    for (int i = 1; i < 20; i++) prompt[i] = (int32_t)(300 + 7 * i);
    EXPECT_STATUS(kiln_llm_eval(llm, prompt, 20, logits), KILN_OK);
    for (int i = 0; i < N_GEN; i++) {
        const float *last = kiln_llm_logits(llm);
        REQUIRE(last);
        ids[i] = argmax(last, V);
        EXPECT_STATUS(kiln_llm_eval(llm, &ids[i], 1, logits + (20 + i) * V), KILN_OK);
    }
}

static void shard_path(char *out, size_t size, size_t n, size_t i)
{
    snprintf(out, size, "%s/m%zu-shard%zu.kiln", dir, n, i);
}

static void compile_shards(size_t n)
{
    char manifest[1200], message[512];
    snprintf(manifest, sizeof manifest, "%s/m%zu.manifest", dir, n);
    kiln_compile_options o = options();
    kiln_compile_method m = {.name = "forward", .model_path = model_path};
    kiln_status st = kiln_compile_shards(&o, &m, n, manifest, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "kiln_compile_shards %zu: %s\n", n, message);
    REQUIRE(st == KILN_OK);
}

static void open_shards(size_t n, kiln_program **p)
{
    for (size_t i = 0; i < n; i++) {
        char path[1200];
        shard_path(path, sizeof path, n, i);
        p[i] = NULL;
        EXPECT_STATUS(kiln_program_open(path, &p[i]), KILN_OK);
        REQUIRE(p[i]);
    }
}

static uint64_t live_groups(void)
{
    kiln_runtime_stats s = {.struct_size = sizeof s};
    EXPECT_STATUS(kiln_runtime_stats_get(&s), KILN_OK);
    return s.live_scratch_groups;
}

static void test_equal_to_whole(const int32_t *want_ids, const float *want_logits, size_t V)
{
    size_t counts[] = {2, 4, 5};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t n = counts[c];
        char title[128];
        snprintf(title, sizeof title, "%zu shards: the whole program's tokens and logits, one scratch group", n);
        unit_section(title);
        compile_shards(n);
        kiln_program *p[MAX_SHARDS];
        open_shards(n, p);
        uint64_t groups = live_groups();
        kiln_llm *llm = NULL;
        char message[512];
        kiln_llm_options o = {.struct_size = sizeof o, .num_threads = 1};
        EXPECT_STATUS(kiln_llm_create_sharded(p, n, &o, &llm, message, sizeof message), KILN_OK);
        REQUIRE(llm);
        for (size_t i = 0; i < n; i++) kiln_program_close(p[i]); /* the modules keep what they need */
        EXPECT(kiln_llm_n_layers(llm) == 5 && kiln_llm_context_length(llm) == CTX &&
               kiln_llm_prefill_length(llm) == PREFILL && kiln_llm_n_vocab(llm) == V);
        int32_t ids[N_GEN];
        float *logits = malloc((20 + N_GEN) * V * sizeof(float));
        REQUIRE(logits);
        greedy(llm, ids, logits);
        /* Every shard's contexts joined the runner's one group (a scratch buffer for them all). */
        EXPECT(live_groups() == groups + 1);
        EXPECT(memcmp(ids, want_ids, sizeof ids) == 0);
        float diff = 0;
        for (size_t i = 0; i < (20 + N_GEN) * V; i++) diff = fmaxf(diff, fabsf(logits[i] - want_logits[i]));
        printf("  greedy ids %s, max |logit - whole program's| %.3g\n",
               memcmp(ids, want_ids, sizeof ids) == 0 ? "equal" : "DIFFER", (double)diff);
        EXPECT(diff <= 1e-5f);
        free(logits);
        kiln_llm_destroy(llm);
        EXPECT(live_groups() == groups);
    }
}

static void test_caller_group(void)
{
    unit_section("a caller's scratch group serves every shard; the runner makes none of its own");
    kiln_program *p[4];
    open_shards(4, p);
    kiln_scratch_group *group = NULL;
    EXPECT_STATUS(kiln_scratch_group_create(&group), KILN_OK);
    uint64_t groups = live_groups();
    kiln_llm *llm = NULL;
    kiln_llm_options o = {.struct_size = sizeof o, .num_threads = 1, .scratch_group = group};
    EXPECT_STATUS(kiln_llm_create_sharded(p, 4, &o, &llm, NULL, 0), KILN_OK);
    int32_t tok[3] = {1, 400, 401};
    EXPECT_STATUS(kiln_llm_eval(llm, tok, 3, NULL), KILN_OK);
    EXPECT(live_groups() == groups);
    kiln_llm_destroy(llm);
    kiln_scratch_group_release(group);
    for (size_t i = 0; i < 4; i++) kiln_program_close(p[i]);
}

static void test_refusals(void)
{
    unit_section("shards out of order, a missing shard, a whole program among shards, no programs");
    kiln_program *p[4], *whole = NULL;
    open_shards(4, p);
    char message[512], path[1200];
    snprintf(path, sizeof path, "%s/whole.kiln", dir);
    EXPECT_STATUS(kiln_program_open(path, &whole), KILN_OK);
    kiln_llm *llm = (kiln_llm *)1;
    kiln_program *swapped[4] = {p[0], p[2], p[1], p[3]};
    EXPECT_STATUS(kiln_llm_create_sharded(swapped, 4, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(llm == NULL && strstr(message, "shard 1: ") && strstr(message, "cache_k."));
    printf("  swapped: %s\n", message);
    kiln_program *missing[3] = {p[0], p[1], p[3]};
    EXPECT_STATUS(kiln_llm_create_sharded(missing, 3, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(strstr(message, "shard 2: ") != NULL);
    printf("  missing: %s\n", message);
    kiln_program *last_missing[3] = {p[0], p[1], p[2]};
    EXPECT_STATUS(kiln_llm_create_sharded(last_missing, 3, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(strstr(message, "shard 2: ") && strstr(message, "logits"));
    printf("  no last shard: %s\n", message);
    kiln_program *mixed[2] = {whole, p[1]};
    EXPECT_STATUS(kiln_llm_create_sharded(mixed, 2, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(strstr(message, "shard 0: ") != NULL);
    printf("  whole program first: %s\n", message);
    EXPECT_STATUS(kiln_llm_create_sharded(p, 0, NULL, &llm, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_create_sharded(NULL, 2, NULL, &llm, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    kiln_program *with_null[2] = {p[0], NULL};
    EXPECT_STATUS(kiln_llm_create_sharded(with_null, 2, NULL, &llm, message, sizeof message),
                  KILN_ERROR_INVALID_ARGUMENT);
    kiln_program_close(whole);
    for (size_t i = 0; i < 4; i++) kiln_program_close(p[i]);
}

static void remove_dir(void)
{
    char path[1200];
    size_t counts[] = {2, 4, 5};
    for (size_t c = 0; c < 3; c++) {
        for (size_t i = 0; i < counts[c]; i++) {
            shard_path(path, sizeof path, counts[c], i);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s/m%zu.manifest", dir, counts[c]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/whole.kiln", dir);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_llm_runner_shards MODEL.gguf DIR\n");
        return 2;
    }
    model_path = argv[1];
    snprintf(dir, sizeof dir, "%s/llm_shards_XXXXXX", argv[2]);
    REQUIRE(mkdtemp(dir));
    /* The whole program, as the reference. */
    char whole[1200], message[512];
    snprintf(whole, sizeof whole, "%s/whole.kiln", dir);
    kiln_compile_options o = options();
    kiln_compile_method m = {.name = "forward", .model_path = model_path};
    kiln_status st = kiln_compile_file(&o, &m, 1, whole, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "kiln_compile_file: %s\n", message);
    REQUIRE(st == KILN_OK);
    kiln_program *p = NULL;
    EXPECT_STATUS(kiln_program_open(whole, &p), KILN_OK);
    REQUIRE(p);
    kiln_llm *llm = NULL;
    kiln_llm_options lo = {.struct_size = sizeof lo, .num_threads = 1};
    EXPECT_STATUS(kiln_llm_create(p, &lo, &llm, message, sizeof message), KILN_OK);
    REQUIRE(llm);
    size_t V = kiln_llm_n_vocab(llm);
    int32_t ids[N_GEN];
    float *logits = malloc((20 + N_GEN) * V * sizeof(float));
    REQUIRE(logits);
    greedy(llm, ids, logits);
    kiln_llm_destroy(llm);
    kiln_program_close(p);
    test_equal_to_whole(ids, logits, V);
    test_caller_group();
    test_refusals();
    free(logits);
    remove_dir();
    return unit_finish("test_llm_runner_shards");
}
