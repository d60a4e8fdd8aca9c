/* cmd_compile.c — `kiln compile`: ONNX models or a GGUF LLM -> a .kiln program (or shard programs and their
 * manifest). Layer: tools. Options become a kiln_compile_options; the compiler checks the spec,
 * refuses an output that is one of the models, and writes atomically (include/kiln/compiler.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define MAX_METHODS 64
#define MAX_SHAPES 64
#define MAX_TARGETS 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln compile (MODEL.onnx | MODEL.gguf | --method NAME=MODEL.onnx ...) -o OUT.kiln\n"
            "                    [options]\n"
            "\n"
            "Compiles models into a kiln program; each model's format (ONNX, GGUF) is found from its\n"
            "bytes, not its name. A single positional model becomes the method 'forward';\n"
            "--method adds named methods (e.g. prefill and decode) to one program. A single GGUF\n"
            "LLM (architecture llama or qwen2) becomes the two methods 'prefill' and 'decode',\n"
            "compiled with weight sharing (docs/llm.md).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE           program to write (required); written atomically, through\n"
            "                              a symbolic link; never over a device, FIFO, directory\n"
            "                              or one of the models (docs/cli.md)\n"
            "  --method NAME=MODEL.onnx    add a method (repeatable)\n"
            "  --input-shape NAME=D0,D1,.. static shape for a model input, needed for symbolic\n"
            "                              dimensions such as a dynamic batch (repeatable)\n"
            "  --target T                  compile the cpu delegates for target T: generic, x86-64-v3\n"
            "                              (AVX2+FMA), x86-64-v4 (AVX-512) or x86-64-v4-bf16\n"
            "                              (+AVX512-BF16); repeat for a program\n"
            "                              that carries one record per target and picks the best\n"
            "                              one at load (default: the best target of this machine)\n"
            "  --precision P               compute precision of the cpu delegates: f32 (the default)\n"
            "                              or bf16 (MatMul/Gemm/Conv weights stored as bf16; target\n"
            "                              x86-64-v4-bf16 only); once for all targets, or once per\n"
            "                              --target in the same order (records may differ: bf16 for\n"
            "                              x86-64-v4-bf16, f32 for the others); bf16 without --target\n"
            "                              picks this machine's best bf16 target, if it has one\n"
            "  --weight-sharing            with several --method: compile partition i of every method\n"
            "                              into one context binary (a graph per method, one copy of\n"
            "                              the weights); the methods must partition alike\n"
            "  --no-strassen               keep every GEMM classical: by default products of at least\n"
            "                              1024^3 with a constant B take one level of Strassen's\n"
            "                              algorithm (faster; 7/4 of that B's bytes; a larger\n"
            "                              rounding error, docs/kernels.md)\n"
            "  --no-delegate               keep every op on the portable kernels (no --target then)\n"
            "  --slc                       cache-resident scratch planning for the cpu delegates:\n"
            "                              short-lived intermediates in a region sized to the\n"
            "                              targets' last-level cache, most recently freed block\n"
            "                              reused first (docs/slc.md); same results\n"
            "  --context N                 GGUF LLM: KV-cache rows (default: the model's\n"
            "                              context_length, at most 2048)\n"
            "  --prefill N                 GGUF LLM: tokens per prefill call (default: min(128, context))\n"
            "  --shards N                  split the model into N programs that run in sequence, cut\n"
            "                              where the weight bytes balance; -o names the manifest,\n"
            "                              shard i goes to OUT-minus-extension-shard<i>.kiln, and\n"
            "                              all shards get one scratch-group size (docs/cli.md);\n"
            "                              a GGUF LLM is cut by blocks, each shard with both\n"
            "                              methods (N <= its block count; docs/llm.md)\n"
            "  -h, --help                  show this help\n"
            "\n"
            "Exit status: 0 ok, 1 failure, 2 usage error or invalid compile spec (an unknown, repeated or\n"
            "empty target list, a precision count that does not match the targets, options that\n"
            "contradict each other), 3 unsupported operator (the message names the op, its domain, opset\n"
            "and node), 4 invalid model.\n");
}

/* --shards N: one model, N shard programs and the manifest at out. */
static int compile_shards(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                          const char *out, size_t n_shards)
{
    if (n_methods != 1) {
        cli_error("compile: --shards splits one model; give one MODEL.onnx (or one --method)");
        return KILN_EXIT_USAGE;
    }
    char message[1024];
    double t0 = cli_now();
    kiln_status st = kiln_compile_shards(opt, &methods[0], n_shards, out, message, sizeof message);
    if (st != KILN_OK) {
        cli_error("compile failed: %s", message[0] ? message : kiln_status_str(st));
        return cli_exit_status(st);
    }
    printf("compiled '%s' into %zu shard%s with manifest %s in %.1f ms\n", methods[0].name, n_shards,
           n_shards == 1 ? "" : "s", out, 1e3 * (cli_now() - t0));
    return KILN_EXIT_OK;
}

