/* A 64-bit hash of bytes, eight at a time. */
#ifndef RF_CONFIG_HASH_H
#define RF_CONFIG_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/**
 * A hash of s[0..n) for a table that computes every hash it compares itself (the node name
 * index, interned messages): a word per step where a byte-at-a-time hash takes eight, and
 * splitmix64's finalizer, so that names that differ only in their last bytes
 * ("gpu-node-001959", "gpu-node-001960") differ in the low bits a table's mask keeps. Its
 * values are never compared with rf_fingerprint()'s (remembered verdicts' and predictions'
 * keys), which stay what they were.
 */
static inline uint64_t
rf_hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	uint64_t w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

#endif
