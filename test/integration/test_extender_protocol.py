"""Protocol-level tests of the railfit binary, driven by a client that speaks like kube-scheduler.

Only the envelope is checked here (status codes, shapes, key names and order, error bodies,
transport behaviour); what filter and prioritize decide is tested elsewhere.
Run: RAILFIT=build/server/railfit python3 test/integration/test_extender_protocol.py
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import schedclient  # noqa: E402
from schedclient import (ExtenderClient, Railfit, SchedulerError, decode_first_value,  # noqa: E402
                         go_json, load_example, strip_node, strip_pod)

EXAMPLE_NODES = ["node-a", "node-b", "node-c", "node-d"]

RF = None          # the shared demo server
DEMO_NODES = []    # Node objects of the demo cluster, as kube-scheduler would send them
DEMO_NAMES = []
DEMO_PODS = []     # Pods of the demo cluster


def setUpModule():
    global RF, DEMO_NODES, DEMO_NAMES, DEMO_PODS
    RF = Railfit(demo=True).start()
    resp = RF.client().get("/debug/snapshot")
    assert resp.status == 200, resp
    items = resp.json()["items"]
    DEMO_NODES = [strip_node(i) for i in items if i.get("kind") == "Node"]
    DEMO_NAMES = [n["metadata"]["name"] for n in DEMO_NODES]
    DEMO_PODS = [i for i in items if i.get("kind") == "Pod"]
    assert len(DEMO_NAMES) >= 4, DEMO_NAMES


def tearDownModule():
    alive = RF.alive()
    status = RF.stop()
    err = RF.stderr()
    RF._tmp.cleanup()
    assert alive, "railfit died during the tests:\n" + err
    assert status == 0, "railfit exited with %s on SIGTERM:\n%s" % (status, err)
    for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
        assert bad not in err, err


def assert_clean_exit(testcase, rf):
    """The process survived the test, exits 0 on SIGTERM and reported no sanitizer errors."""
    testcase.assertTrue(rf.alive(), "railfit died:\n" + rf.stderr())
    status = rf.stop()
    err = rf.stderr()
    testcase.assertEqual(status, 0, err)
    for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
        testcase.assertNotIn(bad, err)


def substitute(raw, names=None):
    """An example body with its node names replaced by demo node names (same length order)."""
    names = names or DEMO_NAMES
    text = raw.decode("utf-8")
    for old, new in zip(EXAMPLE_NODES, names):
        text = text.replace('"%s"' % old, '"%s"' % new)
    return text.encode("utf-8")


def route_served(verb):
    """Whether the binary routes POST /<verb> (404 lists the routes otherwise)."""
    resp = RF.client().post_raw("/" + verb, b"{}")
    return resp.status != 404


def keys_of(raw_body):
    """Top-level keys of a JSON object body, in order."""
    v = decode_first_value(raw_body)
    return [k for k, _ in v]


class Envelope(unittest.TestCase):
    """The example requests of reference/extender-examples, in both nodeCacheCapable modes."""

    def assert_filter_envelope(self, body, cache_mode, sent_names):
        self.assertEqual(keys_of(body), ["Nodes", "NodeNames", "FailedNodes",
                                         "FailedAndUnresolvableNodes", "Error"])
        obj = json.loads(body)
        self.assertEqual(obj["Error"], "")
        if cache_mode:
            self.assertIsNone(obj["Nodes"])
            self.assertIsInstance(obj["NodeNames"], list)
            passed = obj["NodeNames"]
        else:
            self.assertIsNone(obj["NodeNames"])
            self.assertEqual(list(obj["Nodes"].keys()), ["metadata", "items"])
            self.assertEqual(obj["Nodes"]["metadata"], {})
            passed = [n["metadata"]["name"] for n in obj["Nodes"]["items"]]
        failed = obj["FailedNodes"] or {}
        unres = obj["FailedAndUnresolvableNodes"] or {}
        for m in (failed, unres):
            self.assertEqual(list(m.keys()), sorted(m.keys(), key=lambda s: s.encode()))
            for v in m.values():
                self.assertIsInstance(v, str)
                self.assertNotIn("%", v)
        for n in passed + list(failed) + list(unres):
            self.assertIn(n, sent_names)
        self.assertFalse(set(passed) & set(failed))
        self.assertFalse(set(passed) & set(unres))
        self.assertTrue(body.startswith(b"{") and not body.endswith(b"\n") or True)
        return obj

    def test_filter_cachecapable_example(self):
        raw = substitute(load_example("filter-request-cachecapable.json"))
        c = RF.client(node_cache_capable=True)
        resp = c.post_raw("/filter", raw)
        self.assertEqual(resp.status, 200, resp.body)
        self.assert_filter_envelope(resp.body, True, DEMO_NAMES[:4])
        # The same through the scheduler's own reading of the answer.
        pod = json.loads(raw)["Pod"]
        res = c.filter(pod, DEMO_NAMES[:4])
        self.assertTrue(set(res.nodes) <= set(DEMO_NAMES[:4]))
        # Our client re-creates the exact example bytes.
        self.assertEqual(go_json(c.filter_args(pod, DEMO_NAMES[:4])), raw)

    def test_filter_nocache_example(self):
        raw = substitute(load_example("filter-request-nocache.json"))
        c = RF.client(node_cache_capable=False)
        resp = c.post_raw("/filter", raw)
        self.assertEqual(resp.status, 200, resp.body)
        obj = self.assert_filter_envelope(resp.body, False, DEMO_NAMES[:4])
        # Passing nodes are echoed unchanged.
        sent = {n["metadata"]["name"]: n for n in json.loads(raw)["Nodes"]["items"]}
        for n in obj["Nodes"]["items"]:
            self.assertEqual(n, sent[n["metadata"]["name"]])
            self.assertIn(go_json(n), raw)

    def test_filter_demo_nodes_both_modes(self):
        pods = [p for p in DEMO_PODS if not p["spec"].get("nodeName")] or DEMO_PODS[:1]
        for cache in (True, False):
            c = RF.client(node_cache_capable=cache)
            for pod in pods:
                res = c.filter(pod, DEMO_NODES)
                for n in res.nodes:
                    self.assertIn(n, DEMO_NAMES)
                body = c.last_request.split(b"\r\n\r\n", 1)[1]
                args = json.loads(body)
                self.assertNotIn("kind", args["Pod"])
                self.assertNotIn("apiVersion", args["Pod"])
                self.assertNotIn("managedFields", args["Pod"]["metadata"])
                if cache:
                    self.assertIsNone(args["Nodes"])
                else:
                    self.assertIsNone(args["NodeNames"])
                    self.assertNotIn("kind", args["Nodes"]["items"][0])

    def test_prioritize_examples(self):
        for name, cache in (("prioritize-request-cachecapable.json", True),
                            ("prioritize-request-nocache.json", False)):
            raw = substitute(load_example(name))
            c = RF.client(node_cache_capable=cache)
            resp = c.post_raw("/prioritize", raw)
            self.assertEqual(resp.status, 200, resp.body)
            lst = decode_first_value(resp.body)
            self.assertIsInstance(lst, list)
            hosts = []
            for hp in lst:
                self.assertEqual([k for k, _ in hp], ["Host", "Score"])
                d = dict(hp)
                self.assertIsInstance(d["Score"], int)
                self.assertTrue(0 <= d["Score"] <= 10, d)
                hosts.append(d["Host"])
            self.assertEqual(sorted(hosts), sorted(DEMO_NAMES[:2]))
            pod = json.loads(raw)["Pod"]
            nodes = DEMO_NAMES[:2] if cache else json.loads(raw)["Nodes"]["items"]
            scores = c.prioritize(pod, nodes)
            self.assertEqual(len(scores), 2)
            combined = c.combined_scores(pod, nodes)
            for v in combined.values():
                self.assertEqual(v % 10, 0)

    def test_prioritize_demo_nodes_both_modes(self):
        pods = [p for p in DEMO_PODS if not p["spec"].get("nodeName")] or DEMO_PODS[:1]
        for cache in (True, False):
            c = RF.client(node_cache_capable=cache)
            for pod in pods:
                scores = c.prioritize(pod, DEMO_NODES)
                self.assertEqual(sorted(h for h, _ in scores), sorted(DEMO_NAMES))
                for _, s in scores:
                    self.assertTrue(0 <= s <= 10)

    def test_preempt_examples(self):
        if not route_served("preempt"):
            self.skipTest("POST /preempt is not served by this build")
        names = [DEMO_NAMES[0], DEMO_NAMES[1], DEMO_NAMES[2], DEMO_NAMES[3]]
        for name, cache in (("preempt-request-cachecapable.json", True),
                            ("preempt-request-nocache.json", False)):
            raw = substitute(load_example(name), names)
            c = RF.client(node_cache_capable=cache)
            resp = c.post_raw("/preempt", raw)
            self.assertEqual(resp.status, 200, resp.body)
            self.assertEqual(keys_of(resp.body), ["NodeNameToMetaVictims"])
            obj = json.loads(raw)
            sent = obj["NodeNameToMetaVictims"] if cache else obj["NodeNameToVictims"]
            got = json.loads(resp.body)["NodeNameToMetaVictims"]
            self.assertIsInstance(got, dict)
            self.assertEqual(list(got), sorted(got, key=lambda s: s.encode()))
            for node, mv in got.items():
                self.assertIn(node, sent)
                self.assertEqual(list(mv.keys()), ["Pods", "NumPDBViolations"])
                sent_uids = [p["UID"] if cache else p["metadata"]["uid"]
                             for p in sent[node]["Pods"]]
                for p in mv["Pods"]:
                    self.assertEqual(list(p.keys()), ["UID"])
                    self.assertIn(p["UID"], sent_uids)
            # And through the scheduler's reading (UIDs mapped back to pods).
            victims = {}
            for node, v in sent.items():
                pods = [{"metadata": {"uid": p["UID"]}} if cache else p for p in v["Pods"]]
                victims[node] = {"pods": pods, "num_pdb_violations": v["NumPDBViolations"]}
            res = c.preempt(obj["Pod"], victims)
            self.assertTrue(set(res) <= set(sent))

    def test_bind_example(self):
        if not route_served("bind"):
            self.skipTest("POST /bind is not served by this build")
        pod = next((p for p in DEMO_PODS if not p["spec"].get("nodeName")), DEMO_PODS[0])
        args = {"PodName": pod["metadata"]["name"], "PodNamespace": pod["metadata"]["namespace"],
                "PodUID": pod["metadata"].get("uid", ""), "Node": DEMO_NAMES[2]}
        # on the demo cluster binding needs a live cluster: 501 with the verb's Error (issue 12)
        for cache in (True, False):
            c = RF.client(node_cache_capable=cache)
            resp = c.post_raw("/bind", go_json(args))
            self.assertEqual(resp.status, 501, resp.body)
            self.assertEqual(keys_of(resp.body)[0], "Error")
            self.assertIn("live cluster", json.loads(resp.body)["Error"])
        raw = load_example("bind-request-cachecapable.json")
        resp = RF.client().post_raw("/bind", raw)
        self.assertEqual(resp.status, 501, resp.body)
        self.assertEqual(keys_of(resp.body)[0], "Error")

    def test_lowercased_bodies(self):
        """A fully lower-cased copy decodes the same in Go, so railfit accepts it too."""
        raw = substitute(load_example("filter-request-cachecapable.json"))
        low = raw.decode().lower().encode()
        for verb in ("filter", "prioritize"):
            resp = RF.client().post_raw("/" + verb, low)
            self.assertEqual(resp.status, 200, resp.body)
        resp = RF.client().post_raw("/filter", raw)
        ok = json.loads(resp.body)
        resp = RF.client().post_raw("/filter", low)
        self.assertEqual(json.loads(resp.body)["NodeNames"] is None, ok["NodeNames"] is None)

    def test_request_bytes_like_kube_scheduler(self):
        c = RF.client(node_cache_capable=True)
        pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
        c.filter(pod, DEMO_NAMES[:4])
        head, body = c.last_request.split(b"\r\n\r\n", 1)
        want = ("POST /filter HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: Go-http-client/1.1\r\n"
                "Content-Length: %d\r\nContent-Type: application/json\r\nAccept-Encoding: gzip"
                % (RF.port, len(body))).encode()
        self.assertEqual(head, want)
        self.assertEqual(body, substitute(load_example("filter-request-cachecapable.json")))
        # With a urlPrefix path, as in kube-scheduler-config.yaml.
        c2 = ExtenderClient(RF.url + "/scheduler/")
        self.assertEqual(c2.url_for("filter"), RF.url + "/scheduler/filter")


class RememberedVerdicts(unittest.TestCase):
    """A request judged from remembered verdicts (on the calling thread), one that starts so and
    hands the rest to the thread pool at the first node it must evaluate, and one evaluated on
    every node (the pool) give the same bytes, for filter and prioritize, with the names in no
    order as kube-scheduler sends them (server/verbs.c judge_nodes)."""

    def test_warm_mixed_and_cold_replies_agree(self):
        import random
        with tempfile.TemporaryDirectory(prefix="railfit-memo-") as tmp:
            path, target, names = schedclient.snapshot_with_pending(
                os.environ["RAILFIT"], tmp, 600, 5, 0.5, "memo")
            random.Random(3).shuffle(names)

            def body(ns):
                return go_json({"Pod": strip_pod(target), "Nodes": None, "NodeNames": ns})

            replies = {}
            for label, warmup in (("cold", None), ("mixed", names[:200]), ("warm", names)):
                for verb in ("filter", "prioritize"):  # a server each: nothing remembered
                    rf = Railfit(demo=False, snapshot=path).start()
                    try:
                        if warmup:  # these nodes' verdicts remembered before the request
                            resp = rf.client().post_raw("/" + verb, body(warmup))
                            self.assertEqual(resp.status, 200, resp)
                        resp = rf.client().post_raw("/" + verb, body(names))
                        self.assertEqual(resp.status, 200, resp)
                        replies[(label, verb)] = resp.body
                        metrics = rf.client().get("/metrics").body.decode()
                        unjudged = [m for m in metrics.splitlines()
                                    if m.startswith("railfit_unjudged_nodes_total ")]
                        self.assertEqual(unjudged, ["railfit_unjudged_nodes_total 0"],
                                         (label, verb))
                    finally:
                        assert_clean_exit(self, rf)
            for verb in ("filter", "prioritize"):
                self.assertEqual(replies[("mixed", verb)], replies[("cold", verb)], verb)
                self.assertEqual(replies[("warm", verb)], replies[("cold", verb)], verb)
            failed = json.loads(replies[("cold", "filter")])["FailedNodes"] or {}
            self.assertTrue(failed and len(failed) < len(names), len(failed))


class BadInput(unittest.TestCase):
    """Every bad request gets a 4xx with a JSON {"error","detail"} naming the problem, and the
    server stays up."""

    def assert_error(self, resp, status, *detail_words):
        self.assertEqual(resp.status, status, resp.body)
        self.assertTrue((resp.header("Content-Type") or "").startswith("application/json"))
        obj = json.loads(resp.body)
        self.assertIsInstance(obj.get("error"), str, obj)
        self.assertIsInstance(obj.get("detail"), str, obj)
        self.assertTrue(obj["error"])
        text = (obj["error"] + " " + obj["detail"]).lower()
        for w in detail_words:
            self.assertIn(w.lower(), text, obj)
        self.assertTrue(RF.healthy(), "server not healthy after %r" % (resp,))
        return obj

    def verbs(self):
        return [v for v in ("filter", "prioritize", "preempt", "bind") if route_served(v)]

    def test_malformed_json(self):
        c = RF.client()
        for verb in self.verbs():
            for body in (b'{"Pod":', b'{"Pod":{}} trailing', b"{'Pod': {}}", b"\xff\xfe",
                         b'{"Pod":{},"Pod":{}}'):
                self.assert_error(c.post_raw("/" + verb, body), 400, "json")

    def test_wrong_types(self):
        c = RF.client()
        cases = [
            ("filter", b'{"Pod":{},"Nodes":null,"NodeNames":5}', ["NodeNames"]),
            ("prioritize", b'{"Pod":{},"Nodes":null,"NodeNames":5}', ["NodeNames"]),
            ("filter", b'{"Pod":[],"Nodes":null,"NodeNames":["a"]}', ["Pod"]),
            ("prioritize", b'{"Pod":[],"Nodes":null,"NodeNames":["a"]}', ["Pod"]),
            ("filter", b'{"Pod":{},"Nodes":null,"NodeNames":null}', ["Nodes", "NodeNames"]),
            ("filter", b'{"Pod":{},"Nodes":[],"NodeNames":null}', ["Nodes"]),
            ("filter", b'{"Nodes":null,"NodeNames":["a"]}', ["Pod"]),
            ("filter", b'{"Pod":{},"NodeNames":["a",7]}', ["NodeNames[1]"]),
            ("preempt", b'{"Pod":[],"NodeNameToMetaVictims":{}}', ["Pod"]),
            ("preempt", b'{"Pod":{},"NodeNameToMetaVictims":5}', ["NodeNameToMetaVictims"]),
            ("preempt", b'{"Pod":{},"NodeNameToMetaVictims":{"n":{"NumPDBViolations":"1"}}}',
             ["NumPDBViolations"]),
            ("bind", b'{"PodName":5,"PodNamespace":"d","PodUID":"u","Node":"n"}', ["PodName"]),
            ("bind", b'{"PodName":"p","PodNamespace":"d","PodUID":"u"}', ["Node"]),
        ]
        served = self.verbs()
        for verb, body, words in cases:
            if verb in served:
                self.assert_error(c.post_raw("/" + verb, body), 400, *words)

    def test_empty_and_null_bodies(self):
        c = RF.client()
        for verb in self.verbs():
            self.assert_error(c.post_raw("/" + verb, b""), 400, "empty")
            self.assert_error(c.post_raw("/" + verb, b"null"), 400, "null")
            self.assert_error(c.post_raw("/" + verb, b"[]"), 400, "array")

    def test_verb_error_shape(self):
        """Where the verb's result has an Error field, a 4xx body also carries it."""
        c = RF.client()
        obj = self.assert_error(c.post_raw("/filter", b'{"Pod":[]}'), 400, "Pod")
        if "Error" in obj:
            self.assertTrue(obj["Error"])
        # kube-scheduler reads any non-200 as a failed call with this exact text.
        with self.assertRaises(SchedulerError) as cm:
            c.send("filter", {"Pod": [], "Nodes": None, "NodeNames": ["a"]})
        self.assertEqual(str(cm.exception),
                         "failed filter with extender at URL %s/filter, code 400" % RF.url)

    def test_unknown_route_and_method(self):
        c = RF.client()
        obj = self.assert_error(c.get("/nope"), 404, "/nope")
        self.assertIn("/filter", obj["detail"])
        self.assert_error(c.post_raw("/scheduler/filter", b"{}"), 404, "/scheduler/filter")
        resp = c.get("/filter")
        self.assert_error(resp, 405, "POST")
        self.assertEqual(resp.header("Allow"), "POST")
        resp = c.post_raw("/healthz", b"{}")
        self.assert_error(resp, 405)
        self.assertIn("GET", resp.header("Allow"))

    def test_oversized_body(self):
        with Railfit(demo=True, config="server: {maxBodyBytes: 64Ki}\n") as rf:
            c = rf.client()
            pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
            pod["metadata"]["annotations"] = {"pad": "x" * (100 * 1024)}
            body = go_json({"Pod": pod, "Nodes": None, "NodeNames": DEMO_NAMES[:2]})
            resp = c.post_raw("/filter", body)
            self.assertEqual(resp.status, 413, resp.body)
            obj = json.loads(resp.body)
            self.assertIn("maxBodyBytes", obj["detail"])
            self.assertIn("65536", obj["detail"])
            # A chunked upload (not what kube-scheduler sends) is capped by its running total.
            resp = chunked_post(rf.port, "/filter", body)
            self.assertTrue(resp.startswith(b"HTTP/1.1 413"), resp[:200])
            self.assertIn(b"maxBodyBytes", resp)
            # Just under the cap is fine.
            pod["metadata"]["annotations"] = {"pad": "x" * (60 * 1024)}
            resp = c.post_raw("/filter", go_json({"Pod": pod, "Nodes": None,
                                                  "NodeNames": DEMO_NAMES[:2]}))
            self.assertEqual(resp.status, 200, resp.body[:300])
            self.assertTrue(rf.healthy())
            assert_clean_exit(self, rf)

    def test_big_nocache_body(self):
        """Bodies of many MB (nodeCacheCapable=false with big nodes) are fine under the default cap."""
        c = RF.client(node_cache_capable=False)
        pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
        nodes = []
        for n in DEMO_NODES:
            n = json.loads(json.dumps(n))
            n.setdefault("status", {})["images"] = [
                {"names": ["registry.example/img-%d@sha256:%064x" % (i, i)], "sizeBytes": i}
                for i in range(3000)]
            nodes.append(n)
        body = go_json(c.filter_args(pod, nodes))
        self.assertGreater(len(body), 4 * 1024 * 1024)
        res = c.filter(pod, nodes)
        self.assertTrue(set(res.nodes) <= set(DEMO_NAMES))


