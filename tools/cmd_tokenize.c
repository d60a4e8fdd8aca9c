/* cmd_tokenize.c — `kiln tokenize MODEL (--text T | --file F) [--no-bos]`: the token ids of a
 * text, space-separated on one line. Layer: tools. A GGUF file needs only its vocabulary (no
 * compile); a program its "llm.gguf" metadata (llm_model.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"
#include "llm_model.h"
#include "read_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln tokenize MODEL(.gguf|.kiln) (--text TEXT | --file FILE) [--no-bos]\n"
            "\n"
            "Prints the token ids of the text, space-separated on one line, with the model's BOS\n"
            "first when its vocabulary adds one (tokenizer.ggml.add_bos_token). Special-token text\n"
            "such as \"<s>\" is not parsed. A GGUF model is read for its vocabulary only; a program\n"
            "for the vocabulary it carries (metadata llm.gguf).\n"
            "\n"
            "options:\n"
            "  --text TEXT   the text to tokenize\n"
            "  --file FILE   tokenize the bytes of FILE instead\n"
            "  --no-bos      no BOS token in front\n"
            "  -h, --help    show this help\n");
}

int cmd_tokenize(int argc, char **argv)
{
    const char *model = NULL, *text = NULL, *file = NULL;
    bool bos = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return KILN_EXIT_OK;
        } else if (strcmp(a, "--text") == 0 && v) text = argv[++i];
        else if (strcmp(a, "--file") == 0 && v) file = argv[++i];
        else if (strcmp(a, "--no-bos") == 0) bos = false;
        else if (!cli_take_program("tokenize", a, &model)) return KILN_EXIT_USAGE;
    }
    if (!cli_require_program("tokenize", model)) return KILN_EXIT_USAGE;
    if (!text == !file) {
        cli_error("tokenize: give the text with exactly one of --text TEXT and --file FILE");
        return KILN_EXIT_USAGE;
    }
    kiln_vocab *vocab;
    int rc = cli_vocab_open("tokenize", model, &vocab);
    if (rc) return rc;
    const kiln_allocator *a = kiln_allocator_default();
    uint8_t *bytes = NULL;
    size_t size = text ? strlen(text) : 0;
    if (file) {
        char why[256], shown[KILN_ESCAPED_NAME_SIZE];
        kiln_status st = cli_read_file(file, a, SIZE_MAX, &bytes, &size, why, sizeof why);
        if (st != KILN_OK) {
            cli_error("tokenize: cannot read '%s': %s", cli_esc(shown, file), why[0] ? why : kiln_status_str(st));
            kiln_vocab_destroy(vocab);
            return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
        }
    }
    int32_t *ids = NULL;
    size_t n = 0;
    kiln_status st = kiln_vocab_tokenize(vocab, file ? (const char *)bytes : text, size, bos, a, &ids, &n);
    if (st != KILN_OK) {
        cli_error("tokenize: %s", kiln_status_str(st));
        rc = cli_exit_status(st);
    } else {
        for (size_t i = 0; i < n; i++) printf(i ? " %d" : "%d", (int)ids[i]);
        printf("\n");
    }
    kiln_free(a, ids);
    kiln_free(a, bytes);
    kiln_vocab_destroy(vocab);
    return rc;
}
