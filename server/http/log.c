/* klog-compatible logging (DESIGN section 3, STYLE 3.6).
 *
 * Owns: the process-wide log format and verbosity (atomics, set once by rf_log_setup() before
 * threads start, read by every thread). Each call formats its whole line into a local buffer (stack
 * first, heap when it grows, capped at RF_LOG_LINE_MAX) and emits it with a single write(2) to
 * stderr, so lines from MHD pool threads never interleave. No locks.
 *
 * Text lines follow klog's header and Kubernetes structured logging:
 *   I1129 12:00:00.000000    1234 file.c:42] "message" key="value"
 * message and string values are quoted and escaped like Go's strconv.Quote; values that read as
 * integers or booleans are bare, as klog writes Go ints and bools. JSON lines follow the
 * component-base JSON format ("ts" is milliseconds since the epoch, as a float) plus "level":
 *   {"ts":1732881600000.123,"level":"info","v":0,"caller":"file.c:42","msg":"...","key":"value"}
 */
#include "server/http/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/strbuf.h"
#include "server/http/escape.h"

#define RF_LOG_LINE_MAX (64 * 1024)

static atomic_int log_format = RF_LOG_TEXT;
static atomic_int log_verbosity = 0;

void
rf_log_setup(enum rf_log_format fmt, int verbosity)
{
	atomic_store(&log_format, (int)fmt);
	atomic_store(&log_verbosity, verbosity < 0 ? 0 : verbosity);
}

int
rf_log_verbosity(void)
{
	return atomic_load_explicit(&log_verbosity, memory_order_relaxed);
}

