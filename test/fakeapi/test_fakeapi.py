"""Self-tests of the fake kube-apiserver (fakeapi.py), driven by a plain Python client that sees
the raw HTTP/1.1 chunks. Covers lists and pagination, resourceVersion rules, watches (resume,
bookmarks, 410 paths, selectors, streaming lists), binding, patch, writes, auth, TLS, the control
API and every injectable fault. Python 3 standard library only.

Prints a closing "N passed, N failed" line and exits non-zero on failure."""

import base64
import glob
import gzip
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import fakeapi  # noqa: E402

Q = urllib.parse.quote


# ------------------------------------------------------------------------------------------------
# A raw HTTP/1.1 client that keeps chunk boundaries visible
# ------------------------------------------------------------------------------------------------


class RawConn:
    def __init__(self, port, timeout=5.0, rcvbuf=None, ssl_ctx=None):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        if ssl_ctx is not None:
            s = ssl_ctx.wrap_socket(s, server_hostname="127.0.0.1")
        self.s = s
        self.buf = b""

    def send(self, method, path, headers=None, body=None):
        h = {"Host": "127.0.0.1", "User-Agent": "fakeapi-selftest/1.0", "Accept": "application/json"}
        h.update(headers or {})
        if body is not None:
            body = body if isinstance(body, bytes) else json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
            h["Content-Length"] = str(len(body))
        req = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        self.s.sendall(req.encode() + (body or b""))

    def _fill(self):
        data = self.s.recv(65536)
        if not data:
            raise EOFError()
        self.buf += data

    def read_until(self, sep):
        while sep not in self.buf:
            self._fill()
        i = self.buf.index(sep)
        out, self.buf = self.buf[:i], self.buf[i + len(sep):]
        return out

    def read_exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_head(self):
        head = self.read_until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        code = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        return code, headers

    def read_chunk(self):
        line = self.read_until(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            self.read_until(b"\r\n")
            return None
        data = self.read_exact(size)
        if self.read_exact(2) != b"\r\n":
            raise ValueError("bad chunk trailer")
        return data

    def read_body(self, headers):
        if "chunked" in headers.get("transfer-encoding", ""):
            out = b""
            while True:
                c = self.read_chunk()
                if c is None:
                    return out
                out += c
        return self.read_exact(int(headers.get("content-length", 0)))

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


class Watch:
    """One watch request; items are parsed events or {"type": "<garbage>", "raw": bytes}."""

    def __init__(self, api, path, headers=None, timeout=5.0, rcvbuf=None, read_head=True):
        self.conn = RawConn(api.port, timeout, rcvbuf)
        self.conn.send("GET", path, headers)
        self.chunks, self.stream, self.items, self.end = [], b"", [], None
        self.pending = b""
        self.consumed = 0
        self.body = None
        if read_head:
            self.head()

    def head(self):
        self.status, self.headers = self.conn.read_head()
        if self.status != 200 or "chunked" not in self.headers.get("transfer-encoding", ""):
            self.body = self.conn.read_body(self.headers)
            self.end = "response"

    def json(self):
        return json.loads(self.body)

    def pump(self, timeout=5.0):
        if self.end:
            return False
        self.conn.s.settimeout(timeout)
        try:
            c = self.conn.read_chunk()
        except EOFError:
            self.end = "eof"
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.end = "reset"
            return False
        if c is None:
            self.end = "terminated"
            return False
        self.chunks.append(c)
        self.stream += c
        self.pending += c
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            if not line.strip():
                continue
            try:
                self.items.append(json.loads(line))
            except ValueError:
                self.items.append({"type": "<garbage>", "raw": line})
        return True

    def next(self, timeout=5.0):
        while self.consumed >= len(self.items):
            if not self.pump(timeout):
                return None
        self.consumed += 1
        return self.items[self.consumed - 1]

    def drain(self, timeout=10.0):
        end = time.monotonic() + timeout
        try:
            while self.pump(max(0.01, end - time.monotonic())):
                pass
        except socket.timeout:
            self.end = "timeout"
        return self.items

    def types(self):
        return [e["type"] for e in self.items]

    def close(self):
        self.conn.close()


# ------------------------------------------------------------------------------------------------
# Fixture cluster
# ------------------------------------------------------------------------------------------------


def node(name, **labels):
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": labels},
            "spec": {}, "status": {"capacity": {"cpu": "8"}}}


