/* UTF-8 as Go and JSON see it: decoding with validation (no overlong forms, no surrogates,
 * nothing above U+10FFFF), encoding, counting and trimming a cut-off tail. Pure functions, safe
 * from any thread; the one copy every layer uses. */
#ifndef RF_CONFIG_UTF8_H
#define RF_CONFIG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/**
 * Decode the sequence at s, of which n >= 1 bytes may be read.
 * @return its length (1 to 4) with the code point in *ret_cp, or 0 when it is not valid UTF-8
 * (a stray or overlong byte, a surrogate, beyond U+10FFFF, or cut short by n); *ret_cp is then
 * untouched.
 */
size_t rf_utf8_decode(const char *s, size_t n, uint32_t *ret_cp);

/** Length of the longest prefix of s[0..len) that is valid UTF-8. */
size_t rf_utf8_valid_prefix(const char *s, size_t len);

/** Number of code points in valid UTF-8 (continuation bytes are not counted). */
size_t rf_utf8_count(const char *s, size_t len);

/** Encode cp (<= 0x10FFFF, not a surrogate) into out[4]; returns the byte count. */
size_t rf_utf8_encode(uint32_t cp, char *out);

/**
 * Cut a sequence that truncation (snprintf, %.Ns) left incomplete at the end of the
 * NUL-terminated s, so that the text stays valid for JSON. Complete text is left as it is.
 */
void rf_utf8_trim(char *s);

#endif
