/* hash.c — kiln_hash64: a word-at-a-time multiply-rotate hash.
 * Layer: core. Chosen for speed on weight-sized inputs (GB/s, one multiply per 8 bytes) and a
 * strong final mix; the format spec (docs/format.md) fixes it, so it must never change without
 * a format version bump. */
#include "core/hash.h"

#include <string.h>

#define K1 0x9E3779B185EBCA87ULL
#define K2 0xC2B2AE3D27D4EB4FULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

uint64_t kiln_hash64(const void *data, size_t size, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h[4] = {seed ^ K1, seed ^ K2, rotl(seed, 17) ^ K1, rotl(seed, 41) ^ K2};
    size_t i = 0;
    for (; i + 32 <= size; i += 32) {
        for (int lane = 0; lane < 4; lane++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * lane, 8);
            h[lane] = rotl(h[lane] ^ (w * K2), 31) * K1;
        }
    }
    uint64_t acc = rotl(h[0], 1) + rotl(h[1], 7) + rotl(h[2], 12) + rotl(h[3], 18);
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc = rotl(acc ^ (w * K2), 27) * K1 + K2;
    }
    uint64_t tail = 0;
    if (i < size) memcpy(&tail, p + i, size - i);
    acc = rotl(acc ^ (tail * K1), 23) * K2;
    return mix(acc ^ (uint64_t)size);
}