int cmd_compile(int argc, char **argv)
{
    kiln_compile_method methods[MAX_METHODS];
    kiln_input_shape shapes[MAX_SHAPES];
    const char *targets[MAX_TARGETS], *precisions[MAX_TARGETS];
    size_t n_methods = 0, n_shapes = 0, n_targets = 0, n_precisions = 0;
    const char *out = NULL, *positional = NULL;
    int no_delegate = 0, slc = 0, weight_sharing = 0, no_strassen = 0;
    long shards = 0, context = 0, prefill = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return KILN_EXIT_OK;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_value) {
            out = argv[++i];
        } else if (strcmp(a, "--method") == 0 && has_value) {
            char *spec = argv[++i], *eq = strchr(spec, '=');
            if (!eq || eq == spec || !eq[1] || n_methods == MAX_METHODS) {
                cli_error("--method wants NAME=MODEL.onnx, got '%s'", spec);
                return KILN_EXIT_USAGE;
            }
            *eq = '\0';
            methods[n_methods++] = (kiln_compile_method){.name = spec, .model_path = eq + 1};
        } else if (strcmp(a, "--input-shape") == 0 && has_value) {
            char *spec = argv[++i];
            if (n_shapes == MAX_SHAPES || !cli_parse_shape(spec, &shapes[n_shapes]) || !shapes[n_shapes].name) {
                cli_error("--input-shape wants NAME=D0,D1,... with non-negative integers, got '%s'", spec);
                return KILN_EXIT_USAGE;
            }
            n_shapes++;
        } else if (strcmp(a, "--target") == 0 && has_value) {
            if (n_targets == MAX_TARGETS) {
                cli_error("compile: more than %d --target options", MAX_TARGETS);
                return KILN_EXIT_USAGE;
            }
            targets[n_targets++] = argv[++i];
        } else if (strcmp(a, "--precision") == 0 && has_value) {
            if (n_precisions == MAX_TARGETS) {
                cli_error("compile: more than %d --precision options", MAX_TARGETS);
                return KILN_EXIT_USAGE;
            }
            precisions[n_precisions++] = argv[++i];
        } else if (strcmp(a, "--weight-sharing") == 0) {
            weight_sharing = 1;
        } else if (strcmp(a, "--no-delegate") == 0) {
            no_delegate = 1;
        } else if (strcmp(a, "--shards") == 0 && has_value) {
            if (!cli_parse_int(argv[++i], 1, 1024, &shards)) {
                cli_error("--shards wants a number of shards 1..1024, got '%s'", argv[i]);
                return KILN_EXIT_USAGE;
            }
        } else if ((strcmp(a, "--context") == 0 || strcmp(a, "--prefill") == 0) && has_value) {
            if (!cli_parse_int(argv[++i], 1, 1L << 20, a[2] == 'c' ? &context : &prefill)) {
                cli_error("%s wants a length 1..1048576, got '%s'", a, argv[i]);
                return KILN_EXIT_USAGE;
            }
        } else if (strcmp(a, "--slc") == 0) {
            slc = 1;
        } else if (strcmp(a, "--no-strassen") == 0) {
            no_strassen = 1;
        } else if (a[0] == '-') {
            cli_error("compile: unknown or incomplete option '%s' (try 'kiln compile --help')", a);
            return KILN_EXIT_USAGE;
        } else if (!positional) {
            positional = a;
        } else {
            cli_error("compile: more than one model given ('%s' and '%s'); use --method NAME=MODEL for several", positional, a);
            return KILN_EXIT_USAGE;
        }
    }
    if (positional) {
        if (n_methods) {
            cli_error("compile: give either one MODEL.onnx or --method NAME=MODEL.onnx options, not both");
            return KILN_EXIT_USAGE;
        }
        methods[n_methods++] = (kiln_compile_method){.name = "forward", .model_path = positional};
    }
    if (!n_methods) {
        cli_error("compile: no model given (try 'kiln compile --help')");
        return KILN_EXIT_USAGE;
    }
    if (!out) {
        cli_error("compile: no output file given; add -o OUT.kiln");
        return KILN_EXIT_USAGE;
    }
    kiln_compile_options opt = {.struct_size = sizeof opt, .input_shapes = shapes, .n_input_shapes = n_shapes,
                                .no_delegate = no_delegate, .targets = n_targets ? targets : NULL,
                                .n_targets = n_targets, .slc = slc, .no_strassen = no_strassen, .precisions = n_precisions ? precisions : NULL,
                                .n_precisions = n_precisions, .weight_sharing = weight_sharing,
                                .llm_context = context, .llm_prefill = prefill};
    if (shards) return compile_shards(&opt, methods, n_methods, out, (size_t)shards);
    char message[1024];
    double t0 = cli_now();
    kiln_status st = kiln_compile_file(&opt, methods, n_methods, out, message, sizeof message);
    if (st != KILN_OK) {
        cli_error("compile failed: %s", message[0] ? message : kiln_status_str(st));
        return cli_exit_status(st);
    }
    struct stat sb;
    long long size = stat(out, &sb) == 0 ? (long long)sb.st_size : -1;
    /* A GGUF LLM given as one model is two methods (prefill, decode): the program says how many. */
    printf("compiled %s into %s (%lld bytes) in %.1f ms\n", positional ? positional : "the methods", out, size,
           1e3 * (cli_now() - t0));
    return KILN_EXIT_OK;
}
