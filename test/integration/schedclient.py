"""A client that talks to an extender exactly like kube-scheduler does.

Python 3 standard library only. What it reproduces (reference/extender-protocol.md sections 1, 2, 7):

* requests: ``POST <urlPrefix>/<verb>`` over HTTP/1.1 with keep-alive, headers in Go's order
  (``Host``, ``User-Agent: Go-http-client/1.1``, ``Content-Length``, ``Content-Type:
  application/json``, ``Accept-Encoding: gzip``), never chunked, no ``Expect``; the body is
  ``json.Marshal`` output: compact, struct fields in Go order, ``null`` for the unused field,
  map keys sorted bytewise, ``<`` ``>`` ``&`` U+2028 U+2029 escaped, Go's float format;
  Pods without ``kind``/``apiVersion``/``metadata.managedFields``, Nodes without
  ``kind``/``apiVersion``, a NodeList as ``{"metadata":{},"items":[...]}``;
  both ``nodeCacheCapable`` modes, for filter, prioritize, preempt and bind.
* responses: the status must be exactly 200; the first JSON value of the body is decoded (trailing
  bytes ignored, empty body is ``EOF``, ``null`` is a zero result), keys match struct fields
  case-insensitively, type mismatches are errors (``Score`` must be an integer), gzip bodies are
  unpacked; then the verb's own checks (``Error`` field, NodeNames subset in cache mode, preemption
  victims mapped back by UID). Errors carry the strings kube-scheduler would log.

Plus helpers to run a ``railfit`` binary (path from ``$RAILFIT``) on a free port, wait for
``/healthz``, collect its stderr and check it is still alive.
"""

import copy
import decimal
import gzip
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

__all__ = [
    "SchedulerError", "ExtenderClient", "FilterResult", "Response", "Railfit", "go_json",
    "go_float", "snapshot_with_pending", "strip_pod", "strip_node", "free_port", "decode_first_value", "load_example",
]

DEFAULT_TIMEOUT = 5.0  # DefaultExtenderTimeout
USER_AGENT = "Go-http-client/1.1"
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class SchedulerError(Exception):
    """An error kube-scheduler would get from the extender; str() is its message."""


# ---------------------------------------------------------------------------------------------
# Encoding, as Go's encoding/json.Marshal


_SURROGATE = re.compile("[\ud800-\udfff]")


