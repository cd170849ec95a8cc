/* A small LZ77 codec for JSON text that is kept but rarely read (the ResourceSlices of a static
 * snapshot, for /debug/snapshot): repeated keys and values across objects shrink to a few bytes
 * each. Greedy matching with one hash slot per 4-byte sequence, a 16 MiB window; not a general
 * purpose format (no checksum: only railfit writes and reads it, in memory). Pure functions. */
#ifndef RF_SERVER_PACK_H
#define RF_SERVER_PACK_H

#include <stddef.h>
#include <stdint.h>

/** Compress src[0..n) into a new malloc'ed buffer. @return 0 or -ENOMEM. */
int rf_pack(const char *src, size_t n, char **ret, size_t *ret_len);

/**
 * Decompress what rf_pack() made (one frame, or the output of several calls back to back: their
 * texts concatenated) into a new malloc'ed, NUL-terminated buffer.
 * @return 0, -EINVAL (not rf_pack() output, or damaged) or -ENOMEM.
 */
int rf_unpack(const char *src, size_t n, char **ret, size_t *ret_len);

/** Whether src starts like rf_pack() or rf_pack_with() output. */
int rf_is_packed(const char *src, size_t n);

/** Text a frame may refer back into as if it came before the frame's own (objects of one shape
 * share most of theirs); its owner keeps it for as long as frames packed with it are read. */
struct rf_pack_dict {
	const char *text;
	size_t len;
};

/** rf_pack() with a dictionary (none when NULL or empty), named id in the frame. */
int rf_pack_with(const char *src, size_t n, const struct rf_pack_dict *dict, uint32_t id,
		 char **ret, size_t *ret_len);

/** The dictionary named id, or NULL. */
typedef const struct rf_pack_dict *rf_pack_dict_fn(uint32_t id, void *userdata);

/** rf_unpack() of frames that may name dictionaries (dicts may be NULL: -EINVAL for them). */
int rf_unpack_with(const char *src, size_t n, rf_pack_dict_fn *dicts, void *userdata, char **ret,
		   size_t *ret_len);

#endif
