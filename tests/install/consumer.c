/* consumer.c — a program outside the kiln tree, built against an installed kiln, to prove the
 * installed headers, library, pkg-config file and CMake package work together: it refuses a
 * junk buffer, then runs the program file given as argv[1] (any single-input f32 method
 * "forward") on zeros and prints its first output's shape. Running a method pulls in the whole
 * runtime, kernels and their libm and pthreads needs, so a link line that misses one fails. */
#include <kiln/kiln.h>
#include <stdio.h>
#include <stdlib.h>

static int run(const char *path)
{
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *forward = NULL;
    kiln_tensor in, out;
    float *zeros = NULL;
    kiln_status st;
    if ((st = kiln_program_open(path, &program)) != KILN_OK || (st = kiln_module_create(program, NULL, &module)) ||
        (st = kiln_method_load(module, "forward", &forward)) || (st = kiln_method_input_info(forward, 0, &in)))
        goto done;
    st = KILN_ERROR_OUT_OF_MEMORY;
    if (in.dtype != KILN_DTYPE_F32 || kiln_tensor_numel(&in) < 0 ||
        !(zeros = calloc((size_t)kiln_tensor_numel(&in) + 1, sizeof *zeros)))
        goto done;
    in.data = zeros;
    if ((st = kiln_method_set_input(forward, 0, &in)) || (st = kiln_method_execute(forward)) ||
        (st = kiln_method_get_output(forward, 0, &out)))
        goto done;
    printf("kiln %s: ran %s: output 0 is %s [", kiln_version_string(), path, kiln_dtype_name(out.dtype));
    for (uint32_t d = 0; d < out.rank; d++) printf("%s%lld", d ? "," : "", (long long)out.shape[d]);
    printf("]\n");
done:
    if (st != KILN_OK) fprintf(stderr, "consumer: %s: %s\n", path, kiln_status_str(st));
    free(zeros);
    kiln_method_unload(forward);
    kiln_module_destroy(module);
    kiln_program_close(program);
    return st == KILN_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    kiln_program *p = NULL;
    const char junk[64] = "not a program";
    kiln_status st = kiln_program_open_memory(junk, sizeof junk, &p);
    printf("kiln %s: opening junk gives %s\n", kiln_version_string(), kiln_status_name(st));
    if (st != KILN_ERROR_FORMAT || p != NULL) return 1;
    return argc > 1 ? run(argv[1]) : 0;
}
