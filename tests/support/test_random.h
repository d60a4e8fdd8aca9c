/* test_random.h — a small deterministic generator for test data (xorshift64*).
 *
 * Tests only: reproducible values with no library state, the same on every machine.
 */
#ifndef KILN_TESTS_SUPPORT_TEST_RANDOM_H
#define KILN_TESTS_SUPPORT_TEST_RANDOM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t test_next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* n values uniform in [-scale, scale). */
static inline void test_fill_random(uint64_t *seed, float *v, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = scale * ((float)(test_next_random(seed) >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
}

#endif
