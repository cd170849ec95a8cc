#!/usr/bin/env python3
"""fakeapi: a fake kube-apiserver for railfit's integration tests. Python 3 standard library only.

It serves the endpoints railfit uses (shared/reference/kube-watch.md section 1) with the list/watch,
resourceVersion, pagination, binding, auth and error semantics of sections 2-8 and 13-14, and can
inject every fault of the section 15 checklist. A control API on the same port, under /_fake/,
changes state, switches faults on and off and shows what clients sent. See README.md next to this
file for the full reference.

    python3 test/fakeapi/fakeapi.py --port 0 [--snapshot F] [--token T] [--version v1.35.0]
                                    [--tls-cert F --tls-key F]

prints ``listening on http://127.0.0.1:PORT`` once it accepts connections. It only ever binds
127.0.0.1. ``FakeAPI`` (bottom of this file) starts it as a subprocess and wraps the control API.
"""

import argparse
import base64
import bisect
import copy
import gzip
import http.client
import http.server
import json
import os
import random
import re
import select
import signal
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections import deque

__all__ = ["FakeServer", "FakeAPI", "RESOURCES", "main"]

# --------------------------------------------------------------------------------------------
# Resources
# --------------------------------------------------------------------------------------------


class Res:
    """One served resource (a REST collection)."""

    def __init__(self, rid, plural, group, version, kind, namespaced, status=False,
                 generation=False, fields=(), since=None):
        self.rid = rid  # internal id: plural, or plural.group when a plural repeats
        self.since = since  # (major, minor) of the first release serving it; None = always
        self.plural = plural
        self.group = group
        self.version = version
        self.kind = kind
        self.namespaced = namespaced
        self.status = status  # has a status subresource (PUT on the main resource keeps status)
        self.generation = generation  # metadata.generation bumps when spec changes
        self.fields = set(fields) | {"metadata.name", "metadata.namespace"}
        self.api_version = "%s/%s" % (group, version) if group else version
        self.list_kind = kind + "List"
        self.qualified = "%s.%s" % (plural, group) if group else plural

    def details(self, name):
        d = {"name": name}
        if self.group:
            d["group"] = self.group
        d["kind"] = self.plural
        return d


POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")

RESOURCES = [
    Res("nodes", "nodes", "", "v1", "Node", False, status=True, fields=("spec.unschedulable",)),
    Res("pods", "pods", "", "v1", "Pod", True, status=True, fields=POD_FIELDS),
    Res("namespaces", "namespaces", "", "v1", "Namespace", False, status=True, fields=("status.phase",)),
    Res("events", "events", "", "v1", "Event", True, fields=EVENT_FIELDS),
    Res("resourceslices", "resourceslices", "resource.k8s.io", "v1", "ResourceSlice", False,
        generation=True, fields=("spec.nodeName", "spec.driver", "spec.pool.name")),
    Res("resourceclaims", "resourceclaims", "resource.k8s.io", "v1", "ResourceClaim", True, status=True,
        generation=True),
    Res("resourceclaimtemplates", "resourceclaimtemplates", "resource.k8s.io", "v1",
        "ResourceClaimTemplate", True, generation=True),
    Res("deviceclasses", "deviceclasses", "resource.k8s.io", "v1", "DeviceClass", False, generation=True),
    # GA in 1.37 (a 1.36 server's DRADeviceTaintRules gate is off: no v1 resource, 404)
    Res("devicetaintrules", "devicetaintrules", "resource.k8s.io", "v1", "DeviceTaintRule", False,
        generation=True, since=(1, 37)),
    Res("leases", "leases", "coordination.k8s.io", "v1", "Lease", True),
    Res("events.events.k8s.io", "events", "events.k8s.io", "v1", "Event", True),
]
# DeviceTaintRules before v1: v1beta2 (1.36, DRADeviceTaintRules beta and off) and v1alpha3 (1.35,
# alpha): served only when a test enables the group version ("enabledGroupVersions"), with the
# objects of the v1 resource
VERSION_ALIASES = {("resource.k8s.io", "v1beta2", "devicetaintrules"): "devicetaintrules",
                   ("resource.k8s.io", "v1alpha3", "devicetaintrules"): "devicetaintrules"}
RES_BY_RID = {r.rid: r for r in RESOURCES}
RES_BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
RES_BY_GK = {(r.group, r.kind): r for r in RESOURCES if r.rid != "events.events.k8s.io"}
RES_BY_GK[("events.k8s.io", "Event")] = RES_BY_RID["events.events.k8s.io"]


def find_res(name):
    """A resource from a plural ("pods"), a qualified plural ("resourceslices.resource.k8s.io"), a
    Kind ("Pod") or a lower-case kind ("pod"). None if unknown."""
    if not name:
        return None
    if name in RES_BY_RID:
        return RES_BY_RID[name]
    low = name.lower()
    for r in RESOURCES:
        if low in (r.plural, r.qualified, r.kind.lower()) and r.rid != "events.events.k8s.io":
            return r
    return RES_BY_RID.get(low)


def res_for_object(obj):
    api_version = obj.get("apiVersion") or ""
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return RES_BY_GK.get((group, obj.get("kind") or ""))


def obj_key(res, obj):
    md = obj.get("metadata") or {}
    if res.namespaced:
        return "%s/%s" % (md.get("namespace") or "", md.get("name") or "")
    return md.get("name") or ""


def make_key(res, ns, name):
    return "%s/%s" % (ns or "", name) if res.namespaced else name


# zero-valued bodies of a bookmark object per kind, as Go serialises non-omitempty fields
BOOKMARK_ZERO = {
    "Pod": {"spec": {"containers": None}, "status": {}},
    "Node": {"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                    "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "",
                                                 "kernelVersion": "", "osImage": "",
                                                 "containerRuntimeVersion": "", "kubeletVersion": "",
                                                 "kubeProxyVersion": "", "operatingSystem": "",
                                                 "architecture": ""}}},
    "ResourceSlice": {"spec": {"driver": "", "pool": {"name": "", "generation": 0, "resourceSliceCount": 0}}},
    "ResourceClaim": {"spec": {"devices": {}}, "status": {}},
    "ResourceClaimTemplate": {"spec": {"spec": {"devices": {}}}},
    "DeviceClass": {"spec": {}},
    "Lease": {"spec": {}},
    "Namespace": {"spec": {}, "status": {}},
    "Event": {"involvedObject": {}, "source": {}, "firstTimestamp": None, "lastTimestamp": None,
              "eventTime": None, "reportingComponent": "", "reportingInstance": ""},
}

# --------------------------------------------------------------------------------------------
# Helpers: JSON, time, errors
# --------------------------------------------------------------------------------------------


def jdump(o):
    """Compact JSON as Go's encoding/json writes it (raw UTF-8; <, >, &, U+2028, U+2029 escaped)."""
    s = json.dumps(o, separators=(",", ":"), ensure_ascii=False)
    if "<" in s or ">" in s or "&" in s:
        s = s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if "\u2028" in s or "\u2029" in s:
        s = s.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return s.encode("utf-8")


# Encoded list items, as the real API server's watch cache keeps serialized objects: a list of
# 12,000 pods is then a join, not 12,000 encodings in Python (which made the fake, not railfit,
# the slow part of a cold start). Keyed by object identity, checked against the object and its
# resourceVersion (every change of a stored object makes a new dict with a new resourceVersion).
_item_cache = {}
_item_cache_lock = threading.Lock()


def encoded_item(o, type_meta):
    md = o.get("metadata") if isinstance(o, dict) else None
    rv = md.get("resourceVersion") if isinstance(md, dict) else None
    key = (id(o), type_meta)
    hit = _item_cache.get(key)
    if hit is not None and hit[0] is o and hit[1] == rv:
        return hit[2]
    enc = jdump(o if type_meta else {k: v for k, v in o.items() if k not in ("kind", "apiVersion")})
    with _item_cache_lock:
        if len(_item_cache) > 4 * 200000:
            _item_cache.clear()
        _item_cache[key] = (o, rv, enc)
    return enc


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def parse_version(v):
    m = re.match(r"^v?(\d+)\.(\d+)", v or "")
    return (int(m.group(1)), int(m.group(2))) if m else (1, 35)


class ApiError(Exception):
    """An error answered with a metav1.Status body."""

    def __init__(self, code, reason, message, details=None, headers=None, metadata=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details, self.headers, self.metadata = details, headers or {}, metadata

    def status(self):
        return status_obj(self.code, self.reason, self.message, self.details, self.metadata)


class TextError(Exception):
    """An error answered with a text/plain body (Go http.Error / http.NotFound)."""

    def __init__(self, code, text, headers=None):
        super().__init__(text)
        self.code, self.text, self.headers = code, text, headers or {}


def status_obj(code, reason, message, details=None, metadata=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {}, "status": "Failure",
          "message": message, "reason": reason}
    if details:
        st["details"] = details
    st["code"] = code
    return st


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.qualified, name), res.details(name))


def conflict(res, name, cause, resource=None):
    qr = resource or res.qualified
    det = res.details(name)
    if resource:
        det = {"name": name, "kind": resource}
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (qr, name, cause), det)


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def invalid_list_options(field, cause_reason, detail):
    kind = {"FieldValueForbidden": "Forbidden", "FieldValueNotSupported": "Unsupported value",
            "FieldValueInvalid": "Invalid value"}.get(cause_reason, "Invalid value")
    msg = "%s: %s" % (kind, detail)
    return ApiError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: %s: %s' % (field, msg),
                    {"group": "meta.k8s.io", "kind": "ListOptions",
                     "causes": [{"reason": cause_reason, "message": msg, "field": field}]})


def expired(message, reason="Expired", metadata=None):
    return ApiError(410, reason, message, metadata=metadata)


OPTIMISTIC_LOCK = ("the object has been modified; please apply your changes to the latest version "
                   "and try again")
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue token "
                    "in this response to retrieve the remainder of the results. Continuing with the "
                    "provided token results in an inconsistent list - objects that were created, modified, "
                    "or deleted between the time the first chunk was returned and now may show up in the list.")
LIST_TOO_OLD = "The resourceVersion for the provided list is too old."


def encode_continue(rv, start):
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


def decode_continue(token):
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        d = json.loads(raw)
        if not isinstance(d, dict) or d.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not supported")
        rv, start = d.get("rv"), d.get("start")
        if not isinstance(rv, int) or not isinstance(start, str) or not start:
            raise ValueError("continue key is not valid")
        return rv, start
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        raise bad_request("invalid continue token: %s" % e)


def parse_rv(value, field="resourceVersion"):
    if not re.fullmatch(r"[0-9]+", value or ""):
        raise bad_request('%s: Invalid value: "%s": strconv.ParseUint: parsing "%s": invalid syntax'
                          % (field, value, value))
    return int(value)


# --------------------------------------------------------------------------------------------
# Selectors
# --------------------------------------------------------------------------------------------