def _go_string(s):
    s = _SURROGATE.sub("\ufffd", s)  # invalid UTF-8 becomes U+FFFD in Go
    out = json.dumps(s, ensure_ascii=False)
    # Python already writes \b \f \n \r \t and \u00XX for other controls, as Go 1.22+ does.
    return (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def go_float(f):
    """Go's float64 encoding: shortest digits; 'f' format in [1e-6, 1e21), else 'e'."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError("json: unsupported value: %r" % f)
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    sign = "-" if f < 0 else ""
    a = abs(f)
    t = decimal.Decimal(repr(a)).normalize().as_tuple()
    digits = "".join(str(d) for d in t.digits)
    e = len(digits) - 1 + t.exponent  # decimal exponent of the first digit
    if a < 1e-6 or a >= 1e21:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        if e < 0 and -e < 10:
            return "%s%se-%d" % (sign, mant, -e)
        return "%s%se%s%02d" % (sign, mant, "-" if e < 0 else "+", abs(e))
    if e < 0:
        return sign + "0." + "0" * (-e - 1) + digits
    ip = e + 1
    if len(digits) <= ip:
        return sign + digits + "0" * (ip - len(digits))
    return sign + digits[:ip] + "." + digits[ip:]


class GoMap(dict):
    """A Go map: keys are written sorted bytewise (plain dicts keep their order, like structs)."""


def _go_encode(v, out):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(go_float(v))
    elif isinstance(v, str):
        out.append(_go_string(v))
    elif isinstance(v, dict):
        items = v.items()
        if isinstance(v, GoMap):
            items = sorted(items, key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
        out.append("{")
        first = True
        for k, val in items:
            if not first:
                out.append(",")
            first = False
            out.append(_go_string(str(k)))
            out.append(":")
            _go_encode(val, out)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, val in enumerate(v):
            if i:
                out.append(",")
            _go_encode(val, out)
        out.append("]")
    else:
        raise TypeError("cannot encode %r" % type(v))


def go_json(v):
    """Compact bytes exactly as json.Marshal prints the same value (no trailing newline)."""
    out = []
    _go_encode(v, out)
    return "".join(out).encode("utf-8")


def snapshot_with_pending(binary, tmp, nodes, seed, used, ns):
    """A `railfit gen-cluster` snapshot of `nodes` nodes with one pending pod NS-p asking for
    claim NS-c (1 GPU + 1 RDMA NIC on one PCIe root, test/bench/watch_bench.py's shapes), written
    to tmp/cluster.json. Returns (path, the pending Pod, the node names in snapshot order)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
    from watch_bench import claim, pod
    snap = json.loads(subprocess.run([binary, "gen-cluster", "--nodes", str(nodes), "--seed",
                                      str(seed), "--used", str(used)], check=True,
                                     stdout=subprocess.PIPE).stdout)
    target = pod(ns + "-p", ns, ns + "-c")
    snap["items"] += [claim(ns + "-c", ns), target]
    path = os.path.join(tmp, "cluster.json")
    with open(path, "w") as f:
        json.dump(snap, f)
    names = [o["metadata"]["name"] for o in snap["items"] if o["kind"] == "Node"]
    return path, target, names


def strip_pod(pod):
    """A Pod as the scheduler's informer holds it: no TypeMeta, no managedFields."""
    p = copy.deepcopy(pod)
    p.pop("kind", None)
    p.pop("apiVersion", None)
    md = p.get("metadata")
    if isinstance(md, dict):
        md.pop("managedFields", None)
    return p


def strip_node(node):
    """A Node as cached by kube-scheduler: no TypeMeta (managedFields are kept)."""
    n = copy.deepcopy(node)
    n.pop("kind", None)
    n.pop("apiVersion", None)
    return n


def _node_name(n):
    if isinstance(n, str):
        return n
    return n["metadata"]["name"]


def _pod_uid(p):
    return ((p.get("metadata") or {}).get("uid")) or ""


def load_example(name, shared_dir=None):
    """Raw bytes of a file from reference/extender-examples (or test/data/extender)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "..", "data", "extender", name)]
    shared = shared_dir or os.environ.get("RF_SHARED_DIR")
    if shared:
        candidates.append(os.path.join(shared, "reference", "extender-examples", name))
    for c in candidates:
        if os.path.exists(c):
            with open(c, "rb") as f:
                return f.read()
    raise FileNotFoundError(name)


# ---------------------------------------------------------------------------------------------
# Decoding, as json.NewDecoder(resp.Body).Decode(&result)


class _Pairs(list):
    """A JSON object as its ordered (key, value) pairs, duplicates kept."""


class _Float(str):
    """A JSON number with a fraction or exponent, kept as its literal text."""


def _reject_constant(name):
    raise ValueError("invalid character %r looking for beginning of value" % name[0])


_decoder = json.JSONDecoder(object_pairs_hook=_Pairs, parse_float=_Float,
                            parse_constant=_reject_constant)


def decode_first_value(body):
    """The first JSON value of body, with Go's errors: EOF, unexpected EOF, invalid character."""
    text = body.decode("utf-8", errors="replace")
    i = 0
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    if i == len(text):
        raise SchedulerError("EOF")
    try:
        value, _ = _decoder.raw_decode(text, i)
    except ValueError as e:
        pos = getattr(e, "pos", None)
        if pos is None:
            raise SchedulerError(str(e)) from None
        if pos >= len(text) or str(getattr(e, "msg", "")).startswith("Unterminated string"):
            raise SchedulerError("unexpected EOF") from None
        raise SchedulerError("invalid character %r looking for beginning of value"
                             % text[pos]) from None
    return value


def _fold(s):
    """Go's foldName: ASCII upper-casing plus the runes that fold onto ASCII letters."""
    out = []
    for ch in s:
        if "a" <= ch <= "z":
            out.append(ch.upper())
        elif ch in "\u0130\u0131":
            out.append("I")
        elif ch == "\u017f":
            out.append("S")
        elif ch == "\u212a":
            out.append("K")
        else:
            out.append(ch)
    return "".join(out)


def _what(v):
    if isinstance(v, _Pairs):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, str) and not isinstance(v, _Float):
        return "string"
    if isinstance(v, bool):
        return "bool"
    return "number"


class _Ctx:
    def __init__(self, struct="", path=()):
        self.struct = struct
        self.path = path

    def field(self, struct, name):
        return _Ctx(struct, self.path + (name,))

    def error(self, v, gotype, literal=False):
        what = _what(v)
        if literal:
            what = "number " + (str(v) if not isinstance(v, bool) else "")
        if self.struct:
            return SchedulerError("json: cannot unmarshal %s into Go struct field %s.%s of type %s"
                                  % (what, self.struct, ".".join(self.path), gotype))
        return SchedulerError("json: cannot unmarshal %s into Go value of type %s"
                              % (what, gotype))


def _dec_string(v, ctx):
    if v is None:
        return ""
    if isinstance(v, str) and not isinstance(v, _Float):
        return str(v)
    raise ctx.error(v, "string")


def _dec_int64(v, ctx):
    if v is None:
        return 0
    if isinstance(v, bool):
        raise ctx.error(v, "int64")
    if isinstance(v, _Float):
        raise ctx.error(v, "int64", literal=True)
    if isinstance(v, int):
        if not INT64_MIN <= v <= INT64_MAX:
            raise ctx.error(v, "int64", literal=True)
        return v
    raise ctx.error(v, "int64")


def _dec_struct(v, ctx, struct, fields):
    """fields: Go field name -> decoder(value, ctx). Returns dict of decoded fields; None for
    JSON null (a nil pointer)."""
    if v is None:
        return None
    if not isinstance(v, _Pairs):
        raise ctx.error(v, "v1." + struct)
    by_name = dict(fields)
    by_fold = {_fold(k): k for k in fields}
    out = {}
    for k, val in v:
        name = k if k in by_name else by_fold.get(_fold(k))
        if name is None:
            continue  # unknown keys are ignored
        out[name] = by_name[name](val, ctx.field(struct, name))
    return out


def _dec_slice(elem, gotype):
    def dec(v, ctx):
        if v is None:
            return None
        if not isinstance(v, list) or isinstance(v, _Pairs):
            raise ctx.error(v, gotype)
        return [elem(x, ctx) for x in v]
    return dec


def _dec_map(elem, gotype):
    def dec(v, ctx):
        if v is None:
            return None
        if not isinstance(v, _Pairs):
            raise ctx.error(v, gotype)
        out = {}
        for k, val in v:
            out[k] = elem(val, ctx)  # a repeated key: the last one wins
        return out
    return dec


def _dec_node(v, ctx):
    """A v1.Node: kept as plain JSON, with metadata.name checked to be a string."""
    if v is None:
        return {}
    if not isinstance(v, _Pairs):
        raise ctx.error(v, "v1.Node")
    node = _plain(v)
    md = _ci_get(v, "metadata")
    if md is not None:
        if not isinstance(md, _Pairs):
            raise ctx.field("Node", "metadata").error(md, "v1.ObjectMeta")
        name = _ci_get(md, "name")
        if name is not None:
            _dec_string(name, ctx.field("ObjectMeta", "metadata.name"))
    return node


def _dec_nodelist(v, ctx):
    s = _dec_struct(v, ctx, "NodeList", {
        "metadata": lambda x, c: _plain(x),
        "items": _dec_slice(_dec_node, "[]v1.Node"),
    })
    return s


def _ci_get(pairs, key):
    """Go-style lookup in decoded pairs: exact or folded match, the last matching key wins."""
    found = None
    fk = _fold(key)
    for k, v in pairs:
        if k == key or _fold(k) == fk:
            found = v
    return found


def _plain(v):
    """_Pairs/_Float back to plain dicts/floats (first duplicate loses, as in Go)."""
    if isinstance(v, _Pairs):
        return {k: _plain(x) for k, x in v}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, _Float):
        return float(v)
    return v