enum rf_log_format
rf_log_format(void)
{
	return (enum rf_log_format)atomic_load(&log_format);
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* An integer as Go's %v writes one (no leading zeros, no '+'), or true/false. Floats stay quoted:
 * a value such as a version "1.34" cannot be told from one, and quoting is the safe side. */
bool
rf_log_value_is_bare(const char *v)
{
	if (!v || !*v)
		return false;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return true;
	const char *p = v;
	if (*p == '-')
		p++;
	if (*p == '0')
		return p[1] == '\0' && p == v; /* "-0" is no Go integer */
	if (!is_digit(*p))
		return false;
	while (is_digit(*p))
		p++;
	return *p == '\0';
}

static void
line_put(void *ctx, const char *s, size_t n)
{
	rf_strbuf_putn(ctx, s, n);
}

/* Go strconv.Quote for the characters that matter in logs (klog's text format). */
static void
put_go_quoted(struct rf_strbuf *l, const char *s)
{
	rf_escape_go_quote(s, strlen(s), line_put, l);
}

/* A JSON string as klog's JSON format (zap) writes it. */
static void
put_json_string(struct rf_strbuf *l, const char *s)
{
	rf_escape_json(s, strlen(s), 0, line_put, l);
}

/* Keys are programmer-chosen identifiers; keep only characters that cannot break the line. */
static void
put_key(struct rf_strbuf *l, const char *k)
{
	for (const char *p = k; *p; p++) {
		unsigned char c = (unsigned char)*p;
		rf_strbuf_putc(l, (c <= ' ' || c == '=' || c == '"' || c == 0x7f) ? '_' : (char)c);
	}
}

static const char *
base_name(const char *file)
{
	if (!file)
		return "???";
	const char *slash = strrchr(file, '/');
	return slash ? slash + 1 : file;
}

static void
write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void
emit(enum rf_log_level lvl, int v, const char *file, int line_no, const char *msg,
     const char *const *kv, size_t n_kv)
{
	/* A line starts on the stack, moves to the heap when it grows, and is cut (and marked)
	 * at RF_LOG_LINE_MAX or on OOM. */
	char stack[1024];
	struct rf_strbuf l;
	rf_strbuf_init_with(&l, stack, sizeof(stack), RF_LOG_LINE_MAX);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	const char *caller = base_name(file);
	if (!msg)
		msg = "";

	if (atomic_load_explicit(&log_format, memory_order_relaxed) == RF_LOG_JSON) {
		static const char *const names[] = { "error", "warning", "info" };
		double ms = (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
		rf_strbuf_printf(&l, "{\"ts\":%.3f,\"level\":\"%s\",\"v\":%d,\"caller\":", ms,
				 names[lvl <= RF_LOG_INFO ? lvl : RF_LOG_INFO], v);
		char cbuf[256];
		snprintf(cbuf, sizeof(cbuf), "%s:%d", caller, line_no);
		put_json_string(&l, cbuf);
		rf_strbuf_puts(&l, ",\"msg\":");
		put_json_string(&l, msg);
		for (size_t i = 0; i + 1 < n_kv; i += 2) {
			rf_strbuf_putc(&l, ',');
			put_json_string(&l, kv[i]);
			rf_strbuf_putc(&l, ':');
			if (rf_log_value_is_bare(kv[i + 1]))
				rf_strbuf_puts(&l, kv[i + 1]);
			else
				put_json_string(&l, kv[i + 1] ? kv[i + 1] : "<nil>");
		}
		rf_strbuf_putc(&l, '}');
	} else {
		static const char letters[] = { 'E', 'W', 'I' };
		struct tm tm;
		localtime_r(&ts.tv_sec, &tm);
		rf_strbuf_printf(&l, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] ",
				 letters[lvl <= RF_LOG_INFO ? lvl : RF_LOG_INFO], tm.tm_mon + 1,
				 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
				 (int)getpid(), caller, line_no);
		put_go_quoted(&l, msg);
		for (size_t i = 0; i + 1 < n_kv; i += 2) {
			rf_strbuf_putc(&l, ' ');
			put_key(&l, kv[i]);
			rf_strbuf_putc(&l, '=');
			if (kv[i + 1] && !rf_log_value_is_bare(kv[i + 1]))
				put_go_quoted(&l, kv[i + 1]);
			else
				rf_strbuf_puts(&l, kv[i + 1] ? kv[i + 1] : "<nil>");
		}
	}

	if (l.oom) {
		/* Make room for the marker and the newline inside what we already have. */
		static const char mark[] = " [truncated]";
		size_t need = sizeof(mark) - 1 + 1;
		size_t room = l.cap < RF_LOG_LINE_MAX ? l.cap : RF_LOG_LINE_MAX;
		if (l.len + need > room)
			l.len = room > need ? room - need : 0;
		memcpy(l.s + l.len, mark, sizeof(mark) - 1);
		l.len += sizeof(mark) - 1;
		l.s[l.len++] = '\n';
	} else {
		rf_strbuf_putc(&l, '\n');
		if (l.oom)
			l.s[l.len - 1] = '\n';
	}
	write_all(l.s, l.len);
	rf_strbuf_release(&l);
}

static bool
enabled(int v)
{
	return v <= rf_log_verbosity();
}

#define RF_LOG_MAX_KV 64

void
rf_log_kv(enum rf_log_level lvl, int v, const char *file, int line, const char *msg, ...)
{
	if (lvl == RF_LOG_INFO && !enabled(v))
		return;
	const char *kv[RF_LOG_MAX_KV];
	size_t n = 0;
	va_list ap;
	va_start(ap, msg);
	for (;;) {
		const char *k = va_arg(ap, const char *);
		if (!k)
			break;
		const char *val = va_arg(ap, const char *);
		if (n + 2 <= RF_LOG_MAX_KV) {
			kv[n++] = k;
			kv[n++] = val;
		}
	}
	va_end(ap);
	emit(lvl, v, file, line, msg, kv, n);
}

void
rf_log_fmt(enum rf_log_level lvl, int v, const char *file, int line, const char *fmt, ...)
{
	if (lvl == RF_LOG_INFO && !enabled(v))
		return;
	/* Not an rf_strbuf on purpose: this is no growing buffer but one measured vsnprintf and one
	 * exact allocation, and its failure modes differ from the strbuf's. A message longer than
	 * the line is cut at RF_LOG_LINE_MAX (a capped strbuf would drop it whole), and on OOM the
	 * first 511 bytes already on the stack are kept (a strbuf would be left empty). */
	char stack[512];
	char *msg = stack;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(stack, sizeof(stack), fmt, ap);
	va_end(ap);
	if (n < 0) {
		stack[0] = '\0';
	} else if ((size_t)n >= sizeof(stack)) {
		size_t want = (size_t)n + 1 > RF_LOG_LINE_MAX ? RF_LOG_LINE_MAX : (size_t)n + 1;
		char *heap = malloc(want);
		if (heap) {
			va_start(ap, fmt);
			vsnprintf(heap, want, fmt, ap);
			va_end(ap);
			msg = heap;
		}
	}
	emit(lvl, v, file, line, msg, NULL, 0);
	if (msg != stack)
		free(msg);
}
