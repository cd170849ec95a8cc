"""railfit against a (fake) kube-apiserver: the real binary in live mode, driven through the fake's
control API (test/fakeapi/fakeapi.py) and checked through railfit's own HTTP API.

What is checked:

* the cache converges to the server's truth (every object of the five kinds at the server's
  resourceVersion, compared between ``/debug/snapshot`` and the fake's ``/_fake/state``) after each
  fault of reference/kube-watch.md section 15, within a bounded time, and the process stays up;
* ``/readyz`` goes 503 -> 200 once every kind is listed, reports a kind whose watch keeps failing
  as stale after ``kube.staleAfter``, and names it;
* file descriptors and memory stay bounded across a storm of faults;
* kubeconfigs written the way users write them: tokenFile with rotation (401), https with
  certificate-authority-data (openssl self-signed), insecure-skip-tls-verify, a wrong CA, $KUBECONFIG,
  in-cluster service account, and the errors a person can act on (unreachable, 403, bad kubeconfig);
* an end-to-end run: a scheduler-emulating client places GPU pods one after another
  (filter -> prioritize -> best -> the DRA allocation railfit predicted -> POST /bind), and no two
  pods are steered onto the same devices.

Faults are made fast with a short configuration (watchTimeout 5s, staleAfter 3s). Railfit is
restarted for every batch of faults so that client-go's backoff (which grows with repeated failures
and resets after 2 minutes) does not make the suite slow.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fakeapi"))

from schedclient import Railfit, SchedulerError  # noqa: E402
from fakeapi import FakeAPI  # noqa: E402

RAILFIT = os.environ.get("RAILFIT")
SANITIZED = bool(os.environ.get("RF_SANITIZED"))
SLOW = 3.0 if SANITIZED else 1.0
if SANITIZED:
    # ASan keeps freed memory in a quarantine (256 MB by default) before reusing it, so the
    # resident size of a railfit that churns through events grows with it: bound it, so that
    # the fault storm's memory check measures railfit, not the quarantine
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=32"

CONFIG = "kube: {watchTimeout: 5s, staleAfter: 3s, assumeTTL: 20s}\n"
KINDS = {"nodes": "Node", "pods": "Pod", "resourceslices": "ResourceSlice",
         "resourceclaims": "ResourceClaim", "deviceclasses": "DeviceClass"}
RID_OF_KIND = {v: k for k, v in KINDS.items()}

TMP = None
SNAPSHOT = None


def setUpModule():
    global TMP, SNAPSHOT
    if not RAILFIT:
        raise unittest.SkipTest("set RAILFIT to the railfit binary")
    TMP = tempfile.mkdtemp(prefix="railfit-live-")
    SNAPSHOT = os.path.join(TMP, "cluster.json")
    with open(SNAPSHOT, "wb") as f:
        f.write(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "4", "--seed", "11", "--used",
                                "0.25"], check=True, stdout=subprocess.PIPE).stdout)


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# helpers


def http_get(rf, path, timeout=10):
    """(status, parsed JSON or text) of a GET to railfit."""
    try:
        with urllib.request.urlopen(rf.url + path, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body = e.read()
        status = e.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")


def obj_key(o):
    md = o.get("metadata") or {}
    return ("%s/%s" % (md["namespace"], md["name"])) if md.get("namespace") else md.get("name")


def truth(api):
    """{rid: {key: resourceVersion}} of the server, as kube-scheduler's informers would hold it."""
    objs = api.state()["objects"]
    out = {}
    for rid in KINDS:
        m = {}
        for o in objs.get(rid, []):
            if rid == "pods" and (o.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue  # outside the pod field selector
            m[obj_key(o)] = o["metadata"].get("resourceVersion")
        out[rid] = m
    return out


def cached(rf):
    status, doc = http_get(rf, "/debug/snapshot")
    if status != 200:
        return None
    out = {rid: {} for rid in KINDS}
    for o in doc["items"]:
        rid = RID_OF_KIND.get(o.get("kind"))
        if rid:
            out[rid][obj_key(o)] = o["metadata"].get("resourceVersion")
    return out


def diff(want, got):
    lines = []
    for rid in KINDS:
        w, g = want.get(rid, {}), (got or {}).get(rid, {})
        missing = sorted(set(w) - set(g))
        extra = sorted(set(g) - set(w))
        stale = sorted(k for k in set(w) & set(g) if w[k] != g[k])
        if missing or extra or stale:
            lines.append("%s: missing %s extra %s stale %s" % (rid, missing[:3], extra[:3],
                                                                [(k, g[k], w[k]) for k in stale[:3]]))
    return "; ".join(lines)


def converge(tc, api, rf, timeout=20.0, what=""):
    """Wait until railfit's cache equals the server's state; fail with the difference."""
    end = time.monotonic() + timeout * SLOW
    last = ""
    while True:
        want = truth(api)
        got = cached(rf)
        if got == want:
            return time.monotonic() - (end - timeout * SLOW)
        last = diff(want, got) if got is not None else "no snapshot yet"
        if time.monotonic() > end:
            tc.fail("cache did not converge%s within %.0f s: %s\n--- railfit stderr (tail) ---\n%s"
                    % (" after " + what if what else "", timeout * SLOW, last,
                       rf.stderr()[-4000:]))
        if not rf.alive():
            tc.fail("railfit exited (%s)\n%s" % (rf.proc.returncode, rf.stderr()[-4000:]))
        time.sleep(0.1)


def wait_ready(tc, rf, want=200, timeout=15.0, check=None):
    end = time.monotonic() + timeout * SLOW
    doc = None
    while time.monotonic() < end:
        status, doc = http_get(rf, "/readyz")
        if status == want and (check is None or check(doc)):
            return doc
        time.sleep(0.1)
    tc.fail("/readyz did not answer %d%s within %.0f s: %s" % (
        want, " as expected" if check else "", timeout * SLOW, doc))


def metric_values(rf, name):
    """{labels string: value} of one metric family."""
    status, text = http_get(rf, "/metrics")
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, _, value = line[len(name) + 1:].rpartition("} ")
            out[labels] = float(value)
    return out


def restarts(rf):
    """{(resource, reason): count}"""
    out = {}
    for labels, v in metric_values(rf, "railfit_watch_restarts_total").items():
        d = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        out[(d.get("resource"), d.get("reason"))] = v
    return out


_tick = [0]


def touch(api, rid):
    """Change one object of a kind (a label) so that a watch has something to deliver."""
    objs = api.state(rid)["objects"][rid]
    if not objs:
        return
    _tick[0] += 1
    o = json.loads(json.dumps(objs[_tick[0] % len(objs)]))
    o["metadata"].setdefault("labels", {})["test.railfit.io/tick"] = str(_tick[0])
    api.put(o)


def touch_all(api):
    for rid in KINDS:
        touch(api, rid)


def write_kubeconfig(path, server, user, cluster_extra=None):
    """A kubeconfig as `kubectl config` writes it (YAML, block style)."""
    lines = ["apiVersion: v1", "kind: Config", "preferences: {}", "clusters:", "- cluster:",
             "    server: %s" % server]
    for k, v in (cluster_extra or {}).items():
        lines.append("    %s: %s" % (k, v))
    lines += ["  name: fake", "contexts:", "- context:", "    cluster: fake", "    user: railfit",
              "    namespace: railfit-system", "  name: fake-ctx", "current-context: fake-ctx",
              "users:", "- name: railfit", "  user:"]
    for k, v in user.items():
        lines.append("    %s: %s" % (k, v))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def swap_token(dirpath, token):
    """Replace <dir>/token the way kubelet does: a new ..data directory swapped in atomically."""
    stamp = "..%d" % int(time.monotonic() * 1e6)
    os.mkdir(os.path.join(dirpath, stamp))
    with open(os.path.join(dirpath, stamp, "token"), "w") as f:
        f.write(token + "\n")
    tmp = os.path.join(dirpath, "..data_tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(stamp, tmp)
    os.rename(tmp, os.path.join(dirpath, "..data"))
    link = os.path.join(dirpath, "token")
    if not os.path.lexists(link):
        os.symlink("..data/token", link)


def proc_usage(pid):
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
    return len(os.listdir("/proc/%d/fd" % pid)), rss


def railfit(kubeconfig=None, config=CONFIG, env=None, args=()):
    a = list(args) + (["--kubeconfig", kubeconfig] if kubeconfig else [])
    return Railfit(demo=False, config=config, args=a + ["-v", "2"], env=env,
                   ready_timeout=15 * SLOW)


# ---------------------------------------------------------------------------------------------
# faults


# (kind, fault spec): one batch hits every kind once, then the cache must converge
BATCHES = {
    "watch-errors": [
        ("nodes", {"fault": "watch-410"}),
        ("pods", {"fault": "watch-410", "reason": "Gone", "after": 1}),
        ("resourceslices", {"fault": "watch-error", "code": 500}),
        ("resourceclaims", {"fault": "garbage"}),
        ("deviceclasses", {"fault": "unknown-type"}),
    ],
    "broken-connections": [
        ("nodes", {"fault": "reset-mid-stream", "after": 1}),
        ("pods", {"fault": "close-mid-chunk"}),
        ("resourceslices", {"fault": "truncate", "after": 1}),
        ("resourceclaims", {"fault": "stall", "seconds": 30}),
        ("deviceclasses", {"fault": "drop-after", "seconds": 0.3, "mode": "reset"}),
    ],
    "event-semantics": [
        ("nodes", {"fault": "duplicate-added"}),
        ("pods", {"fault": "modified-for-added"}),
        ("pods", {"fault": "large-event", "bytes": 2 << 20}),
        ("resourceslices", {"fault": "deleted-unknown"}),
        ("resourceslices", {"fault": "split", "mode": "mid-utf8"}),
        ("resourceclaims", {"fault": "wrong-kind"}),
        ("resourceclaims", {"fault": "empty-chunks"}),
        ("deviceclasses", {"fault": "split", "sizes": [1]}),
        ("deviceclasses", {"fault": "trickle", "bytes": 7, "delay": 0.001}),
    ],
    "watch-start-errors": [
        ("nodes", {"fault": "watch-410-http"}),
        ("pods", {"fault": "429", "verb": "watch", "retryAfter": 1}),
        ("resourceslices", {"fault": "500", "verb": "watch"}),
        ("resourceclaims", {"fault": "503", "verb": "watch", "retryAfter": 1}),
        ("deviceclasses", {"fault": "short-close"}),
    ],
    "list-errors": [
        ("nodes", {"fault": "watch-410"}), ("nodes", {"fault": "list-410"}),
        ("pods", {"fault": "watch-410"}), ("pods", {"fault": "too-large-rv"}),
        ("resourceslices", {"fault": "watch-410"}),
        ("resourceslices", {"fault": "relist-different", "drop": 1, "recreate": True}),
        ("resourceclaims", {"fault": "watch-410"}), ("resourceclaims", {"fault": "truncated-list"}),
        ("deviceclasses", {"fault": "watch-410"}),
        ("deviceclasses", {"fault": "500-text", "verb": "list"}),
    ],
    "transport": [
        ("nodes", {"fault": "reset", "verb": "watch"}),
        ("pods", {"fault": "close", "verb": "watch"}),
        ("resourceslices", {"fault": "hang", "verb": "watch", "seconds": 30}),
        ("resourceclaims", {"fault": "429-shutdown", "verb": "watch", "retryAfter": 1}),
        ("deviceclasses", {"fault": "429-status", "verb": "watch", "retryAfter": 1}),
    ],
}

# restart reasons each batch must have produced (resource, reason)
EXPECTED_REASONS = {
    "watch-errors": [("nodes", "expired"), ("pods", "expired"), ("resourceslices", "error"),
                     ("resourceclaims", "garbage"), ("deviceclasses", "garbage")],
    "broken-connections": [("resourceslices", "truncated"), ("resourceclaims", "timeout")],
    "watch-start-errors": [("nodes", "expired"), ("pods", "http-429"),
                           ("resourceslices", "http-5xx"), ("resourceclaims", "http-5xx"),
                           ("deviceclasses", "short")],
    "list-errors": [("deviceclasses", "http-5xx")],
    "transport": [("resourceclaims", "http-429"), ("deviceclasses", "http-429")],
}


class LiveFaults(unittest.TestCase):
    """One fake API server; a fresh railfit per batch of faults."""

    @classmethod
    def setUpClass(cls):
        cls.api = FakeAPI(snapshot=SNAPSHOT, token="tok-1",
                          config={"bookmarkInterval": 2.0}).start()
        cls.dir = tempfile.mkdtemp(prefix="kc-", dir=TMP)
        cls.tokdir = os.path.join(cls.dir, "sa")
        os.mkdir(cls.tokdir)
        swap_token(cls.tokdir, "tok-1")
        # relative tokenFile: resolved against the kubeconfig's directory, as client-go does
        cls.kubeconfig = write_kubeconfig(os.path.join(cls.dir, "config"), cls.api.url,
                                          {"tokenFile": "sa/token"})

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()

    def setUp(self):
        self.api.reset()
        self.api.config(bookmarkInterval=2.0, tokens=["tok-1"])
        swap_token(self.tokdir, "tok-1")

    def start(self, stale_ok=()):
        rf = railfit(self.kubeconfig).start()
        self.addCleanup(self.stop_rf, rf)
        wait_ready(self, rf)
        # ready means the published generation holds every kind's initial list
        want, got = truth(self.api), cached(rf)
        if stale_ok and got is not None:
            # a first list served from a stale snapshot is what ready holds (as client-go's
            # HasSynced after such a list): the same objects, maybe at the list's older
            # versions, until the watch catches up (converge below)
            for rid in stale_ok:
                self.assertEqual(sorted(got[rid]), sorted(want[rid]), diff(want, got))
                got[rid] = want[rid]
        self.assertEqual(got, want, diff(want, got))
        converge(self, self.api, rf, what="start")
        return rf

    def stop_rf(self, rf):
        if rf.alive():
            t0 = time.monotonic()
            code = rf.stop()
            self.assertEqual(code, 0, "exit status after SIGTERM\n" + rf.stderr()[-3000:])
            self.assertLess(time.monotonic() - t0, 5 * SLOW, "slow shutdown")
        else:
            code = rf.stop()
            if code != 0:  # died under the test: its last words go with the failure
                sys.stderr.write("railfit exited (%s) during the test; its stderr (tail):\n%s\n"
                                 % (code, rf.stderr()[-6000:]))

    def run_batch(self, name):
        rf = self.start()
        time.sleep(1.1)  # older than a "very short watch", so that a drop is a plain re-watch
        for rid, spec in BATCHES[name]:
            self.api.fault(spec["fault"], kind=rid,
                           **{k: v for k, v in spec.items() if k != "fault"})
        self.api.drop_watches(mode="clean")
        touch_all(self.api)
        took = converge(self, self.api, rf, timeout=30, what=name)
        self.assertTrue(rf.alive())
        # again: the watches that replaced the broken ones work
        touch_all(self.api)
        converge(self, self.api, rf, timeout=20, what=name + " (after)")
        got = restarts(rf)
        for key in EXPECTED_REASONS.get(name, []):
            self.assertGreater(got.get(key, 0), 0, "no restart %r in %r" % (key, got))
        wait_ready(self, rf)
        return took

    def test_watch_errors(self):
        self.run_batch("watch-errors")

    def test_broken_connections(self):
        self.run_batch("broken-connections")

    def test_event_semantics(self):
        self.run_batch("event-semantics")

    def test_watch_start_errors(self):
        self.run_batch("watch-start-errors")

    def test_list_errors(self):
        self.run_batch("list-errors")

    def test_transport_errors(self):
        self.run_batch("transport")

    def test_pagination_and_stale_first_list(self):
        """Lists page by 500 (limit honoured at RV 0 here), a continue token that expires
        restarts with a full list, and a first list served from a stale snapshot catches up."""
        pods = []
        for i in range(620):
            pods.append({"kind": "Pod", "apiVersion": "v1", "metadata": {
                "name": "bulk-%04d" % i, "namespace": "bulk", "uid": "b-%d" % i},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
                "status": {"phase": "Pending"}})
        self.api.put(*pods)
        self.api.config(limitAtRV0=True)
        self.api.fault("continue-410", kind="pods")
        self.api.fault("stale-any", kind="nodes", lag=1)
        touch(self.api, "nodes")  # gives the stale snapshot something to miss
        self.api.clear_requests()
        rf = self.start(stale_ok=("nodes",))
        reqs = self.api.requests(kind="pods", verb="list")
        queries = [r["rawQuery"] for r in reqs]
        # client-go's first list, then its pager (no resourceVersion with continue)
        self.assertTrue(queries[0].startswith("fieldSelector=") and
                        queries[0].endswith("&limit=500&resourceVersion=0"), queries)
        self.assertTrue(any("continue=" in q and "limit=500" in q and "resourceVersion" not in q
                            for q in queries), queries)
        # after the expired continue token: one full list at the same RV, no limit, never the
        # inconsistent token the 410 carried
        self.assertTrue(queries[-1].endswith("resourceVersion=0") and "limit" not in queries[-1]
                        and "continue" not in queries[-1], queries)
        touch_all(self.api)
        converge(self, self.api, rf)

    def test_field_selector_transitions(self):
        """A pod that finishes leaves the scheduler's view (DELETED through the field selector);
        deleted and recreated objects are followed."""
        rf = self.start()
        reqs = self.api.requests(kind="pods", verb="watch")
        self.assertTrue(reqs)
        for r in reqs:
            # kube-scheduler's pod informer, parameters sorted as Go's url.Values.Encode does
            self.assertRegex(r["rawQuery"], r"^allowWatchBookmarks=true&fieldSelector=status\.phase"
                             r"%21%3DSucceeded%2Cstatus\.phase%21%3DFailed&resourceVersion=\d+&"
                             r"timeoutSeconds=\d+&watch=true$")
            self.assertLessEqual(5, int(r["query"]["timeoutSeconds"]))
            self.assertLess(int(r["query"]["timeoutSeconds"]), 10)
        for r in self.api.requests():
            self.assertRegex(r["userAgent"] or "", r"^railfit/\d")
            self.assertEqual(r["accept"], "application/json")
        pod = self.api.state("pods")["objects"]["pods"][0]
        done = json.loads(json.dumps(pod))
        done.setdefault("status", {})["phase"] = "Succeeded"
        self.api.put(done)
        converge(self, self.api, rf)
        self.assertNotIn(obj_key(pod), cached(rf)["pods"])
        back = json.loads(json.dumps(pod))
        back["status"]["phase"] = "Running"
        self.api.put(back)
        # delete + recreate a slice under the same name with a new UID
        sl = self.api.state("resourceslices")["objects"]["resourceslices"][0]
        self.api.delete("resourceslices", sl["metadata"]["name"])
        again = json.loads(json.dumps(sl))
        again["metadata"]["uid"] = "recreated-uid"
        self.api.put(again)
        converge(self, self.api, rf)

    def test_drivers_publish_after_start(self):
        """A cluster whose DRA drivers have not published yet (no ResourceSlice at all): railfit
        gets ready on the empty list, and the slices the drivers publish afterwards show up.
        (An empty slice list once reached qsort with a NULL array: UBSan stopped railfit.)"""
        slices = self.api.state()["objects"]["resourceslices"]
        for o in slices:
            self.api.delete("resourceslices", o["metadata"]["name"])
        rf = self.start()
        status, listing = http_get(rf, "/debug/nodes")
        self.assertEqual(status, 200)
        self.assertTrue(listing and all(not n.get("gpusTotal") for n in listing), listing)
        for o in slices:
            o = json.loads(json.dumps(o))
            o["metadata"].pop("resourceVersion", None)
            self.api.put(o)
        converge(self, self.api, rf)
        node = next(o["spec"]["nodeName"] for o in slices if o["spec"].get("nodeName"))
        deadline = time.monotonic() + 20 * SLOW
        while time.monotonic() < deadline:
            status, body = http_get(rf, "/debug/nodes/%s" % node)
            if status == 200 and body.get("devices"):
                break
            time.sleep(0.05)
        self.assertTrue(body.get("devices"), "the published slices never showed: %s" % body)
        self.assertTrue(rf.alive())

    def test_layout_events_match_a_fresh_start(self):
        """A changed ResourceSlice, Node label and DeviceClass are patched into the layout
        (alloc/model/model-patch.c): every node then reads as it does in a railfit started
        afresh on the same objects (whose layout is built in full), and explain agrees."""
        rf = self.start()
        objs = self.api.state()["objects"]
        sl = next(o for o in objs["resourceslices"]
                  if o["spec"].get("nodeName") and o["spec"].get("devices"))
        node_name = sl["spec"]["nodeName"]
        sl = json.loads(json.dumps(sl))
        sl["spec"]["devices"][0].setdefault("attributes", {})["test.railfit.io/x"] = {"int": 7}
        node = json.loads(json.dumps(next(o for o in objs["nodes"]
                                          if o["metadata"]["name"] == node_name)))
        node["metadata"].setdefault("labels", {})["network.topology.kubernetes.io/block"] = "b9"
        cls = json.loads(json.dumps(objs["deviceclasses"][0]))
        sel = (cls["spec"].get("selectors") or [{}])[0].get("cel")
        if sel:
            sel["expression"] = "(%s) && true" % sel["expression"]
        self.api.put(sl)
        self.api.put(node)
        self.api.put(cls)
        converge(self, self.api, rf)

        def shown(r):
            status, body = http_get(r, "/debug/nodes/%s" % node_name)
            return status == 200 and any(
                (d.get("attributes") or {}).get("test.railfit.io/x") == 7
                for d in body.get("devices") or []) and (
                    (body.get("network") or {}).get("block") == "b9")

        deadline = time.monotonic() + 20 * SLOW
        while not shown(rf) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(shown(rf), "the events never showed in /debug/nodes/%s" % node_name)
        fresh = self.start()
        status, listing = http_get(fresh, "/debug/nodes")
        self.assertEqual(status, 200)
        names = [n["node"] for n in listing]
        self.assertIn(node_name, names)
        def timeless(v):  # ages differ between the two processes
            if isinstance(v, dict):
                return {k: timeless(x) for k, x in v.items() if not k.endswith("Age")}
            return [timeless(x) for x in v] if isinstance(v, (list, tuple)) else v

        self.maxDiff = None
        for name in names:
            a = timeless(http_get(rf, "/debug/nodes/%s" % name))
            b = timeless(http_get(fresh, "/debug/nodes/%s" % name))
            self.assertEqual(a, b, "node %s differs after the events" % name)
        pods = [o for o in objs["pods"] if not (o.get("spec") or {}).get("nodeName")]
        for p in pods[:3]:
            md = p["metadata"]
            path = "/debug/explain/%s/%s" % (md.get("namespace", "default"), md["name"])
            self.assertEqual(http_get(rf, path), http_get(fresh, path), path)

    def test_filter_remembered_across_layout_events(self):
        """Filter and prioritize remember verdicts per node (alloc/memo.h), and a patched layout
        keeps them for the nodes an event did not touch: after a ResourceSlice event (every
        device of one node's GPU slice tainted) and a Node label event (another node's block),
        every answer equals explain's and a railfit started afresh on the same objects, and the
        tainted node's verdict changed."""
        self.api.put({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                      "metadata": {"name": "memo-c", "namespace": "t", "uid": "memo-c"},
                      "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                          "deviceClassName": "gpu.nvidia.com", "count": 1}}]}}})
        pod = {"metadata": {"name": "memo-p", "namespace": "t", "uid": "memo-p",
                            "labels": {"batch.kubernetes.io/job-name": "memo"}},
               "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "memo-c"}]}}
        # X: a node whose GPU slice no claim holds a device of (allocations dropped), so that
        # its usage fingerprint stays the same through the event: only the node's rev tells
        objs = self.api.state()["objects"]
        sl = next(o for o in objs["resourceslices"]
                  if o["spec"].get("driver") == "gpu.nvidia.com" and o["spec"].get("devices")
                  and o["spec"].get("nodeName"))
        x = sl["spec"]["nodeName"]
        for c in objs["resourceclaims"]:
            res = (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
                "results") or []
            if any(r.get("driver") == "gpu.nvidia.com" and r.get("pool") == sl["spec"]["pool"]
                   ["name"] for r in res):
                c = json.loads(json.dumps(c))
                del c["status"]
                self.api.put(c)
        rf = self.start()
        objs = self.api.state()["objects"]
        names = sorted(o["metadata"]["name"] for o in objs["nodes"])

        def answers(r):
            c = r.client()
            res = c.filter(pod, names)
            scores = dict(c.prioritize(pod, names))
            got = {n: (res.status(n), res.failed.get(n) or res.unresolvable.get(n), scores[n])
                   for n in names}
            ex = c.post_raw("/debug/explain", json.dumps(pod).encode()).json()
            for e in ex["nodes"]:
                want = e["verdict"]
                status, msg, score = got[e["node"]]
                self.assertEqual(status, {"fail": "unschedulable"}.get(want, want), e)
                if want == "pass":
                    self.assertEqual(score, e["score"], e)
                else:
                    self.assertEqual((score, msg),
                                     (0, "railfit: " + e["reasons"][0].replace("%", " ")), e)
            return got

        before = answers(rf)
        self.assertEqual(answers(rf), before)  # remembered
        y = next(n for n in names if n != x)
        sl = json.loads(json.dumps(sl))
        for d in sl["spec"]["devices"]:
            d["taints"] = [{"key": "test.railfit.io/down", "effect": "NoSchedule"}]
        node = json.loads(json.dumps(next(o for o in objs["nodes"]
                                          if o["metadata"]["name"] == y)))
        node["metadata"].setdefault("labels", {})["network.topology.kubernetes.io/block"] = "b7"
        self.api.put(sl)
        self.api.put(node)
        converge(self, self.api, rf)

        def shown(r):
            sx, bx = http_get(r, "/debug/nodes/%s" % x)
            sy, by = http_get(r, "/debug/nodes/%s" % y)
            return sx == 200 and sy == 200 and all(
                d.get("taints") for d in bx.get("devices") or []
                if d.get("driver", "gpu.nvidia.com") == "gpu.nvidia.com"
                and d.get("kind") == "gpu") and (
                    (by.get("network") or {}).get("block") == "b7")

        deadline = time.monotonic() + 20 * SLOW
        while not shown(rf) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(shown(rf), "the events never showed in /debug/nodes")
        after = answers(rf)
        self.assertEqual(before[x][0], "pass")
        self.assertNotEqual(after[x][0], "pass", after[x])
        self.assertEqual(answers(rf), after)  # remembered
        fresh = self.start()
        self.assertEqual(answers(fresh), after)

    def test_very_short_watches_back_off(self):
        """A server that ends every watch at once without events: railfit backs off (client-go's
        0.8 s doubling, with relists), it does not spin."""
        rf = self.start()
        self.api.fault("short-close", kind="deviceclasses", count=-1)
        self.api.clear_requests()
        self.api.drop_watches(kind="deviceclasses", mode="clean")
        time.sleep(6)
        reqs = self.api.requests(kind="deviceclasses")
        # 0.8-1.6, 1.6-3.2, 3.2-6.4 s: at most 4 rounds of list + watch in 6 s
        self.assertLessEqual(len(reqs), 10, [(r["verb"], round(r["mono"], 2)) for r in reqs])
        self.assertGreaterEqual(len(reqs), 2)
        self.api.clear_faults()
        touch_all(self.api)
        converge(self, self.api, rf, timeout=30)

    def test_bookmarks_advance_the_resume_point(self):
        """Bookmarks move the resourceVersion a watch resumes from: after history is compacted
        up to now, re-watches need no relist."""
        self.api.config(bookmarkInterval=0.2)
        rf = self.start()
        self.api.fault("bookmark-only", kind="nodes")
        self.api.drop_watches(mode="clean")

        def bumping():
            return [w for w in self.api.watches() if "bookmark-only" in w["faults"]]

        end = time.monotonic() + 15 * SLOW
        while not bumping():
            self.assertLess(time.monotonic(), end, "the bookmark-only watch never started")
            time.sleep(0.05)
        time.sleep(1.0)  # the RV advances with bookmarks only
        while bumping():  # end the bumping stream, so that the RV stands still
            self.api.drop_watches(kind="nodes", mode="clean")
            time.sleep(0.05)
        time.sleep(0.6)  # every watch gets a bookmark at the now stable RV
        before = restarts(rf)
        self.api.compact()
        self.api.clear_requests()
        time.sleep(0.5)  # a bookmark at the compacted RV reaches every watch
        self.api.drop_watches(mode="clean")
        touch_all(self.api)
        converge(self, self.api, rf)
        after = restarts(rf)
        for rid in KINDS:
            self.assertEqual(after.get((rid, "expired"), 0), before.get((rid, "expired"), 0),
                             rid)
        # no list had to fall back to a consistent read (RV "") for lack of history (the
        # limit=1 lists ask for the current RV after a dropped watch: a restored server's
        # would be lower)
        for r in self.api.requests(verb="list"):
            if r["query"].get("limit") == "1" and "resourceVersion" not in r["query"]:
                continue
            self.assertNotIn(r["query"].get("resourceVersion", ""), ("", "0"), r["rawQuery"])

    def test_server_before_1_34(self):
        """A 1.33 server does not serve resource.k8s.io/v1: the DRA kinds are reported with what
        to do, nodes and pods are cached, and the 1.34 allocator rules are chosen."""
        self.api.config(version="v1.33.4")
        rf = railfit(self.kubeconfig).start()
        self.addCleanup(self.stop_rf, rf)
        doc = wait_ready(self, rf, 503, check=lambda d: sorted(d.get("notSynced", [])) ==
                         ["deviceclasses", "resourceclaims", "resourceslices"])
        self.assertTrue(doc["kinds"]["nodes"]["synced"])
        end = time.monotonic() + 10 * SLOW
        while "Kubernetes 1.34 or newer is needed" not in rf.stderr():
            self.assertLess(time.monotonic(), end, rf.stderr()[-3000:])
            time.sleep(0.1)
        self.assertIn('draRules="1.34"', rf.stderr())

    def test_token_rotation_401(self):
        """Token rotation: a file swapped in by kubelet (new ..data directory) is picked up, and
        a token rejected with 401 makes railfit re-read the file at once and retry."""
        rf = self.start()
        swap_token(self.tokdir, "tok-2")
        self.api.config(tokens=["tok-2"])
        self.api.drop_watches(mode="clean")
        touch_all(self.api)
        converge(self, self.api, rf, what="token file swap")
        # rewritten in place with the old mtime: only the 401 can tell railfit
        real = os.path.realpath(os.path.join(self.tokdir, "token"))
        st = os.stat(real)
        with open(real, "w") as f:
            f.write("tok-3\n")
        os.utime(real, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.api.config(tokens=["tok-3"])
        self.api.clear_requests()
        self.api.drop_watches(mode="clean")
        touch_all(self.api)
        converge(self, self.api, rf, what="401")
        statuses = [r.get("status") for r in self.api.requests()]
        self.assertIn(401, statuses, "the old token was never rejected?")
        wait_ready(self, rf)

    def test_readiness_503_to_200_and_stale(self):
        """/readyz: 503 until every kind is listed (naming the missing one), 200 after, 503 with
        the kind named as stale when its watch keeps failing longer than staleAfter."""
        self.api.fault("500", kind="resourceclaims", verb="list", count=-1)
        rf = railfit(self.kubeconfig).start()
        self.addCleanup(self.stop_rf, rf)
        doc = wait_ready(self, rf, 503, check=lambda d: d.get("notSynced") == ["resourceclaims"])
        self.assertFalse(doc["kinds"]["resourceclaims"]["synced"])
        self.assertTrue(doc["kinds"]["nodes"]["synced"])
        self.api.clear_faults()
        wait_ready(self, rf, 200, timeout=20)
        converge(self, self.api, rf)
        # deviceclasses stop working: list and watch fail from now on
        self.api.fault("500", kind="deviceclasses", verb="list", count=-1)
        self.api.fault("500", kind="deviceclasses", verb="watch", count=-1)
        self.api.drop_watches(kind="deviceclasses", mode="reset")
        t0 = time.monotonic()
        doc = wait_ready(self, rf, 503, timeout=15,
                         check=lambda d: "deviceclasses" in d.get("notSynced", []))
        self.assertGreater(time.monotonic() - t0, 1.5, "stale before staleAfter (3s)")
        self.assertTrue(doc["kinds"]["deviceclasses"]["stale"])
        self.assertTrue(doc["kinds"]["deviceclasses"]["synced"])
        self.assertEqual(doc["notSynced"], ["deviceclasses"])
        # the other kinds keep working meanwhile
        touch(self.api, "nodes")
        end = time.monotonic() + 10 * SLOW
        while truth(self.api)["nodes"] != cached(rf)["nodes"]:
            self.assertLess(time.monotonic(), end, "nodes stalled with deviceclasses")
            time.sleep(0.1)
        _, text = http_get(rf, "/metrics")
        self.assertRegex(text, r'railfit_cache_staleness_seconds\{resource="deviceclasses"\} [3-9]')
        self.api.clear_faults()
        wait_ready(self, rf, 200, timeout=40)
        converge(self, self.api, rf)

    def test_forbidden_one_resource(self):
        """403 on one resource: the log names the verb and resource the RBAC role lacks; every
        other kind keeps working."""
        self.api.config(rbac={"deny": [{"resource": "resourceclaims", "verb": ["list", "watch"]}]})
        rf = railfit(self.kubeconfig).start()
        self.addCleanup(self.stop_rf, rf)
        doc = wait_ready(self, rf, 503, check=lambda d: d.get("notSynced") == ["resourceclaims"])
        self.assertIn("resourceclaims", doc["notSynced"])
        end = time.monotonic() + 10 * SLOW
        want = ('the RBAC role of railfit needs verb \\"list\\" on resource \\"resourceclaims\\" '
                'in API group \\"resource.k8s.io\\"')
        while want not in rf.stderr():
            self.assertLess(time.monotonic(), end, rf.stderr()[-3000:])
            time.sleep(0.1)
        self.assertIn("403 Forbidden", rf.stderr())
        touch(self.api, "nodes")
        end = time.monotonic() + 10 * SLOW
        while truth(self.api)["nodes"] != cached(rf)["nodes"]:
            self.assertLess(time.monotonic(), end)
            time.sleep(0.1)

    def test_fault_storm_bounded_fds_and_memory(self):
        rf = self.start()
        touch_all(self.api)
        converge(self, self.api, rf)
        fds0, rss0 = proc_usage(rf.proc.pid)
        storm = ["garbage", "reset-mid-stream", "watch-410", "close-mid-chunk", "truncate",
                 "unknown-type", "duplicate-added"]
        for i in range(40):
            rid = list(KINDS)[i % len(KINDS)]
            self.api.fault(storm[i % len(storm)], kind=rid)
            if i % 5 == 4:
                self.api.drop_watches(mode="reset")
                touch_all(self.api)
                time.sleep(0.2)
        touch_all(self.api)
        converge(self, self.api, rf, timeout=60, what="the storm")
        self.assertTrue(rf.alive())
        fds1, rss1 = proc_usage(rf.proc.pid)
        self.assertLessEqual(fds1, fds0 + 6, "file descriptors leak: %d -> %d" % (fds0, fds1))
        limit = (60 if SANITIZED else 20) * 1024
        self.assertLess(rss1 - rss0, limit, "memory grew %d kB -> %d kB" % (rss0, rss1))


class LiveConfigs(unittest.TestCase):
    """Kubeconfigs as users write them, in-cluster configuration, and actionable errors."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cfg-", dir=TMP)
        cls.openssl = shutil.which("openssl")
        if cls.openssl:
            cls.cert, cls.key = cls.make_cert("ca")
            cls.other_cert, _ = cls.make_cert("other")

    @classmethod
    def make_cert(cls, name):
        cert = os.path.join(cls.dir, name + ".crt")
        key = os.path.join(cls.dir, name + ".key")
        subprocess.run([cls.openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return cert, key

    def run_converge(self, api, kubeconfig=None, env=None):
        rf = railfit(kubeconfig, env=env).start()
        try:
            wait_ready(self, rf)
            converge(self, api, rf)
            self.assertEqual(rf.stop(), 0)
        finally:
            rf.stop()

    def test_https_ca_data_and_insecure(self):
        if not self.openssl:
            self.skipTest("openssl not available")
        with FakeAPI(snapshot=SNAPSHOT, token="s3cret", tls_cert=self.cert, tls_key=self.key) as api:
            self.assertTrue(api.url.startswith("https://"))
            with open(self.cert, "rb") as f:
                ca = base64.b64encode(f.read()).decode()
            kc = write_kubeconfig(os.path.join(self.dir, "https"), api.url, {"token": "s3cret"},
                                  {"certificate-authority-data": ca})
            self.run_converge(api, kc)
            kc = write_kubeconfig(os.path.join(self.dir, "insecure"), api.url,
                                  {"token": "s3cret"}, {"insecure-skip-tls-verify": "true"})
            self.run_converge(api, kc)
            # the CA file variant, relative to the kubeconfig
            shutil.copy(self.cert, os.path.join(self.dir, "ca-copy.crt"))
            kc = write_kubeconfig(os.path.join(self.dir, "cafile"), api.url, {"token": "s3cret"},
                                  {"certificate-authority": "ca-copy.crt"})
            self.run_converge(api, kc)

    def test_wrong_ca_is_reported(self):
        if not self.openssl:
            self.skipTest("openssl not available")
        with FakeAPI(snapshot=SNAPSHOT, tls_cert=self.cert, tls_key=self.key) as api:
            with open(self.other_cert, "rb") as f:
                ca = base64.b64encode(f.read()).decode()
            kc = write_kubeconfig(os.path.join(self.dir, "wrongca"), api.url, {"token": "x"},
                                  {"certificate-authority-data": ca})
            with railfit(kc) as rf:
                doc = wait_ready(self, rf, 503)
                # the five kinds and DeviceTaintRules (whether served is not known yet)
                self.assertEqual(len(doc["notSynced"]), 6)
                end = time.monotonic() + 10 * SLOW
                while "watch of the API server failed" not in rf.stderr():
                    self.assertLess(time.monotonic(), end)
                    time.sleep(0.1)
                self.assertRegex(rf.stderr(), r"(?i)certificate|SSL")
                self.assertTrue(rf.alive())

    def test_in_cluster_service_account(self):
        if not self.openssl:
            self.skipTest("openssl not available")
        with FakeAPI(snapshot=SNAPSHOT, token="sa-token", tls_cert=self.cert,
                     tls_key=self.key) as api:
            sa = os.path.join(self.dir, "serviceaccount")
            os.makedirs(sa, exist_ok=True)
            swap_token(sa, "sa-token")
            shutil.copy(self.cert, os.path.join(sa, "ca.crt"))
            home = tempfile.mkdtemp(dir=self.dir)
            env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                   "KUBERNETES_SERVICE_PORT": str(api.port), "RAILFIT_SA_DIR": sa,
                   "HOME": home, "KUBECONFIG": ""}
            self.run_converge(api, env=env)

    def test_kubeconfig_env_list_and_home(self):
        with FakeAPI(snapshot=SNAPSHOT, token="t") as api:
            kc = write_kubeconfig(os.path.join(self.dir, "envkc"), api.url, {"token": "t"})
            # the first existing file of the list is used
            self.run_converge(api, env={"KUBECONFIG": "/nonexistent/kc:" + kc})
            home = tempfile.mkdtemp(dir=self.dir)
            os.makedirs(os.path.join(home, ".kube"))
            shutil.copy(kc, os.path.join(home, ".kube", "config"))
            self.run_converge(api, env={"HOME": home, "KUBECONFIG": ""})

    def test_unreachable_server(self):
        sock_port = __import__("schedclient").free_port()
        kc = write_kubeconfig(os.path.join(self.dir, "unreach"), "http://127.0.0.1:%d" % sock_port,
                              {"token": "t"})
        with railfit(kc) as rf:
            doc = wait_ready(self, rf, 503)
            self.assertEqual(sorted(doc["notSynced"]), sorted(list(KINDS) + ["devicetaintrules"]))
            end = time.monotonic() + 10 * SLOW
            want = "cannot connect to the API server at http://127.0.0.1:%d" % sock_port
            while want not in rf.stderr():
                self.assertLess(time.monotonic(), end, rf.stderr()[-2000:])
                time.sleep(0.1)
            self.assertTrue(rf.alive())
            # and it recovers when the server appears
            with FakeAPI(snapshot=SNAPSHOT, port=sock_port) as api:
                wait_ready(self, rf, 200, timeout=45)
                converge(self, api, rf)

    def test_configuration_errors_exit_2(self):
        exec_kc = os.path.join(self.dir, "exec")
        with open(exec_kc, "w") as f:
            f.write("apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: 'https://h:6443'}\n"
                    "users:\n- name: u\n  user:\n    exec:\n      apiVersion: "
                    "client.authentication.k8s.io/v1\n      command: aws\n"
                    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                    "current-context: x\n")
        home = tempfile.mkdtemp(dir=self.dir)
        base_env = dict(os.environ, HOME=home, KUBECONFIG="")
        base_env.pop("KUBERNETES_SERVICE_HOST", None)
        cases = [
            (["--kubeconfig", exec_kc], "exec credential plugins are not supported"),
            (["--kubeconfig", os.path.join(self.dir, "missing")], "cannot read kubeconfig"),
            ([], "no kube-apiserver configuration found"),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                p = subprocess.run([RAILFIT, "serve", "--listen", "127.0.0.1:0"] + args,
                                   env=base_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(want, p.stderr.decode())


class LiveScheduling(unittest.TestCase):
    """End to end: kube-scheduler's extender calls, the DRA plugin's allocation and the binding
    against the fake, one pod after another."""

    N_PODS = 6

    def claim(self, name):
        return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                "metadata": {"name": name, "namespace": "e2e", "uid": "claim-" + name},
                "spec": {"devices": {
                    "requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                    "allocationMode": "ExactCount", "count": 1}},
                        {"name": "nic", "exactly": {"deviceClassName": "rdma-nic",
                                                    "allocationMode": "ExactCount", "count": 1}}],
                    "constraints": [{"requests": ["gpu", "nic"],
                                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}

    def pod(self, name, claim):
        return {"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "e2e", "uid": "pod-" + name,
                             "annotations": {"railfit.io/min-alignment": "PHB"}},
                "spec": {"schedulerName": "railfit",
                         "containers": [{"name": "main", "image": "x",
                                         "resources": {"claims": [{"name": "gpu-nic"}]}}],
                         "resourceClaims": [{"name": "gpu-nic", "resourceClaimName": claim}]},
                "status": {"phase": "Pending"}}

    def test_gpu_level_of_placements_is_counted(self):
        # a claim that receives two GPUs counts once in railfit_placement_gpu_level_total, at the
        # level /debug/nodes/{name} shows between them (its gpuMatrix)
        with FakeAPI(snapshot=SNAPSHOT, token="t") as api, tempfile.TemporaryDirectory() as d:
            kc = write_kubeconfig(os.path.join(d, "kc"), api.url, {"token": "t"})
            claim = {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                     "metadata": {"name": "two-gpus", "namespace": "e2e", "uid": "claim-two"},
                     "spec": {"devices": {"requests": [
                         {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                     "count": 2}}]}}}
            api.put(claim)
            with railfit(kc) as rf:
                wait_ready(self, rf)
                converge(self, api, rf)
                before = metric_values(rf, "railfit_placement_gpu_level_total")
                self.assertEqual(len(before), 7, before)  # NVL..UNKNOWN, declared at 0
                self.assertEqual(sum(before.values()), 0, before)
                held = set()
                for c in api.state("resourceclaims")["objects"]["resourceclaims"]:
                    for r in (c.get("status", {}).get("allocation", {}).get("devices", {})
                              .get("results", [])):
                        held.add((r["pool"], r["device"]))
                node = sorted(truth(api)["nodes"])[0]
                status, info = http_get(rf, "/debug/nodes/" + node)
                self.assertEqual(status, 200, info)
                gpus = [g for g in sorted(info["gpuMatrix"]) if (node, g) not in held][:2]
                self.assertEqual(len(gpus), 2, info["gpuMatrix"])
                want = info["gpuMatrix"][gpus[0]][gpus[1]].split(" ")[0]
                api.allocate("e2e", "two-gpus",
                             [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node,
                               "device": g} for g in gpus], node=node)
                converge(self, api, rf, what="the allocation")
                after = metric_values(rf, "railfit_placement_gpu_level_total")
                got = {re.search(r'level="([^"]+)"', k).group(1): v for k, v in after.items()}
                self.assertEqual(sum(got.values()), 1, got)
                self.assertEqual(got.get(want), 1, (want, got))

    def test_place_gpu_pods_one_after_another(self):
        with FakeAPI(snapshot=SNAPSHOT, token="t") as api, tempfile.TemporaryDirectory() as d:
            kc = write_kubeconfig(os.path.join(d, "kc"), api.url, {"token": "t"})
            objs = []
            for i in range(self.N_PODS):
                objs += [self.claim("train-%d-gpu-nic" % i),
                         self.pod("train-%d" % i, "train-%d-gpu-nic" % i)]
            api.put(*objs)
            # binding is off by default (issue 12): this profile's pods are railfit's
            with railfit(kc, config=CONFIG + "bind: {enabled: true}\n") as rf:
                wait_ready(self, rf)
                converge(self, api, rf)
                client = rf.client(node_cache_capable=True)
                nodes = sorted(truth(api)["nodes"])
                used = {}
                # the binding of pod 1 loses its response after the server committed: railfit's
                # retry gets "already assigned to this node", which is success
                api.fault("bind-commit-drop", kind="pods", name="train-1")
                for i in range(self.N_PODS):
                    name = "train-%d" % i
                    pod = [o for o in objs if o["kind"] == "Pod" and
                           o["metadata"]["name"] == name][0]
                    res = client.filter(pod, nodes)
                    self.assertTrue(res.nodes, "no node passes for %s: %s" % (name, res))
                    scores = dict(client.prioritize(pod, res.nodes))
                    best = sorted(res.nodes, key=lambda n: (-scores.get(n, 0), n))[0]
                    status, ex = http_get(rf, "/debug/explain/e2e/%s?node=%s" % (name, best))
                    self.assertEqual(status, 200, ex)
                    entry = [e for e in ex["nodes"] if e["node"] == best][0]
                    pred = entry["predicted"]
                    self.assertEqual(sorted(p["request"] for p in pred), ["gpu", "nic"], entry)
                    for p in pred:
                        dev = (p["driver"], p["pool"], p["device"])
                        self.assertNotIn(dev, used, "%s steered onto %s of %s" % (
                            name, dev, used.get(dev)))
                        used[dev] = name
                    # the DRA plugin allocates what railfit predicted (PreBind), then the binding
                    api.allocate("e2e", name + "-gpu-nic",
                                 [{"request": p["request"], "driver": p["driver"],
                                   "pool": p["pool"], "device": p["device"]} for p in pred],
                                 node=best, pod="e2e/" + name)
                    client.bind(name, "e2e", "pod-" + name, best)
                    # the placement counts at once, before the watch confirms it
                    snap = http_get(rf, "/debug/snapshot")[1]
                    mine = [o for o in snap["items"] if o["kind"] == "Pod" and
                            o["metadata"]["name"] == name]
                    self.assertEqual(mine[0]["spec"].get("nodeName"), best)
                    converge(self, api, rf, what="binding " + name)
                pods = {o["metadata"]["name"]: o for o in api.state("pods")["objects"]["pods"]
                        if o["metadata"].get("namespace") == "e2e"}
                for i in range(self.N_PODS):
                    self.assertTrue(pods["train-%d" % i]["spec"].get("nodeName"))
                # binding again to the same node is success; to another node it is an error
                p0 = pods["train-0"]
                client.bind("train-0", "e2e", "pod-train-0", p0["spec"]["nodeName"])
                other = [n for n in nodes if n != p0["spec"]["nodeName"]][0]
                with self.assertRaises(SchedulerError) as cm:
                    client.bind("train-0", "e2e", "pod-train-0", other)
                self.assertIn("already assigned to node", str(cm.exception))
                self.assertNotIn("%", str(cm.exception))
                with self.assertRaises(SchedulerError):
                    client.bind("nope", "e2e", "pod-nope", other)
                got = {re.search(r'result="([^"]+)"', k).group(1): v
                       for k, v in metric_values(rf, "railfit_bind_total").items()}
                self.assertEqual(got.get("ok", 0) + got.get("already_bound", 0),
                                 self.N_PODS + 1, got)
                self.assertGreaterEqual(got.get("already_bound", 0), 2, got)
                self.assertEqual(got.get("conflict"), 1, got)
                self.assertEqual(got.get("not_found"), 1, got)
                # every claim was allocated with exactly the devices railfit predicted for the
                # node it was placed on
                preds = {re.search(r'outcome="([^"]+)"', k).group(1): v
                         for k, v in metric_values(rf, "railfit_prediction_total").items()}
                self.assertEqual(preds.get("exact", 0), self.N_PODS, preds)
                self.assertEqual(preds.get("differs", 0), 0, preds)


if __name__ == "__main__":
    warnings.simplefilter("ignore", ResourceWarning)
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
