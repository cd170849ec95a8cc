/* A List's items split out of its body as it streams in (see list_stream.h). */
#include "server/kube/list_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/grow.h"

enum {
	TOP,        /* the list's own fields: copied to the skeleton */
	ITEMS_OPEN, /* after "items":[ */
	ITEM,       /* inside an item, from item_start */
	AFTER_ITEM, /* after an item: ',' or ']' */
	ITEMS_NEXT, /* after a ',': the next item */
	RAW,        /* everything from here to the skeleton */
};

void
rf_list_stream_init(struct rf_list_stream *s, rf_list_item_cb *on_item, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->on_item = on_item;
	s->arg = arg;
}

void
rf_list_stream_release(struct rf_list_stream *s)
{
	free(s->buf);
	free(s->skel);
	memset(s, 0, sizeof(*s));
}

static int
skel_put(struct rf_list_stream *s, const char *p, size_t n)
{
	if (rf_grow(&s->skel, &s->skel_cap, s->skel_len + n + 1, 1) < 0)
		return s->err = -ENOMEM;
	memcpy(s->skel + s->skel_len, p, n);
	s->skel_len += n;
	s->skel[s->skel_len] = '\0';
	return 0;
}

/* The "]" that closes the items (at s->pos): into the skeleton, back to the list's own fields. */
static int
items_closed(struct rf_list_stream *s)
{
	s->pos++;
	if (skel_put(s, "]", 1) < 0)
		return s->err;
	s->state = TOP;
	s->depth = 1;
	s->key_next = false;
	return 0;
}

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One byte of the list's own fields (copied by the caller): follows strings and nesting, and
 * says when the value of a top-level "items" key opens. */
static bool
top_byte(struct rf_list_stream *s, char c)
{
	if (s->in_str) {
		if (s->esc) {
			s->esc = false;
			s->key_len = 6; /* an escape: not taken as "items" */
		} else if (c == '\\') {
			s->esc = true;
		} else if (c == '"') {
			s->in_str = false;
			if (s->depth == 1 && s->key_next) {
				s->items_key = s->key_len == 5 && memcmp(s->key, "items", 5) == 0;
				s->key_next = false;
			}
		} else if (s->key_len < 6) {
			s->key[s->key_len++] = c;
		}
		return false;
	}
	switch (c) {
	case '"':
		if (!(s->depth == 1 && s->key_next))
			s->items_key = false;
		s->in_str = true;
		s->key_len = 0;
		return false;
	case '{':
		if (s->depth == 1)
			s->items_key = false;
		s->key_next = s->depth == 0;
		s->depth++;
		return false;
	case '[':
		if (s->depth == 1 && s->items_key) {
			s->items_key = false;
			return true;
		}
		s->depth++;
		return false;
	case '}':
	case ']':
		if (s->depth)
			s->depth--;
		return false;
	case ',':
		if (s->depth == 1)
			s->key_next = true;
		return false;
	case ':':
		return false;
	default:
		if (s->depth == 1 && !is_ws(c))
			s->items_key = false; /* "items" holds something else than an array */
		return false;
	}
}

/* The bytes that matter inside an item: in a string, its end or an escape; elsewhere, a string
 * or a bracket. */
static const bool in_string[256] = { ['"'] = true, ['\\'] = true };
static const bool in_item[256] = {
	['"'] = true, ['{'] = true, ['}'] = true, ['['] = true, [']'] = true,
};

/* Scan buf from pos; hands out complete items and moves the rest to the skeleton. */
static int
scan(struct rf_list_stream *s)
{
	size_t top_from = s->pos; /* TOP bytes not yet copied */
	while (s->pos < s->len && !s->err) {
		char c = s->buf[s->pos];
		switch (s->state) {
		case TOP:
			s->pos++;
			if (top_byte(s, c)) {
				if (skel_put(s, s->buf + top_from, s->pos - top_from) < 0)
					return s->err;
				s->state = ITEMS_OPEN;
			}
			break;
		case ITEMS_OPEN:
		case ITEMS_NEXT:
			if (is_ws(c)) {
				s->pos++;
			} else if (c == '{') {
				s->state = ITEM;
				s->item_start = s->pos++;
				s->depth = 1;
				s->in_str = s->esc = false;
			} else if (c == ']' && s->state == ITEMS_OPEN) {
				if (items_closed(s) < 0)
					return s->err;
				top_from = s->pos;
			} else {
				/* not an object, or "[..., ]": the usual parse judges it */
				if (c == ']' && skel_put(s, ",", 1) < 0)
					return s->err;
				s->state = RAW;
				top_from = s->pos;
			}
			break;
		case ITEM:
			if (!s->esc) {
				/* most bytes of an item change nothing here: skip them */
				const unsigned char *u = (const unsigned char *)s->buf;
				const bool *stop = s->in_str ? in_string : in_item;
				size_t p = s->pos;
				while (p < s->len && !stop[u[p]])
					p++;
				s->pos = p;
				if (p == s->len)
					break;
				c = s->buf[p];
			}
			s->pos++;
			if (s->in_str) {
				if (s->esc)
					s->esc = false;
				else if (c == '\\')
					s->esc = true;
				else if (c == '"')
					s->in_str = false;
			} else if (c == '"') {
				s->in_str = true;
			} else if (c == '{' || c == '[') {
				s->depth++;
			} else if ((c == '}' || c == ']') && --s->depth == 0) {
				int r = s->on_item(s->arg, s->buf + s->item_start,
						   s->pos - s->item_start);
				if (r < 0)
					return s->err = r;
				if (r > 0) {
					s->state = RAW;
					top_from = s->item_start;
				} else {
					s->items++;
					s->state = AFTER_ITEM;
				}
			}
			break;
		case AFTER_ITEM:
			if (is_ws(c)) {
				s->pos++;
			} else if (c == ',') {
				s->pos++;
				s->state = ITEMS_NEXT;
			} else if (c == ']') {
				if (items_closed(s) < 0)
					return s->err;
				top_from = s->pos;
			} else {
				/* two items without a comma between them: the usual parse says so
				 */
				if (skel_put(s, "{}", 2) < 0)
					return s->err;
				s->state = RAW;
				top_from = s->pos;
			}
			break;
		case RAW:
			s->pos = s->len;
			break;
		}
	}
	if (s->err)
		return s->err;
	/* keep only what is still needed: an item's start, nothing else */
	size_t keep = s->len;
	if (s->state == TOP || s->state == RAW) {
		if (skel_put(s, s->buf + top_from, s->len - top_from) < 0)
			return s->err;
	} else if (s->state == ITEM) {
		keep = s->item_start;
	}
	memmove(s->buf, s->buf + keep, s->len - keep);
	s->len -= keep;
	s->pos -= keep;
	s->item_start -= s->state == ITEM ? keep : 0;
	return 0;
}

int
rf_list_stream_feed(struct rf_list_stream *s, const char *data, size_t len)
{
	if (s->err)
		return s->err;
	if (rf_grow(&s->buf, &s->cap, s->len + len, 1) < 0)
		return s->err = -ENOMEM;
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	return scan(s);
}

int
rf_list_stream_finish(struct rf_list_stream *s)
{
	if (s->err)
		return s->err;
	/* an item cut off by the end of the body: the usual parse reports it */
	if (s->state == ITEM && skel_put(s, s->buf + s->item_start, s->len - s->item_start) < 0)
		return s->err;
	s->len = s->pos = 0;
	if (!s->skel && skel_put(s, "", 0) < 0)
		return s->err;
	return 0;
}
