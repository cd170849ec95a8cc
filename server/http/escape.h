/* Quoting strings for the text railfit writes: JSON strings (plain, or byte for byte as Go's
 * json.Marshal writes them) and Go's strconv.Quote for klog text lines. Output goes through the
 * caller's put function, so any buffer can take it. Pure functions, safe from any thread. */
#ifndef RF_SERVER_ESCAPE_H
#define RF_SERVER_ESCAPE_H

#include <stddef.h>

/** Appends n bytes of s to the caller's buffer ctx. */
typedef void rf_escape_put_fn(void *ctx, const char *s, size_t n);

enum rf_escape_flags {
	/**
	 * Go's encoding/json.Marshal (appendString with escapeHTML): also escape <, > and & as
	 * \u003c \u003e \u0026, U+2028 and U+2029 as \u2028 \u2029, backspace and form feed as \b
	 * and \f. Without it (klog's JSON, as zap writes it): only ", \, \n, \r, \t by name and
	 * other control characters as \u00XX.
	 */
	RF_ESCAPE_GO_JSON = 1 << 0,
};

/**
 * Write s[0..n) as a JSON string with its quotes. Invalid UTF-8 bytes become \ufffd, one per
 * byte; valid non-ASCII UTF-8 passes through. flags: enum rf_escape_flags.
 */
void rf_escape_json(const char *s, size_t n, unsigned flags, rf_escape_put_fn *put, void *ctx);

/**
 * Write s[0..n) as Go's strconv.Quote does for the characters that matter in logs: named
 * escapes (\a \b \f \n \r \t \v \" \\), \xNN for other control bytes, DEL and invalid UTF-8;
 * valid non-ASCII UTF-8 passes through.
 */
void rf_escape_go_quote(const char *s, size_t n, rf_escape_put_fn *put, void *ctx);

#endif
