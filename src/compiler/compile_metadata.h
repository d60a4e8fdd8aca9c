/* compile_metadata.h — the program metadata of a compilation: the union of what the methods'
 * importers attached to their graphs (kiln_ir_graph_add_metadata).
 *
 * Layer: compiler. compile.c calls it once every method is imported, before any backend runs,
 * so a conflict costs no delegation work.
 */
#ifndef KILN_COMPILER_COMPILE_METADATA_H
#define KILN_COMPILER_COMPILE_METADATA_H

#include "compiler/ir.h"
#include "format/program_writer.h"
#include "kiln/compiler.h"

/* Adds to b every key of graphs[0..n) (graphs[i] is the graph of methods[i]). A key two methods
 * both carry is written once when their bytes agree; differing bytes have no one right value,
 * so that is KILN_ERROR_COMPILE_SPEC with message "program metadata 'KEY' differs between
 * methods 'A' and 'B': ...". Also the builder's statuses (KILN_ERROR_OUT_OF_MEMORY, ...), with a
 * message saying so. */
kiln_status kiln_compile_metadata_union(const kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                                        kiln_program_builder *b, char *message, size_t message_size);

#endif
