/* test_kernel_support.h — failure counting and random data shared by the kernel tests
 * (test_cpu_kernels_*.c through test_cpu_kernels_support.h, test_cpu_threads.c, test_portable_threads.c).
 *
 * Layer: tests. Header-only (static), since each test file is a program of its own: every file
 * gets its own counters. Each file keeps its own random seed, so a test's data do not depend on
 * what another test draws.
 */
#ifndef KILN_TESTS_UNIT_TEST_KERNEL_SUPPORT_H
#define KILN_TESTS_UNIT_TEST_KERNEL_SUPPORT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/* Checks made and checks failed; main() reports both and fails when failures > 0. */
static int failures, checks;

/* Print "FAIL: <message>" on stderr and count a failure. */
static inline __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

/* Next xorshift64 value of *state as a float uniform in [-1, 1), from the top 24 bits. */
static inline float xorshift_unit(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (float)((*state >> 40) * (1.0 / (1 << 24)) * 2.0 - 1.0);
}

#endif /* KILN_TESTS_UNIT_TEST_KERNEL_SUPPORT_H */
