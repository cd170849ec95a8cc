/* A validating JSON scanner over a byte span, for the extender's fast request decoding: it walks
 * the text without building a tree, hands out spans (pointer + length into the caller's bytes)
 * and accepts no more than jansson's json_loadb(..., JSON_REJECT_DUPLICATES) does (it is stricter:
 * anything it does not take is left to jansson, which then gives the exact error). It also says
 * whether a value is already written exactly as Go's json.Marshal would write it (so its bytes
 * can be echoed unchanged). Pure functions over the caller's state: safe from any thread. */
#ifndef RF_SERVER_JSCAN_H
#define RF_SERVER_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Objects and arrays nested deeper than this are not taken (jansson allows 2048). */
#define RF_JSCAN_MAX_DEPTH 512

enum rf_jscan_type {
	RF_JSCAN_ERROR = 0, /* not scanned: see rf_jscan.err */
	RF_JSCAN_OBJECT,
	RF_JSCAN_ARRAY,
	RF_JSCAN_STRING,
	RF_JSCAN_NUMBER,
	RF_JSCAN_TRUE,
	RF_JSCAN_FALSE,
	RF_JSCAN_NULL,
};

struct rf_jscan_span {
	const char *s; /* borrowed from the scanned text */
	size_t len;
};

struct rf_jscan {
	const char *buf; /* borrowed */
	size_t len, pos;
	/* Cleared when the text scanned since it was last set is not byte for byte what
	 * json.Marshal writes for the value it decodes to: whitespace between tokens, a number with
	 * a fraction or exponent, -0, a string escape Go writes differently (\/, \u0041, \u00E9,
	 * surrogate pairs, \u0008 for \b ...), a raw < > & U+2028 U+2029 in a string. */
	bool canon;
	/* 0, -EINVAL when the text is malformed or outside what this scanner takes (keys with
	 * escapes, nesting beyond RF_JSCAN_MAX_DEPTH, numbers jansson would reject), -ENOMEM.
	 * Sticky: every call after a failure fails. */
	int err;
	unsigned depth;
	/* Keys of the open objects, for duplicate detection (jansson's JSON_REJECT_DUPLICATES). */
	struct rf_jscan_span *keys; /* owned */
	size_t n_keys, cap_keys;
};

/** Start scanning buf[0..len) (no NUL needed). Release with rf_jscan_release(). */
void rf_jscan_init(struct rf_jscan *s, const char *buf, size_t len);
void rf_jscan_release(struct rf_jscan *s);

/** Skip whitespace (clears canon when there was any). */
void rf_jscan_ws(struct rf_jscan *s);

/** The next byte without consuming it, or -1 at the end (or after a failure). */
int rf_jscan_peek(const struct rf_jscan *s);

/**
 * Scan one value at the current position (no leading whitespace) and validate it completely,
 * nested objects' duplicate keys included. *ret_span (optional) gets its text.
 * @return its type, or RF_JSCAN_ERROR with s->err set.
 */
enum rf_jscan_type rf_jscan_value(struct rf_jscan *s, struct rf_jscan_span *ret_span);

/**
 * Scan a string at the current position: *ret_raw gets the text between the quotes, still
 * escaped; *ret_escaped whether it holds any backslash escape (decode with rf_jscan_unescape).
 */
bool rf_jscan_string(struct rf_jscan *s, struct rf_jscan_span *ret_raw, bool *ret_escaped);

/**
 * Decode the raw text of a string rf_jscan_string() accepted into out (room for len bytes: a
 * decoded string is never longer than its escaped form). Returns the decoded length.
 */
size_t rf_jscan_unescape(const char *raw, size_t len, char *out);

/**
 * Objects: rf_jscan_object_open() at '{' returns a frame (0 on failure, with s->err set);
 * then rf_jscan_object_next() until it returns false: true means *ret_key holds the next key
 * (unescaped: keys with escapes are not taken) and the position is at its value (after the
 * colon and whitespace); false means the object ended (s->err 0) or a failure. Duplicate keys
 * fail when the object ends.
 */
size_t rf_jscan_object_open(struct rf_jscan *s);
bool rf_jscan_object_next(struct rf_jscan *s, size_t frame, struct rf_jscan_span *ret_key);

/**
 * Arrays: rf_jscan_array_open() at '['; then rf_jscan_array_next() with a counter starting at 0
 * until it returns false (the array ended, or a failure in s->err); true means the position is at
 * the next element.
 */
bool rf_jscan_array_open(struct rf_jscan *s);
bool rf_jscan_array_next(struct rf_jscan *s, size_t *count);

#endif
