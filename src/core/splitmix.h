/* splitmix.h — splitmix64, the one small pseudo-random generator of kiln: one 64-bit word of
 * state, period 2^64, well-mixed outputs even from seeds 0, 1, 2 ... (Steele, Lea, Flood 2014).
 * The caller owns the state, so generators never share randomness and nothing is global. Used
 * by the LLM sampler (src/llm/runner) and by the tools' deterministic benchmark inputs.
 *
 * Layer: core (internal), header only.
 */
#ifndef KILN_CORE_SPLITMIX_H
#define KILN_CORE_SPLITMIX_H

#include <stdint.h>

static inline uint64_t kiln_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