_FILTER_RESULT = {
    "Nodes": _dec_nodelist,
    "NodeNames": _dec_slice(_dec_string, "[]string"),
    "FailedNodes": _dec_map(_dec_string, "v1.FailedNodesMap"),
    "FailedAndUnresolvableNodes": _dec_map(_dec_string, "v1.FailedNodesMap"),
    "Error": _dec_string,
}

_HOST_PRIORITY = {"Host": _dec_string, "Score": _dec_int64}

_META_POD = {"UID": _dec_string}
_META_VICTIMS = {
    "Pods": _dec_slice(lambda v, c: _dec_struct(v, c, "MetaPod", _META_POD), "[]*v1.MetaPod"),
    "NumPDBViolations": _dec_int64,
}
_PREEMPTION_RESULT = {
    "NodeNameToMetaVictims": _dec_map(lambda v, c: _dec_struct(v, c, "MetaVictims", _META_VICTIMS),
                                      "map[string]*v1.MetaVictims"),
}
_BINDING_RESULT = {"Error": _dec_string}


def _go_errorf(msg):
    """fmt.Errorf(msg) with no arguments, as kube-scheduler calls it on the Error field."""
    out = []
    i = 0
    while i < len(msg):
        c = msg[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < len(msg) and msg[j] in "+-# 0":  # flags
            j += 1
        while j < len(msg) and msg[j].isdigit():  # width
            j += 1
        if j < len(msg) and msg[j] == ".":  # precision
            j += 1
            while j < len(msg) and msg[j].isdigit():
                j += 1
        if j >= len(msg):
            out.append("%!(NOVERB)")
            break
        v = msg[j]
        out.append("%" if v == "%" and j == i + 1 else "%%!%s(MISSING)" % v)
        i = j + 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Transport: HTTP/1.1 with keep-alive, body written while the response is read (as Go does)


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value)
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return "Response(%d, %r)" % (self.status, self.body[:200])


