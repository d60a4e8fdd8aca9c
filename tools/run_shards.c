/* run_shards.c — `kiln run MANIFEST` (see run_shards.h).
 *
 * Layer: tools. One explicit scratch group is created first and handed to every shard's module,
 * so the shards' contexts share one scratch buffer sized to the largest of them (the group size
 * `kiln compile --shards` recorded) and run one at a time. Each iteration runs the shards in
 * order; a shard's inputs are copied in from the user's tensors or from the output views of the
 * shards before it, which stay valid because no shard runs twice within an iteration.
 */
#include "run_shards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/file_open.h"
#include "io/npy.h"
#include "shard_manifest.h"

typedef struct shard_rt {
    kiln_program *program;
    kiln_module *module;
    kiln_method *method;
} shard_rt;

typedef struct shard_run {
    const shard_run_options *opt;
    shard_manifest m;
    kiln_scratch_group *group;
    shard_rt *shards;           /* (m.n_shards) */
    const kiln_tensor **graph_in; /* (m.n_graph_inputs) the user's tensor for each graph input */
} shard_run;

bool shard_manifest_detect(const char *path)
{
    /* Regular files only: fopen() of a FIFO would block here, before any message. Whatever
       cannot be opened is no manifest; opening it as a program then says why. */
    char head[sizeof SHARD_MANIFEST_MAGIC];
    int fd;
    if (kiln_file_open_read(path, &fd, NULL, NULL) != KILN_OK) return false;
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    close(fd);
    if (n < 0) return false;
    head[n] = '\0';
    return strcmp(head, SHARD_MANIFEST_MAGIC) == 0;
}

void run_print_stats(void)
{
    kiln_runtime_stats s = {.struct_size = sizeof s};
    if (kiln_runtime_stats_get(&s) != KILN_OK) {
        printf("runtime stats: unavailable\n");
        return;
    }
    printf("runtime stats: live_contexts=%llu contexts_created=%llu contexts_destroyed=%llu live_scratch_groups=%llu "
           "scratch_bytes_reserved=%llu\n",
           (unsigned long long)s.live_contexts, (unsigned long long)s.contexts_created,
           (unsigned long long)s.contexts_destroyed, (unsigned long long)s.live_scratch_groups,
           (unsigned long long)s.scratch_bytes_reserved);
}

/* The user's tensors, by position or by graph-input name. */
static int bind_graph_inputs(shard_run *r)
{
    const shard_run_options *o = r->opt;
    if (o->n_inputs != r->m.n_graph_inputs) {
        cli_error("the sharded model takes %zu input%s, %zu given", r->m.n_graph_inputs,
                  r->m.n_graph_inputs == 1 ? "" : "s", o->n_inputs);
        return KILN_EXIT_USAGE;
    }
    for (size_t k = 0; k < o->n_inputs; k++) {
        size_t index = k;
        if (o->input_names && o->input_names[k]) {
            for (index = 0; index < r->m.n_graph_inputs; index++)
                if (strcmp(r->m.graph_inputs[index], o->input_names[k]) == 0) break;
            if (index == r->m.n_graph_inputs) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                cli_error("the sharded model has no input named '%s'", cli_esc(shown, o->input_names[k]));
                return KILN_EXIT_USAGE;
            }
        }
        r->graph_in[index] = &o->inputs[k];
    }
    return 0;
}

static int load_shard(shard_run *r, size_t i)
{
    const manifest_shard *ms = &r->m.shards[i];
    shard_rt *s = &r->shards[i];
    char cmd[32], shown[KILN_ESCAPED_NAME_SIZE];
    snprintf(cmd, sizeof cmd, "shard %zu", i);
    int rc = cli_open_program(cmd, ms->path, &s->program);
    if (rc) return rc;
    kiln_module_options mo = {.struct_size = sizeof mo, .scratch_group = r->group, .num_threads = r->opt->threads,
                              .target = r->opt->target};
    const char *name;
    rc = cli_load_method(cmd, ms->path, NULL, 0, s->program, &mo, r->opt->method ? r->opt->method : r->m.method, &name,
                         &s->module, &s->method);
    if (rc) return rc;
    if (kiln_method_input_count(s->method) != ms->n_inputs) {
        cli_error("shard %zu: '%s' takes %zu inputs, the manifest feeds %zu", i, cli_esc(shown, ms->path),
                  kiln_method_input_count(s->method), ms->n_inputs);
        return KILN_EXIT_INVALID;
    }
    return 0;
}

