/* emit.h — writes a planned IR graph as one method of a program.
 * Layer: compiler. Depends on format (the program writer). */
#ifndef KILN_COMPILER_EMIT_H
#define KILN_COMPILER_EMIT_H

#include "compiler/plan.h"
#include "format/program_writer.h"

kiln_status kiln_ir_emit_method(kiln_ir_graph *g, const kiln_ir_plan *plan, const char *method_name,
                                kiln_program_builder *b);

#endif
