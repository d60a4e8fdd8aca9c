/* compile_metadata.c — the union of the methods' program metadata (compile_metadata.h).
 *
 * Layer: compiler. Quadratic in the number of keys, which is a handful per program.
 */
#include "compiler/compile_metadata.h"

#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "core/text_escape.h"

kiln_status kiln_compile_metadata_union(const kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                                        kiln_program_builder *b, char *message, size_t message_size)
{
    kiln_diag diag = kiln_diag_over(message, message_size);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < graphs[i].n_metadata; k++) {
            const kiln_ir_metadata *m = &graphs[i].metadata[k];
            const kiln_ir_metadata *seen = NULL;
            size_t seen_in = 0;
            for (size_t j = 0; j < i && !seen; j++) {
                for (size_t l = 0; l < graphs[j].n_metadata && !seen; l++) {
                    if (strcmp(graphs[j].metadata[l].key, m->key) == 0) {
                        seen = &graphs[j].metadata[l];
                        seen_in = j;
                    }
                }
            }
            if (seen && seen->size == m->size && memcmp(seen->data, m->data, m->size) == 0) continue;
            if (seen) {
                char key[KILN_ESCAPED_NAME_SIZE], first[KILN_ESCAPED_NAME_SIZE], second[KILN_ESCAPED_NAME_SIZE];
                char names[2 * KILN_ESCAPED_NAME_SIZE + 16];
                snprintf(names, sizeof names, "'%s' and '%s'",
                         kiln_text_escape(first, sizeof first, methods[seen_in].name, (size_t)-1),
                         kiln_text_escape(second, sizeof second, methods[i].name, (size_t)-1));
                return kiln_diag_fail(&diag, KILN_ERROR_COMPILE_SPEC,
                                      "program metadata '%s' differs between methods %s: a program holds one value "
                                      "per key", kiln_text_escape(key, sizeof key, m->key, (size_t)-1), names);
            }
            char key_shown[KILN_ESCAPED_NAME_SIZE];
            kiln_status st = kiln_program_builder_add_metadata(b, m->key, m->data, m->size);
            if (st != KILN_OK)
                return kiln_diag_fail(&diag, st, "writing program metadata '%s' failed: %s",
                                      kiln_text_escape(key_shown, sizeof key_shown, m->key, (size_t)-1),
                                      kiln_status_str(st));
        }
    }
    return KILN_OK;
}