def pod(ns, name, phase="Pending", node_name=None, scheduler="default-scheduler", **labels):
    spec = {"schedulerName": scheduler, "containers": [{"name": "c", "image": "busybox"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": spec, "status": {"phase": phase}}


def slice_(name, node_name, driver="gpu.nvidia.com"):
    return {"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}


def claim(ns, name):
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


def cluster():
    p1 = pod("ml", "p1", scheduler="railfit")
    p1["metadata"]["annotations"] = {"note": "naïve café ✓ 描述"}
    return {"kind": "List", "apiVersion": "v1", "items": [
        node("n1", zone="a"), node("n2", zone="a"), node("n3", zone="b"),
        p1, pod("ml", "p2", "Running", "n1", app="train"), pod("ml", "p3", "Succeeded", "n2"),
        pod("web", "w1", "Running", "n2", app="web"),
        slice_("n1-gpu", "n1"), slice_("n2-gpu", "n2"),
        claim("ml", "c1"), claim("web", "c2"),
        {"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "gpu.nvidia.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
    ]}


BASE_CONFIG = {"tooLargeWait": 0.3}


class Base(unittest.TestCase):
    api = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fakeapi-test-")
        cls.snap = os.path.join(cls.tmp, "cluster.json")
        with open(cls.snap, "w") as f:
            json.dump(cluster(), f)
        cls.api = fakeapi.FakeAPI(snapshot=cls.snap, config=BASE_CONFIG).start()

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.api.reset()
        self.watches = []

    def tearDown(self):
        for w in self.watches:
            w.close()

    # helpers
    def get(self, path, headers=None):
        s, h, b = self.api.request("GET", path, headers=headers)
        return s, h, (json.loads(b) if b and h.get("content-type", "").startswith("application/json") else b)

    def watch(self, path, **kw):
        w = Watch(self.api, path, **kw)
        self.watches.append(w)
        return w

    def rv(self):
        return int(self.api.state()["resourceVersion"])

    def put_pod(self, ns, name, **kw):
        return self.api.put(pod(ns, name, **kw))[0]

    def list_names(self, path):
        s, _, d = self.get(path)
        self.assertEqual(s, 200, d)
        return [("%s/%s" % (i["metadata"].get("namespace"), i["metadata"]["name"]) if i["metadata"].get("namespace")
                 else i["metadata"]["name"]) for i in d["items"]], d


# ------------------------------------------------------------------------------------------------
# Lists, resourceVersion, pagination
# ------------------------------------------------------------------------------------------------


class Lists(Base):
    def test_discovery_version_health(self):
        s, _, v = self.get("/version")
        self.assertEqual((s, v["gitVersion"], v["major"], v["minor"]), (200, "v1.35.0", "1", "35"))
        self.assertEqual(self.get("/healthz")[2], b"ok")
        self.assertEqual(self.get("/readyz")[0], 200)
        self.assertEqual(self.get("/api")[2]["versions"], ["v1"])
        groups = {g["name"]: g for g in self.get("/apis")[2]["groups"]}
        self.assertEqual(groups["resource.k8s.io"]["preferredVersion"]["version"], "v1")
        names = {r["name"] for r in self.get("/apis/resource.k8s.io/v1")[2]["resources"]}
        self.assertTrue({"resourceslices", "resourceclaims", "resourceclaims/status", "deviceclasses"} <= names)
        self.assertIn("pods/binding", {r["name"] for r in self.get("/api/v1")[2]["resources"]})
        s, h, b = self.get("/apis/nope.k8s.io/v1/things")
        self.assertEqual((s, b, h["content-type"]), (404, b"404 page not found\n", "text/plain; charset=utf-8"))
        self.api.config(version="v1.34.2")
        self.assertEqual(self.get("/version")[2]["gitVersion"], "v1.34.2")

    def test_list_shape_and_rvs(self):
        s, h, d = self.get("/api/v1/pods")
        self.assertEqual((s, d["kind"], d["apiVersion"]), (200, "PodList", "v1"))
        self.assertEqual(h["content-type"], "application/json")
        for k in ("audit-id", "cache-control", "x-kubernetes-pf-flowschema-uid"):
            self.assertIn(k, h)
        list_rv = int(d["metadata"]["resourceVersion"])
        self.assertEqual(list_rv, self.rv())
        keys = ["%s/%s" % (i["metadata"]["namespace"], i["metadata"]["name"]) for i in d["items"]]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(keys, ["ml/p1", "ml/p2", "ml/p3", "web/w1"])
        for i in d["items"]:
            self.assertNotIn("kind", i)  # real list items carry no TypeMeta
            self.assertLessEqual(int(i["metadata"]["resourceVersion"]), list_rv)
            self.assertTrue(i["metadata"]["uid"])
        self.assertNotIn("continue", d["metadata"])
        d = self.get("/apis/resource.k8s.io/v1/resourceslices")[2]
        self.assertEqual((d["kind"], d["apiVersion"], len(d["items"])), ("ResourceSliceList", "resource.k8s.io/v1", 2))
        d = self.get("/apis/resource.k8s.io/v1/namespaces/web/resourceclaims")[2]
        self.assertEqual([i["metadata"]["name"] for i in d["items"]], ["c2"])
        d = self.get("/apis/resource.k8s.io/v1/deviceclasses")[2]
        self.assertEqual(d["items"][0]["metadata"]["name"], "gpu.nvidia.com")
        # a single global counter across kinds
        before = self.rv()
        self.api.put(node("n9"))
        self.api.put(slice_("n9-gpu", "n9"))
        after = self.api.state()
        self.assertEqual(int(after["resourceVersion"]), before + 2)
        rvs = {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"])
               for k in ("nodes", "resourceslices") for o in after["objects"][k]}
        self.assertEqual((rvs["n9"], rvs["n9-gpu"]), (before + 1, before + 2))

    def test_pagination_consistent_snapshot(self):
        s, _, d = self.get("/api/v1/nodes?limit=2")
        self.assertEqual([i["metadata"]["name"] for i in d["items"]], ["n1", "n2"])
        md = d["metadata"]
        self.assertEqual(md["remainingItemCount"], 1)
        tok = json.loads(base64.urlsafe_b64decode(md["continue"] + "=="))
        self.assertEqual(tok, {"v": "meta.k8s.io/v1", "rv": int(md["resourceVersion"]), "start": "n2\u0000"})
        # changes between pages are not seen: the list RV stays constant
        self.api.put(node("n25"))
        self.api.delete("nodes", "n3")
        s, _, d2 = self.get("/api/v1/nodes?limit=2&continue=" + md["continue"])
        self.assertEqual(s, 200)
        self.assertEqual([i["metadata"]["name"] for i in d2["items"]], ["n3"])
        self.assertEqual(d2["metadata"], {"resourceVersion": md["resourceVersion"]})
        # namespaced: start key is namespace/name across namespaces, name inside one
        s, _, d = self.get("/api/v1/pods?limit=3")
        self.assertEqual(json.loads(base64.urlsafe_b64decode(d["metadata"]["continue"] + "=="))["start"], "ml/p3\u0000")
        s, _, d = self.get("/api/v1/namespaces/ml/pods?limit=2")
        self.assertEqual(json.loads(base64.urlsafe_b64decode(d["metadata"]["continue"] + "=="))["start"], "p2\u0000")
        names, d = self.list_names("/api/v1/namespaces/ml/pods?limit=2&continue=" + d["metadata"]["continue"])
        self.assertEqual(names, ["ml/p3"])
        # selectors: no remainingItemCount
        s, _, d = self.get("/api/v1/pods?limit=1&labelSelector=app")
        self.assertIn("continue", d["metadata"])
        self.assertNotIn("remainingItemCount", d["metadata"])
        # RV together with continue: 400; RV=0 with continue is a continuation
        s, _, e = self.get("/api/v1/nodes?limit=2&resourceVersion=5&continue=" + md["continue"])
        self.assertEqual((s, e["reason"], e["message"]), (400, "BadRequest",
                                                           "specifying resource version is not allowed when using continue"))
        s, _, d = self.get("/api/v1/nodes?limit=2&resourceVersion=0&continue=" + md["continue"])
        self.assertEqual(s, 200)
        # malformed token: 400
        s, _, e = self.get("/api/v1/nodes?limit=2&continue=notatoken")
        self.assertEqual(s, 400)
        self.assertTrue(e["message"].startswith("invalid continue token"), e)

    def test_continue_token_expired(self):
        md = self.get("/api/v1/nodes?limit=1")[2]["metadata"]
        self.api.put(node("n7"))
        self.api.compact()
        s, _, e = self.get("/api/v1/nodes?limit=1&continue=" + md["continue"])
        self.assertEqual((s, e["reason"], e["code"]), (410, "Expired", 410))
        self.assertIn("too old to display a consistent list result", e["message"])
        fresh = json.loads(base64.urlsafe_b64decode(e["metadata"]["continue"] + "=="))
        self.assertEqual((fresh["rv"], fresh["start"]), (-1, "n1\u0000"))
        # the inconsistent token continues at the latest state
        names, d = self.list_names("/api/v1/nodes?continue=" + e["metadata"]["continue"])
        self.assertEqual(names, ["n2", "n3", "n7"])
        # as a fault, without compaction
        md = self.get("/api/v1/nodes?limit=1")[2]["metadata"]
        self.api.fault("continue-410", kind="nodes")
        self.assertEqual(self.get("/api/v1/nodes?limit=1&continue=" + md["continue"])[0], 410)
        self.assertEqual(self.get("/api/v1/nodes?limit=1&continue=" + md["continue"])[0], 200)

    def test_rv0_any_ignores_limit(self):
        names, d = self.list_names("/api/v1/nodes?limit=1&resourceVersion=0")
        self.assertEqual(names, ["n1", "n2", "n3"])
        self.assertNotIn("continue", d["metadata"])
        self.api.config(limitAtRV0=True)
        names, d = self.list_names("/api/v1/nodes?limit=1&resourceVersion=0")
        self.assertEqual(names, ["n1"])

    def test_exact_and_not_older_than(self):
        rv0 = self.rv()
        self.api.delete("nodes", "n2")
        self.api.put(node("n4"))
        # limit + RV=N: Exact, the state at N
        names, d = self.list_names("/api/v1/nodes?limit=10&resourceVersion=%d" % rv0)
        self.assertEqual((names, d["metadata"]["resourceVersion"]), (["n1", "n2", "n3"], str(rv0)))
        names, d = self.list_names("/api/v1/nodes?resourceVersionMatch=Exact&resourceVersion=%d" % rv0)
        self.assertEqual(names, ["n1", "n2", "n3"])
        # no limit: Not older than -> current
        names, d = self.list_names("/api/v1/nodes?resourceVersion=%d" % rv0)
        self.assertEqual((names, d["metadata"]["resourceVersion"]), (["n1", "n3", "n4"], str(rv0 + 2)))
        names, d = self.list_names("/api/v1/nodes?resourceVersionMatch=NotOlderThan&resourceVersion=%d" % rv0)
        self.assertEqual(names, ["n1", "n3", "n4"])
        # Exact older than the history: 410
        self.api.compact()
        s, _, e = self.get("/api/v1/nodes?limit=10&resourceVersion=%d" % rv0)
        self.assertEqual((s, e["reason"], e["message"]), (410, "Expired", "The resourceVersion for the provided list is too old."))
        # resourceVersionMatch validation: 422 Invalid with causes
        for q, needle in (("resourceVersionMatch=Exact", "forbidden unless resourceVersion is provided"),
                          ("resourceVersionMatch=Exact&resourceVersion=0", 'resourceVersionMatch "exact" is forbidden'),
                          ("resourceVersionMatch=Bogus&resourceVersion=1", "supported values")):
            s, _, e = self.get("/api/v1/nodes?" + q)
            self.assertEqual((s, e["reason"], e["details"]["kind"]), (422, "Invalid", "ListOptions"), q)
            self.assertIn(needle, e["message"])
        self.assertEqual(self.get("/api/v1/nodes?resourceVersion=abc")[0], 400)

    def test_too_large_rv(self):
        cur = self.rv()
        t0 = time.monotonic()
        s, h, e = self.get("/api/v1/nodes?resourceVersion=%d" % (cur + 5))
        waited = time.monotonic() - t0
        self.assertEqual((s, e["reason"], h["retry-after"]), (504, "Timeout", "1"))
        self.assertEqual(e["message"], "Too large resource version: %d, current: %d" % (cur + 5, cur))
        self.assertEqual(e["details"]["causes"][0]["reason"], "ResourceVersionTooLarge")
        self.assertGreaterEqual(waited, 0.25)
        # satisfied while waiting
        threading.Timer(0.05, lambda: self.api.bump(5)).start()
        s, _, d = self.get("/api/v1/nodes?resourceVersion=%d" % (cur + 5))
        self.assertEqual((s, d["metadata"]["resourceVersion"]), (200, str(cur + 5)))
        s, _, e = self.get("/api/v1/nodes/n1?resourceVersion=%d" % (cur + 50))
        self.assertEqual(s, 504)
        # as a fault: immediate
        self.api.fault("too-large-rv", kind="nodes")
        t0 = time.monotonic()
        self.assertEqual(self.get("/api/v1/nodes")[0], 504)
        self.assertLess(time.monotonic() - t0, 0.25)

    def test_selectors(self):
        sel = Q("status.phase!=Succeeded,status.phase!=Failed")
        self.assertEqual(self.list_names("/api/v1/pods?fieldSelector=" + sel)[0], ["ml/p1", "ml/p2", "web/w1"])
        self.assertEqual(self.list_names("/api/v1/pods?fieldSelector=" + Q("spec.schedulerName=railfit"))[0], ["ml/p1"])
        self.assertEqual(self.list_names("/api/v1/pods?fieldSelector=" + Q("spec.nodeName="))[0], ["ml/p1"])
        self.assertEqual(self.list_names("/api/v1/pods?fieldSelector=" + Q("spec.nodeName=n2"))[0], ["ml/p3", "web/w1"])
        self.assertEqual(self.list_names("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=" + Q("spec.nodeName=n2"))[0],
                         ["n2-gpu"])
        self.assertEqual(self.list_names("/apis/resource.k8s.io/v1/resourceslices?fieldSelector="
                                         + Q("spec.driver=gpu.nvidia.com,spec.pool.name=n1"))[0], ["n1-gpu"])
        self.assertEqual(self.list_names("/api/v1/nodes?fieldSelector=" + Q("metadata.name=n3"))[0], ["n3"])
        self.assertEqual(self.list_names("/api/v1/nodes?labelSelector=" + Q("zone in (a)"))[0], ["n1", "n2"])
        self.assertEqual(self.list_names("/api/v1/nodes?labelSelector=" + Q("zone notin (a)"))[0], ["n3"])
        self.assertEqual(self.list_names("/api/v1/pods?labelSelector=" + Q("!app"))[0], ["ml/p1", "ml/p3"])
        self.assertEqual(self.list_names("/api/v1/pods?labelSelector=" + Q("app=web"))[0], ["web/w1"])
        self.assertEqual(self.list_names("/api/v1/pods?labelSelector=" + Q("app!=web"))[0], ["ml/p1", "ml/p2", "ml/p3"])
        s, _, e = self.get("/api/v1/pods?fieldSelector=" + Q("spec.bogus=1"))
        self.assertEqual((s, e["message"]), (400, "field label not supported: spec.bogus"))

    def test_get_single(self):
        s, _, p = self.get("/api/v1/namespaces/ml/pods/p2")
        self.assertEqual((s, p["kind"], p["apiVersion"], p["spec"]["nodeName"]), (200, "Pod", "v1", "n1"))
        s, _, n = self.get("/api/v1/nodes/n1")
        self.assertEqual((n["kind"], n["metadata"]["name"]), ("Node", "n1"))
        s, _, e = self.get("/api/v1/namespaces/ml/pods/nope")
        self.assertEqual((s, e["reason"], e["message"], e["details"]), (404, "NotFound", 'pods "nope" not found',
                                                                        {"name": "nope", "kind": "pods"}))
        s, _, e = self.get("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/zz")
        self.assertEqual(e["message"], 'resourceclaims.resource.k8s.io "zz" not found')
        self.assertEqual(e["details"], {"name": "zz", "group": "resource.k8s.io", "kind": "resourceclaims"})
        s, _, c = self.get("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c1")
        self.assertEqual((c["kind"], c["apiVersion"]), ("ResourceClaim", "resource.k8s.io/v1"))
        self.assertEqual(self.get("/api/v1/nodes/n1?resourceVersion=0")[0], 200)

    def test_gzip_large_lists(self):
        s, h, d = self.get("/api/v1/pods", {"Accept-Encoding": "gzip"})
        self.assertNotIn("content-encoding", h)
        self.api.config(gzipThreshold=100)
        s, h, raw = self.api.request("GET", "/api/v1/pods", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(h["content-encoding"], "gzip")
        self.assertEqual(json.loads(gzip.decompress(raw))["kind"], "PodList")
        s, h, raw = self.api.request("GET", "/api/v1/pods")
        self.assertNotIn("content-encoding", h)

    def test_version_gates_pre_134(self):
        self.api.config(version="v1.33.5")
        s, h, b = self.get("/apis/resource.k8s.io/v1/resourceslices")
        self.assertEqual((s, b), (404, b"404 page not found\n"))
        self.assertNotIn("resource.k8s.io", [g["name"] for g in self.get("/apis")[2]["groups"]])
        w = self.watch("/api/v1/nodes?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                       "&allowWatchBookmarks=true")
        self.assertEqual(w.status, 422)
        self.assertIn("sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                      w.json()["message"])
        self.assertEqual(w.json()["details"]["causes"][0]["field"], "sendInitialEvents")
        self.api.config(version="v1.35.0", disabledGroupVersions=["resource.k8s.io/v1"])
        self.assertEqual(self.get("/apis/resource.k8s.io/v1/deviceclasses")[0], 404)


# ------------------------------------------------------------------------------------------------
# Watches
# ------------------------------------------------------------------------------------------------


class Watches(Base):
    def test_watch_events_and_resume(self):
        list_rv = self.get("/api/v1/nodes")[2]["metadata"]["resourceVersion"]
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%s&timeoutSeconds=0.4" % list_rv)
        self.assertEqual((w.status, w.headers["content-type"], w.headers["transfer-encoding"]),
                         (200, "application/json", "chunked"))
        self.api.put(node("n5"))
        n1 = self.get("/api/v1/nodes/n1")[2]
        n1["metadata"].setdefault("labels", {})["x"] = "y"
        self.api.put(n1)
        self.api.delete("nodes", "n5")
        evs = [w.next(2) for _ in range(3)]
        self.assertEqual([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"])
        for e in evs:
            self.assertEqual((e["object"]["kind"], e["object"]["apiVersion"]), ("Node", "v1"))
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
        self.assertEqual(rvs, sorted(rvs))
        self.assertEqual(rvs[2], self.rv())  # DELETED carries the deletion RV
        self.assertEqual(evs[2]["object"]["metadata"]["name"], "n5")
        w.drain(3)
        self.assertEqual(w.end, "terminated")  # clean end at timeoutSeconds
        # resume from the middle: only newer events, replayed from history
        w2 = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.05" % rvs[0])
        w2.drain(3)
        self.assertEqual(w2.types(), ["MODIFIED", "DELETED"])
        # a watch at a future RV stays silent
        w3 = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.15" % (self.rv() + 100))
        self.api.put(node("n6"))
        w3.drain(3)
        self.assertEqual((w3.items, w3.end), ([], "terminated"))
        # a watch of one namespace; /watch/ prefix form
        w4 = self.watch("/api/v1/watch/namespaces/web/pods?resourceVersion=%d&timeoutSeconds=0.2" % self.rv())
        self.put_pod("ml", "q1")
        self.put_pod("web", "q2")
        w4.drain(3)
        self.assertEqual([e["object"]["metadata"]["name"] for e in w4.items], ["q2"])
        # one object by name
        w5 = self.watch("/api/v1/namespaces/ml/pods/q1?watch=true&resourceVersion=%d&timeoutSeconds=0.2" % self.rv())
        self.put_pod("ml", "q1", phase="Running")
        self.put_pod("ml", "q3")
        w5.drain(3)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in w5.items], [("MODIFIED", "q1")])

    def test_initial_events_rv_unset_and_zero(self):
        w = self.watch("/api/v1/pods?watch=true&timeoutSeconds=0.05")  # WatchList gate on: defaulted
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED"] * 4)  # no end bookmark without allowWatchBookmarks
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=0.05")
        w.drain(3)
        self.assertEqual(w.types()[:5], ["ADDED"] * 4 + ["BOOKMARK"])
        bm = w.items[4]["object"]
        self.assertEqual(bm["metadata"]["annotations"], {"k8s.io/initial-events-end": "true"})
        self.assertEqual(bm["metadata"]["resourceVersion"], str(self.rv()))
        # the initial ADDED burst is packed into few chunks (Go's 2048-byte buffer)
        self.assertLess(len(w.chunks), 4)
        # initial events are not in RV order
        self.api.put(pod("ml", "p1", "Running", scheduler="railfit"))
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=0.05")
        w.drain(3)
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in w.items]
        self.assertNotEqual(rvs, sorted(rvs))
        self.api.config(initialOrder="reverse-key")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0.05")
        w.drain(3)
        self.assertEqual([e["object"]["metadata"]["name"] for e in w.items], ["n3", "n2", "n1"])

    def test_streaming_list_send_initial_events(self):
        base = "/apis/resource.k8s.io/v1/resourceslices?watch=true&allowWatchBookmarks=true&timeoutSeconds=0.2"
        w = self.watch(base + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
        self.api.put(slice_("n3-gpu", "n3"))
        w.drain(3)
        self.assertEqual(w.types()[:4], ["ADDED", "ADDED", "BOOKMARK", "ADDED"])
        self.assertEqual(w.items[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true")
        self.assertEqual(w.items[2]["object"]["spec"], {"driver": "", "pool": {"name": "", "generation": 0,
                                                                               "resourceSliceCount": 0}})
        # synced to >= N
        rv = self.rv()
        w = self.watch(base + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=%d" % rv)
        w.drain(3)
        self.assertEqual(w.types()[:4], ["ADDED"] * 3 + ["BOOKMARK"])
        # wrong resourceVersionMatch: 422
        w = self.watch(base + "&sendInitialEvents=true")
        self.assertEqual((w.status, w.json()["reason"]), (422, "Invalid"))
        self.assertIn("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan", w.json()["message"])
        w = self.watch(base + "&resourceVersionMatch=NotOlderThan&resourceVersion=5")
        self.assertEqual(w.status, 422)
        # a server that ignores the parameter: no end bookmark ever
        self.api.fault("ignore-send-initial-events", kind="resourceslices")
        w = self.watch(base + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
        w.drain(3)
        self.assertEqual(w.types()[:3], ["ADDED"] * 3)
        self.assertFalse(any("annotations" in e["object"]["metadata"] for e in w.items if e["type"] == "BOOKMARK"))
        # gate off: 422 (client falls back to list+watch)
        self.api.config(watchList=False)
        w = self.watch(base + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
        self.assertEqual(w.status, 422)

    def test_bookmarks(self):
        self.api.config(bookmarkInterval=0.05)
        rv = self.rv()
        w = self.watch("/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.3" % rv)
        time.sleep(0.08)
        self.api.bump(3)  # RV advancing without events of this kind
        w.drain(3)
        bms = [e for e in w.items if e["type"] == "BOOKMARK"]
        self.assertGreaterEqual(len(bms), 2)
        self.assertEqual(w.types(), ["BOOKMARK"] * len(w.items))
        self.assertEqual(bms[0]["object"], {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)},
                                            "spec": {"containers": None}, "status": {}})
        self.assertEqual(bms[-1]["object"]["metadata"]["resourceVersion"], str(rv + 3))
        # not asked for: none at all
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=%d&timeoutSeconds=0.15" % rv)
        w.drain(3)
        self.assertEqual(w.items, [])
        # final bookmark only (long interval), shortly before the deadline
        self.api.config(bookmarkInterval=60, bookmarkStyle="zero-null-timestamp")
        t0 = time.monotonic()
        w = self.watch("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.5" % rv)
        ev = w.next(3)
        self.assertEqual(ev["type"], "BOOKMARK")
        self.assertGreater(time.monotonic() - t0, 0.4)
        self.assertIsNone(ev["object"]["metadata"]["creationTimestamp"])
        self.api.config(bookmarkStyle="minimal")
        w = self.watch("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.1" % rv)
        w.drain(3)
        self.assertEqual(w.items[-1]["object"], {"kind": "Node", "apiVersion": "v1",
                                                 "metadata": {"resourceVersion": str(self.rv())}})
        self.assertEqual(w.end, "terminated")

    def test_watch_too_old_is_error_event(self):
        rv = self.rv()
        self.api.put(node("n8"))
        self.api.compact()
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=5" % rv)
        self.assertEqual(w.status, 200)
        w.drain(3)
        self.assertEqual(w.end, "terminated")
        self.assertEqual(len(w.items), 1)
        st = w.items[0]
        self.assertEqual(st["type"], "ERROR")
        self.assertEqual(st["object"], {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "too old resource version: %d (%d)" % (rv, rv + 1),
                                        "reason": "Expired", "code": 410})

    def test_young_cache_replays_old_rv(self):
        self.api.config(youngCache=True)
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=1&timeoutSeconds=0.05")
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED"] * 3)
        self.api.compact()  # history lost: strict again
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=1&timeoutSeconds=0.3")
        w.drain(3)
        self.assertEqual(w.types(), ["ERROR"])

    def test_history_is_bounded(self):
        self.api.config(historySize=5)
        rv = self.rv()
        for i in range(12):
            self.api.bump()
            self.api.put(node("h%d" % i))
        st = self.api.state()
        self.assertGreater(int(st["oldestResourceVersion"]), rv)
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.3" % rv)
        w.drain(3)
        self.assertEqual(w.types(), ["ERROR"])

    def test_field_selector_transitions(self):
        sel = Q("status.phase!=Succeeded,status.phase!=Failed")
        w = self.watch("/api/v1/pods?watch=true&fieldSelector=%s&resourceVersion=%d&timeoutSeconds=0.25" % (sel, self.rv()))
        self.put_pod("ml", "p2", phase="Succeeded", node_name="n1", app="train")  # leaves the selector
        del_rv = self.rv()
        self.put_pod("ml", "p3", phase="Running", node_name="n2")  # enters it
        self.put_pod("ml", "p1", phase="Running", scheduler="railfit")  # stays in it
        w.drain(3)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in w.items],
                         [("DELETED", "p2"), ("ADDED", "p3"), ("MODIFIED", "p1")])
        gone = w.items[0]["object"]
        self.assertEqual(gone["status"]["phase"], "Running")  # the old object ...
        self.assertEqual(gone["metadata"]["resourceVersion"], str(del_rv))  # ... at the event RV

    def test_watch_validation(self):
        w = self.watch("/api/v1/nodes?watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1")
        self.assertEqual(w.status, 422)
        self.assertIn("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                      w.json()["message"])
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=xyz")
        self.assertEqual(w.status, 400)
        s, _, e = self.get("/api/v1/nodes?sendInitialEvents=true")
        self.assertEqual(s, 422)


# ------------------------------------------------------------------------------------------------
# Writes: binding, patch, put/post/delete, leases, control objects
# ------------------------------------------------------------------------------------------------


def binding(name, ns, node_name, uid=None):
    md = {"name": name, "namespace": ns}
    if uid:
        md["uid"] = uid
    return {"kind": "Binding", "apiVersion": "v1", "metadata": md, "target": {"kind": "Node", "name": node_name}}


class Writes(Base):
    def bind(self, ns, name, body):
        s, h, b = self.api.request("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, name), body)
        return s, json.loads(b) if b else None

    def test_binding(self):
        p1 = self.get("/api/v1/namespaces/ml/pods/p1")[2]
        uid = p1["metadata"]["uid"]
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=%d&timeoutSeconds=0.4" % self.rv())
        s, st = self.bind("ml", "p1", binding("p1", "ml", "n1", uid))
        self.assertEqual((s, st), (201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                         "code": 201}))
        w.drain(3)
        self.assertEqual(w.types(), ["MODIFIED"])
        obj = w.items[0]["object"]
        self.assertEqual(obj["spec"]["nodeName"], "n1")
        cond = [c for c in obj["status"]["conditions"] if c["type"] == "PodScheduled"]
        self.assertEqual(cond[0]["status"], "True")
        # again: already assigned (the same node after a lost response reads the same)
        s, st = self.bind("ml", "p1", binding("p1", "ml", "n1", uid))
        self.assertEqual((s, st["reason"], st["details"]), (409, "Conflict", {"name": "p1", "kind": "pods/binding"}))
        self.assertEqual(st["message"], 'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already '
                                        'assigned to node "n1"')
        # UID precondition
        s, st = self.bind("ml", "p1", binding("p1", "ml", "n2", "0000-other"))
        self.assertEqual((s, st["details"]), (409, {"name": "p1", "kind": "pods"}))
        self.assertEqual(st["message"], 'Operation cannot be fulfilled on pods "p1": Precondition failed: UID in '
                                        'precondition: 0000-other, UID in object meta: %s' % uid)
        # name mismatch, missing pod, bad target
        s, st = self.bind("ml", "p1", binding("other", "ml", "n2"))
        self.assertEqual((s, st["reason"], st["message"]), (400, "BadRequest", "name in URL does not match name in Binding object"))
        s, st = self.bind("ml", "gone", binding("gone", "ml", "n2"))
        self.assertEqual((s, st["message"]), (404, 'pods "gone" not found'))
        b = binding("x", "ml", "")
        self.put_pod("ml", "x")
        s, st = self.bind("ml", "x", b)
        self.assertEqual((s, st["reason"], st["message"]), (500, "Unknown", "target.name: Required value"))
        # being deleted; scheduling gates
        terminating = pod("ml", "t1")
        terminating["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        gated = pod("ml", "g1")
        gated["spec"]["schedulingGates"] = [{"name": "wait"}]
        self.api.put(terminating, gated)
        s, st = self.bind("ml", "t1", binding("t1", "ml", "n1"))
        self.assertEqual((s, st["message"]), (409, 'Operation cannot be fulfilled on pods/binding "t1": pod t1 is being '
                                                   'deleted, cannot be assigned to a host'))
        s, st = self.bind("ml", "g1", binding("g1", "ml", "n1"))
        self.assertIn("pod g1 has non-empty .spec.schedulingGates", st["message"])
        # legacy endpoint
        self.put_pod("ml", "l1")
        s, h, b = self.api.request("POST", "/api/v1/namespaces/ml/bindings", binding("l1", "ml", "n3"))
        self.assertEqual(s, 201)
        self.assertEqual(self.get("/api/v1/namespaces/ml/pods/l1")[2]["spec"]["nodeName"], "n3")
        # nominatedNodeName is cleared from 1.35 on
        nn = pod("ml", "nn")
        nn["status"]["nominatedNodeName"] = "n2"
        self.api.put(nn)
        self.assertEqual(self.bind("ml", "nn", binding("nn", "ml", "n2"))[0], 201)
        self.assertNotIn("nominatedNodeName", self.get("/api/v1/namespaces/ml/pods/nn")[2]["status"])

    def test_binding_commit_then_drop(self):
        self.put_pod("ml", "d1")
        self.api.fault("bind-commit-drop")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.bind("ml", "d1", binding("d1", "ml", "n2"))
        self.assertEqual(self.get("/api/v1/namespaces/ml/pods/d1")[2]["spec"]["nodeName"], "n2")
        s, st = self.bind("ml", "d1", binding("d1", "ml", "n2"))
        self.assertEqual(s, 409)
        self.assertIn('already assigned to node "n2"', st["message"])

    def test_patch_node_annotation(self):
        rv = self.rv()
        for ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            s, h, b = self.api.request("PATCH", "/api/v1/nodes/n1",
                                       {"metadata": {"annotations": {"railfit.io/pci-topology": ctype}}},
                                       {"Content-Type": ctype})
            self.assertEqual(s, 200, b)
            n = json.loads(b)
            self.assertEqual(n["metadata"]["annotations"]["railfit.io/pci-topology"], ctype)
            self.assertEqual(n["metadata"]["labels"], {"zone": "a"})  # untouched
        self.assertEqual(self.rv(), rv + 2)
        # same patch again: no change, no new RV
        self.api.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"annotations": {
            "railfit.io/pci-topology": ctype}}}, {"Content-Type": "application/merge-patch+json"})
        self.assertEqual(self.rv(), rv + 2)
        # null deletes; RV precondition
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"annotations": {
            "railfit.io/pci-topology": None}, "resourceVersion": str(rv + 2)}},
            {"Content-Type": "application/merge-patch+json"})
        self.assertEqual(s, 200)
        self.assertNotIn("railfit.io/pci-topology", json.loads(b)["metadata"].get("annotations", {}))
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"resourceVersion": "1"}},
                                   {"Content-Type": "application/merge-patch+json"})
        self.assertEqual((s, json.loads(b)["message"]), (409, 'Operation cannot be fulfilled on nodes "n1": the object '
                                                              'has been modified; please apply your changes to the '
                                                              'latest version and try again'))
        # JSON patch; unsupported media type; missing node
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/n2", [{"op": "add", "path": "/metadata/annotations",
                                                                  "value": {"a/b": "c"}}],
                                   {"Content-Type": "application/json-patch+json"})
        self.assertEqual((s, json.loads(b)["metadata"]["annotations"]), (200, {"a/b": "c"}))
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/n2", {}, {"Content-Type": "application/json"})
        self.assertEqual((s, json.loads(b)["reason"]), (415, "UnsupportedMediaType"))
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/zz", {}, {"Content-Type": "application/merge-patch+json"})
        self.assertEqual(s, 404)
        # status is not changed through the main resource
        s, h, b = self.api.request("PATCH", "/api/v1/nodes/n2", {"status": {"capacity": {"cpu": "1"}}},
                                   {"Content-Type": "application/merge-patch+json"})
        self.assertEqual(json.loads(b)["status"]["capacity"]["cpu"], "8")

    def test_create_update_delete(self):
        p = pod("ml", "new")
        s, h, b = self.api.request("POST", "/api/v1/namespaces/ml/pods", p)
        self.assertEqual(s, 201)
        created = json.loads(b)
        self.assertEqual(created["metadata"]["resourceVersion"], str(self.rv()))
        s, h, b = self.api.request("POST", "/api/v1/namespaces/ml/pods", p)
        self.assertEqual((s, json.loads(b)["reason"], json.loads(b)["message"]), (409, "AlreadyExists", 'pods "new" already exists'))
        g = pod("ml", "")
        g["metadata"]["generateName"] = "gen-"
        s, h, b = self.api.request("POST", "/api/v1/namespaces/ml/pods", g)
        self.assertTrue(json.loads(b)["metadata"]["name"].startswith("gen-"))
        # PUT with the current RV; again with a stale one
        upd = dict(created)
        upd["metadata"] = dict(created["metadata"], labels={"v": "2"})
        s, h, b = self.api.request("PUT", "/api/v1/namespaces/ml/pods/new", upd)
        self.assertEqual((s, json.loads(b)["metadata"]["labels"]), (200, {"v": "2"}))
        s, h, b = self.api.request("PUT", "/api/v1/namespaces/ml/pods/new", upd)
        self.assertEqual((s, json.loads(b)["reason"]), (409, "Conflict"))
        s, h, b = self.api.request("PUT", "/api/v1/namespaces/ml/pods/other", upd)
        self.assertEqual(s, 400)
        # claim status: allocate through PUT .../status
        c1 = self.get("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c1")[2]
        c1["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com",
                                                                "pool": "n1", "device": "gpu-0"}]}}}
        c1["spec"] = {"changed": True}
        s, h, b = self.api.request("PUT", "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c1/status", c1)
        out = json.loads(b)
        self.assertEqual(s, 200)
        self.assertEqual(out["status"]["allocation"]["devices"]["results"][0]["device"], "gpu-0")
        self.assertNotIn("changed", out["spec"])  # status subresource ignores spec
        # DELETE: pods return the object with the deletion RV; others a Status
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=%d&timeoutSeconds=0.3" % self.rv())
        s, h, b = self.api.request("DELETE", "/api/v1/namespaces/ml/pods/new")
        self.assertEqual((s, json.loads(b)["metadata"]["resourceVersion"]), (200, str(self.rv())))
        w.drain(3)
        self.assertEqual(w.types(), ["DELETED"])
        s, h, b = self.api.request("DELETE", "/api/v1/nodes/n3")
        self.assertEqual((s, json.loads(b)["status"]), (200, "Success"))
        self.assertEqual(self.api.request("DELETE", "/api/v1/nodes/n3")[0], 404)

    def test_leases(self):
        path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
        self.assertEqual(self.get(path + "/railfit")[0], 404)
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "railfit"},
                 "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}
        s, h, b = self.api.request("POST", path, lease)
        self.assertEqual(s, 201)
        got = json.loads(b)
        s, h, b = self.api.request("POST", path, lease)
        self.assertEqual((s, json.loads(b)["reason"]), (409, "AlreadyExists"))
        got["spec"]["holderIdentity"] = "b"
        self.assertEqual(self.api.request("PUT", path + "/railfit", got)[0], 200)
        s, h, b = self.api.request("PUT", path + "/railfit", got)  # stale RV
        self.assertEqual(s, 409)
        self.assertIn('leases.coordination.k8s.io "railfit"', json.loads(b)["message"])

    def test_control_objects_state_allocate(self):
        st = self.api.state()
        self.assertEqual(len(st["objects"]["pods"]), 4)
        self.assertEqual(st["objects"]["nodes"][0]["kind"], "Node")
        old_uid = st["objects"]["nodes"][0]["metadata"]["uid"]
        # replacing with a new uid is a recreation: DELETED + ADDED
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.3" % self.rv())
        n1 = node("n1")
        n1["metadata"]["uid"] = "11111111-2222-3333-4444-555555555555"
        self.api.put(n1)
        w.drain(3)
        self.assertEqual(w.types(), ["DELETED", "ADDED"])
        self.assertEqual(w.items[0]["object"]["metadata"]["uid"], old_uid)
        # allocation as the DRA plugin writes it
        p1 = self.get("/api/v1/namespaces/ml/pods/p1")[2]
        c = self.api.allocate("ml", "c1", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1",
                                           "device": "gpu-1"}], node="n1", pod="p1")
        self.assertEqual(c["status"]["allocation"]["nodeSelector"], {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})
        self.assertEqual(c["status"]["reservedFor"], [{"resource": "pods", "name": "p1", "uid": p1["metadata"]["uid"]}])
        c = self.api.allocate("ml", "c1", [], deallocate=True)
        self.assertNotIn("status", c)
        self.api.delete("resourceclaims", "c1", "ml")
        self.assertEqual(len(self.api.state("resourceclaims")["objects"]["resourceclaims"]), 1)
        self.api.delete("deviceclasses", "gpu.nvidia.com")
        with self.assertRaises(RuntimeError):
            self.api.delete("deviceclasses", "gpu.nvidia.com")

    def test_resourceslice_pool_generation_rollover(self):
        """A driver republishes a pool: new generation partially published, then the old slice
        deleted; the watch shows exactly that order (data scenarios are plain state changes)."""
        w = self.watch("/apis/resource.k8s.io/v1/resourceslices?watch=true&fieldSelector=%s&resourceVersion=%d"
                       "&timeoutSeconds=0.3" % (Q("spec.nodeName=n1"), self.rv()))
        new_a = slice_("n1-gpu-a", "n1")
        new_a["spec"]["pool"].update(generation=2, resourceSliceCount=2)
        new_b = slice_("n1-gpu-b", "n1")
        new_b["spec"]["pool"].update(generation=2, resourceSliceCount=2)
        self.api.put(new_a)
        self.api.delete("resourceslices", "n1-gpu")
        self.api.put(new_b)
        moved = slice_("n2-gpu", "n1")  # a slice moved between nodes enters the selector
        self.api.put(moved)
        w.drain(3)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in w.items],
                         [("ADDED", "n1-gpu-a"), ("DELETED", "n1-gpu"), ("ADDED", "n1-gpu-b"), ("ADDED", "n2-gpu")])
        self.assertEqual(w.items[0]["object"]["spec"]["pool"]["generation"], 2)

    def test_request_log(self):
        self.api.clear_requests()
        c = self.api.connection()
        for path in ("/api/v1/nodes?limit=500&resourceVersion=0", "/api/v1/nodes/n1"):
            c.request("GET", path, headers={"User-Agent": "railfit/0.1", "Authorization": "Bearer x"})
            c.getresponse().read()
        c.close()
        reqs = self.api.requests(kind="nodes")
        self.assertEqual([(r["verb"], r["status"]) for r in reqs], [("list", 200), ("get", 200)])
        self.assertEqual(reqs[0]["query"], {"limit": "500", "resourceVersion": "0"})
        self.assertEqual((reqs[0]["userAgent"], reqs[0]["authorization"]), ("railfit/0.1", "bearer"))
        self.assertEqual(reqs[0]["headers"]["Authorization"], "<redacted>")
        self.assertEqual(reqs[0]["remotePort"], reqs[1]["remotePort"])  # keep-alive reuse
        self.assertEqual([r["connectionRequest"] for r in reqs], [1, 2])
        self.assertEqual(self.api.requests(verb="get")[0]["name"], "n1")
        self.assertEqual(self.api.requests(since=reqs[0]["id"], kind="nodes")[0]["id"], reqs[1]["id"])

    def test_reset(self):
        rv = self.rv()
        self.api.delete("nodes", "n1")
        self.api.fault("500", count=-1)
        self.api.config(bookmarkInterval=1)
        self.api.reset()
        self.assertEqual([n["metadata"]["name"] for n in self.api.state("nodes")["objects"]["nodes"]], ["n1", "n2", "n3"])
        self.assertEqual(self.api.faults(), [])
        self.assertEqual(self.api.config()["bookmarkInterval"], 60.0)
        self.assertGreater(self.rv(), rv)  # the counter never goes back
        self.assertEqual(self.get("/api/v1/nodes")[0], 200)

    def test_restore_goes_back(self):
        """An etcd restore: older objects, a lower RV counter, watches dropped; faults and the
        config stay; a request during the restore waits for the restored server."""
        for i in range(5):
            self.api.put(node("r%d" % i))
        before = self.rv()
        self.api.config(bookmarkInterval=7)
        self.api.fault("500", kind="pods", count=-1)
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=5" % before)
        with self.assertRaises(RuntimeError):  # a restore goes back
            self.api.restore(before + 1)
        out = self.api.restore(900, drop="eof")
        self.assertLess(int(out["resourceVersion"]), before)
        w.drain(3)
        self.assertEqual(w.end, "eof")
        names, d = self.list_names("/api/v1/nodes")
        self.assertEqual(names, ["n1", "n2", "n3"])  # the snapshot, not the r* nodes
        self.assertLess(int(d["metadata"]["resourceVersion"]), before)
        self.assertEqual(self.api.config()["bookmarkInterval"], 7.0)
        self.assertEqual(self.get("/api/v1/pods")[0], 500)
        # a watch at an RV the restored server has not reached is silent
        w2 = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.2" % before)
        self.api.put(node("n9"))
        w2.drain(3)
        self.assertEqual(w2.items, [])
        # the objects to restore can be given
        self.api.restore(800, objects=[node("only")])
        self.assertEqual(self.list_names("/api/v1/nodes")[0], ["only"])


