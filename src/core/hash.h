/* hash.h — content hashing for segment deduplication and context-binary signatures.
 *
 * Layer: core (internal). A 64-bit non-cryptographic hash: it names content, it does not
 * authenticate it. Writers that deduplicate on it still compare the bytes before merging.
 */
#ifndef KILN_CORE_HASH_H
#define KILN_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t kiln_hash64(const void *data, size_t size, uint64_t seed);

#endif
