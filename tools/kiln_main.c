/* kiln_main.c — the `kiln` command: dispatches to its subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln <command> [options]\n"
            "\n"
            "commands:\n"
            "  compile   compile ONNX models into a .kiln program\n"
            "  run       run a .kiln program (or an .onnx model directly) on input tensors\n"
            "  inspect   describe a .kiln program (--json for machines)\n"
            "  bench     time a method of a .kiln program: min/median/mean latency (--json)\n"
            "  scratch-size  largest scratch need of programs (e.g. shards); --write records it as\n"
            "            their shared scratch-group size\n"
            "  verify    check program files whole: validation, loading, every signature and hash\n"
            "  generate  generate text with an LLM (.gguf or a program compiled from one)\n"
            "  perplexity  perplexity of a text under an LLM, teacher-forced (--logits OUT.npy)\n"
            "  tokenize  the token ids of a text under an LLM's vocabulary\n"
            "\n"
            "Run 'kiln <command> --help' for a command's options. 'kiln --version' prints the version.\n"
            "Exit status: 0 ok, 1 failure, 2 usage error, 3 unsupported operator, 4 invalid input file.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KILN_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return KILN_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("kiln %s\n", kiln_version_string());
        return KILN_EXIT_OK;
    }
    if (strcmp(cmd, "compile") == 0) return cmd_compile(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "inspect") == 0) return cmd_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "scratch-size") == 0) return cmd_scratch_size(argc - 1, argv + 1);
    if (strcmp(cmd, "verify") == 0) return cmd_verify(argc - 1, argv + 1);
    if (strcmp(cmd, "generate") == 0) return cmd_generate(argc - 1, argv + 1);
    if (strcmp(cmd, "perplexity") == 0) return cmd_perplexity(argc - 1, argv + 1);
    if (strcmp(cmd, "tokenize") == 0) return cmd_tokenize(argc - 1, argv + 1);
    char shown[KILN_ESCAPED_NAME_SIZE];
    cli_error("unknown command '%s' (try 'kiln --help')", cli_esc(shown, cmd));
    return KILN_EXIT_USAGE;
}
