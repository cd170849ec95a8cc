/* JSON text exactly as Go's encoding/json.Marshal writes it, into a struct rf_strbuf: strings
 * with Go's HTML-safe escapes, integers, and whole jansson values (compact, object keys in the
 * json_t's order, reals in Go's shortest form). Used by the HTTP replies and by the extender
 * codec, which writes its large results straight into a buffer without building a tree. Pure
 * functions over the caller's buffer: safe from any thread. */
#ifndef RF_SERVER_GOJSON_H
#define RF_SERVER_GOJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config/strbuf.h"

/** Bytes json.Marshal copies into a string unchanged: printable ASCII and DEL but " \ < > &. */
extern const bool rf_gojson_plain[256];

/** Length of the longest prefix of s[0..n) made of rf_gojson_plain bytes (SSE2 where built). */
size_t rf_gojson_plain_prefix(const char *s, size_t n);

/**
 * Append s[0..n) as a Go JSON string with its quotes: `<` `>` `&` U+2028 U+2029 as \u003c etc.,
 * \b \f \n \r \t short escapes, other control characters as \u00XX, each invalid UTF-8 byte as
 * \ufffd. Failures are sticky in b (b->oom).
 */
void rf_gojson_string(struct rf_strbuf *b, const char *s, size_t n);

/** Write v in decimal into out (room for 20 bytes, no NUL); returns the length. */
size_t rf_gojson_fmt_int(char *out, long long v);

/** Append a decimal integer. */
void rf_gojson_int(struct rf_strbuf *b, long long v);

/** Append j as json.Marshal would print the same value; NULL j prints "null". */
void rf_gojson_value(struct rf_strbuf *b, const json_t *j);

/**
 * Serialise j exactly as Go's json.Marshal would print the same value: compact, object keys in the
 * json_t's order, `<` `>` `&` U+2028 U+2029 escaped as \u003c etc., \b \f \n \r \t short escapes,
 * other control characters as \u00XX, invalid UTF-8 as \ufffd, reals in Go's shortest form.
 * NULL j prints "null". Returns a malloc'd NUL-terminated string (free()), NULL on OOM;
 * *ret_len (optional) gets its length.
 */
char *rf_json_dump_go(const json_t *j, size_t *ret_len);

#endif