class _Closed(Exception):
    """The connection closed before any byte of a response arrived."""


class _Conn:
    def __init__(self, host, port, timeout):
        self.keep = False
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb")
        self.requests = 0

    def close(self):
        try:
            self.rfile.close()
        finally:
            self.sock.close()

    def _readline(self, limit=65536):
        line = self.rfile.readline(limit + 1)
        if len(line) > limit:
            raise SchedulerError("net/http: response header too long")
        return line

    def roundtrip(self, head, body, deadline):
        """Send head+body (the body from a helper thread) and read one response."""
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        write_error = []

        def write():
            try:
                self.sock.sendall(head + body if len(body) < 65536 else head)
                if len(body) >= 65536:
                    view = memoryview(body)
                    for off in range(0, len(body), 1 << 20):
                        self.sock.sendall(view[off:off + (1 << 20)])
            except OSError as e:
                write_error.append(e)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            try:
                status_line = self._readline()
            except (ConnectionResetError, BrokenPipeError):
                status_line = b""
            if not status_line:
                writer.join(1)
                raise _Closed()
            resp = self._read_rest(status_line, deadline)
        finally:
            writer.join(min(0.5, max(0.0, deadline - time.monotonic())))
            if writer.is_alive():
                # Answered before the body was taken (e.g. an early 413): this connection is
                # done; closing it releases the writer.
                self.keep = False
                try:
                    self.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                writer.join(5)
        self.requests += 1
        return resp

    def _read_rest(self, status_line, deadline):
        parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise SchedulerError("malformed HTTP response %r" % status_line[:80])
        status = int(parts[1])
        reason = parts[2] if len(parts) > 2 else ""
        headers = []
        while True:
            line = self._readline()
            if not line:
                raise SchedulerError("unexpected EOF")
            if line in (b"\r\n", b"\n"):
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers.append((k.strip(), v.strip()))
        hmap = {k.lower(): v for k, v in headers}
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        if "chunked" in hmap.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size_line = self._readline()
                if not size_line:
                    raise SchedulerError("unexpected EOF")
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self._readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.read(2)
            body = b"".join(chunks)
            self.keep = True
        elif "content-length" in hmap:
            n = int(hmap["content-length"])
            body = self.rfile.read(n)
            if len(body) != n:
                raise SchedulerError("unexpected EOF")
            self.keep = True
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
            self.keep = True
        else:
            body = self.rfile.read()
            self.keep = False
        if hmap.get("connection", "").lower() == "close":
            self.keep = False
        return Response(status, reason, headers, body)


