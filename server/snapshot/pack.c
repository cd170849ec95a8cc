/* LZ77 codec (see pack.h). A frame is "RFZ1", the decoded length and the length of the tokens
 * (8 bytes each, little endian), then the tokens; or "RFZ2", the same two lengths and the id of
 * its dictionary (4 bytes), then tokens that may reach back into the dictionary's text as if it
 * came first. Tokens: a byte b < 0x80 is a literal run of b + 1 bytes
 * that follow; b >= 0x80 is a match of (b & 0x3f) + 4 bytes at a distance given by the next 2 bytes
 * (b & 0x40 clear) or 3 bytes (set), little endian. */
#include "server/snapshot/pack.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"

#define MAGIC       "RFZ1"
#define HEADER      20
#define MAGIC_DICT  "RFZ2" /* a frame packed with a dictionary: its id follows the header */
#define HEADER_DICT (HEADER + 4)
#define MIN_MATCH   4
#define MAX_MATCH   (0x3f + MIN_MATCH)
#define MAX_DIST    ((1u << 24) - 1)
#define HASH_BITS   16

struct out {
	char *p;
	size_t len, cap;
};

static int
reserve(struct out *o, size_t more)
{
	return rf_grow(&o->p, &o->cap, o->len + more, 1);
}

static int
literals(struct out *o, const char *s, size_t n)
{
	while (n) {
		size_t k = n > 128 ? 128 : n;
		if (reserve(o, k + 1) < 0)
			return -ENOMEM;
		o->p[o->len++] = (char)(k - 1);
		memcpy(o->p + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
	return 0;
}

static void
put64(char *p, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		p[b] = (char)(v >> (8 * b));
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int b = 0; b < 8; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

static uint32_t
hash4(const unsigned char *p, unsigned bits)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return (v * 2654435761u) >> (32 - bits);
}

static void
put32(char *p, uint32_t v)
{
	for (int b = 0; b < 4; b++)
		p[b] = (char)(v >> (8 * b));
}

/* src[0..n) packed as if dict's text came before it (matches may reach into it). */
static int
pack(const struct rf_pack_dict *dict, uint32_t id, const char *src, size_t n, char **ret,
     size_t *ret_len)
{
	struct out o = { 0 };
	size_t dn = dict ? dict->len : 0, hdr = dict ? HEADER_DICT : HEADER, end = dn + n;
	char *joined = NULL;
	if (dn) {
		if (!(joined = malloc(end + 1)))
			return -ENOMEM;
		memcpy(joined, dict->text, dn);
		memcpy(joined + dn, src, n);
	}
	const unsigned char *s = (const unsigned char *)(dn ? joined : src);
	/* a table no larger than the input needs: one object's text is a few KB, and clearing
	 * 256 KB for each of 20,000 objects cost more than compressing them */
	unsigned bits = 10;
	while (bits < HASH_BITS && ((size_t)1 << bits) < end)
		bits++;
	uint32_t *last = calloc((size_t)1 << bits, sizeof(*last)); /* position + 1 */
	size_t i = dn, lit = dn;
	if (!last || reserve(&o, hdr + n / 4 + 16) < 0)
		goto oom;
	memcpy(o.p, dict ? MAGIC_DICT : MAGIC, 4);
	put64(o.p + 4, n);
	if (dict)
		put32(o.p + HEADER, id);
	o.len = hdr;
	for (size_t k = 0; k + MIN_MATCH <= dn; k++) /* the dictionary's text comes first */
		last[hash4(s + k, bits)] = (uint32_t)(k + 1);
	while (end >= MIN_MATCH && i + MIN_MATCH <= end) {
		uint32_t h = hash4(s + i, bits);
		size_t cand = last[h];
		last[h] = (uint32_t)(i + 1 < UINT32_MAX ? i + 1 : 0);
		size_t len = 0;
		if (cand && i - (cand - 1) <= MAX_DIST &&
		    memcmp(s + cand - 1, s + i, MIN_MATCH) == 0) {
			size_t c = cand - 1;
			len = MIN_MATCH;
			while (i + len < end && len < MAX_MATCH && s[c + len] == s[i + len])
				len++;
		}
		if (!len) {
			i++;
			continue;
		}
		if (literals(&o, (const char *)s + lit, i - lit) < 0 || reserve(&o, 4) < 0)
			goto oom;
		size_t dist = i - (cand - 1);
		int wide = dist > 0xffff;
		o.p[o.len++] = (char)(0x80 | (wide ? 0x40 : 0) | (len - MIN_MATCH));
		o.p[o.len++] = (char)(dist & 0xff);
		o.p[o.len++] = (char)((dist >> 8) & 0xff);
		if (wide)
			o.p[o.len++] = (char)((dist >> 16) & 0xff);
		/* remember the positions inside the match too, cheaply: every 4th */
		for (size_t k = i + 1; k + MIN_MATCH <= end && k < i + len; k += 4)
			last[hash4(s + k, bits)] = (uint32_t)(k + 1);
		i += len;
		lit = i;
	}
	if (literals(&o, (const char *)s + lit, end - lit) < 0)
		goto oom;
	put64(o.p + 12, o.len - hdr);
	free(last);
	free(joined);
	*ret = o.p;
	*ret_len = o.len;
	return 0;
oom:
	free(last);
	free(joined);
	free(o.p);
	return -ENOMEM;
}

int
rf_pack(const char *src, size_t n, char **ret, size_t *ret_len)
{
	return pack(NULL, 0, src, n, ret, ret_len);
}

int
rf_pack_with(const char *src, size_t n, const struct rf_pack_dict *dict, uint32_t id, char **ret,
	     size_t *ret_len)
{
	return pack(dict && dict->len ? dict : NULL, id, src, n, ret, ret_len);
}

int
rf_is_packed(const char *src, size_t n)
{
	return (n >= HEADER && memcmp(src, MAGIC, 4) == 0) ||
	       (n >= HEADER_DICT && memcmp(src, MAGIC_DICT, 4) == 0);
}

/* Decode the tokens of one frame into out[start..start + total) (out[0..start): the text a match
 * may reach back into, its dictionary's). @return 0 or -EINVAL. */
static int
unpack_frame(const unsigned char *s, size_t n, char *out, size_t start, size_t total)
{
	size_t o = start, i = 0, end = start + total;
	while (i < n) {
		unsigned b = s[i++];
		if (b < 0x80) {
			size_t k = b + 1;
			if (i + k > n || o + k > end)
				return -EINVAL;
			memcpy(out + o, s + i, k);
			i += k;
			o += k;
			continue;
		}
		size_t len = (b & 0x3f) + MIN_MATCH, dist;
		int wide = (b & 0x40) != 0;
		if (i + 2 + (size_t)wide > n)
			return -EINVAL;
		dist = s[i] | (size_t)s[i + 1] << 8 | (wide ? (size_t)s[i + 2] << 16 : 0);
		i += 2 + (size_t)wide;
		if (dist == 0 || dist > o || o + len > end)
			return -EINVAL;
		for (size_t k = 0; k < len; k++) /* may overlap: byte by byte */
			out[o + k] = out[o - dist + k];
		o += len;
	}
	return o == end ? 0 : -EINVAL;
}

/* The frame at src[0..n): its header's size, decoded and encoded lengths, and its dictionary's
 * id (dict false: none). -EINVAL when it is not one. */
static int
frame_header(const unsigned char *s, size_t n, size_t *hdr, uint64_t *dec, uint64_t *enc,
	     bool *dict, uint32_t *id)
{
	if (!rf_is_packed((const char *)s, n))
		return -EINVAL;
	*dict = memcmp(s, MAGIC_DICT, 4) == 0;
	*hdr = *dict ? HEADER_DICT : HEADER;
	*dec = get64(s + 4);
	*enc = get64(s + 12);
	*id = *dict ? (uint32_t)(s[20] | s[21] << 8 | s[22] << 16 | (uint32_t)s[23] << 24) : 0;
	return *dec > ((uint64_t)1 << 40) || *enc > n - *hdr ? -EINVAL : 0;
}

int
rf_unpack_with(const char *src, size_t n, rf_pack_dict_fn *dicts, void *userdata, char **ret,
	       size_t *ret_len)
{
	const unsigned char *s = (const unsigned char *)src;
	uint64_t total = 0, dec, enc;
	size_t at, hdr;
	bool dict;
	uint32_t id;
	if (!rf_is_packed(src, n))
		return -EINVAL;
	/* the frames, back to back */
	for (at = 0; at < n;) {
		if (frame_header(s + at, n - at, &hdr, &dec, &enc, &dict, &id) < 0)
			return -EINVAL;
		total += dec;
		at += hdr + (size_t)enc;
	}
	if (total > ((uint64_t)1 << 40))
		return -EINVAL;
	char *out = malloc((size_t)total + 1), *scratch = NULL;
	size_t o = 0;
	if (!out)
		return -ENOMEM;
	for (at = 0; at < n;) {
		frame_header(s + at, n - at, &hdr, &dec, &enc, &dict, &id);
		const struct rf_pack_dict *d = dict && dicts ? dicts(id, userdata) : NULL;
		int r = -EINVAL;
		if (!dict) {
			r = unpack_frame(s + at + hdr, (size_t)enc, out + o, 0, (size_t)dec);
		} else if (d && !(scratch = malloc(d->len + (size_t)dec + 1))) {
			r = -ENOMEM;
		} else if (d) { /* its dictionary's text, then its own */
			memcpy(scratch, d->text, d->len);
			r = unpack_frame(s + at + hdr, (size_t)enc, scratch, d->len, (size_t)dec);
			if (r == 0)
				memcpy(out + o, scratch + d->len, (size_t)dec);
			free(scratch);
			scratch = NULL;
		}
		if (r < 0) {
			free(out);
			return r;
		}
		o += (size_t)dec;
		at += hdr + (size_t)enc;
	}
	out[o] = 0;
	*ret = out;
	*ret_len = o;
	return 0;
}

int
rf_unpack(const char *src, size_t n, char **ret, size_t *ret_len)
{
	return rf_unpack_with(src, n, NULL, NULL, ret, ret_len);
}