# ------------------------------------------------------------------------------------------------
# Faults (kube-watch.md section 15)
# ------------------------------------------------------------------------------------------------


class HttpFaults(Base):
    def test_429_apf_text(self):
        self.api.fault("429", kind="nodes", verb="list", retryAfter=3)
        s, h, b = self.get("/api/v1/nodes?limit=500&resourceVersion=0")
        self.assertEqual((s, b, h["content-type"]), (429, b"Too many requests, please try again later.\n",
                                                     "text/plain; charset=utf-8"))
        self.assertEqual((h["retry-after"], h["x-content-type-options"]), ("3", "nosniff"))
        self.assertIn("x-kubernetes-pf-prioritylevel-uid", h)
        self.assertEqual(self.get("/api/v1/nodes")[0], 200)  # count 1
        # watch start, binding, lease PUT
        self.api.fault("429", kind="pods", verb="watch")
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=%d" % self.rv())
        self.assertEqual(w.status, 429)
        self.api.fault("429", verb="bind")
        s, _, b = self.api.request("POST", "/api/v1/namespaces/ml/pods/p1/binding", binding("p1", "ml", "n1"))
        self.assertEqual(s, 429)

    def test_429_shutdown_and_status(self):
        self.api.fault("429-shutdown")
        s, h, b = self.get("/api/v1/nodes")
        self.assertEqual((s, h["retry-after"], h["connection"]), (429, "5", "close"))
        self.api.fault("429-status", retryAfter=2)
        s, h, e = self.get("/api/v1/nodes")
        self.assertEqual((s, e["reason"], e["details"]["retryAfterSeconds"], h["retry-after"]),
                         (429, "TooManyRequests", 2, "2"))

    def test_5xx(self):
        self.api.fault("500")
        s, _, e = self.get("/api/v1/pods")
        self.assertEqual((s, e["reason"], e["message"]), (500, "InternalError", "Internal error occurred: fake internal error"))
        self.api.fault("500-text")
        s, h, b = self.get("/api/v1/pods")
        self.assertEqual((s, b, h["content-type"]), (500, b"Internal Server Error\n", "text/plain; charset=utf-8"))
        self.api.fault("503")
        s, h, e = self.get("/api/v1/pods")
        self.assertEqual((s, h["retry-after"], e["message"]), (503, "1", "apiserver is shutting down"))
        self.api.fault("503-startup")
        s, h, e = self.get("/api/v1/pods")
        self.assertEqual((s, h["retry-after"]), (503, "5"))
        self.api.fault("504", delay=0.1)
        t0 = time.monotonic()
        s, h, e = self.get("/api/v1/pods")
        self.assertEqual((s, e["reason"]), (504, "Timeout"))
        self.assertGreaterEqual(time.monotonic() - t0, 0.1)
        self.api.fault("404-text", kind="resourceslices")
        s, h, b = self.get("/apis/resource.k8s.io/v1/resourceslices")
        self.assertEqual((s, b), (404, b"404 page not found\n"))
        self.api.fault("http-error", status=418, body={"hello": "x"}, headers={"X-Test": "1"}, close=True)
        s, h, b = self.get("/api/v1/pods")
        self.assertEqual((s, b, h["x-test"], h["connection"]), (418, {"hello": "x"}, "1", "close"))

    def test_fault_matching_and_count(self):
        fid = self.api.fault("500", kind="pods", verb="list", count=2)
        self.assertEqual(self.get("/api/v1/nodes")[0], 200)
        self.assertEqual(self.get("/api/v1/namespaces/ml/pods/p1")[0], 200)  # get, not list
        self.assertEqual([self.get("/api/v1/pods")[0] for _ in range(3)], [500, 500, 200])
        fid = self.api.fault("500", kind="pods", namespace="web", count=-1)
        self.assertEqual(self.get("/api/v1/namespaces/ml/pods")[0], 200)
        self.assertEqual(self.get("/api/v1/namespaces/web/pods")[0], 500)
        self.assertEqual(self.api.faults()[0]["fired"], 1)
        self.api.clear_faults(fid)
        self.assertEqual(self.get("/api/v1/namespaces/web/pods")[0], 200)
        self.api.fault("500", path="/readyz")
        self.assertEqual(self.get("/readyz")[0], 500)
        with self.assertRaises(RuntimeError):
            self.api.fault("no-such-fault")

    def test_keepalive_after_error(self):
        self.api.fault("500")
        self.api.clear_requests()
        c = self.api.connection()
        c.request("GET", "/api/v1/nodes")
        r = c.getresponse()
        r.read()
        self.assertEqual(r.status, 500)
        c.request("GET", "/api/v1/nodes")
        r = c.getresponse()
        r.read()
        self.assertEqual(r.status, 200)
        c.close()
        reqs = self.api.requests()
        self.assertEqual(reqs[0]["remotePort"], reqs[1]["remotePort"])

    def test_reset_close_hang_delay(self):
        self.api.fault("reset")
        with self.assertRaises((ConnectionResetError, http.client.RemoteDisconnected)):
            self.get("/api/v1/nodes")
        self.api.fault("close")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.get("/api/v1/nodes")
        self.api.fault("hang", seconds=0.3)
        t0 = time.monotonic()
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.get("/api/v1/nodes")
        self.assertGreaterEqual(time.monotonic() - t0, 0.28)
        # never answering: the client's own timeout fires
        self.api.fault("hang")
        c = self.api.connection(timeout=0.3)
        c.request("GET", "/api/v1/nodes")
        with self.assertRaises(socket.timeout):
            c.getresponse()
        c.close()
        self.api.fault("delay", seconds=0.2)
        t0 = time.monotonic()
        self.assertEqual(self.get("/api/v1/nodes")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.2)
        # a delay composes with one other fault: slow headers, then an error
        self.api.fault("delay", seconds=0.1, kind="pods", verb="watch")
        self.api.fault("429", kind="pods", verb="watch")
        t0 = time.monotonic()
        w = self.watch("/api/v1/pods?watch=true")
        self.assertEqual(w.status, 429)
        self.assertGreaterEqual(time.monotonic() - t0, 0.1)

    def test_list_faults(self):
        self.api.fault("list-410", kind="pods")
        s, _, e = self.get("/api/v1/pods?resourceVersion=%d" % self.rv())
        self.assertEqual((s, e["reason"]), (410, "Expired"))
        self.api.fault("list-410", kind="pods", reason="Gone")
        self.assertEqual(self.get("/api/v1/pods")[2]["reason"], "Gone")
        # premature end of a list page
        self.api.fault("truncated-list", kind="nodes")
        with self.assertRaises(http.client.IncompleteRead):
            self.get("/api/v1/nodes")
        self.api.fault("truncated-list", kind="nodes", chunked=True)
        with self.assertRaises((http.client.IncompleteRead, http.client.RemoteDisconnected)):
            self.get("/api/v1/nodes")

    def test_stale_any_snapshot(self):
        rv_before = self.rv()
        self.api.put(node("n4"))
        seen = self.get("/api/v1/nodes")[2]
        self.assertEqual(len(seen["items"]), 4)
        self.api.fault("stale-any", kind="nodes", verb="list")
        names, d = self.list_names("/api/v1/nodes?resourceVersion=0")
        self.assertEqual((names, d["metadata"]["resourceVersion"]), (["n1", "n2", "n3"], str(rv_before)))
        self.assertLess(int(d["metadata"]["resourceVersion"]), int(seen["metadata"]["resourceVersion"]))
        # also the initial state of an RV=0 watch
        self.api.fault("stale-any", kind="nodes", verb="watch")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0.1")
        w.drain(3)
        self.assertEqual([e["object"]["metadata"]["name"] for e in w.items if e["type"] == "ADDED"], ["n1", "n2", "n3", "n4"])
        self.assertEqual(w.items[3]["object"]["metadata"]["resourceVersion"], str(rv_before + 1))  # replayed after

    def test_relist_different(self):
        self.api.fault("relist-different", kind="nodes", drop=2)
        names, d = self.list_names("/api/v1/nodes")
        self.assertEqual(names, ["n3"])
        self.api.reset()
        n2_uid = self.get("/api/v1/nodes/n2")[2]["metadata"]["uid"]
        self.api.fault("relist-different", kind="nodes", names=["n2"], recreate=True)
        names, d = self.list_names("/api/v1/nodes")
        self.assertEqual(names, ["n1", "n2", "n3"])
        self.assertNotEqual(d["items"][1]["metadata"]["uid"], n2_uid)

    def test_401_403(self):
        self.api.fault("401", kind="pods")
        s, _, e = self.get("/api/v1/pods")
        self.assertEqual((s, e["reason"], e["message"]), (401, "Unauthorized", "Unauthorized"))
        self.api.config(rbac={"user": "system:serviceaccount:x:y",
                              "deny": [{"resource": "nodes", "verb": "list"},
                                       {"resource": "resourceclaims", "verb": "watch"},
                                       {"resource": "pods/binding", "verb": "create"}]})
        s, h, e = self.get("/api/v1/nodes")
        self.assertEqual((s, e["reason"], h["x-content-type-options"]), (403, "Forbidden", "nosniff"))
        self.assertEqual(e["message"], 'nodes is forbidden: User "system:serviceaccount:x:y" cannot list resource '
                                       '"nodes" in API group "" at the cluster scope')
        self.assertEqual(e["details"], {"kind": "nodes"})
        self.assertEqual(self.get("/api/v1/nodes/n1")[0], 200)  # get is allowed
        self.assertEqual(self.get("/api/v1/pods")[0], 200)  # other informers keep working
        w = self.watch("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims?watch=true")
        self.assertEqual(w.json()["message"], 'resourceclaims.resource.k8s.io is forbidden: User "system:serviceaccount:x:y" '
                                              'cannot watch resource "resourceclaims" in API group "resource.k8s.io" in '
                                              'the namespace "ml"')
        s, _, b = self.api.request("POST", "/api/v1/namespaces/ml/pods/p1/binding", binding("p1", "ml", "n1"))
        e = json.loads(b)
        self.assertEqual(e["message"], 'pods "p1" is forbidden: User "system:serviceaccount:x:y" cannot create '
                                       'resource "pods/binding" in API group "" in the namespace "ml"')
        self.assertEqual(e["details"], {"name": "p1", "kind": "pods"})
        self.api.config(rbac={"allow": [{"resource": "*", "verb": ["get", "list", "watch"]}]})
        self.assertEqual(self.get("/api/v1/nodes")[0], 200)
        self.assertEqual(self.api.request("DELETE", "/api/v1/nodes/n1")[0], 403)
        self.api.fault("403", kind="deviceclasses")
        s, _, e = self.get("/apis/resource.k8s.io/v1/deviceclasses")
        self.assertEqual((s, e["message"].split(":")[0]), (403, "deviceclasses.resource.k8s.io is forbidden"))