class ExtenderClient:
    """One configured extender, as kube-scheduler's HTTPExtender sees it.

    url_prefix: e.g. "http://127.0.0.1:8888" or "http://127.0.0.1:8888/scheduler".
    node_cache_capable: the extender's nodeCacheCapable setting.
    """

    def __init__(self, url_prefix, node_cache_capable=True, timeout=DEFAULT_TIMEOUT,
                 filter_verb="filter", prioritize_verb="prioritize", preempt_verb="preempt",
                 bind_verb="bind", weight=1):
        self.url_prefix = url_prefix
        self.node_cache_capable = node_cache_capable
        self.timeout = timeout
        self.filter_verb = filter_verb
        self.prioritize_verb = prioritize_verb
        self.preempt_verb = preempt_verb
        self.bind_verb = bind_verb
        self.weight = weight
        u = urllib.parse.urlsplit(url_prefix)
        if u.scheme != "http":
            raise ValueError("only http:// is supported by this client")
        self.host = u.hostname
        self.port = u.port or 80
        self.hostport = u.netloc
        self.base_path = u.path
        self._conn = None
        self._lock = threading.Lock()
        self.connections_opened = 0
        self.last_request = None  # bytes of the last request head + body

    # -- transport -------------------------------------------------------------------------

    def url_for(self, verb):
        return self.url_prefix.rstrip("/") + "/" + verb

    def close(self):
        with self._lock:
            if self._conn:
                self._conn.close()
                self._conn = None

    def _head(self, method, path, body, content_type="application/json", extra=()):
        lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % self.hostport,
                 "User-Agent: %s" % USER_AGENT]
        if body is not None and (len(body) > 0 or method in ("POST", "PUT", "PATCH")):
            lines.append("Content-Length: %d" % len(body))
        if content_type is not None and body is not None:
            lines.append("Content-Type: %s" % content_type)
        for k, v in extra:
            lines.append("%s: %s" % (k, v))
        lines.append("Accept-Encoding: gzip")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def request(self, method, path, body=None, content_type="application/json", extra=(),
                timeout=None):
        """One HTTP exchange on the kept-alive connection. Returns a Response, or raises
        SchedulerError with Go's transport error text."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        head = self._head(method, path, body, content_type, extra)
        payload = body or b""
        self.last_request = head + payload
        url = "http://%s%s" % (self.hostport, path)
        with self._lock:
            for attempt in (0, 1):
                reused = self._conn is not None
                try:
                    if self._conn is None:
                        self._conn = _Conn(self.host, self.port, timeout)
                        self.connections_opened += 1
                    resp = self._conn.roundtrip(head, payload, deadline)
                except _Closed:
                    self._drop()
                    # Go retries a request whose reused connection was closed before answering.
                    if reused and attempt == 0:
                        continue
                    raise SchedulerError('%s "%s": EOF' % (method.capitalize(), url)) from None
                except socket.timeout:
                    self._drop()
                    raise SchedulerError(
                        '%s "%s": context deadline exceeded (Client.Timeout exceeded while '
                        'awaiting headers)' % (method.capitalize(), url)) from None
                except ConnectionRefusedError:
                    self._drop()
                    raise SchedulerError('%s "%s": dial tcp %s: connect: connection refused'
                                         % (method.capitalize(), url, self.hostport)) from None
                except (ConnectionResetError, BrokenPipeError) as e:
                    self._drop()
                    if reused and attempt == 0:
                        continue
                    raise SchedulerError('%s "%s": %s' % (method.capitalize(), url, e)) from None
                if not getattr(self._conn, "keep", False):
                    self._drop()
                if (resp.header("Content-Encoding") or "").lower() == "gzip":
                    resp.body = gzip.decompress(resp.body)
                return resp
        raise SchedulerError("unreachable")

    def _drop(self):
        if self._conn:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None

    def post_raw(self, path, body, content_type="application/json", extra=(), timeout=None):
        return self.request("POST", path, body, content_type, extra, timeout)

    def get(self, path, timeout=None):
        return self.request("GET", path, None, None, (), timeout)

    def send(self, verb, args):
        """HTTPExtender.send: POST json.Marshal(args) to urlPrefix/verb; status must be 200.
        Returns the first JSON value of the body (decoded pairs)."""
        url = self.url_for(verb)
        path = urllib.parse.urlsplit(url).path
        resp = self.request("POST", path, go_json(args))
        if resp.status != 200:
            raise SchedulerError("failed %s with extender at URL %s, code %d"
                                 % (verb, url, resp.status))
        return decode_first_value(resp.body)

    # -- verbs ---------------------------------------------------------------------------

    def filter_args(self, pod, nodes):
        """ExtenderArgs as kube-scheduler builds them. nodes: Node objects (names suffice in
        cache mode)."""
        if self.node_cache_capable:
            return {"Pod": strip_pod(pod), "Nodes": None,
                    "NodeNames": [_node_name(n) for n in nodes]}
        items = []
        for n in nodes:
            if isinstance(n, str):
                raise ValueError("nodeCacheCapable=false needs Node objects, got %r" % n)
            items.append(strip_node(n))
        return {"Pod": strip_pod(pod), "Nodes": {"metadata": {}, "items": items},
                "NodeNames": None}

    def filter(self, pod, nodes):
        """HTTPExtender.Filter. Returns a FilterResult; raises SchedulerError."""
        names = [_node_name(n) for n in nodes]
        raw = self.send(self.filter_verb, self.filter_args(pod, nodes))
        r = _dec_struct(raw, _Ctx(), "ExtenderFilterResult", _FILTER_RESULT)
        if r is None:  # body `null`: a zero result, zero survivors
            r = {}
        if r.get("Error"):
            raise SchedulerError(_go_errorf(r["Error"]))
        survivors = []
        node_names = r.get("NodeNames")
        nodes_list = r.get("Nodes")
        if self.node_cache_capable and node_names is not None:
            known = set(names)
            for n in node_names:
                if n not in known:
                    raise SchedulerError(
                        'extender "%s" claims a filtered node "%s" which is not found in the '
                        'input node list' % (self.url_prefix, n))
                survivors.append(n)
        elif nodes_list is not None:
            for item in nodes_list.get("items") or []:
                survivors.append(((item.get("metadata") or {}).get("name")) or "")
        return FilterResult(survivors, r.get("FailedNodes") or {},
                            r.get("FailedAndUnresolvableNodes") or {},
                            nodes_list.get("items") if nodes_list else None)

    def prioritize(self, pod, nodes):
        """HTTPExtender.Prioritize: a list of (host, score). kube-scheduler ignores errors here
        (it logs them); this client raises them so that tests see them."""
        raw = self.send(self.prioritize_verb, self.filter_args(pod, nodes))
        lst = _dec_slice(lambda v, c: _dec_struct(v, _Ctx(), "HostPriority", _HOST_PRIORITY),
                         "v1.HostPriorityList")(raw, _Ctx())
        out = []
        for hp in lst or []:
            hp = hp or {}
            out.append((hp.get("Host", ""), hp.get("Score", 0)))
        return out

    def combined_scores(self, pod, nodes):
        """What prioritizeNodes adds per feasible node: Score x weight x 10 (duplicates add up;
        hosts outside the feasible set are ignored; missing hosts get 0)."""
        feasible = [_node_name(n) for n in nodes]
        total = {n: 0 for n in feasible}
        for host, score in self.prioritize(pod, nodes):
            if host in total:
                total[host] += score * self.weight * 10
        return total

    def preempt_args(self, pod, victims):
        """victims: {node: {"pods": [Pod objects, most important first], "num_pdb_violations": n}}"""
        if self.node_cache_capable:
            meta = GoMap()
            for node, v in victims.items():
                meta[node] = {"Pods": [{"UID": _pod_uid(p)} for p in v["pods"]],
                              "NumPDBViolations": v.get("num_pdb_violations", 0)}
            return {"Pod": strip_pod(pod), "NodeNameToVictims": None,
                    "NodeNameToMetaVictims": meta}
        full = GoMap()
        for node, v in victims.items():
            full[node] = {"Pods": [strip_pod(p) for p in v["pods"]],
                          "NumPDBViolations": v.get("num_pdb_violations", 0)}
        return {"Pod": strip_pod(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}

    def preempt(self, pod, victims, node_pods=None, ignorable=False):
        """HTTPExtender.ProcessPreemption plus callExtenders' checks. node_pods: the scheduler's
        node cache {node: [Pod objects]} used to map UIDs back (default: the victims sent).
        Returns {node: {"pods": [Pod objects], "num_pdb_violations": n}}."""
        if node_pods is None:
            node_pods = {n: v["pods"] for n, v in victims.items()}
        raw = self.send(self.preempt_verb, self.preempt_args(pod, victims))
        r = _dec_struct(raw, _Ctx(), "ExtenderPreemptionResult", _PREEMPTION_RESULT) or {}
        result = {}
        for node, mv in (r.get("NodeNameToMetaVictims") or {}).items():
            if node not in node_pods:
                raise SchedulerError('nodeinfo not found for node name "%s"' % node)
            mv = mv or {}
            pods = []
            for mp in mv.get("Pods") or []:
                uid = (mp or {}).get("UID", "")
                match = [p for p in node_pods[node] if _pod_uid(p) == uid]
                if not match:
                    raise SchedulerError(
                        "extender: %s claims to preempt pod (UID: &{%s}) on node: %s, but the "
                        "pod is not found on that node" % (self.url_prefix, uid, node))
                pods.append(match[0])
            result[node] = {"pods": pods, "num_pdb_violations": mv.get("NumPDBViolations", 0)}
        for node in sorted(result):
            if not result[node]["pods"]:
                if ignorable:
                    del result[node]
                    continue
                raise SchedulerError('expected at least one victim pod on node "%s"' % node)
        return result

    def bind(self, pod_name, namespace, uid, node):
        """HTTPExtender.Bind; raises SchedulerError when binding failed."""
        args = {"PodName": pod_name, "PodNamespace": namespace, "PodUID": uid, "Node": node}
        raw = self.send(self.bind_verb, args)
        r = _dec_struct(raw, _Ctx(), "ExtenderBindingResult", _BINDING_RESULT) or {}
        if r.get("Error"):
            raise SchedulerError(_go_errorf(r["Error"]))


class FilterResult:
    def __init__(self, nodes, failed, unresolvable, node_objects=None):
        self.nodes = nodes                # surviving node names, in the extender's order
        self.failed = failed              # FailedNodes: node -> message
        self.unresolvable = unresolvable  # FailedAndUnresolvableNodes
        self.node_objects = node_objects  # returned Node objects (nodeCacheCapable=false)

    def status(self, node):
        """The per-node status kube-scheduler derives: pass, unresolvable or unschedulable."""
        if node in self.nodes:
            return "pass"
        if node in self.unresolvable:
            return "unresolvable"
        if node in self.failed:
            return "unschedulable"
        return "unresolvable"  # dropped without a message (NewDefaultNodeToStatus)

    def __repr__(self):
        return "FilterResult(nodes=%r, failed=%r, unresolvable=%r)" % (
            self.nodes, self.failed, self.unresolvable)


# ---------------------------------------------------------------------------------------------
# Running railfit


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


class Railfit:
    """A railfit process: ``railfit serve --demo|--snapshot F [--config F] --listen 127.0.0.1:P``.

    with Railfit(config="server: {maxBodyBytes: 64Ki}") as rf:
        client = rf.client(node_cache_capable=True)
    """

    def __init__(self, demo=True, snapshot=None, config=None, args=(), binary=None, env=None,
                 ready_timeout=30.0):
        self.binary = binary or os.environ.get("RAILFIT")
        if not self.binary:
            raise RuntimeError("set RAILFIT to the railfit binary")
        self.demo = demo and snapshot is None
        self.snapshot = snapshot
        self.config = config
        self.args = list(args)
        self.env = env
        self.ready_timeout = ready_timeout
        self.port = None
        self.proc = None
        self._tmp = tempfile.TemporaryDirectory(prefix="railfit-it-")
        self._stderr_path = os.path.join(self._tmp.name, "stderr.log")
        self._stderr = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def command(self):
        cmd = [self.binary, "serve"]
        if self.config is not None:
            path = os.path.join(self._tmp.name, "config.yaml")
            with open(path, "w") as f:
                f.write(self.config)
            cmd += ["--config", path]
        if self.snapshot:
            cmd += ["--snapshot", self.snapshot]
        elif self.demo:
            cmd += ["--demo"]
        cmd += ["--listen", "127.0.0.1:%d" % self.port] + self.args
        return cmd

    def start(self):
        last = None
        for _ in range(5):  # the free port can be taken in between: retry with another
            self.port = free_port()
            self._stderr = open(self._stderr_path, "ab")
            env = dict(os.environ)
            env.update(self.env or {})
            self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL,
                                         stderr=self._stderr, stdin=subprocess.DEVNULL, env=env)
            try:
                self.wait_healthy(self.ready_timeout)
                return self
            except RuntimeError as e:
                last = e
                if self.proc.poll() is None:
                    break
                if "address already in use" not in self.stderr().lower():
                    break
        raise RuntimeError("railfit did not become healthy: %s\n--- stderr ---\n%s"
                           % (last, self.stderr()))

    def wait_healthy(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with status %d" % self.proc.returncode)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Connection: close\r\n\r\n")
                    s.settimeout(2)
                    data = b""
                    while True:
                        chunk = s.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    if data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("no 200 from /healthz within %.0f s" % timeout)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def healthy(self):
        """Alive and answering /healthz with 200 right now."""
        if not self.alive():
            return False
        try:
            self.wait_healthy(5)
            return True
        except RuntimeError:
            return False

    def stderr(self):
        try:
            with open(self._stderr_path, "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=10.0):
        """SIGTERM, wait, SIGKILL if needed. Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._stderr:
            self._stderr.close()
            self._stderr = None
        return self.proc.returncode

    def client(self, node_cache_capable=True, **kw):
        return ExtenderClient(self.url, node_cache_capable=node_cache_capable, **kw)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        self._tmp.cleanup()
        return False