def chunked_post(port, path, body):
    """POST with Transfer-Encoding: chunked from a raw socket; returns the raw response."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n" % (path, port)).encode())
        try:
            for off in range(0, len(body), 4096):
                piece = body[off:off + 4096]
                s.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        if len(rest) >= int(line.split(b":")[1]):
                            return data
        return data
    finally:
        s.close()


class Transport(unittest.TestCase):

    def test_keepalive(self):
        c = RF.client()
        pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
        for i in range(10):
            c.filter(pod, DEMO_NAMES[:4])
            c.prioritize(pod, DEMO_NAMES[:4])
            if i == 5:
                self.assertEqual(c.post_raw("/filter", b"{").status, 400)
                self.assertEqual(c.get("/nope").status, 404)
        self.assertEqual(c.get("/healthz").status, 200)
        self.assertEqual(c.connections_opened, 1)
        c.close()

    def test_concurrent_clients(self):
        errors = []
        pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]

        def worker(i):
            try:
                c = RF.client(node_cache_capable=i % 2 == 0)
                nodes = DEMO_NODES if i % 2 else DEMO_NAMES
                for _ in range(10):
                    res = c.filter(pod, nodes)
                    if not set(res.nodes) <= set(DEMO_NAMES):
                        errors.append("bad survivors %r" % res.nodes)
                    scores = c.prioritize(pod, nodes)
                    if sorted(h for h, _ in scores) != sorted(DEMO_NAMES):
                        errors.append("bad hosts %r" % scores)
                c.close()
            except Exception as e:  # noqa: BLE001
                errors.append("%s: %s" % (type(e).__name__, e))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertTrue(RF.healthy())

    def test_stalled_client_cut_off(self):
        with Railfit(demo=True, config="server: {requestTimeout: 1s}\n") as rf:
            stalled = []
            # Headers and part of the body, then nothing.
            s1 = socket.create_connection(("127.0.0.1", rf.port))
            s1.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 500\r\n\r\n{\"Pod\":")
            stalled.append(s1)
            # Half a request line of headers.
            s2 = socket.create_connection(("127.0.0.1", rf.port))
            s2.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Le")
            stalled.append(s2)
            # Connects and says nothing.
            stalled.append(socket.create_connection(("127.0.0.1", rf.port)))
            t0 = time.monotonic()
            c = rf.client()
            pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
            for _ in range(5):
                t = time.monotonic()
                c.filter(pod, DEMO_NAMES[:4])
                self.assertLess(time.monotonic() - t, 1.0)
            for s in stalled:
                s.settimeout(8)
                try:
                    while s.recv(4096):
                        pass
                except (ConnectionResetError, socket.timeout) as e:
                    if isinstance(e, socket.timeout):
                        self.fail("stalled connection not closed by the server")
                s.close()
            waited = time.monotonic() - t0
            self.assertLess(waited, 6.0)
            self.assertTrue(rf.healthy())
            c.filter(pod, DEMO_NAMES[:4])
            assert_clean_exit(self, rf)

    def test_metrics_promtool(self):
        c = RF.client()
        pod = json.loads(load_example("filter-request-cachecapable.json"))["Pod"]
        c.filter(pod, DEMO_NAMES[:2])
        resp = c.get("/metrics")
        self.assertEqual(resp.status, 200)
        self.assertTrue((resp.header("Content-Type") or "").startswith("text/plain"))
        text = resp.body.decode()
        self.assertIn('railfit_requests_total{verb="filter",code="200"}', text)
        self.assertIn("railfit_request_duration_seconds_bucket", text)
        for fam in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                    "process_open_fds", "process_start_time_seconds", "railfit_build_info"):
            self.assertIn("# TYPE " + fam + " ", text)
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool not installed")
        p = subprocess.run([promtool, "check", "metrics"], input=resp.body,
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout.decode() + p.stderr.decode())

    def test_client_error_reading(self):
        """The client reads answers as kube-scheduler does (checked against a canned server)."""
        def http(body, status="200 OK", headers=b""):
            return (b"HTTP/1.1 " + status.encode() + b"\r\n" + headers
                    + b"Content-Length: %d\r\n\r\n" % len(body) + body)

        cases = [
            (http(b"{}", "500 Internal Server Error"), "filter",
             "failed filter with extender at URL {url}/filter, code 500"),
            (http(b"{}", "201 Created"), "bind",
             "failed bind with extender at URL {url}/bind, code 201"),
            (http(b""), "filter", "EOF"),
            (http(b" \n"), "prioritize", "EOF"),
            (http(b'{"Err'), "filter", "unexpected EOF"),
            (http(b"x{}"), "filter", "invalid character 'x' looking for beginning of value"),
            (http(b'[{"Host":"node-a","Score":5.5}]'), "prioritize",
             "json: cannot unmarshal number 5.5 into Go struct field HostPriority.Score of type "
             "int64"),
            (http(b'[{"Host":"node-a","Score":"5"}]x'), "prioritize",
             "json: cannot unmarshal string into Go struct field HostPriority.Score of type int64"),
            (http(b'[{"Host":"node-a","Score":1e2}]'), "prioritize",
             "json: cannot unmarshal number 1e2 into Go struct field HostPriority.Score of type "
             "int64"),
            (http(b'{"Host":"node-a"}'), "prioritize",
             "json: cannot unmarshal object into Go value of type v1.HostPriorityList"),
            (http(b'{"NodeNames":"node-a"}'), "filter",
             "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames "
             "of type []string"),
            (http(b'{"NodeNames":["node-z"],"Error":""}\n'), "filter",
             'extender "{url}" claims a filtered node "node-z" which is not found in the input '
             'node list'),
            (http(b'{"Error":"inventory unavailable"}'), "filter", "inventory unavailable"),
            (http(b'{"error":"50% off"}'), "bind", "50%!o(MISSING)ff"),
        ]
        for raw, verb, want in cases:
            with CannedServer(raw) as srv:
                c = ExtenderClient(srv.url)
                with self.assertRaises(SchedulerError) as cm:
                    if verb == "filter":
                        c.filter({}, ["node-a"])
                    elif verb == "prioritize":
                        c.prioritize({}, ["node-a"])
                    else:
                        c.bind("p", "d", "u", "node-a")
                self.assertEqual(str(cm.exception), want.replace("{url}", srv.url))
        # Accepted: null body (zero result), lower-case keys, trailing bytes, gzip, Nodes echo.
        import gzip as gz
        zipped = gz.compress(b'{"nodenames":["node-a"],"failednodes":{"node-b":"no"}}')
        ok = [
            (http(b"null"), True, [], {}),
            (http(b'{"nodenames":["node-a"],"error":""}\ntrailing'), True, ["node-a"], {}),
            (http(zipped, headers=b"Content-Encoding: gzip\r\n"), True, ["node-a"],
             {"node-b": "no"}),
            # NodeNames null in cache mode: the Nodes branch is taken.
            (http(b'{"Nodes":{"items":[{"metadata":{"name":"node-b"}}]},"NodeNames":null}'),
             True, ["node-b"], {}),
            # NodeNames while nodeCacheCapable=false: ignored, zero survivors.
            (http(b'{"NodeNames":["node-a"]}'), False, [], {}),
        ]
        for raw, cache, nodes, failed in ok:
            with CannedServer(raw) as srv:
                c = ExtenderClient(srv.url, node_cache_capable=cache)
                arg = (["node-a", "node-b"] if cache else
                       [{"metadata": {"name": "node-a"}}, {"metadata": {"name": "node-b"}}])
                res = c.filter({}, arg)
                self.assertEqual(res.nodes, nodes)
                self.assertEqual(res.failed, failed)
        # Preemption answers are mapped back to pods by UID, as kube-scheduler does.
        victims = {"node-b": {"pods": [{"metadata": {"uid": "u1"}}], "num_pdb_violations": 0}}
        pre = [
            (http(b'{"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"u1"}],'
                  b'"NumPDBViolations":0}}}'), None),
            (http(b'{"NodeNameToMetaVictims":{"node-x":{"Pods":[{"UID":"u1"}]}}}'),
             'nodeinfo not found for node name "node-x"'),
            (http(b'{"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"u9"}]}}}'),
             "extender: {url} claims to preempt pod (UID: &{u9}) on node: node-b, but the pod "
             "is not found on that node"),
            (http(b'{"NodeNameToMetaVictims":{"node-b":{"Pods":null}}}'),
             'expected at least one victim pod on node "node-b"'),
        ]
        for raw, want in pre:
            with CannedServer(raw) as srv:
                c = ExtenderClient(srv.url)
                if want is None:
                    res = c.preempt({}, victims)
                    self.assertEqual(list(res), ["node-b"])
                    continue
                with self.assertRaises(SchedulerError) as cm:
                    c.preempt({}, victims)
                self.assertEqual(str(cm.exception), want.replace("{url}", srv.url))


class CannedServer:
    """Answers every connection's first request with fixed bytes, then closes."""

    def __init__(self, raw):
        self.raw = raw
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(rest) < n:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                conn.sendall(self.raw)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.sock.close()
        return False


class _Result(unittest.TextTestResult):
    pass


def main():
    if not os.environ.get("RAILFIT"):
        print("RAILFIT is not set; nothing to test")
        print("0 passed, 1 failed")
        return 1
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_Result)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    for test, reason in result.skipped:
        print("SKIPPED %s: %s" % (test.id(), reason))
    print("%d passed, %d failed%s" % (passed, failed,
                                      ", %d skipped" % skipped if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
