/* builtin_backends.c — the compiler's fixed table of built-in compile-time backends.
 *
 * Layer: compiler. The one compiler file that includes a backend's header: every other file
 * reaches backends through this table (compiler_backend.h). Adding a backend is one line here.
 */
#include "compiler/compiler_backend.h"

#include <string.h>

#include "backends/cpu/aot/aot_backend.h"

static const kiln_compiler_backend *const builtin[] = {&kiln_cpu_compiler_backend};

const kiln_compiler_backend *const *kiln_compiler_builtin_backends(size_t *n)
{
    *n = sizeof builtin / sizeof builtin[0];
    return builtin;
}

const kiln_compiler_backend *kiln_compiler_backend_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof builtin / sizeof builtin[0]; i++)
        if (strcmp(builtin[i]->name, name) == 0) return builtin[i];
    return NULL;
}
