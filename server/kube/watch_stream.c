/* Watch stream splitting and event decoding (see watch_stream.h). The buffer only ever holds one
 * incomplete line: complete lines are decoded as soon as their newline arrives and the remainder
 * is kept (it never holds a newline). Only new bytes are searched for a newline, so a large event
 * arriving in many small chunks costs linear time. Pure logic, owned by one thread. */
#include "server/kube/watch_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[RF_WATCH_TYPE_COUNT] = { "ADDED", "MODIFIED", "DELETED",
							     "BOOKMARK", "ERROR" };

const char *
rf_watch_type_name(enum rf_watch_type t)
{
	return (unsigned)t < RF_WATCH_TYPE_COUNT ? type_names[t] : "?";
}

void
rf_watch_event_release(struct rf_watch_event *ev)
{
	if (!ev)
		return;
	json_decref(ev->object);
	memset(ev, 0, sizeof(*ev));
}

static void
excerpt(char *out, size_t outlen, const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 5 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, outlen - n, "\\x%02x", c);
	}
	if (len > 0 && n + 5 >= outlen && outlen > 4) {
		n = outlen - 4;
		memcpy(out + n, "...", 3);
		n += 3;
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = 0;
}

int
rf_watch_event_decode(const char *line, size_t len, struct rf_watch_event *ret, char *err,
		      size_t errlen)
{
	json_error_t jerr;
	char ex[64];
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		excerpt(ex, sizeof(ex), line, len < 40 ? len : 40);
		snprintf(err, errlen, "watch event is not JSON (%s at column %d): \"%s\"",
			 jerr.text, jerr.column, ex);
		return strstr(jerr.text, "memory") ? -ENOMEM : -EPROTO;
	}
	struct rf_watch_event ev = { 0 };
	json_t *type = json_object_get(root, "type"), *obj = json_object_get(root, "object");
	if (!json_is_object(root)) {
		snprintf(err, errlen, "watch event is not a JSON object");
		goto garbage;
	}
	const char *t = json_string_value(type);
	int idx = -1;
	for (int i = 0; t && i < RF_WATCH_TYPE_COUNT; i++)
		if (!strcmp(t, type_names[i]))
			idx = i;
	if (idx < 0) {
		excerpt(ex, sizeof(ex), t ? t : "", t ? strlen(t) : 0);
		snprintf(err, errlen, "got invalid watch event type: \"%s\"", t ? ex : "(missing)");
		goto garbage;
	}
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "watch event %s has no object", t);
		goto garbage;
	}
	ev.type = (enum rf_watch_type)idx;
	ev.object = json_incref(obj);
	json_decref(root);
	ev.rv = json_string_value(
		json_object_get(json_object_get(ev.object, "metadata"), "resourceVersion"));
	if (ev.type == RF_WATCH_ERROR) {
		json_t *code = json_object_get(ev.object, "code");
		json_int_t c = json_is_integer(code) ? json_integer_value(code) : 0;
		ev.code = c > 0 && c < 1000 ? (int)c : 0;
		ev.reason = json_string_value(json_object_get(ev.object, "reason"));
		ev.message = json_string_value(json_object_get(ev.object, "message"));
	}
	*ret = ev;
	return 0;
garbage:
	json_decref(root);
	return -EPROTO;
}

void
rf_watch_stream_init(struct rf_watch_stream *s, size_t max_event)
{
	memset(s, 0, sizeof(*s));
	s->max = max_event ? max_event : RF_WATCH_MAX_EVENT;
}

void
rf_watch_stream_release(struct rf_watch_stream *s)
{
	rf_strbuf_release(&s->line);
}

/* Forget the incomplete line, keeping its memory. */
static void
clear_line(struct rf_watch_stream *s)
{
	s->line.len = 0;
	if (s->line.s)
		s->line.s[0] = '\0';
}

void
rf_watch_stream_reset(struct rf_watch_stream *s)
{
	clear_line(s);
	s->events = 0;
	s->failed = false;
	/* give back a buffer a huge event left behind, or one that failed to grow */
	if (s->line.cap > 1024 * 1024 || s->line.oom)
		rf_strbuf_release(&s->line);
}

size_t
rf_watch_stream_pending(const struct rf_watch_stream *s)
{
	const char *p = s->line.s;
	for (size_t i = 0; i < s->line.len; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return s->line.len;
	return 0;
}

static bool
blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

static int
dispatch(struct rf_watch_stream *s, const char *line, size_t n, rf_watch_event_cb *cb, void *ud,
	 char *err, size_t errlen)
{
	struct rf_watch_event ev;
	if (blank(line, n))
		return 0;
	int r = rf_watch_event_decode(line, n, &ev, err, errlen);
	if (r < 0)
		return r;
	s->events++;
	return cb(ud, &ev);
}

/* Append to the incomplete line: the buffer starts at 16 KiB and doubles, never past max + 1.
 * The caller has checked that the line stays within max. */
static int
append(struct rf_watch_stream *s, const char *data, size_t len)
{
	if (!s->line.cap) {
		s->line.max = s->max;
		rf_strbuf_reserve(&s->line, 16383 < s->max ? 16383 : s->max);
	}
	rf_strbuf_putn(&s->line, data, len);
	return s->line.oom ? -ENOMEM : 0;
}

int
rf_watch_stream_feed(struct rf_watch_stream *s, const char *data, size_t len, rf_watch_event_cb *cb,
		     void *userdata, char *err, size_t errlen)
{
	int r = 0;
	if (s->failed) {
		snprintf(err, errlen, "watch stream already failed");
		return -EPROTO;
	}
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len;
		if (s->line.len == 0 && nl) {
			/* a whole line inside this chunk: decode it in place, no copy */
			if (take > s->max)
				goto too_big;
			if ((r = dispatch(s, data, take, cb, userdata, err, errlen)) < 0)
				goto failed;
		} else {
			if (s->line.len + take > s->max)
				goto too_big;
			if ((r = append(s, data, take)) < 0)
				goto failed;
			if (nl) {
				r = dispatch(s, s->line.s, s->line.len, cb, userdata, err, errlen);
				clear_line(s);
				if (r < 0)
					goto failed;
			}
		}
		if (!nl)
			break;
		data += take + 1;
		len -= take + 1;
	}
	return 0;
too_big:
	snprintf(err, errlen, "watch event larger than %zu bytes", s->max);
	r = -EMSGSIZE;
failed:
	s->failed = true;
	clear_line(s);
	return r;
}