def split_top_level(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(s):
    reqs = []
    for p in split_top_level(s or ""):
        m = re.fullmatch(r"([^\s!=(),]+)\s+(in|notin)\s+\(([^()]*)\)", p)
        if m:
            vals = {v.strip() for v in m.group(3).split(",") if v.strip()}
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = re.fullmatch(r"([^\s!=(),]+)\s*(!=|==|=)\s*([^\s!=(),]*)", p)
        if m:
            reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
            continue
        m = re.fullmatch(r"(!?)\s*([^\s!=(),]+)", p)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", None))
            continue
        raise bad_request("unable to parse requirement: %s" % p)
    return reqs


def parse_field_selector(res, s):
    reqs = []
    for p in (s or "").split(","):
        p = p.strip()
        if not p:
            continue
        m = re.fullmatch(r"([^!=]+?)\s*(!=|==|=)\s*(.*)", p)
        if not m:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (s, p))
        field = m.group(1)
        if field not in res.fields:
            raise bad_request('field label not supported: %s' % field)
        reqs.append((field, "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return reqs


def field_value(obj, field):
    v = obj
    for part in field.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    if v is None:
        return "false" if field in ("spec.unschedulable", "spec.hostNetwork") else ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return ""
    return str(v)


class Selector:
    """Namespace scope plus label and field selectors of one list or watch."""

    def __init__(self, res, ns, label="", field=""):
        self.ns = ns
        self.labels = parse_label_selector(label)
        self.fields = parse_field_selector(res, field)

    @property
    def has_selectors(self):
        return bool(self.labels or self.fields)

    def match(self, obj):
        md = obj.get("metadata") or {}
        if self.ns is not None and (md.get("namespace") or "") != self.ns:
            return False
        labels = md.get("labels") or {}
        for key, op, val in self.labels:
            have = key in labels
            cur = labels.get(key)
            if op == "=" and cur != val:
                return False
            if op == "!=" and have and cur == val:
                return False
            if op == "in" and (not have or cur not in val):
                return False
            if op == "notin" and have and cur in val:
                return False
            if op == "exists" and not have:
                return False
            if op == "!" and have:
                return False
        for field, op, val in self.fields:
            cur = field_value(obj, field)
            if (op == "=") != (cur == val):
                return False
        return True


# --------------------------------------------------------------------------------------------
# Patches
# --------------------------------------------------------------------------------------------


def merge_patch(target, patch, strategic=False):
    """RFC 7386 JSON merge patch. With strategic=True, $-directives are dropped and lists are
    replaced as a whole (enough for metadata.annotations/labels, which is what railfit patches)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if strategic and k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v, strategic)
    return out


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc, ops):
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test)."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ValueError("a JSON patch must be an array of operations")

    def parent(d, parts):
        for p in parts[:-1]:
            d = d[int(p)] if isinstance(d, list) else d[p]
        return d

    def get(d, parts):
        for p in parts:
            d = d[int(p)] if isinstance(d, list) else d[p]
        return d

    def add(d, parts, value):
        if not parts:
            return value
        par, last = parent(d, parts), parts[-1]
        if isinstance(par, list):
            par.insert(len(par) if last == "-" else int(last), value)
        else:
            par[last] = value
        return d

    def remove(d, parts):
        par, last = parent(d, parts), parts[-1]
        if isinstance(par, list):
            return par.pop(int(last))
        return par.pop(last)

    for op in ops:
        kind, path = op.get("op"), _ptr(op.get("path", ""))
        try:
            if kind == "add":
                doc = add(doc, path, copy.deepcopy(op["value"]))
            elif kind == "remove":
                remove(doc, path)
            elif kind == "replace":
                get(doc, path)
                if not path:
                    doc = copy.deepcopy(op["value"])
                else:
                    remove(doc, path)
                    doc = add(doc, path, copy.deepcopy(op["value"]))
            elif kind == "move":
                v = remove(doc, _ptr(op["from"]))
                doc = add(doc, path, v)
            elif kind == "copy":
                doc = add(doc, path, copy.deepcopy(get(doc, _ptr(op["from"]))))
            elif kind == "test":
                if get(doc, path) != op.get("value"):
                    raise ValueError("testing value %s failed" % op.get("path"))
            else:
                raise ValueError("Unexpected kind: %s" % kind)
        except (KeyError, IndexError, TypeError) as e:
            raise ValueError("doc is missing path: %s: %s" % (op.get("path"), e))
    return doc


# --------------------------------------------------------------------------------------------
# Store: objects of every kind, one global resourceVersion counter (the etcd revision) and a
# bounded history of events, from which watches are resumed and older states rebuilt.
# --------------------------------------------------------------------------------------------


class Ev:
    """One committed change. obj is the new state; for DELETED it is the last state with
    metadata.resourceVersion set to the deletion RV. prev is the state before (None for ADDED)."""

    __slots__ = ("rv", "rid", "key", "type", "obj", "prev", "_line")

    def __init__(self, rv, rid, key, etype, obj, prev):
        self.rv, self.rid, self.key, self.type, self.obj, self.prev = rv, rid, key, etype, obj, prev
        self._line = None

    def line(self):
        if self._line is None:
            self._line = jdump({"type": self.type, "object": self.obj}) + b"\n"
        return self._line


# metav1.ObjectMeta field order, as Go serialises it
META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields")


def go_order(d, order):
    out = {k: d[k] for k in order if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def with_rv(obj, rv):
    o = dict(obj)
    o["metadata"] = dict(obj.get("metadata") or {}, resourceVersion=str(rv))
    return o


class Store:
    def __init__(self, start_rv=1000, history_size=10000):
        self.cond = threading.Condition()
        self.rv = start_rv
        self.oldest = start_rv  # watches/exact lists at RV >= oldest can be served from history
        self.wrapped = False  # history lost events (trimmed or compacted): no "young cache" leniency
        self.history_size = history_size
        self.hist = []
        self.hist_rvs = []
        self.objs = {r.rid: {} for r in RESOURCES}
        self.stopping = False

    # -- writes (caller holds self.cond) ------------------------------------------------------

    def _record(self, ev):
        self.hist.append(ev)
        self.hist_rvs.append(ev.rv)
        if len(self.hist) > self.history_size + self.history_size // 4 + 16:
            drop = len(self.hist) - self.history_size
            self.oldest = self.hist[drop - 1].rv
            del self.hist[:drop]
            del self.hist_rvs[:drop]
            self.wrapped = True
        self.cond.notify_all()

    def commit(self, res, new, prev_key=None, owned=False):
        """Store new (an object dict) as the current state of its key; returns the stored object.
        owned=True: new is not referenced anywhere else and need not be copied."""
        key = prev_key or obj_key(res, new)
        table = self.objs[res.rid]
        prev = table.get(key)
        self.rv += 1
        src = new if owned else copy.deepcopy(new)
        # kind and apiVersion first, like the real server's field order
        obj = {"kind": res.kind, "apiVersion": res.api_version}
        obj.update((k, v) for k, v in src.items() if k not in ("kind", "apiVersion"))
        md = obj["metadata"] = dict(obj.get("metadata") or {})
        md["resourceVersion"] = str(self.rv)
        if not md.get("uid"):
            md["uid"] = (prev or {}).get("metadata", {}).get("uid") or str(uuid.uuid4())
        if not md.get("creationTimestamp"):
            md["creationTimestamp"] = (prev or {}).get("metadata", {}).get("creationTimestamp") or now_rfc3339()
        if res.generation:
            if prev is None:
                md.setdefault("generation", 1)
            elif "generation" not in md or md["generation"] == prev["metadata"].get("generation"):
                gen = prev["metadata"].get("generation") or 1
                md["generation"] = gen + 1 if obj.get("spec") != prev.get("spec") else gen
        obj["metadata"] = go_order(md, META_ORDER)
        table[key] = obj
        self._record(Ev(self.rv, res.rid, key, "MODIFIED" if prev else "ADDED", obj, prev))
        return obj

    def remove(self, res, key):
        table = self.objs[res.rid]
        prev = table.pop(key)
        self.rv += 1
        self._record(Ev(self.rv, res.rid, key, "DELETED", with_rv(prev, self.rv), prev))
        return prev

    def bump(self, by=1):
        self.rv += max(1, int(by))
        self.cond.notify_all()
        return self.rv

    def compact(self, rv):
        rv = min(max(rv, self.oldest), self.rv)
        i = bisect.bisect_right(self.hist_rvs, rv)
        del self.hist[:i]
        del self.hist_rvs[:i]
        self.oldest = rv
        self.wrapped = True
        self.cond.notify_all()
        return rv

    def clear(self):
        for t in self.objs.values():
            t.clear()
        self.hist, self.hist_rvs = [], []
        self.oldest = self.rv
        self.wrapped = False
        self.cond.notify_all()

    # -- reads (caller holds self.cond) -------------------------------------------------------

    def events_after(self, pos, rid, limit=256):
        """Events of rid with rv > pos (at most limit). None if pos is older than the history."""
        if pos < self.oldest:
            return None
        out = []
        i = bisect.bisect_right(self.hist_rvs, pos)
        hist = self.hist
        while i < len(hist) and len(out) < limit:
            if hist[i].rid == rid:
                out.append(hist[i])
            i += 1
        return out

    def state_at(self, rid, rv):
        """{key: obj} of rid as of rv (None if rv predates the retained history)."""
        cur = dict(self.objs[rid])
        if rv >= self.rv:
            return cur
        if rv < self.oldest:
            return None
        i = bisect.bisect_right(self.hist_rvs, rv)
        for ev in reversed(self.hist[i:]):
            if ev.rid != rid:
                continue
            if ev.type == "ADDED":
                cur.pop(ev.key, None)
            else:
                cur[ev.key] = ev.prev
        return cur

    def last_rv_of(self, rid):
        for ev in reversed(self.hist):
            if ev.rid == rid:
                return ev.rv
        return None


# --------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------

ALL_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "bind")

# name -> (stage, verbs it applies to when the fault gives no "verb")
FAULTS = {
    # answered instead of the request, any verb
    "http-error": ("request", ALL_VERBS), "429": ("request", ALL_VERBS),
    "429-shutdown": ("request", ALL_VERBS), "429-status": ("request", ALL_VERBS),
    "500": ("request", ALL_VERBS), "500-text": ("request", ALL_VERBS), "503": ("request", ALL_VERBS),
    "503-startup": ("request", ALL_VERBS), "504": ("request", ALL_VERBS), "401": ("request", ALL_VERBS),
    "403": ("request", ALL_VERBS), "404-text": ("request", ALL_VERBS), "hang": ("request", ALL_VERBS),
    "delay": ("request", ALL_VERBS), "reset": ("request", ALL_VERBS), "close": ("request", ALL_VERBS),
    # lists
    "list-410": ("list", ("list",)), "continue-410": ("list", ("list",)),
    "too-large-rv": ("list", ("list", "get")), "truncated-list": ("list", ("list",)),
    "stale-any": ("list", ("list", "watch")), "relist-different": ("list", ("list",)),
    # watch start
    "watch-410-http": ("watch-start", ("watch",)), "ignore-send-initial-events": ("watch-start", ("watch",)),
    "short-close": ("watch-start", ("watch",)),
    # watch stream (several can shape one stream)
    "watch-410": ("stream", ("watch",)), "watch-error": ("stream", ("watch",)),
    "reset-mid-stream": ("stream", ("watch",)), "close-mid-chunk": ("stream", ("watch",)),
    "truncate": ("stream", ("watch",)), "garbage": ("stream", ("watch",)),
    "unknown-type": ("stream", ("watch",)), "wrong-kind": ("stream", ("watch",)),
    "deleted-unknown": ("stream", ("watch",)), "duplicate-added": ("stream", ("watch",)),
    "modified-for-added": ("stream", ("watch",)), "large-event": ("stream", ("watch",)),
    "split": ("stream", ("watch",)), "empty-chunks": ("stream", ("watch",)),
    "trickle": ("stream", ("watch",)), "stall": ("stream", ("watch",)),
    "bookmark-only": ("stream", ("watch",)), "no-bookmarks": ("stream", ("watch",)),
    "no-final-bookmark": ("stream", ("watch",)), "drop-after": ("stream", ("watch",)),
    "close-slow-reader": ("stream", ("watch",)),
    # binding
    "bind-commit-drop": ("bind", ("bind",)),
}
TERMINAL_STREAM = ("watch-410", "watch-error", "reset-mid-stream", "close-mid-chunk", "truncate", "stall")
INLINE_STREAM = ("garbage", "unknown-type", "wrong-kind", "deleted-unknown", "large-event")


class Fault:
    _ids = 0

    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise ValueError("a fault must be a JSON object")
        self.name = spec.get("fault")
        if self.name not in FAULTS:
            raise ValueError("unknown fault %r; known: %s" % (self.name, ", ".join(sorted(FAULTS))))
        self.stage, self.default_verbs = FAULTS[self.name]
        kind = spec.get("kind", "*")
        if kind in (None, "*", ""):
            self.rid = "*"
        else:
            res = find_res(kind)
            if res is None:
                raise ValueError("unknown kind %r" % kind)
            self.rid = res.rid
        self.verb = spec.get("verb", "*") or "*"
        if self.verb != "*" and self.verb not in ALL_VERBS:
            raise ValueError("unknown verb %r" % self.verb)
        self.namespace = spec.get("namespace")
        self.obj_name = spec.get("name")
        self.path = spec.get("path")
        count = spec.get("count", 1)
        self.remaining = -1 if count is None or int(count) < 0 else int(count)
        if self.remaining == 0:
            self.remaining = -1
        self.fired = 0
        self.params = {k: v for k, v in spec.items()
                       if k not in ("fault", "kind", "verb", "namespace", "name", "path", "count")}
        Fault._ids += 1
        self.id = Fault._ids

    def p(self, key, default=None):
        return self.params.get(key, default)

    def matches(self, rid, verb, ns, name, path):
        if self.path is not None and self.path not in path:
            return False
        if self.path is None and rid is None:
            return False  # non-resource paths only by explicit "path"
        if self.rid != "*" and self.rid != rid:
            return False
        if self.verb == "*":
            if verb not in self.default_verbs and self.path is None:
                return False
        elif self.verb != verb:
            return False
        if self.namespace is not None and self.namespace != ns:
            return False
        if self.obj_name is not None and self.obj_name != name:
            return False
        return True

    def describe(self):
        d = {"id": self.id, "fault": self.name, "kind": self.rid, "verb": self.verb,
             "count": self.remaining, "fired": self.fired}
        for k in ("namespace", "name", "path"):
            v = getattr(self, "obj_name" if k == "name" else k)
            if v is not None:
                d[k] = v
        d.update(self.params)
        return d


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, spec):
        f = Fault(spec)
        with self.lock:
            self.items.append(f)
        return f

    def take(self, stages, rid, verb, ns, name, path, names=None, first=False):
        """Active faults for this request, consuming one use of each."""
        out = []
        with self.lock:
            for f in list(self.items):
                if f.stage not in stages or (names is not None and f.name not in names):
                    continue
                if not f.matches(rid, verb, ns, name, path):
                    continue
                f.fired += 1
                if f.remaining > 0:
                    f.remaining -= 1
                    if f.remaining == 0:
                        self.items.remove(f)
                out.append(f)
                if first:
                    break
        return out

    def remove(self, fid=None):
        with self.lock:
            if fid is None:
                n = len(self.items)
                self.items = []
                return n
            before = len(self.items)
            self.items = [f for f in self.items if f.id != fid]
            return before - len(self.items)

    def describe(self):
        with self.lock:
            return [f.describe() for f in self.items]


# --------------------------------------------------------------------------------------------
# Configuration (changeable at runtime with POST /_fake/config)
# --------------------------------------------------------------------------------------------

DEFAULT_CONFIG = {
    "version": "v1.35.0",  # /version gitVersion; also picks version-dependent behaviour
    "watchList": None,  # WatchList gate; None = as the version ships it
    "disabledGroupVersions": [],  # e.g. ["resource.k8s.io/v1"] -> plain-text 404 (pre-1.34 cluster)
    "enabledGroupVersions": [],  # e.g. ["resource.k8s.io/v1beta2"]: VERSION_ALIASES served
    "bookmarkInterval": 60.0,  # seconds between periodic bookmarks
    "bookmarkStyle": "zero",  # zero | zero-null-timestamp | minimal
    "initialOrder": "key",  # key | reverse-key | random: order of synthetic ADDED events
    "tooLargeWait": 3.0,  # seconds a list/get at a future RV waits before 504
    "youngCache": False,  # accept a watch RV older than the history while nothing was ever dropped
    "historySize": 10000,  # retained events
    "gzipThreshold": 131072,  # gzip GET/LIST responses larger than this when Accept-Encoding: gzip
    "limitAtRV0": False,  # True = honour limit at RV=0 (etcd path) instead of ignoring it (cache)
    "tokens": [],  # accepted bearer tokens; empty = no authentication
    "rbac": None,  # {"user": ..., "deny": [{resource, verb, namespace?, group?}], "allow": [...]}
    "minRequestTimeout": 1800,  # watch timeout without timeoutSeconds: random [m, 2m)
    "maxWatches": 200,
    "maxConnections": 256,
    "maxBodyBytes": 64 << 20,
    "listItemsTypeMeta": False,  # True = list items carry kind/apiVersion (real lists do not)
    "podGracefulDelete": False,  # True = DELETE of a bound pod only sets deletionTimestamp
    "writeTimeout": 60.0,  # a watch whose client stops reading for this long is closed
    "requestLogSize": 20000,
    "logControlRequests": False,
    "tlsCert": None,
    "tlsKey": None,
}


# --------------------------------------------------------------------------------------------
# Watch streams
# --------------------------------------------------------------------------------------------

GO_BUFFER = 2048  # net/http bufferBeforeChunkingSize


def go_bufio_chunks(lines):
    """Chunks as Go's HTTP/1.1 server emits for consecutive writes followed by one Flush: a 2048
    byte bufio.Writer in front of the chunk writer (a write into an empty buffer that is at least
    as large as the buffer goes out as one chunk)."""
    out, buf = [], bytearray()
    for p in lines:
        while p:
            if not buf and len(p) >= GO_BUFFER:
                out.append(p)
                break
            n = min(GO_BUFFER - len(buf), len(p))
            buf += p[:n]
            p = p[n:]
            if len(buf) == GO_BUFFER:
                out.append(bytes(buf))
                buf.clear()
    if buf:
        out.append(bytes(buf))
    return out


def utf8_cuts(line):
    """line cut right after the first byte of every multi-byte UTF-8 sequence (in half if none)."""
    cuts = [i for i in range(1, len(line)) if 0x80 <= line[i] < 0xC0 and line[i - 1] >= 0xC0]
    if not cuts:
        cuts = [len(line) // 2]
    pieces, last = [], 0
    for c in cuts:
        pieces.append(line[last:c])
        last = c
    pieces.append(line[last:])
    return pieces


class StreamEnd(Exception):
    """The watch stream is over (the response was finished or the connection closed)."""


class WatchStream:
    _ids = 0

    def __init__(self, handler, res, sel, query, faults, allow_bm, deadline):
        self.h = handler
        self.fake = handler.server.fake
        self.store = self.fake.store
        self.res = res
        self.sel = sel
        self.trivial_sel = sel.ns is None and not sel.has_selectors
        self.query = query
        self.faults = faults
        self.fmap = {}
        for f in faults:
            self.fmap.setdefault(f.name, f)
        self.allow_bm = allow_bm and "no-bookmarks" not in self.fmap
        self.deadline = deadline
        self.sock = handler.connection
        self.pos = 0
        self.events_sent = 0
        self.bookmarks_sent = 0
        self.bytes_sent = 0
        self.kill = None
        self.end_reason = None
        self.started = time.time()
        self.done = set()
        self.terminal = [f for f in faults if f.name in TERMINAL_STREAM]
        self.inline = [f for f in faults if f.name in INLINE_STREAM]
        split = self.fmap.get("split")
        self.split_mode = split.p("mode") if split else None
        self.sizes = list(split.p("sizes") or []) if split else []
        if split and not self.split_mode and not self.sizes:
            self.sizes = [1]
        self.size_i = 0
        self.rng = random.Random(split.p("seed", 1) if split else 1)
        self.blank = "empty-chunks" in self.fmap
        tr = self.fmap.get("trickle")
        self.trickle_bytes = max(1, int(tr.p("bytes", 16))) if tr else 0
        self.trickle_delay = float(tr.p("delay", 0.01)) if tr else 0.0
        WatchStream._ids += 1
        self.id = WatchStream._ids

    def describe(self):
        return {"id": self.id, "kind": self.res.rid, "query": self.query, "started": self.started,
                "eventsSent": self.events_sent, "bookmarksSent": self.bookmarks_sent,
                "bytesSent": self.bytes_sent, "resourceVersion": str(self.pos),
                "faults": [f.name for f in self.faults], "remotePort": self.h.client_address[1]}

    # -- bytes on the wire --------------------------------------------------------------------

    def _cut(self, lines):
        mode = self.split_mode
        if mode in ("before-newline", "mid-utf8") or self.blank:
            pieces = []
            for ln in lines:
                if mode == "before-newline":
                    pieces += [ln[:-1], ln[-1:]]
                elif mode == "mid-utf8":
                    pieces += utf8_cuts(ln)
                else:
                    pieces.append(ln)
                if self.blank:
                    pieces.append(b"\n")
        elif mode == "random" or self.sizes:
            data = b"".join(lines)
            pieces, i = [], 0
            while i < len(data):
                if mode == "random":
                    n = self.rng.randint(1, int(self.fake_split_max()))
                else:
                    n = max(1, int(self.sizes[self.size_i % len(self.sizes)]))
                    self.size_i += 1
                pieces.append(data[i:i + n])
                i += n
        else:
            pieces = go_bufio_chunks(lines)
        if self.trickle_bytes:
            tb = self.trickle_bytes
            pieces = [p[i:i + tb] for p in pieces for i in range(0, len(p), tb)]
        return [p for p in pieces if p]

    def fake_split_max(self):
        return self.fmap["split"].p("max", 64)

    def _send_raw(self, data):
        self.sock.sendall(data)
        self.bytes_sent += len(data)

    def send_lines(self, lines):
        if not lines:
            return
        for p in self._cut(lines):
            self._send_raw(b"%x\r\n" % len(p) + p + b"\r\n")
            if self.trickle_delay:
                self.idle_wait(self.trickle_delay)

    def finish(self, reason):
        self._send_raw(b"0\r\n\r\n")
        self.end_reason = reason
        raise StreamEnd()

    def close(self, reason, rst=False):
        self.end_reason = reason
        self.h.close_connection = True
        self.h.aborted = True
        try:
            if rst:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.sock.close()
            else:
                self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise StreamEnd()

    def abort_mid_chunk(self, line, reason, rst):
        self._send_raw(b"%x\r\n" % len(line) + line[:max(1, len(line) // 2)])
        self.close(reason, rst)

    def client_gone(self):
        try:
            r, _, _ = select.select([self.sock], [], [], 0)
            if not r:
                return False
            if isinstance(self.sock, ssl.SSLSocket):
                return self.sock.recv(1) == b""
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def idle_wait(self, seconds):
        """Sleep up to seconds (None = forever), waking for kill/stop/client close. Returns the
        reason it woke early, or None."""
        end = None if seconds is None else time.monotonic() + float(seconds)
        while True:
            if self.kill:
                return "killed"
            if self.store.stopping:
                return "server-stop"
            if self.client_gone():
                return "client-gone"
            now = time.monotonic()
            if end is not None and now >= end:
                return None
            step = 0.25 if end is None else min(0.25, end - now)
            with self.store.cond:
                self.store.cond.wait(step)

    # -- events -------------------------------------------------------------------------------

    def event_line(self, etype, obj):
        return jdump({"type": etype, "object": obj}) + b"\n"

    def bookmark_obj(self, rv, initial_end=False):
        style = self.fake.cfg["bookmarkStyle"]
        md = {"resourceVersion": str(rv)}
        if style == "zero-null-timestamp":
            md["creationTimestamp"] = None
        if initial_end:
            md["annotations"] = {"k8s.io/initial-events-end": "true"}
        o = {"kind": self.res.kind, "apiVersion": self.res.api_version, "metadata": md}
        if style != "minimal":
            o.update(copy.deepcopy(BOOKMARK_ZERO.get(self.res.kind, {})))
        return o

    def send_bookmark(self, rv, initial_end=False):
        self.send_lines([self.event_line("BOOKMARK", self.bookmark_obj(rv, initial_end))])
        self.bookmarks_sent += 1

    def filler_line(self):
        return self.event_line("MODIFIED", self.bookmark_obj(self.pos))

    def convert(self, ev):
        """(type, obj, cached line or None) of a history event as this watcher sees it, or None."""
        if self.trivial_sel:
            return ev.type, ev.obj, ev.line()
        cur = ev.type != "DELETED" and self.sel.match(ev.obj)
        old = ev.prev is not None and self.sel.match(ev.prev)
        if cur and old:
            return "MODIFIED", ev.obj, ev.line() if ev.type == "MODIFIED" else None
        if cur:
            return "ADDED", ev.obj, ev.line() if ev.type == "ADDED" else None
        if old:
            if ev.type == "DELETED":
                return "DELETED", ev.obj, ev.line()
            return "DELETED", with_rv(ev.prev, ev.rv), None
        return None

    def check_faults(self, out, next_line):
        for f in self.terminal:
            if f.id in self.done or self.events_sent < int(f.p("after", 0)):
                continue
            self.done.add(f.id)
            self.send_lines(out)
            out.clear()
            self.fire_terminal(f, next_line)
        for f in self.inline:
            if f.id in self.done or self.events_sent < int(f.p("after", 0)):
                continue
            self.done.add(f.id)
            line = self.inline_line(f)
            if line is not None:
                out.append(line)

    def fire_terminal(self, f, next_line):
        name = f.name
        if name == "watch-410":
            reason = f.p("reason", "Expired")
            msg = f.p("message") or "too old resource version: %d (%d)" % (
                self.start_rv, max(self.store.oldest, self.start_rv + 1))
            self.send_lines([self.event_line("ERROR", status_obj(410, reason, msg))])
            self.finish("fault:watch-410")
        if name == "watch-error":
            code = int(f.p("code", 500))
            reason = f.p("reason", "InternalError")
            msg = f.p("message", "Internal error occurred: fake watch error")
            st = status_obj(code, reason, msg, f.p("details"))
            self.send_lines([self.event_line("ERROR", st)])
            if f.p("close", True):
                self.finish("fault:watch-error")
            return
        line = next_line or self.filler_line()
        if name == "reset-mid-stream":
            self.abort_mid_chunk(line, "fault:reset-mid-stream", rst=True)
        if name == "close-mid-chunk":
            self.abort_mid_chunk(line, "fault:close-mid-chunk", rst=False)
        if name == "truncate":
            self.send_lines([line[:max(1, len(line) // 2)]])
            if f.p("clean", True):
                self.finish("fault:truncate")
            self.close("fault:truncate", rst=False)
        if name == "stall":
            woke = self.idle_wait(f.p("seconds"))
            if woke == "killed":
                return
            if woke in ("client-gone", "server-stop"):
                self.close("stall:" + woke)
            if f.p("then", "close") == "resume":
                return
            self.close("fault:stall", rst=bool(f.p("rst", False)))

    def inline_line(self, f):
        name, res = f.name, self.res
        if name == "garbage":
            g = f.p("line", "this is not JSON {]")
            g = g.encode() if isinstance(g, str) else bytes(g)
            return g if g.endswith(b"\n") else g + b"\n"
        if name == "unknown-type":
            return self.event_line(f.p("type", "FROB"), self.bookmark_obj(self.pos))
        if name == "wrong-kind":
            obj = f.p("object") or {"kind": "ConfigMap", "apiVersion": "v1",
                                    "metadata": {"name": "intruder", "namespace": "default",
                                                 "uid": str(uuid.uuid4()), "resourceVersion": str(self.pos)},
                                    "data": {"x": "y"}}
            return self.event_line(f.p("type", "ADDED"), obj)
        if name == "deleted-unknown":
            md = {"name": f.p("ghost", "ghost-%d" % self.id), "uid": str(uuid.uuid4()),
                  "resourceVersion": str(self.pos), "creationTimestamp": now_rfc3339()}
            if res.namespaced:
                md["namespace"] = f.p("ghostNamespace", "default")
            return self.event_line("DELETED", {"kind": res.kind, "apiVersion": res.api_version, "metadata": md})
        if name == "large-event":
            self.fake.make_large(res, f.p("target"), int(f.p("bytes", 1 << 20)))
            return None
        return None

    def emit(self, items):
        """items: (type, obj, cached line or None, history rv or None)."""
        out = []
        dup = "duplicate-added" in self.fmap
        m4a = "modified-for-added" in self.fmap
        for etype, obj, line, rv in items:
            if line is None:
                line = self.event_line(etype, obj)
            self.check_faults(out, line)
            if dup and etype == "MODIFIED":
                line = self.event_line("ADDED", obj)
            elif dup and etype == "ADDED":
                out.append(line)
            elif m4a and etype == "ADDED":
                line = self.event_line("MODIFIED", obj)
            out.append(line)
            self.events_sent += 1
            if rv is not None:
                self.pos = rv
        self.send_lines(out)

    # -- main loop ----------------------------------------------------------------------------

    def run(self, initial, pos, end_bm_rv, err, start_rv):
        h, store, cfg = self.h, self.store, self.fake.cfg
        self.pos = pos
        self.start_rv = start_rv
        h.send_response_only(200)
        h.send_header("Date", h.date_time_string())
        h.std_headers()
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.log_status(200)
        slow = self.fmap.get("close-slow-reader")
        try:
            if slow:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(slow.p("sndbuf", 16384)))
                self.sock.settimeout(float(slow.p("seconds", 1.0)))
            else:
                self.sock.settimeout(float(cfg["writeTimeout"]))
            if err is not None:
                self.send_lines([self.event_line("ERROR", err)])
                self.finish("error:%s" % err.get("reason"))
            if initial:
                self.emit([("ADDED", o, None, None) for o in initial])
            if end_bm_rv is not None:
                self.send_bookmark(end_bm_rv, initial_end=True)
            self.loop()
        except StreamEnd:
            pass
        except socket.timeout:
            self.end_reason = "slow-reader" if slow else "write-timeout"
            h.close_connection = True
            h.aborted = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.end_reason = self.end_reason or "client-gone"
            h.close_connection = True
            h.aborted = True
        finally:
            try:
                if not h.aborted:
                    self.sock.settimeout(h.timeout)
            except OSError:
                pass

    def loop(self):
        store, cfg = self.store, self.fake.cfg
        interval = max(0.01, float(cfg["bookmarkInterval"]))
        t0 = time.monotonic()
        total = max(0.0, self.deadline - t0)
        next_bm = t0 + interval if self.allow_bm else float("inf")
        final_at = None
        if self.allow_bm and "no-final-bookmark" not in self.fmap:
            final_at = self.deadline - min(2.0, 0.1 * total)
        final_sent = False
        drop = self.fmap.get("drop-after")
        drop_at = t0 + float(drop.p("seconds", 1.0)) if drop else float("inf")
        bm_only = "bookmark-only" in self.fmap
        last_check = t0
        while True:
            out = []
            self.check_faults(out, None)
            self.send_lines(out)
            now = time.monotonic()
            if self.kill:
                mode = self.kill
                if mode == "clean":
                    self.finish("dropped:clean")
                self.close("dropped:" + mode, rst=(mode == "reset"))
            if store.stopping:
                self.finish("server-stop")
            if now >= drop_at:
                mode = drop.p("mode", "reset")
                if mode == "clean":
                    self.finish("fault:drop-after")
                self.close("fault:drop-after", rst=(mode == "reset"))
            if now >= self.deadline:
                break
            if now - last_check >= 0.5:
                last_check = now
                if self.client_gone():
                    self.end_reason = "client-gone"
                    self.h.close_connection = True
                    raise StreamEnd()
            final_due = final_at is not None and not final_sent and now >= final_at
            bm_due = self.allow_bm and (now >= next_bm or final_due)
            bm_rv = None
            with store.cond:
                evs = store.events_after(self.pos, self.res.rid)
                if evs is None:
                    err = status_obj(410, "Expired", "too old resource version: %d (%d)" % (self.pos, store.oldest))
                    evs = "expired"
                elif not evs:
                    if not bm_due:
                        wake = min(self.deadline, next_bm, drop_at, now + 0.5,
                                   final_at if (final_at is not None and not final_sent) else float("inf"))
                        store.cond.wait(max(0.0, wake - now))
                        continue
                    if bm_only:
                        store.bump()
                    bm_rv = store.rv
            if evs == "expired":
                self.send_lines([self.event_line("ERROR", err)])
                self.finish("error:Expired")
            if evs:
                items = []
                for ev in evs:
                    c = self.convert(ev)
                    if c is None:
                        self.pos = ev.rv
                        continue
                    items.append((c[0], c[1], c[2], ev.rv))
                self.emit(items)
                self.pos = max(self.pos, evs[-1].rv)
                continue
            if bm_rv is not None and bm_rv >= self.pos:
                self.send_bookmark(bm_rv)
                self.pos = bm_rv
            if final_due:
                final_sent = True
            next_bm = now + interval
        if final_at is not None and not final_sent:
            # woke up late: the final bookmark still goes out, after any pending events
            while True:
                with store.cond:
                    evs = store.events_after(self.pos, self.res.rid)
                    bm_rv = store.rv
                if not evs:
                    break
                self.emit([c + (ev.rv,) for ev in evs for c in [self.convert(ev)] if c is not None])
                self.pos = max(self.pos, evs[-1].rv)
            if bm_rv >= self.pos:
                self.send_bookmark(bm_rv)
        self.finish("timeout")


# --------------------------------------------------------------------------------------------
# HTTP handler
# --------------------------------------------------------------------------------------------

BINDINGS = Res("bindings", "bindings", "", "v1", "Binding", True)
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
TEXT_404 = "404 page not found\n"


class Aborted(Exception):
    """The connection was closed without (a complete) response."""


class Target:
    def __init__(self, res, ns, name, sub, watch_prefix):
        self.res, self.ns, self.name, self.sub, self.watch_prefix = res, ns, name, sub, watch_prefix


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi"
    sys_version = ""
    timeout = 300  # idle keep-alive connections are closed after this

    # -- plumbing -----------------------------------------------------------------------------

    def setup(self):
        fake = self.server.fake
        if fake.ssl_ctx is not None:
            self.request.settimeout(10)
            self.request = fake.ssl_ctx.wrap_socket(self.request, server_side=True)
        super().setup()
        self.server.track(self.connection, True)
        self.nreq = 0

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass
        self.server.track(self.connection, False)
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.close()
            except OSError:
                pass

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            sys.stderr.write("fakeapi: %s - %s\n" % (self.address_string(), fmt % args))

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def read_body(self, limit):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = bytearray()
            while True:
                line = self.rfile.readline(1024)
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                if len(data) + n > limit:
                    raise TextError(413, "request body too large")
                data += self.rfile.read(n)
                self.rfile.readline(16)
        n = int(self.headers.get("Content-Length") or 0)
        if n > limit:
            raise TextError(413, "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def std_headers(self):
        fake = self.server.fake
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("X-Kubernetes-Pf-Flowschema-Uid", fake.pf_flowschema)
        self.send_header("X-Kubernetes-Pf-Prioritylevel-Uid", fake.pf_prioritylevel)

    def log_status(self, code):
        if self.entry is not None:
            self.entry["status"] = code

    def respond(self, code, body, ctype="application/json", headers=None, close=False, compress=False):
        fake = self.server.fake
        extra = dict(headers or {})
        if (compress and len(body) > int(fake.cfg["gzipThreshold"])
                and "gzip" in (self.headers.get("Accept-Encoding") or "")):
            body = gzip.compress(body, 1)
            extra["Content-Encoding"] = "gzip"
            extra["Vary"] = "Accept-Encoding"
        self.send_response_only(code)
        self.send_header("Date", self.date_time_string())
        if self.api_request:
            self.std_headers()
        for k, v in extra.items():
            if k.lower() == "connection" and str(v).lower() == "close":
                close = True
                continue
            self.send_header(k, str(v))
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)
        self.log_status(code)

    def send_obj(self, code, obj, headers=None, close=False, compress=False):
        self.respond(code, jdump(obj), "application/json", headers, close, compress)

    def send_text(self, code, text, headers=None, close=False):
        h = {"X-Content-Type-Options": "nosniff"}
        h.update(headers or {})
        self.respond(code, text.encode(), "text/plain; charset=utf-8", h, close)

    def send_status(self, e, close=False):
        self.send_obj(e.code, e.status(), e.headers, close=close)

    def abort(self, rst=False):
        self.close_connection = True
        self.aborted = True
        try:
            if rst:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise Aborted()

    def wait_client(self, seconds):
        """Hold the request for seconds (None = until the client or the server goes away)."""
        end = None if seconds is None else time.monotonic() + float(seconds)
        store = self.server.fake.store
        while True:
            if store.stopping:
                return "server-stop"
            try:
                r, _, _ = select.select([self.connection], [], [], 0)
                if r:
                    if isinstance(self.connection, ssl.SSLSocket):
                        gone = self.connection.recv(1) == b""
                    else:
                        gone = self.connection.recv(1, socket.MSG_PEEK) == b""
                    if gone:
                        return "client-gone"
            except (OSError, ValueError):
                return "client-gone"
            now = time.monotonic()
            if end is not None and now >= end:
                return None
            with store.cond:
                store.cond.wait(0.1 if end is None else max(0.0, min(0.1, end - now)))

    # -- dispatch -----------------------------------------------------------------------------

    def dispatch(self, method):
        fake = self.server.fake
        self.nreq += 1
        self.entry = None
        self.aborted = False
        self.api_request = False
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        q = {k: v[0] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        try:
            body = self.read_body(int(fake.cfg["maxBodyBytes"]))
        except TextError:
            self.send_obj(413, status_obj(413, "RequestEntityTooLarge", "Request entity too large: limit is %d"
                                          % fake.cfg["maxBodyBytes"]), close=True)
            return
        except (ValueError, OSError):
            self.close_connection = True
            return
        try:
            if path == "/_fake" or path.startswith("/_fake/"):
                if fake.cfg["logControlRequests"]:
                    self.entry = fake.log_request(self, method, path, url.query, q)
                self.control(method, path, q, body)
                return
            fake.up.wait(30)  # a restarting server answers once it is back
            self.entry = fake.log_request(self, method, path, url.query, q)
            self.api_request = True
            self.api(method, path, q, body)
        except ApiError as e:
            self.send_status(e)
        except TextError as e:
            self.send_text(e.code, e.text, e.headers)
        except (Aborted, StreamEnd):
            pass
        except (BrokenPipeError, ConnectionResetError, socket.timeout, ssl.SSLError):
            self.close_connection = True
        except OSError:
            self.close_connection = True
        finally:
            if self.entry is not None:
                self.entry["durationMs"] = round((time.monotonic() - self.entry["mono"]) * 1000, 3)

    def route(self, path):
        """Target of an API path, ("discovery", group, version), or None."""
        fake = self.server.fake
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        if not fake.served(group, version):
            return None
        if not rest:
            return ("discovery", group, version)
        watch_prefix = False
        if rest[0] == "watch":
            watch_prefix, rest = True, rest[1:]
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            r = RES_BY_PATH.get((group, version, rest[2]))
            if (r is not None and r.namespaced) or (group == "" and rest[2] == "bindings"):
                ns, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            return None
        if group == "" and rest[0] == "bindings" and ns is not None and len(rest) == 1:
            return Target(BINDINGS, ns, None, None, False)
        res = RES_BY_PATH.get((group, version, rest[0]))
        if res is None and (group, version, rest[0]) in VERSION_ALIASES:
            res = RES_BY_RID[VERSION_ALIASES[(group, version, rest[0])]]
        elif res is None or not fake.res_served(res):
            return None
        if ns is None and res.namespaced and len(rest) > 1:
            return None
        if ns is not None and not res.namespaced:
            return None
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None:
            if not ((sub == "binding" and res.rid == "pods") or (sub == "status" and res.status)):
                return None
        return Target(res, ns, name, sub, watch_prefix)

    def api(self, method, path, q, body):
        fake = self.server.fake
        if path not in PUBLIC_PATHS and not fake.authenticated(self):
            raise ApiError(401, "Unauthorized", "Unauthorized")
        t = self.route(path)
        verb, rbac_verb = method.lower(), None
        rid = ns = name = None
        if isinstance(t, Target):
            rid, ns, name = t.res.rid, t.ns, t.name
            if t.res is BINDINGS:
                verb = rbac_verb = "create" if method == "POST" else None
                verb = "bind" if verb else None
            elif method == "GET":
                if name is None:
                    verb = "watch" if (t.watch_prefix or q.get("watch") in ("true", "1", "True")) else "list"
                elif t.sub is None and (t.watch_prefix or q.get("watch") in ("true", "1", "True")):
                    verb = "watch"  # one object: the same as fieldSelector=metadata.name=<name>
                else:
                    verb = "get" if t.sub != "binding" else None
            elif method == "POST":
                verb = "create" if name is None else ("bind" if t.sub == "binding" else None)
                rbac_verb = "create"
            elif method == "PUT":
                verb = "update" if name is not None else None
            elif method == "PATCH":
                verb = "patch" if name is not None else None
            elif method == "DELETE":
                verb = "delete" if name is not None else "deletecollection"
            rbac_verb = rbac_verb or verb
            if self.entry is not None:
                self.entry.update(kind=rid, verb=verb, namespace=ns, name=name)
        # injected request faults (after authentication, before authorization, like APF); a
        # "delay" composes with one other fault
        tt = t if isinstance(t, Target) else None
        for f in fake.faults.take(("request",), rid, verb, ns, name, path, names=("delay",), first=True):
            self.request_fault(f, tt, verb)
        others = [n for n, (stage, _) in FAULTS.items() if stage == "request" and n != "delay"]
        for f in fake.faults.take(("request",), rid, verb, ns, name, path, names=others, first=True):
            self.request_fault(f, tt, verb)
        if path in ("/healthz", "/livez", "/readyz"):
            return self.send_text(200, "ok")
        if path == "/version":
            return self.send_obj(200, fake.version_info())
        if path == "/api":
            return self.send_obj(200, {"kind": "APIVersions", "versions": ["v1"],
                                       "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                       "serverAddress": "127.0.0.1:%d" % fake.port}]})
        if path == "/apis":
            return self.send_obj(200, fake.api_groups())
        if t is None:
            raise TextError(404, TEXT_404)
        if isinstance(t, tuple):
            return self.send_obj(200, fake.api_resources(t[1], t[2]))
        if verb is None or verb == "deletecollection":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        fake.authorize(rbac_verb if verb != "bind" else "create", t)
        if verb == "list":
            return self.do_list(t.res, t.ns, q, path)
        if verb == "watch":
            return self.do_watch(t.res, t.ns, q, path, t.name)
        if verb == "get":
            return self.do_get(t.res, t.ns, t.name, q, path)
        if verb == "bind":
            return self.do_bind(t.ns, t.name, body, legacy=t.res is BINDINGS, path=path)
        if verb == "create":
            return self.do_create(t.res, t.ns, body)
        if verb == "update":
            return self.do_update(t.res, t.ns, t.name, t.sub, body)
        if verb == "patch":
            return self.do_patch(t.res, t.ns, t.name, t.sub, body)
        if verb == "delete":
            return self.do_delete(t.res, t.ns, t.name, body, q)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def request_fault(self, f, t, verb):
        name = f.name
        close = bool(f.p("close", False))
        if name == "delay":
            self.wait_client(float(f.p("seconds", 1.0)))
            return
        if name == "hang":
            self.wait_client(f.p("seconds"))
            self.abort()
        if name == "reset":
            self.abort(rst=True)
        if name == "close":
            self.abort(rst=False)
        if name == "http-error":
            code = int(f.p("status", 500))
            body = f.p("body", "")
            ctype = f.p("contentType") or ("application/json" if isinstance(body, (dict, list)) else
                                           "text/plain; charset=utf-8")
            data = jdump(body) if isinstance(body, (dict, list)) else str(body).encode()
            return self.finish_fault(code, data, ctype, f.p("headers"), close)
        if name == "429":
            ra = str(f.p("retryAfter", 1))
            self.send_text(429, "Too many requests, please try again later.\n", {"Retry-After": ra}, close)
            raise Aborted()
        if name == "429-shutdown":
            self.send_text(429, "The apiserver is shutting down, please try again later.\n",
                           {"Retry-After": str(f.p("retryAfter", 5))}, close=True)
            raise Aborted()
        if name == "429-status":
            ra = int(f.p("retryAfter", 1))
            e = ApiError(429, "TooManyRequests", "Too many requests: %s" % f.p("message", "storage is (re)initializing"),
                         {"retryAfterSeconds": ra}, {"Retry-After": str(ra)})
            self.send_status(e, close)
            raise Aborted()
        if name == "500":
            msg = f.p("message", "fake internal error")
            e = ApiError(500, "InternalError", "Internal error occurred: %s" % msg, {"causes": [{"message": msg}]})
            self.send_status(e, close)
            raise Aborted()
        if name == "500-text":
            self.send_text(500, f.p("body", "Internal Server Error\n"), None, close)
            raise Aborted()
        if name in ("503", "503-startup"):
            startup = name == "503-startup"
            ra = int(f.p("retryAfter", 5 if startup else 1))
            msg = ("The apiserver hasn't been fully initialized yet, please try again later." if startup
                   else "apiserver is shutting down")
            e = ApiError(503, "ServiceUnavailable", f.p("message", msg), {"retryAfterSeconds": ra},
                         {"Retry-After": str(ra)})
            self.send_status(e, close)
            raise Aborted()
        if name == "504":
            woke = self.wait_client(float(f.p("delay", 60)))
            if woke:
                self.abort()
            e = ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout - "
                         "context deadline exceeded", {})
            self.send_status(e, close)
            raise Aborted()
        if name == "401":
            self.send_status(ApiError(401, "Unauthorized", "Unauthorized"), close)
            raise Aborted()
        if name == "403":
            if t is None:
                raise ApiError(403, "Forbidden", 'forbidden: User "%s" cannot %s path "%s"'
                               % (self.server.fake.user(), verb, urllib.parse.urlsplit(self.path).path))
            self.send_status(self.server.fake.forbidden(verb if verb != "bind" else "create", t), close)
            raise Aborted()
        if name == "404-text":
            self.send_text(404, TEXT_404, None, close)
            raise Aborted()

    def finish_fault(self, code, data, ctype, headers, close):
        self.respond(code, data, ctype, headers, close)
        raise Aborted()

    def json_body(self, body):
        try:
            obj = json.loads(body.decode("utf-8") if body else "")
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request("couldn't get version/kind; json parse error: %s" % e)
        if not isinstance(obj, dict):
            raise bad_request("couldn't get version/kind; json parse error: expected an object")
        return obj

    # -- verbs --------------------------------------------------------------------------------

    def do_get(self, res, ns, name, q, path):
        fake, store = self.server.fake, self.server.fake.store
        rv_s = q.get("resourceVersion", "")
        if fake.faults.take(("list",), res.rid, "get", ns, name, path, names=("too-large-rv",)):
            raise too_large(parse_rv(rv_s) if rv_s not in ("", "0") else store.rv + 1, store.rv)
        with store.cond:
            if rv_s not in ("", "0"):
                fake.wait_rv(parse_rv(rv_s))
            obj = store.objs[res.rid].get(make_key(res, ns, name))
        if obj is None:
            raise not_found(res, name)
        self.send_obj(200, obj, compress=True)

    def do_list(self, res, ns, q, path):
        fake, store, cfg = self.server.fake, self.server.fake.store, self.server.fake.cfg
        rv_s, rvm = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
        cont = q.get("continue", "")
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request('limit: Invalid value: "%s": must be an integer' % q.get("limit"))
        limit = max(0, limit)
        if "sendInitialEvents" in q:
            raise invalid_list_options("sendInitialEvents", "FieldValueForbidden", "sendInitialEvents is forbidden for list")
        validate_rvm(rvm, rv_s, cont)
        if cont and rv_s not in ("", "0"):
            raise bad_request("specifying resource version is not allowed when using continue")
        sel = Selector(res, ns, q.get("labelSelector", ""), q.get("fieldSelector", ""))
        names = ["list-410", "too-large-rv", "truncated-list", "relist-different"]
        if cont:
            names.append("continue-410")
        if rv_s == "0" and not cont:
            names.append("stale-any")
        fs = {f.name: f for f in fake.faults.take(("list",), res.rid, "list", ns, None, path, names=names)}
        if "list-410" in fs:
            raise expired(fs["list-410"].p("message", LIST_TOO_OLD), fs["list-410"].p("reason", "Expired"))
        if "too-large-rv" in fs:
            raise too_large(parse_rv(rv_s) if rv_s not in ("", "0") else store.rv + 1, store.rv)
        if "relist-different" in fs:
            fake.relist_different(res, fs["relist-different"])
        nsrel = res.namespaced and ns is not None

        def rel(key):
            return key.split("/", 1)[1] if nsrel else key

        after = None
        with store.cond:
            cur = store.rv
            if cont:
                trv, start = decode_continue(cont)
                if "continue-410" in fs or (trv >= 0 and trv < store.oldest):
                    raise expired(CONTINUE_EXPIRED, metadata={"continue": encode_continue(-1, start)})
                snap_rv = cur if trv < 0 else trv
                if snap_rv > cur:
                    raise bad_request("invalid continue token: resource version %d is in the future" % trv)
                after = start
            elif rv_s == "":
                snap_rv = cur
            elif rv_s == "0":
                snap_rv = cur
                if "stale-any" in fs:
                    snap_rv = fake.stale_rv(res, fs["stale-any"])
                if not cfg["limitAtRV0"]:
                    limit = 0
            else:
                n = parse_rv(rv_s)
                exact = rvm == "Exact" or (rvm == "" and limit > 0)
                fake.wait_rv(n)
                cur = store.rv
                if exact:
                    if n < store.oldest:
                        raise expired(LIST_TOO_OLD)
                    snap_rv = n
                else:
                    snap_rv = cur
            state = store.state_at(res.rid, snap_rv)
            if state is None:
                raise expired(LIST_TOO_OLD)
        items = sorted((k, o) for k, o in state.items() if sel.match(o))
        if after is not None:
            items = [(k, o) for k, o in items if rel(k) >= after]
        md = {"resourceVersion": str(snap_rv)}
        if limit > 0 and len(items) > limit:
            rest = len(items) - limit
            items = items[:limit]
            md["continue"] = encode_continue(snap_rv, rel(items[-1][0]) + "\x00")
            if not sel.has_selectors:
                md["remainingItemCount"] = rest
        head = jdump({"kind": res.list_kind, "apiVersion": res.api_version, "metadata": md})
        tm = bool(cfg["listItemsTypeMeta"])
        body = b"".join([head[:-1], b',"items":[', b",".join(encoded_item(o, tm) for _, o in items), b"]}"])
        if "truncated-list" in fs:
            f = fs["truncated-list"]
            cut = body[:max(1, int(len(body) * float(f.p("fraction", 0.5))))]
            self.send_response_only(200)
            self.send_header("Date", self.date_time_string())
            self.std_headers()
            self.send_header("Content-Type", "application/json")
            if f.p("chunked", False):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n" % len(cut) + cut + b"\r\n")
            else:
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(cut)
            self.log_status(200)
            self.abort(rst=bool(f.p("rst", False)))
        self.respond(200, body, "application/json", compress=True)

    def do_watch(self, res, ns, q, path, name=None):
        fake, store, cfg = self.server.fake, self.server.fake.store, self.server.fake.cfg
        rv_s, rvm = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
        sie_s = q.get("sendInitialEvents")
        allow_bm = q.get("allowWatchBookmarks") in ("true", "1", "True")
        wl = fake.watchlist_enabled()
        sie = None
        if sie_s is not None:
            if sie_s not in ("true", "false", "1", "0", "True", "False"):
                raise bad_request('sendInitialEvents: Invalid value: "%s"' % sie_s)
            sie = sie_s in ("true", "1", "True")
            if not wl:
                raise invalid_list_options("sendInitialEvents", "FieldValueForbidden",
                                           "sendInitialEvents is forbidden for watch unless the WatchList "
                                           "feature gate is enabled")
            if rvm != "NotOlderThan":
                raise invalid_list_options("resourceVersionMatch", "FieldValueForbidden",
                                           "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        elif rvm:
            raise invalid_list_options("resourceVersionMatch", "FieldValueForbidden",
                                       "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        n = parse_rv(rv_s) if rv_s not in ("", "0") else None
        timeout = 0.0
        if q.get("timeoutSeconds"):
            try:
                timeout = float(q["timeoutSeconds"])  # fractions are a fake-only extension
            except ValueError:
                raise bad_request('timeoutSeconds: Invalid value: "%s"' % q["timeoutSeconds"])
        if timeout <= 0:  # unset or 0: random in [minRequestTimeout, 2*minRequestTimeout)
            m = float(cfg["minRequestTimeout"])
            timeout = random.uniform(m, 2 * m)
        sel = Selector(res, ns, q.get("labelSelector", ""), q.get("fieldSelector", ""))
        if name is not None:
            sel.fields.append(("metadata.name", "=", name))
        start_faults = {f.name: f for f in fake.faults.take(("watch-start",), res.rid, "watch", ns, None, path)}
        if "watch-410-http" in start_faults:
            f = start_faults["watch-410-http"]
            raise expired(f.p("message") or "too old resource version: %d (%d)" % (n or 0, store.oldest),
                          f.p("reason", "Expired"))
        ignore_sie = "ignore-send-initial-events" in start_faults
        if ignore_sie:
            sie = None
        elif sie is None and wl and n is None and not rvm:
            sie = True  # SetListOptionsDefaults on a WatchList-enabled server
        if len(fake.watches) >= int(cfg["maxWatches"]):
            raise ApiError(429, "TooManyRequests", "Too many requests: too many watches",
                           {"retryAfterSeconds": 1}, {"Retry-After": "1"})
        stream_faults = fake.faults.take(("stream",), res.rid, "watch", ns, None, path)
        stale = None
        if rv_s == "0":
            stale = fake.faults.take(("list",), res.rid, "watch", ns, None, path, names=("stale-any",))
        initial, err, end_bm = [], None, None
        with store.cond:
            cur = store.rv
            if n is None:
                if sie is False:
                    pos = cur
                else:
                    snap = fake.stale_rv(res, stale[0]) if stale else cur
                    state = store.state_at(res.rid, snap) or {}
                    initial = fake.order_initial([(k, o) for k, o in state.items() if sel.match(o)])
                    pos = snap
                    if sie and allow_bm:
                        end_bm = snap
                start_rv = pos
            elif sie:
                if not store.cond.wait_for(lambda: store.rv >= n, float(cfg["tooLargeWait"])):
                    err = too_large(n, store.rv).status()
                pos = store.rv
                state = store.objs[res.rid]
                initial = fake.order_initial([(k, o) for k, o in state.items() if sel.match(o)])
                if allow_bm:
                    end_bm = pos
                start_rv = n
            else:
                start_rv = n
                if n < store.oldest:
                    if cfg["youngCache"] and not store.wrapped:
                        pos = store.oldest
                    else:
                        err = status_obj(410, "Expired", "too old resource version: %d (%d)" % (n, store.oldest))
                        pos = n
                else:
                    pos = n
        if err is not None:
            initial, end_bm = [], None
        t0 = time.monotonic()
        ws = WatchStream(self, res, sel, q, stream_faults, allow_bm, t0 + timeout)
        if "short-close" in start_faults:
            ws.deadline = t0
            ws.allow_bm = False
        fake.register_watch(ws, True)
        try:
            ws.run(initial, pos, end_bm, err, start_rv)
        finally:
            fake.register_watch(ws, False)
            if self.entry is not None:
                self.entry.update(events=ws.events_sent, bookmarks=ws.bookmarks_sent, endReason=ws.end_reason,
                                  bytes=ws.bytes_sent)
        if self.aborted:
            raise Aborted()

    def do_bind(self, ns, url_name, body, legacy, path):
        fake, store = self.server.fake, self.server.fake.store
        b = self.json_body(body)
        md = b.get("metadata") or {}
        bname = md.get("name") or ""
        if md.get("namespace") and md["namespace"] != ns:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if legacy:
            url_name = bname
            if not bname:
                raise bad_request("name is required")
        elif url_name != bname:
            raise bad_request("name in URL does not match name in Binding object")
        target = b.get("target") or {}
        errs = []
        if (target.get("kind") or "") not in ("", "Node"):
            errs.append('target.kind: Unsupported value: "%s": supported values: "Node", "<empty>"' % target["kind"])
        if not target.get("name"):
            errs.append("target.name: Required value")
        if errs:
            raise ApiError(500, "Unknown", errs[0] if len(errs) == 1 else "[%s]" % ", ".join(errs))
        drop = fake.faults.take(("bind",), "pods", "bind", ns, url_name, path, names=("bind-commit-drop",))
        pods = RES_BY_RID["pods"]
        node = target["name"]
        with store.cond:
            pod = store.objs["pods"].get(make_key(pods, ns, url_name))
            if pod is None:
                raise not_found(pods, url_name)
            pmd = pod["metadata"]
            if md.get("uid") and md["uid"] != pmd.get("uid"):
                raise conflict(pods, url_name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                               % (md["uid"], pmd.get("uid")))
            if md.get("resourceVersion") and md["resourceVersion"] != pmd.get("resourceVersion"):
                raise conflict(pods, url_name, "Precondition failed: ResourceVersion in precondition: %s, "
                               "ResourceVersion in object meta: %s" % (md["resourceVersion"], pmd.get("resourceVersion")))
            spec = pod.get("spec") or {}
            if pmd.get("deletionTimestamp"):
                raise conflict(pods, url_name, "pod %s is being deleted, cannot be assigned to a host" % url_name,
                               resource="pods/binding")
            if spec.get("nodeName"):
                raise conflict(pods, url_name, 'pod %s is already assigned to node "%s"' % (url_name, spec["nodeName"]),
                               resource="pods/binding")
            if spec.get("schedulingGates"):
                raise conflict(pods, url_name, "pod %s has non-empty .spec.schedulingGates" % url_name,
                               resource="pods/binding")
            new = copy.deepcopy(pod)
            new.setdefault("spec", {})["nodeName"] = node
            if md.get("annotations"):
                new["metadata"].setdefault("annotations", {}).update(md["annotations"])
            status = new.setdefault("status", {})
            if parse_version(fake.cfg["version"]) >= (1, 35):
                status.pop("nominatedNodeName", None)
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conds
            store.commit(pods, new)
        if drop:
            self.abort(rst=bool(drop[0].p("rst", False)))
        self.send_obj(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})

    def do_create(self, res, ns, body):
        fake, store = self.server.fake, self.server.fake.store
        obj = self.json_body(body)
        check_type(res, obj)
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise bad_request("metadata must be an object")
        if res.namespaced:
            if md.get("namespace") and md["namespace"] != ns:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
            md["namespace"] = ns
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789")
                                                          for _ in range(5))
            else:
                raise ApiError(422, "Invalid", '%s "" is invalid: metadata.name: Required value: name or '
                               'generateName is required' % res.kind,
                               {"kind": res.plural, "causes": [{"reason": "FieldValueRequired",
                                                               "message": "Required value: name or generateName is required",
                                                               "field": "metadata.name"}]})
        for k in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp"):
            md.pop(k, None)
        with store.cond:
            key = obj_key(res, obj)
            if key in store.objs[res.rid]:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (res.qualified, md["name"]),
                               res.details(md["name"]))
            stored = store.commit(res, obj)
        self.send_obj(201, stored)

    def do_update(self, res, ns, name, sub, body):
        store = self.server.fake.store
        obj = self.json_body(body)
        check_type(res, obj)
        md = obj.get("metadata") or {}
        if md.get("name") and md["name"] != name:
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (md["name"], name))
        if res.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        with store.cond:
            key = make_key(res, ns, name)
            cur = store.objs[res.rid].get(key)
            if cur is None:
                raise not_found(res, name)
            if md.get("resourceVersion") and md["resourceVersion"] != cur["metadata"]["resourceVersion"]:
                raise conflict(res, name, OPTIMISTIC_LOCK)
            if md.get("uid") and md["uid"] != cur["metadata"].get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                               % (md["uid"], cur["metadata"].get("uid")))
            if sub == "status":
                new = copy.deepcopy(cur)
                if obj.get("status") is None:
                    new.pop("status", None)
                else:
                    new["status"] = copy.deepcopy(obj["status"])
            else:
                new = copy.deepcopy(obj)
                keep_immutable(new, cur)
                if res.status:
                    if "status" in cur:
                        new["status"] = copy.deepcopy(cur["status"])
                    else:
                        new.pop("status", None)
            stored = cur if same_object(new, cur) else store.commit(res, new, prev_key=key)
        self.send_obj(200, stored)

    def do_patch(self, res, ns, name, sub, body):
        store = self.server.fake.store
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        kinds = ("application/merge-patch+json", "application/strategic-merge-patch+json",
                 "application/json-patch+json")
        if ctype not in kinds:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/apply-patch+yaml")
        try:
            patch = json.loads(body.decode("utf-8") if body else "")
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request("error decoding patch: %s" % e)
        with store.cond:
            key = make_key(res, ns, name)
            cur = store.objs[res.rid].get(key)
            if cur is None:
                raise not_found(res, name)
            try:
                if ctype == "application/json-patch+json":
                    new = json_patch(cur, patch)
                else:
                    if not isinstance(patch, dict):
                        raise ValueError("a merge patch must be a JSON object")
                    prv = (patch.get("metadata") or {}).get("resourceVersion") if isinstance(
                        patch.get("metadata"), dict) else None
                    if prv and prv != cur["metadata"]["resourceVersion"]:
                        raise conflict(res, name, OPTIMISTIC_LOCK)
                    new = merge_patch(cur, patch, strategic=ctype.startswith("application/strategic"))
            except ValueError as e:
                raise ApiError(422, "Invalid", str(e))
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "the patch did not produce an object")
            nmd = new.get("metadata") or {}
            if (ctype == "application/json-patch+json" and nmd.get("resourceVersion")
                    and nmd["resourceVersion"] != cur["metadata"]["resourceVersion"]):
                raise conflict(res, name, OPTIMISTIC_LOCK)
            if sub == "status":
                merged = copy.deepcopy(cur)
                if new.get("status") is None:
                    merged.pop("status", None)
                else:
                    merged["status"] = new["status"]
                new = merged
            else:
                keep_immutable(new, cur)
                if res.status:
                    if "status" in cur:
                        new["status"] = copy.deepcopy(cur["status"])
                    else:
                        new.pop("status", None)
            stored = cur if same_object(new, cur) else store.commit(res, new, prev_key=key)
        self.send_obj(200, stored)

    def do_delete(self, res, ns, name, body, q):
        fake, store = self.server.fake, self.server.fake.store
        opts = {}
        if body.strip():
            opts = self.json_body(body)
        pre = opts.get("preconditions") or {}
        grace = q.get("gracePeriodSeconds", opts.get("gracePeriodSeconds"))
        with store.cond:
            key = make_key(res, ns, name)
            cur = store.objs[res.rid].get(key)
            if cur is None:
                raise not_found(res, name)
            cmd = cur["metadata"]
            if pre.get("uid") and pre["uid"] != cmd.get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                               % (pre["uid"], cmd.get("uid")))
            if pre.get("resourceVersion") and pre["resourceVersion"] != cmd.get("resourceVersion"):
                raise conflict(res, name, "Precondition failed: ResourceVersion in precondition: %s, "
                               "ResourceVersion in object meta: %s" % (pre["resourceVersion"], cmd.get("resourceVersion")))
            graceful = (res.rid == "pods" and fake.cfg["podGracefulDelete"] and (cur.get("spec") or {}).get("nodeName")
                        and str(grace) != "0")
            if graceful:
                if cmd.get("deletionTimestamp"):
                    return self.send_obj(200, cur)
                g = int(grace) if grace not in (None, "") else int((cur.get("spec") or {}).get(
                    "terminationGracePeriodSeconds", 30))
                new = copy.deepcopy(cur)
                new["metadata"]["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + g))
                new["metadata"]["deletionGracePeriodSeconds"] = g
                return self.send_obj(200, store.commit(res, new, prev_key=key))
            prev = store.remove(res, key)
            final = with_rv(prev, store.rv)
        if res.rid == "pods":
            return self.send_obj(200, final)
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
              "details": dict(res.details(name), uid=cmd.get("uid"))}
        self.send_obj(200, st)


def validate_rvm(rvm, rv_s, cont):
    if rvm not in ("", "Exact", "NotOlderThan"):
        raise invalid_list_options("resourceVersionMatch", "FieldValueNotSupported",
                                   '"%s": supported values: "Exact", "NotOlderThan", ""' % rvm)
    if rvm:
        if cont:
            raise invalid_list_options("resourceVersionMatch", "FieldValueForbidden",
                                       "resourceVersionMatch is forbidden when continue is provided")
        if not rv_s:
            raise invalid_list_options("resourceVersionMatch", "FieldValueForbidden",
                                       "resourceVersionMatch is forbidden unless resourceVersion is provided")
        if rvm == "Exact" and rv_s == "0":
            raise invalid_list_options("resourceVersionMatch", "FieldValueForbidden",
                                       'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')


def too_large(n, cur):
    return ApiError(504, "Timeout", "Too large resource version: %d, current: %d" % (n, cur),
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                     "retryAfterSeconds": 1}, {"Retry-After": "1"})


def check_type(res, obj):
    if obj.get("kind") and obj["kind"] != res.kind:
        raise bad_request("the kind of the object (%s) does not match the expected kind (%s)" % (obj["kind"], res.kind))
    if obj.get("apiVersion") and obj["apiVersion"] != res.api_version:
        raise bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                          % (obj["apiVersion"], res.api_version))


def keep_immutable(new, cur):
    nmd = new.setdefault("metadata", {})
    cmd = cur.get("metadata") or {}
    for k in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
              "generation"):
        if k in cmd:
            nmd[k] = cmd[k]
        else:
            nmd.pop(k, None)
    nmd["resourceVersion"] = cmd.get("resourceVersion")
    new["kind"], new["apiVersion"] = cur.get("kind"), cur.get("apiVersion")


def same_object(a, b):
    return a == b


# --------------------------------------------------------------------------------------------
# Control API (/_fake/...) — part of the handler, kept apart for readability
# --------------------------------------------------------------------------------------------


class ControlError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _control(self, method, path, q, body):
    fake = self.server.fake
    parts = [urllib.parse.unquote(p) for p in path.split("/")[2:] if p]
    try:
        data = None
        if body.strip():
            try:
                data = json.loads(body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise ControlError(400, "invalid JSON body: %s" % e)
        out = fake.control(method, parts, q, data)
        if out is None:
            raise ControlError(404, "no such control endpoint: %s %s" % (method, path))
        self.respond(200, jdump(out) + b"\n", "application/json")
    except ControlError as e:
        self.respond(e.code, jdump({"error": str(e)}) + b"\n", "application/json")
    except (ValueError, TypeError, KeyError) as e:
        self.respond(400, jdump({"error": "%s: %s" % (type(e).__name__, e)}) + b"\n", "application/json")


Handler.control = _control


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, addr, fake):
        self.fake = fake
        self.conns = set()
        self.conns_lock = threading.Lock()
        self.sem = threading.BoundedSemaphore(int(fake.cfg["maxConnections"]))
        super().__init__(addr, Handler)

    def track(self, sock, add):
        with self.conns_lock:
            if add:
                self.conns.add(sock)
            else:
                self.conns.discard(sock)

    def process_request(self, request, client_address):
        if not self.sem.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.sem.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.sem.release()

    def handle_error(self, request, client_address):
        # clients going away and failed TLS handshakes are normal; anything else is a bug here
        exc = sys.exc_info()[1]
        if self.fake.verbose or not isinstance(exc, (ConnectionError, TimeoutError, ssl.SSLError, OSError)):
            super().handle_error(request, client_address)


def list_items(doc):
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("items"), list) and (
            doc.get("kind", "List").endswith("List")):
        out = []
        for it in doc["items"]:
            if isinstance(it, dict) and "kind" not in it and doc.get("kind", "List") != "List":
                it = dict(it, kind=doc["kind"][:-4], apiVersion=doc.get("apiVersion"))
            out.append(it)
        return out
    if isinstance(doc, dict):
        return [doc]
    raise ValueError("expected an object, a List or an array of objects")


class FakeServer:
    """The fake apiserver. Use start() (serves in a background thread) or serve_forever()."""

    def __init__(self, port=0, snapshot=None, tokens=(), version=None, tls_cert=None, tls_key=None,
                 config=None, verbose=False, start_rv=1000):
        self.cfg = copy.deepcopy(DEFAULT_CONFIG)
        if version:
            self.cfg["version"] = version
        if tokens:
            self.cfg["tokens"] = list(tokens)
        if tls_cert:
            self.cfg["tlsCert"], self.cfg["tlsKey"] = tls_cert, tls_key
        for k, v in (config or {}).items():
            if k not in self.cfg:
                raise ValueError("unknown config key %r" % k)
            self.cfg[k] = v
        self.initial_cfg = copy.deepcopy(self.cfg)
        self.verbose = verbose
        self.store = Store(start_rv, int(self.cfg["historySize"]))
        self.faults = Faults()
        self.req_lock = threading.Lock()
        self.requests = deque(maxlen=int(self.cfg["requestLogSize"]))
        self.req_id = 0
        self.watches = {}
        self.up = threading.Event()  # cleared while a restore plays a restarting server
        self.up.set()
        self.rng = random.Random(7)
        self.pf_flowschema = str(uuid.uuid4())
        self.pf_prioritylevel = str(uuid.uuid4())
        self.snapshot_text = None
        if snapshot:
            with open(snapshot, encoding="utf-8") as f:
                self.snapshot_text = f.read()
        with self.store.cond:
            self.load_items(self.snapshot_items())
            if len(self.snapshot_text or "") > (16 << 20):
                # a big snapshot: encode its objects now, not while railfit starts
                for objs in self.store.objs.values():
                    for o in objs.values():
                        encoded_item(o, bool(self.cfg["listItemsTypeMeta"]))
        self.ssl_ctx = None
        if self.cfg["tlsCert"]:
            self.ssl_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ssl_ctx.load_cert_chain(self.cfg["tlsCert"], self.cfg["tlsKey"])
        self.httpd = _HTTPServer(("127.0.0.1", port), self)
        self.port = self.httpd.server_address[1]
        self.thread = None

    def snapshot_items(self):
        return list_items(json.loads(self.snapshot_text)) if self.snapshot_text else []

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.ssl_ctx else "http", self.port)

    # -- lifecycle ----------------------------------------------------------------------------

    def serve_forever(self):
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self):
        self.thread = threading.Thread(target=self.serve_forever, name="fakeapi", daemon=True)
        self.thread.start()
        return self

    def stop(self, grace=2.0):
        with self.store.cond:
            self.store.stopping = True
            self.store.cond.notify_all()
        self.httpd.shutdown()
        end = time.monotonic() + grace
        while self.watches and time.monotonic() < end:
            time.sleep(0.02)
        with self.httpd.conns_lock:
            conns = list(self.httpd.conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.httpd.server_close()

    # -- state --------------------------------------------------------------------------------

    def load_items(self, items):
        """Add objects that nothing else references, e.g. freshly parsed JSON (caller holds
        store.cond). Returns the stored objects."""
        out = []
        for it in items:
            if not isinstance(it, dict):
                raise ValueError("an item is not an object")
            it = dict(it)
            res = res_for_object(it)
            if res is None and it.get("kind") and "/" in (it.get("apiVersion") or ""):
                group = it["apiVersion"].split("/")[0]
                res = RES_BY_GK.get((group, it["kind"]))
            if res is None:
                # resource.k8s.io/v1beta* objects are stored as v1
                if (it.get("apiVersion") or "").startswith("resource.k8s.io/"):
                    res = RES_BY_GK.get(("resource.k8s.io", it.get("kind")))
            if res is None:
                if self.verbose:
                    sys.stderr.write("fakeapi: skipping %s %s\n" % (it.get("apiVersion"), it.get("kind")))
                continue
            md = it.get("metadata") or {}
            if not md.get("name"):
                raise ValueError("an object of kind %s has no metadata.name" % res.kind)
            if res.namespaced and not md.get("namespace"):
                it["metadata"] = md = dict(md, namespace="default")
            key = obj_key(res, it)
            cur = self.store.objs[res.rid].get(key)
            if cur is not None and md.get("uid") and md["uid"] != cur["metadata"].get("uid"):
                self.store.remove(res, key)  # same name, new UID: a recreation
            out.append(self.store.commit(res, it, owned=True))
        return out

    def make_large(self, res, target, nbytes):
        with self.store.cond:
            table = self.store.objs[res.rid]
            key = target if target in table else (sorted(table)[0] if table else None)
            if key is None:
                return None
            new = copy.deepcopy(table[key])
            pad = ("é" * (nbytes // 2 + 1))[: max(1, nbytes // 2)]
            new.setdefault("metadata", {}).setdefault("annotations", {})["fake.railfit.io/padding"] = pad
            return self.store.commit(res, new, prev_key=key, owned=True)

    def relist_different(self, res, f):
        with self.store.cond:
            table = self.store.objs[res.rid]
            names = f.p("names")
            keys = [k for k in names if k in table] if names else sorted(table)[: int(f.p("drop", 1))]
            removed = [self.store.remove(res, k) for k in keys]
            if f.p("recreate") and removed:
                o = copy.deepcopy(removed[0])
                for k in ("uid", "resourceVersion", "creationTimestamp"):
                    o["metadata"].pop(k, None)
                self.store.commit(res, o)

    def stale_rv(self, res, f):
        """The RV of an out-of-date snapshot for stale-any (caller holds store.cond)."""
        store = self.store
        if f.p("rv") is not None:
            rv = int(f.p("rv"))
        else:
            lag = max(1, int(f.p("lag", 1)))
            rv = store.oldest
            seen = 0
            for ev in reversed(store.hist):
                if ev.rid == res.rid:
                    seen += 1
                    if seen == lag:
                        rv = ev.rv - 1
                        break
        return max(store.oldest, min(rv, store.rv))

    def order_initial(self, pairs):
        order = self.cfg["initialOrder"]
        pairs = sorted(pairs, key=lambda kv: kv[0], reverse=(order == "reverse-key"))
        if order == "random":
            self.rng.shuffle(pairs)
        return [o for _, o in pairs]

    def wait_rv(self, n):
        """Wait (caller holds store.cond) until the store reached RV n, else 504 too large."""
        store = self.store
        if store.rv >= n:
            return
        if not store.cond.wait_for(lambda: store.rv >= n, float(self.cfg["tooLargeWait"])):
            raise too_large(n, store.rv)

    def register_watch(self, ws, add):
        with self.store.cond:
            if add:
                self.watches[ws.id] = ws
            else:
                self.watches.pop(ws.id, None)

    # -- version-dependent behaviour ----------------------------------------------------------

    def minor(self):
        return parse_version(self.cfg["version"])

    def watchlist_enabled(self):
        if self.cfg["watchList"] is not None:
            return bool(self.cfg["watchList"])
        v = self.minor()
        return v == (1, 32) or v >= (1, 34)

    def served(self, group, version):
        gv = "%s/%s" % (group, version) if group else version
        if gv in (self.cfg["disabledGroupVersions"] or []):
            return False
        if gv in (self.cfg.get("enabledGroupVersions") or []):
            return True
        if group == "resource.k8s.io":
            return version == "v1" and self.minor() >= (1, 34)
        return (group, version) in (("", "v1"), ("coordination.k8s.io", "v1"), ("events.k8s.io", "v1"))

    def version_info(self):
        v = self.cfg["version"]
        major, minor = parse_version(v)
        out = {"major": str(major), "minor": str(minor)}
        if (major, minor) >= (1, 31):
            out.update(emulationMajor=str(major), emulationMinor=str(minor), minCompatibilityMajor=str(major),
                       minCompatibilityMinor=str(minor - 1))
        out.update(gitVersion=v, gitCommit="0123456789abcdef0123456789abcdef01234567", gitTreeState="clean",
                   buildDate="2025-11-11T11:11:11Z", goVersion="go1.25.3", compiler="gc", platform="linux/amd64")
        return out

    def api_groups(self):
        groups = []
        for g in ("coordination.k8s.io", "events.k8s.io", "resource.k8s.io"):
            if self.served(g, "v1"):
                gv = {"groupVersion": g + "/v1", "version": "v1"}
                groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def res_served(self, r):
        return r.since is None or self.minor() >= r.since

    def api_resources(self, group, version):
        rl = []
        for r in RESOURCES:
            if r.group != group or r.version != version or not self.res_served(r):
                continue
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            rl.append({"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced,
                       "kind": r.kind, "verbs": verbs})
            if r.status:
                rl.append({"name": r.plural + "/status", "singularName": "", "namespaced": r.namespaced,
                           "kind": r.kind, "verbs": ["get", "patch", "update"]})
            if r.rid == "pods":
                rl.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                           "verbs": ["create"]})
        if group == "":
            rl.append({"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                       "verbs": ["create"]})
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": "%s/%s" % (group, version) if group else version, "resources": rl}

    # -- auth ---------------------------------------------------------------------------------

    def authenticated(self, h):
        tokens = self.cfg["tokens"] or []
        if not tokens:
            return True
        auth = h.headers.get("Authorization") or ""
        return auth.startswith("Bearer ") and auth[7:].strip() in tokens

    def user(self):
        return (self.cfg["rbac"] or {}).get("user") or "system:serviceaccount:railfit:railfit"

    def forbidden(self, verb, t):
        res = t.res
        resource = res.plural + ("/" + t.sub if t.sub else "")
        msg = 'User "%s" cannot %s resource "%s" in API group "%s" %s' % (
            self.user(), verb, resource, res.group,
            'in the namespace "%s"' % t.ns if t.ns else "at the cluster scope")
        if t.name:
            full = '%s "%s" is forbidden: %s' % (res.qualified, t.name, msg)
        else:
            full = "%s is forbidden: %s" % (res.qualified, msg)
        details = {}
        if t.name:
            details["name"] = t.name
        if res.group:
            details["group"] = res.group
        details["kind"] = res.plural
        return ApiError(403, "Forbidden", full, details, {"X-Content-Type-Options": "nosniff"})

    def authorize(self, verb, t):
        rb = self.cfg["rbac"]
        if not rb:
            return
        resource = t.res.plural + ("/" + t.sub if t.sub else "")

        def hit(rule):
            verbs = rule.get("verb", rule.get("verbs", "*"))
            verbs = [verbs] if isinstance(verbs, str) else verbs
            ress = rule.get("resource", rule.get("resources", "*"))
            ress = [ress] if isinstance(ress, str) else ress
            if "*" not in verbs and verb not in verbs:
                return False
            if "*" not in ress and resource not in ress:
                return False
            if "group" in rule and rule["group"] not in ("*", t.res.group):
                return False
            if rule.get("namespace") and rule["namespace"] != t.ns:
                return False
            return True

        denied = any(hit(r) for r in rb.get("deny") or [])
        if "allow" in rb and not any(hit(r) for r in rb.get("allow") or []):
            denied = True
        if denied:
            raise self.forbidden(verb, t)

    # -- request log --------------------------------------------------------------------------

    def log_request(self, h, method, path, raw_query, q):
        auth = h.headers.get("Authorization")
        headers = {}
        for k, v in h.headers.items():
            headers[k] = "<redacted>" if k.lower() == "authorization" else v
        with self.req_lock:
            self.req_id += 1
            e = {"id": self.req_id, "time": time.time(), "mono": time.monotonic(), "method": method,
                 "path": path, "rawQuery": raw_query, "query": q,
                 "userAgent": h.headers.get("User-Agent"), "accept": h.headers.get("Accept"),
                 "acceptEncoding": h.headers.get("Accept-Encoding"), "contentType": h.headers.get("Content-Type"),
                 "authorization": "none" if not auth else ("bearer" if auth.startswith("Bearer ") else "other"),
                 "tokenValid": (self.authenticated(h) if self.cfg["tokens"] else None),
                 "headers": headers, "remotePort": h.client_address[1], "connectionRequest": h.nreq,
                 "kind": None, "verb": None, "namespace": None, "name": None, "status": None, "durationMs": None}
            self.requests.append(e)
        return e

    # -- control API --------------------------------------------------------------------------

    def snapshot_state(self, kind=None):
        with self.store.cond:
            out = {"resourceVersion": str(self.store.rv), "oldestResourceVersion": str(self.store.oldest),
                   "objects": {}}
            for r in RESOURCES:
                if kind and find_res(kind) is not r:
                    continue
                table = self.store.objs[r.rid]
                out["objects"][r.rid] = [table[k] for k in sorted(table)]
            return out

    def reset(self, data):
        with self.store.cond:
            for ws in self.watches.values():
                ws.kill = "clean"
            self.store.cond.notify_all()
        end = time.monotonic() + 2
        while self.watches and time.monotonic() < end:
            time.sleep(0.01)
        self.faults.remove()
        with self.req_lock:
            self.requests.clear()
        self.cfg = copy.deepcopy(self.initial_cfg)
        with self.store.cond:
            self.store.history_size = int(self.cfg["historySize"])
            if data and data.get("resourceVersion") is not None:
                self.store.rv = int(data["resourceVersion"])
            self.store.clear()
            if not data or data.get("objects", True):
                self.load_items(self.snapshot_items())
            return {"resourceVersion": str(self.store.rv)}

    def restore(self, data):
        """An etcd restore from a backup: the objects go back to an earlier state (the snapshot,
        or `objects`), the resourceVersion counter back to `resourceVersion` (lower than now),
        the history is gone, and open watches end as a restarting API server ends them
        (`drop`: reset, eof or clean). Unlike reset, faults, config and the request log stay."""
        d = data or {}
        mode = d.get("drop", "reset")
        if mode not in ("clean", "eof", "reset"):
            raise ControlError(400, "drop must be clean, eof or reset")
        try:
            rv = int(d["resourceVersion"])
        except (KeyError, TypeError, ValueError):
            raise ControlError(400, "restore needs resourceVersion, an integer")
        with self.store.cond:
            if rv >= self.store.rv:
                raise ControlError(400, "resourceVersion %d is not below the current %d: a "
                                   "restore goes back" % (rv, self.store.rv))
            # down: new requests wait until the restored server is up, none sees the old state
            self.up.clear()
            for ws in self.watches.values():
                ws.kill = mode
            self.store.cond.notify_all()
        try:
            end = time.monotonic() + 2
            while self.watches and time.monotonic() < end:
                time.sleep(0.01)
            with self.store.cond:
                self.store.rv = rv
                self.store.clear()
                items = d.get("objects")
                self.load_items(self.snapshot_items() if items is None else list(items))
                return {"resourceVersion": str(self.store.rv)}
        finally:
            self.up.set()

    def set_config(self, data):
        if not isinstance(data, dict):
            raise ControlError(400, "config must be a JSON object")
        for k in data:
            if k not in self.cfg:
                raise ControlError(400, "unknown config key %r; known: %s" % (k, ", ".join(sorted(self.cfg))))
        self.cfg.update(copy.deepcopy(data))
        if "historySize" in data:
            self.store.history_size = int(self.cfg["historySize"])
        if ("tlsCert" in data or "tlsKey" in data) and self.ssl_ctx is not None:
            self.ssl_ctx.load_cert_chain(self.cfg["tlsCert"], self.cfg["tlsKey"])
        return self.cfg

    def allocate(self, d):
        claims = RES_BY_RID["resourceclaims"]
        ns, name = d.get("namespace") or "default", d.get("name")
        if not name:
            raise ControlError(400, "allocate needs name (and namespace) of a ResourceClaim")
        with self.store.cond:
            key = make_key(claims, ns, name)
            cur = self.store.objs["resourceclaims"].get(key)
            if cur is None:
                raise ControlError(404, 'resourceclaims "%s/%s" not found' % (ns, name))
            new = copy.deepcopy(cur)
            status = new.setdefault("status", {})
            if d.get("deallocate"):
                status.pop("allocation", None)
                status.pop("reservedFor", None)
                status.pop("devices", None)
                if not status:
                    new.pop("status", None)
                return self.store.commit(claims, new, prev_key=key)
            alloc = {"devices": {"results": d.get("results") or []}}
            if d.get("config"):
                alloc["devices"]["config"] = d["config"]
            if d.get("nodeSelector"):
                alloc["nodeSelector"] = d["nodeSelector"]
            elif d.get("node"):
                alloc["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [d["node"]]}]}]}
            if d.get("allocationTimestamp"):
                alloc["allocationTimestamp"] = d["allocationTimestamp"]
            status["allocation"] = alloc
            reserved = d.get("reservedFor")
            if reserved is None and d.get("pod"):
                pns, _, pname = d["pod"].rpartition("/")
                pod = self.store.objs["pods"].get("%s/%s" % (pns or ns, pname))
                if pod is None:
                    raise ControlError(404, 'pods "%s" not found' % d["pod"])
                reserved = [{"resource": "pods", "name": pname, "uid": pod["metadata"]["uid"]}]
            if reserved is not None:
                status["reservedFor"] = reserved
            if d.get("devices") is not None:
                status["devices"] = d["devices"]
            return self.store.commit(claims, new, prev_key=key)

    def control(self, method, parts, q, data):
        head = parts[0] if parts else ""
        if method == "GET" and head == "state":
            return self.snapshot_state(q.get("kind"))
        if head == "objects":
            if method == "POST" and len(parts) == 1:
                if data is None:
                    raise ControlError(400, "POST /_fake/objects needs an object, a List or an array")
                items = list_items(data)
                if q.get("kind"):
                    r = find_res(q["kind"])
                    if r is None:
                        raise ControlError(400, "unknown kind %r" % q["kind"])
                    items = [dict(i, kind=r.kind, apiVersion=r.api_version) for i in items]
                with self.store.cond:
                    for it in items:
                        if res_for_object(it) is None:
                            raise ControlError(400, "unknown kind/apiVersion %r %r" % (it.get("kind"), it.get("apiVersion")))
                    stored = self.load_items(items)
                    return {"resourceVersion": str(self.store.rv), "items": stored}
            if method == "DELETE" and len(parts) in (3, 4):
                r = find_res(parts[1])
                if r is None:
                    raise ControlError(400, "unknown kind %r" % parts[1])
                ns, name = (parts[2], parts[3]) if len(parts) == 4 else (None, parts[2])
                if r.namespaced and ns is None:
                    raise ControlError(400, "%s is namespaced: DELETE /_fake/objects/%s/{namespace}/{name}" % (r.plural, r.plural))
                with self.store.cond:
                    key = make_key(r, ns, name)
                    if key not in self.store.objs[r.rid]:
                        raise ControlError(404, "%s %s not found" % (r.plural, key))
                    self.store.remove(r, key)
                    return {"resourceVersion": str(self.store.rv)}
            return None
        if method == "POST" and head == "allocate":
            return self.allocate(data or {})
        if head in ("fault", "faults"):
            if method == "POST":
                specs = data.get("faults") if isinstance(data, dict) and "faults" in data else data
                specs = specs if isinstance(specs, list) else [specs]
                try:
                    ids = [self.faults.add(s).id for s in specs]
                except ValueError as e:
                    raise ControlError(400, str(e))
                return {"id": ids[0] if len(ids) == 1 else None, "ids": ids}
            if method == "GET":
                return {"faults": self.faults.describe()}
            if method == "DELETE":
                n = self.faults.remove(int(parts[1]) if len(parts) > 1 else None)
                return {"removed": n}
            return None
        if head == "config":
            if method == "GET":
                return self.cfg
            if method == "POST":
                return self.set_config(data)
            return None
        if method == "POST" and head == "compact":
            with self.store.cond:
                rv = (data or {}).get("resourceVersion", (data or {}).get("rv"))
                return {"oldestResourceVersion": str(self.store.compact(int(rv) if rv is not None else self.store.rv)),
                        "resourceVersion": str(self.store.rv)}
        if method == "POST" and head == "bump":
            with self.store.cond:
                return {"resourceVersion": str(self.store.bump(int((data or {}).get("by", 1))))}
        if method == "GET" and head == "watches":
            with self.store.cond:
                return {"watches": [w.describe() for w in self.watches.values()]}
        if method == "POST" and head == "drop-watches":
            d = data or {}
            mode = d.get("mode", "clean")
            if mode not in ("clean", "eof", "reset"):
                raise ControlError(400, "mode must be clean, eof or reset")
            r = find_res(d["kind"]) if d.get("kind") else None
            n = 0
            with self.store.cond:
                for w in self.watches.values():
                    if r is None or w.res is r:
                        w.kill = mode
                        n += 1
                self.store.cond.notify_all()
            return {"dropped": n}
        if head == "requests":
            if method == "DELETE":
                with self.req_lock:
                    self.requests.clear()
                return {"removed": True}
            if method == "GET":
                since = int(q.get("since", 0))
                kind = find_res(q["kind"]).rid if q.get("kind") and find_res(q["kind"]) else q.get("kind")
                with self.req_lock:
                    out = [dict(e) for e in self.requests
                           if e["id"] > since and (not kind or e["kind"] == kind)
                           and (not q.get("verb") or e["verb"] == q["verb"])
                           and (not q.get("path") or q["path"] in e["path"])]
                return {"requests": out}
            return None
        if method == "POST" and head == "reset":
            return self.reset(data)
        if method == "POST" and head == "restore":
            return self.restore(data)
        return None


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fakeapi.py", description="fake kube-apiserver for railfit tests")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = pick a free one)")
    ap.add_argument("--snapshot", help="kubectl-style List (JSON) to load at start and on /_fake/reset")
    ap.add_argument("--token", action="append", default=[], help="require this bearer token (repeatable)")
    ap.add_argument("--version", dest="kversion", help="gitVersion to report, e.g. v1.34.2 (default v1.35.0)")
    ap.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate")
    ap.add_argument("--tls-key", help="private key for --tls-cert")
    ap.add_argument("--start-rv", type=int, default=1000, help="resourceVersion before the snapshot is loaded")
    ap.add_argument("--config", help="JSON object of control-API config keys to apply at start")
    ap.add_argument("--verbose", "-v", action="store_true", help="log requests to stderr")
    a = ap.parse_args(argv)
    if bool(a.tls_cert) != bool(a.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    cfg = json.loads(a.config) if a.config else None
    try:
        fake = FakeServer(port=a.port, snapshot=a.snapshot, tokens=a.token, version=a.kversion,
                          tls_cert=a.tls_cert, tls_key=a.tls_key, config=cfg, verbose=a.verbose,
                          start_rv=a.start_rv)
    except (OSError, ValueError, ssl.SSLError) as e:
        sys.stderr.write("fakeapi: %s\n" % e)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    fake.start()
    print("listening on %s" % fake.url, flush=True)
    while not stop.wait(0.5):
        pass
    fake.stop()
    return 0


# --------------------------------------------------------------------------------------------
# Test helper: run the fake as a subprocess and drive its control API
# --------------------------------------------------------------------------------------------


class FakeAPI:
    """Start fakeapi.py as a subprocess and call its control API.

        with FakeAPI(snapshot="cluster.json", token="T") as api:
            api.fault("watch-410", kind="resourceslices")
            ... point railfit at api.url ...
            api.wait_watches(["nodes", "pods"])
            assert api.state()["objects"]["pods"] == ...
    """

    def __init__(self, snapshot=None, token=None, version=None, tls_cert=None, tls_key=None, port=0,
                 config=None, extra_args=(), verbose=False, startup_timeout=15.0):
        self.args = [sys.executable, os.path.abspath(__file__), "--port", str(port)]
        if snapshot:
            self.args += ["--snapshot", snapshot]
        for t in ([token] if isinstance(token, str) else (token or [])):
            self.args += ["--token", t]
        if version:
            self.args += ["--version", version]
        if tls_cert:
            self.args += ["--tls-cert", tls_cert, "--tls-key", tls_key]
        if config:
            self.args += ["--config", json.dumps(config)]
        if verbose:
            self.args.append("--verbose")
        self.args += list(extra_args)
        self.startup_timeout = startup_timeout
        self.proc = None
        self.url = None
        self.port = None
        self.tls = bool(tls_cert)

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        end = time.monotonic() + self.startup_timeout
        while time.monotonic() < end:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if r:
                line = self.proc.stdout.readline()
                m = re.match(r"listening on (https?://127\.0\.0\.1:(\d+))", line or "")
                if m:
                    self.url, self.port = m.group(1), int(m.group(2))
                    return self
                if not line:
                    break
            if self.proc.poll() is not None:
                break
        self.stop()
        raise RuntimeError("fakeapi did not start: %s" % " ".join(self.args))

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- raw HTTP -----------------------------------------------------------------------------

    def connection(self, timeout=30):
        if self.tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers dict with lower-case keys, body bytes)."""
        conn = self.connection(timeout)
        try:
            data = body if isinstance(body, (bytes, type(None))) else (
                body.encode() if isinstance(body, str) else json.dumps(body).encode())
            h = dict(headers or {})
            if data is not None and "Content-Type" not in h:
                h["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def ctl(self, method, path, body=None, **query):
        if query:
            path += "?" + urllib.parse.urlencode(query)
        status, _, data = self.request(method, "/_fake/" + path.lstrip("/"), body)
        out = json.loads(data) if data else None
        if status != 200:
            raise RuntimeError("fakeapi %s /_fake/%s: %d %s" % (method, path, status, out))
        return out

    # -- control API shortcuts ----------------------------------------------------------------

    def fault(self, fault, **params):
        params["fault"] = fault
        return self.ctl("POST", "fault", params)["id"]

    def faults(self):
        return self.ctl("GET", "faults")["faults"]

    def clear_faults(self, fid=None):
        return self.ctl("DELETE", "faults" if fid is None else "faults/%d" % fid)

    def put(self, *objs):
        return self.ctl("POST", "objects", list(objs))["items"]

    def delete(self, kind, name, namespace=None):
        path = "objects/%s/%s%s" % (kind, namespace + "/" if namespace else "", name)
        return self.ctl("DELETE", path)

    def allocate(self, namespace, name, results, node=None, pod=None, **extra):
        body = dict(extra, namespace=namespace, name=name, results=results)
        if node:
            body["node"] = node
        if pod:
            body["pod"] = pod
        return self.ctl("POST", "allocate", body)

    def state(self, kind=None):
        return self.ctl("GET", "state", **({"kind": kind} if kind else {}))

    def requests(self, **filters):
        return self.ctl("GET", "requests", **filters)["requests"]

    def clear_requests(self):
        return self.ctl("DELETE", "requests")

    def config(self, **kw):
        return self.ctl("POST", "config", kw) if kw else self.ctl("GET", "config")

    def reset(self, **kw):
        return self.ctl("POST", "reset", kw or None)

    def restore(self, rv, drop="reset", objects=None):
        body = {"resourceVersion": rv, "drop": drop}
        if objects is not None:
            body["objects"] = objects
        return self.ctl("POST", "restore", body)

    def compact(self, rv=None):
        return self.ctl("POST", "compact", {} if rv is None else {"resourceVersion": rv})

    def bump(self, by=1):
        return self.ctl("POST", "bump", {"by": by})

    def watches(self):
        return self.ctl("GET", "watches")["watches"]

    def drop_watches(self, kind=None, mode="clean"):
        return self.ctl("POST", "drop-watches", {"kind": kind, "mode": mode})

    def wait_watches(self, kinds, timeout=10.0):
        """Wait until there is an open watch for every kind in kinds; returns them."""
        want = {find_res(k).rid for k in kinds}
        end = time.monotonic() + timeout
        while True:
            ws = self.watches()
            if want <= {w["kind"] for w in ws}:
                return ws
            if time.monotonic() > end:
                raise TimeoutError("watches open: %s, wanted %s" % (sorted(w["kind"] for w in ws), sorted(want)))
            time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
