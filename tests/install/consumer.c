/* consumer.c — a program outside the kiln tree, built against an installed kiln, to prove the
 * installed headers, library, pkg-config file and CMake package work together. */
#include <kiln/kiln.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    kiln_program *p = NULL;
    const char junk[64] = "not a program";
    kiln_status st = kiln_program_open_memory(junk, sizeof junk, &p);
    printf("kiln %s: opening junk gives %s\n", kiln_version_string(), kiln_status_name(st));
    return st == KILN_ERROR_FORMAT && p == NULL ? 0 : 1;
}