class StreamFaults(Base):
    W0 = "/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=%s"

    def test_watch_410_event(self):
        self.api.fault("watch-410", kind="pods")
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types(), w.end), (["ERROR"], "terminated"))
        self.assertEqual(w.items[0]["object"]["code"], 410)
        # mid-stream after valid events, old-style reason
        self.api.fault("watch-410", kind="pods", after=2, reason="Gone")
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED", "ADDED", "ERROR"])
        self.assertEqual(w.items[2]["object"]["reason"], "Gone")
        # HTTP 410 on watch start
        self.api.fault("watch-410-http", kind="pods")
        w = self.watch("/api/v1/pods?watch=true&resourceVersion=5")
        self.assertEqual((w.status, w.json()["reason"]), (410, "Expired"))
        self.assertEqual(w.json()["message"], "too old resource version: 5 (%s)" % self.api.state()["oldestResourceVersion"])
        # other ERROR events, e.g. 500 or 429
        self.api.fault("watch-error", kind="pods", code=429, reason="TooManyRequests", message="slow down")
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types()[-1], w.items[-1]["object"]["code"]), ("ERROR", 429))

    def test_reset_and_close_mid_chunk(self):
        self.api.fault("reset-mid-stream", kind="pods", after=1)
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types(), w.end), (["ADDED"], "reset"))
        self.api.fault("close-mid-chunk", kind="pods", after=2)
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types(), w.end), (["ADDED", "ADDED"], "eof"))
        self.assertTrue(w.conn.buf)  # part of the third event's chunk

    def test_truncated_event(self):
        self.api.fault("truncate", kind="pods", after=1)
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types(), w.end), (["ADDED"], "terminated"))
        self.assertTrue(w.pending.startswith(b'{"type":"ADDED"'))  # an incomplete frame
        self.api.fault("truncate", kind="pods", clean=False)
        w = self.watch(self.W0 % 5)
        w.drain(3)
        self.assertEqual((w.types(), w.end), ([], "eof"))
        self.assertTrue(w.pending)

    def test_inline_bad_events(self):
        rv = self.rv()
        self.api.ctl("POST", "fault", {"faults": [
            {"fault": "garbage", "kind": "nodes", "after": 1},
            {"fault": "unknown-type", "kind": "nodes", "after": 2},
            {"fault": "wrong-kind", "kind": "nodes", "after": 3},
            {"fault": "deleted-unknown", "kind": "nodes", "after": 3}]})
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0.1")
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED", "<garbage>", "ADDED", "FROB", "ADDED", "ADDED", "DELETED"])
        self.assertEqual(w.items[1]["raw"], b"this is not JSON {]")
        self.assertEqual(w.items[5]["object"]["kind"], "ConfigMap")
        ghost = w.items[6]["object"]
        self.assertEqual((ghost["kind"], ghost["metadata"]["resourceVersion"]), ("Node", str(rv)))
        self.assertNotIn(ghost["metadata"]["name"], [n["metadata"]["name"] for n in self.api.state("nodes")["objects"]["nodes"]])
        self.assertEqual(w.end, "terminated")

    def test_duplicate_added_and_modified_for_added(self):
        self.api.fault("duplicate-added", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.25" % self.rv())
        self.api.put(node("n7"))
        self.api.put(node("n7", v="2"))
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED", "ADDED", "ADDED"])
        self.assertEqual(w.items[0], w.items[1])
        self.assertEqual(w.items[2]["object"]["metadata"]["labels"], {"v": "2"})
        self.api.fault("modified-for-added", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.2" % self.rv())
        self.api.put(node("n8"))
        w.drain(3)
        self.assertEqual(w.types(), ["MODIFIED"])

    def test_split_chunks(self):
        normal = self.watch(self.W0 % 0.05)
        normal.drain(3)
        self.api.fault("split", kind="pods", sizes=[1])
        w = self.watch(self.W0 % 0.05)
        w.drain(5)
        self.assertEqual(w.items, normal.items)
        self.assertEqual({len(c) for c in w.chunks}, {1})
        self.api.fault("split", kind="pods", sizes=[7, 3, 50])
        w = self.watch(self.W0 % 0.05)
        w.drain(3)
        self.assertEqual(w.items, normal.items)
        self.assertEqual([len(c) for c in w.chunks[:3]], [7, 3, 50])
        # inside UTF-8 sequences (p1 carries non-ASCII text)
        self.api.fault("split", kind="pods", mode="mid-utf8")
        w = self.watch(self.W0 % 0.05)
        w.drain(3)
        self.assertEqual(w.items, normal.items)
        self.assertTrue(any(c[-1] >= 0xC0 for c in w.chunks))  # a chunk ends on a UTF-8 lead byte
        # between "}" and "\n"
        self.api.fault("split", kind="pods", mode="before-newline")
        w = self.watch(self.W0 % 0.05)
        w.drain(3)
        self.assertEqual(w.items, normal.items)
        self.assertIn(b"\n", w.chunks)
        self.assertTrue(w.chunks[0].endswith(b"}"))
        self.api.fault("split", kind="pods", mode="random", seed=3, max=20)
        w = self.watch(self.W0 % 0.05)
        w.drain(3)
        self.assertEqual(w.items, normal.items)
        self.assertLessEqual(max(len(c) for c in w.chunks), 20)

    def test_empty_chunks_and_trickle(self):
        self.api.fault("empty-chunks", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0.05")
        w.drain(3)
        self.assertEqual(w.types(), ["ADDED"] * 3)
        self.assertEqual(w.chunks.count(b"\n"), 3)
        self.api.fault("trickle", kind="nodes", bytes=64, delay=0.002)
        t0 = time.monotonic()
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0.05")
        w.drain(5)
        self.assertEqual(w.types(), ["ADDED"] * 3)
        self.assertLessEqual(max(len(c) for c in w.chunks), 64)
        self.assertGreater(len(w.chunks), 5)
        self.assertGreater(time.monotonic() - t0, 0.01)

    def test_stall_one_kind(self):
        self.api.config(bookmarkInterval=0.05)
        self.api.fault("stall", kind="pods", seconds=0.4)
        stalled = self.watch("/api/v1/pods?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=0.2")
        other = self.watch("/api/v1/nodes?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=0.2")
        self.assertEqual(stalled.status, 200)  # headers sent ...
        with self.assertRaises(socket.timeout):
            stalled.pump(0.25)  # ... then nothing, not even bookmarks, past timeoutSeconds
        other.drain(3)
        self.assertEqual(other.types()[:3], ["ADDED"] * 3)
        self.assertEqual(other.end, "terminated")
        stalled.drain(3)
        self.assertEqual((stalled.items, stalled.end), ([], "eof"))
        # until the client gives up
        self.api.fault("stall", kind="pods")
        w = self.watch(self.W0 % 5)
        w.close()
        time.sleep(0.4)
        self.assertEqual(self.api.watches(), [])
        self.assertEqual(self.api.requests(verb="watch")[-1]["endReason"], "stall:client-gone")

    def test_large_event(self):
        rv = self.rv()
        self.api.fault("large-event", kind="nodes", bytes=3 << 20, target="n2")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=0.5" % rv)
        w.drain(5)
        self.assertEqual(w.types(), ["MODIFIED"])
        pad = w.items[0]["object"]["metadata"]["annotations"]["fake.railfit.io/padding"]
        self.assertGreaterEqual(len(pad.encode()), 3 << 20)
        self.assertGreater(sum(len(c) for c in w.chunks), 3 << 20)

    def test_bookmark_only_and_no_bookmarks(self):
        self.api.config(bookmarkInterval=0.05)
        rv = self.rv()
        self.api.fault("bookmark-only", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.25" % rv)
        w.drain(3)
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in w.items]
        self.assertEqual(set(w.types()), {"BOOKMARK"})
        self.assertGreater(len(rvs), 2)
        self.assertEqual(rvs, sorted(rvs))
        self.assertGreater(rvs[-1], rv)
        self.api.fault("no-bookmarks", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.15" % rv)
        w.drain(3)
        self.assertEqual(w.items, [])
        self.api.config(bookmarkInterval=60)
        self.api.fault("no-final-bookmark", kind="nodes")
        w = self.watch("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=0.15" % rv)
        w.drain(3)
        self.assertEqual((w.items, w.end), ([], "terminated"))

    def test_drop_after_and_short_close(self):
        self.api.fault("drop-after", kind="nodes", seconds=0.2)
        t0 = time.monotonic()
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=5" % self.rv())
        w.drain(3)
        self.assertEqual(w.end, "reset")
        self.assertGreaterEqual(time.monotonic() - t0, 0.19)
        self.api.fault("drop-after", kind="nodes", seconds=0.05, mode="eof")
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=5" % self.rv())
        w.drain(3)
        self.assertEqual(w.end, "eof")
        # watches that end at once, repeatedly (the request log shows how fast a client comes back)
        self.api.fault("short-close", kind="nodes", count=-1)
        for _ in range(3):
            w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=300" % self.rv())
            w.drain(2)
            self.assertEqual((w.items, w.end), ([], "terminated"))
        # the server thread records how a stream ended just after the client saw the end:
        # wait for the log to catch up instead of racing it
        deadline = time.monotonic() + 5
        while True:
            ends = [r.get("endReason") for r in self.api.requests(verb="watch")][-3:]
            if None not in ends or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self.assertEqual(ends, ["timeout"] * 3)

    def test_close_slow_reader(self):
        self.api.fault("close-slow-reader", kind="nodes", seconds=0.3, sndbuf=4096)
        w = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=10" % self.rv(), rcvbuf=4096)
        self.api.wait_watches(["nodes"])
        for i in range(3):  # the client reads nothing while these large events queue up
            big = node("big%d" % i)
            big["metadata"]["annotations"] = {"pad": "x" * (2 << 20)}
            self.api.put(big)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.api.watches():
            time.sleep(0.05)
        self.assertEqual(self.api.watches(), [])
        self.assertEqual(self.api.requests(verb="watch")[-1]["endReason"], "slow-reader")
        w.drain(5)
        self.assertIn(w.end, ("eof", "reset"))  # no ERROR event, no terminating chunk

    def test_drop_watches_control(self):
        w1 = self.watch("/api/v1/nodes?watch=true&resourceVersion=%d&timeoutSeconds=30" % self.rv())
        w2 = self.watch("/api/v1/pods?watch=true&resourceVersion=%d&timeoutSeconds=30" % self.rv())
        ws = self.api.wait_watches(["nodes", "pods"])
        self.assertEqual(sorted(w["kind"] for w in ws), ["nodes", "pods"])
        self.assertEqual(self.api.drop_watches("nodes", "reset")["dropped"], 1)
        w1.drain(3)
        self.assertEqual(w1.end, "reset")
        self.api.drop_watches()
        w2.drain(3)
        self.assertEqual(w2.end, "terminated")


# ------------------------------------------------------------------------------------------------
# Separate server instances: token auth, TLS, CLI, snapshots from railfit, clean shutdown
# ------------------------------------------------------------------------------------------------


class Instances(unittest.TestCase):
    def test_token_auth_and_rotation(self):
        with fakeapi.FakeAPI(token="s3cret", version="v1.34.2") as api:
            s, h, b = api.request("GET", "/api/v1/nodes")
            self.assertEqual((s, json.loads(b)), (401, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                         "status": "Failure", "message": "Unauthorized",
                                                         "reason": "Unauthorized", "code": 401}))
            self.assertEqual(api.request("GET", "/api/v1/nodes", headers={"Authorization": "Bearer nope"})[0], 401)
            self.assertEqual(api.request("GET", "/api/v1/nodes", headers={"Authorization": "Bearer s3cret"})[0], 200)
            self.assertEqual(api.request("GET", "/healthz")[0], 200)
            self.assertEqual(json.loads(api.request("GET", "/version")[2])["gitVersion"], "v1.34.2")
            self.assertEqual(api.request("GET", "/_fake/state")[0], 200)  # the control API needs no token
            api.config(tokens=["rotated"])  # the token file was replaced
            self.assertEqual(api.request("GET", "/api/v1/nodes", headers={"Authorization": "Bearer s3cret"})[0], 401)
            self.assertEqual(api.request("GET", "/api/v1/nodes", headers={"Authorization": "Bearer rotated"})[0], 200)
            reqs = api.requests()
            self.assertEqual([(r["authorization"], r["tokenValid"]) for r in reqs[:3]],
                             [("none", False), ("bearer", False), ("bearer", True)])

    def test_tls(self):
        if not shutil.which("openssl"):
            self.skipTest("openssl not installed")
        tmp = tempfile.mkdtemp(prefix="fakeapi-tls-")
        try:
            cert, key = os.path.join(tmp, "c.pem"), os.path.join(tmp, "k.pem")
            r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                               capture_output=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with fakeapi.FakeAPI(tls_cert=cert, tls_key=key) as api:
                self.assertTrue(api.url.startswith("https://127.0.0.1:"))
                ctx = ssl.create_default_context(cafile=cert)
                c = http.client.HTTPSConnection("127.0.0.1", api.port, context=ctx, timeout=5)
                c.request("GET", "/version")
                self.assertEqual(json.loads(c.getresponse().read())["gitVersion"], "v1.35.0")
                c.close()
                raw = RawConn(api.port, ssl_ctx=ctx)
                raw.send("GET", "/api/v1/nodes?watch=true&timeoutSeconds=0.2")
                self.assertEqual(raw.read_head()[0], 200)
                raw.read_body({"transfer-encoding": "chunked"})
                raw.close()
                # a plain-HTTP client does not get through, and the server survives it
                plain = socket.create_connection(("127.0.0.1", api.port), timeout=2)
                plain.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
                try:
                    data = plain.recv(100)
                except (ConnectionResetError, socket.timeout):
                    data = b""
                self.assertFalse(data.startswith(b"HTTP/1.1 200"))
                plain.close()
                self.assertEqual(api.request("GET", "/healthz")[0], 200)
                # the serving certificate (and so the CA a client needs) can be replaced at runtime
                cert2, key2 = os.path.join(tmp, "c2.pem"), os.path.join(tmp, "k2.pem")
                r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key2,
                                    "-out", cert2, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                                    "subjectAltName=IP:127.0.0.1"], capture_output=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                api.config(tlsCert=cert2, tlsKey=key2)
                c = http.client.HTTPSConnection("127.0.0.1", api.port, context=ctx, timeout=5)
                with self.assertRaises(ssl.SSLError):
                    c.request("GET", "/version")
                c.close()
                c = http.client.HTTPSConnection("127.0.0.1", api.port, timeout=5,
                                                context=ssl.create_default_context(cafile=cert2))
                c.request("GET", "/version")
                self.assertEqual(c.getresponse().status, 200)
                c.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_clean_shutdown_ends_watches(self):
        api = fakeapi.FakeAPI().start()
        try:
            w = Watch(api, "/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=60")
            api.wait_watches(["nodes"])
            proc = api.proc
            t0 = time.monotonic()
            api.stop()
            w.drain(5)
            self.assertEqual(w.end, "terminated")
            self.assertLess(time.monotonic() - t0, 5)
            self.assertEqual(proc.returncode, 0)
            w.close()
        finally:
            api.stop()

    def test_cli(self):
        r = subprocess.run([sys.executable, fakeapi.__file__, "--tls-cert", "x"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        r = subprocess.run([sys.executable, fakeapi.__file__, "--snapshot", "/nonexistent.json"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("No such file", r.stderr)

    def test_snapshot_from_railfit_gen_cluster(self):
        exe = os.environ.get("RAILFIT")
        if not exe or not os.path.exists(exe):
            root = os.path.dirname(os.path.dirname(HERE))
            found = sorted(glob.glob(os.path.join(root, "build*", "server", "railfit")))
            exe = found[0] if found else None
        if not exe:
            self.skipTest("no railfit binary built")
        r = subprocess.run([exe, "gen-cluster", "--nodes", "4", "--seed", "3"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            self.skipTest("railfit gen-cluster failed: %s" % r.stderr[:200])
        doc = json.loads(r.stdout)
        tmp = tempfile.mkdtemp(prefix="fakeapi-snap-")
        try:
            path = os.path.join(tmp, "snap.json")
            with open(path, "w") as f:
                f.write(r.stdout)
            with fakeapi.FakeAPI(snapshot=path) as api:
                st = api.state()
                kinds = {}
                for it in doc["items"]:
                    kinds[it["kind"]] = kinds.get(it["kind"], 0) + 1
                self.assertEqual(len(st["objects"]["nodes"]), kinds["Node"])
                self.assertEqual(len(st["objects"]["resourceslices"]), kinds["ResourceSlice"])
                self.assertEqual(len(st["objects"]["pods"]), kinds.get("Pod", 0))
                s, _, b = api.request("GET", "/apis/resource.k8s.io/v1/resourceslices?limit=3")
                self.assertEqual(len(json.loads(b)["items"]), 3)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed or r.testsRun == 0 else 0)