/* The tensor a source names: a user input, or a view of an earlier shard's output. */
static int source_tensor(shard_run *r, const shard_source *src, kiln_tensor *out)
{
    if (src->shard < 0) {
        *out = *r->graph_in[src->index];
        return 0;
    }
    kiln_method *from = r->shards[src->shard].method;
    if (src->index >= kiln_method_output_count(from) || kiln_method_get_output(from, src->index, out) != KILN_OK) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        cli_error("the manifest reads output %zu of shard %d '%s', which it does not have", src->index,
                  (int)src->shard, cli_esc(shown, src->name));
        return KILN_EXIT_INVALID;
    }
    return 0;
}

static int run_once(shard_run *r, double *seconds)
{
    *seconds = 0;
    for (size_t i = 0; i < r->m.n_shards; i++) {
        const manifest_shard *ms = &r->m.shards[i];
        kiln_method *method = r->shards[i].method;
        for (size_t j = 0; j < ms->n_inputs; j++) {
            kiln_tensor t;
            int rc = source_tensor(r, &ms->inputs[j], &t);
            if (rc) return rc;
            kiln_status st = kiln_method_set_input(method, j, &t);
            if (st != KILN_OK) {
                char have[160], shown[KILN_ESCAPED_NAME_SIZE];
                kiln_format_shape(&t, have, sizeof have);
                cli_error("shard %zu input %zu '%s': %s (got %s)", i, j, cli_esc(shown, ms->inputs[j].name),
                          kiln_status_str(st), have);
                return cli_exit_status(st);
            }
        }
        double t0 = cli_now();
        kiln_status st = kiln_method_execute(method);
        *seconds += cli_now() - t0;
        if (st != KILN_OK) {
            cli_error("shard %zu: execute failed: %s", i, kiln_status_str(st));
            return cli_exit_status(st);
        }
    }
    return 0;
}

static int report_outputs(shard_run *r)
{
    for (size_t j = 0; j < r->m.n_outputs; j++) {
        kiln_tensor t;
        int rc = source_tensor(r, &r->m.outputs[j], &t);
        if (rc) return rc;
        if (!r->opt->quiet) run_print_output(j, r->m.outputs[j].name, &t);
        if (r->opt->outputs_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/output_%zu.npy", r->opt->outputs_dir, j);
            char why[1024] = "";
            kiln_status st = kiln_npy_write_io(NULL, path, &t, why, sizeof why);
            if (st != KILN_OK) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                if (why[0]) cli_error("%s", why); /* the writer escapes its paths */
                else cli_error("cannot write '%s': %s", cli_esc(shown, path), kiln_status_str(st));
                return cli_exit_status(st);
            }
        }
    }
    return 0;
}

static int execute_all(shard_run *r)
{
    long n = r->opt->iterations > 0 ? r->opt->iterations : 1;
    double *times = calloc((size_t)n, sizeof *times);
    if (!times) return KILN_EXIT_FAILURE;
    int rc = 0;
    for (long it = 0; it < n && rc == 0; it++) rc = run_once(r, &times[it]);
    if (rc == 0) rc = report_outputs(r);
    if (rc == 0 && !r->opt->quiet) {
        cli_sort_doubles(times, (size_t)n);
        if (n == 1) printf("execute: %.3f ms (%zu shards)\n", 1e3 * times[0], r->m.n_shards);
        else printf("execute: min %.3f ms, median %.3f ms over %ld runs (%zu shards)\n", 1e3 * times[0],
                    1e3 * times[n / 2], n, r->m.n_shards);
    }
    if (rc == 0 && r->opt->stats) run_print_stats();
    free(times);
    return rc;
}

int run_shards(const char *manifest_path, const shard_run_options *opt)
{
    shard_run r = {.opt = opt};
    char error[512];
    int rc = shard_manifest_read(manifest_path, &r.m, error, sizeof error);
    if (rc) {
        cli_error("%s", error);
        return rc;
    }
    r.shards = calloc(r.m.n_shards, sizeof *r.shards);
    r.graph_in = calloc(r.m.n_graph_inputs + 1, sizeof *r.graph_in);
    kiln_status st = r.shards && r.graph_in ? kiln_scratch_group_create(&r.group) : KILN_ERROR_OUT_OF_MEMORY;
    if (st != KILN_OK) {
        cli_error("cannot set up the sharded run: %s", kiln_status_str(st));
        rc = KILN_EXIT_FAILURE;
    }
    if (!rc) rc = bind_graph_inputs(&r);
    for (size_t i = 0; !rc && i < r.m.n_shards; i++) rc = load_shard(&r, i);
    if (!rc) rc = execute_all(&r);
    for (size_t i = r.m.n_shards; r.shards && i-- > 0;) { /* modules first, the group's last user */
        kiln_module_destroy(r.shards[i].module);
        kiln_program_close(r.shards[i].program);
    }
    kiln_scratch_group_release(r.group);
    free(r.shards);
    free(r.graph_in);
    shard_manifest_free(&r.m);
    return rc;
}
