/* check.c — the one place a broken contract is reported (check.h, KILN_CONTRACT).
 *
 * Layer: core. Only debug builds (KILN_DEBUG) call it. The message goes to stderr because the
 * process is about to abort: there is no caller left to hand a diagnostic to. This is the only
 * write to stderr in the library.
 */
#include "core/check.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef KILN_DEBUG
void kiln_contract_fail(const char *file, int line, const char *cond)
{
    fprintf(stderr, "kiln: %s:%d: contract violated: %s\n", file, line, cond);
    fflush(stderr);
    abort();
}
#endif
