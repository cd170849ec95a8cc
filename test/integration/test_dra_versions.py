"""railfit against fake kube-apiservers of Kubernetes 1.36, 1.37 and 1.38: the DRA rules chosen from
``/version`` (``/debug/config`` draRules, the log), DeviceTaintRules (not served by 1.36: not watched,
readiness does not wait; served by 1.37: listed, watched and applied as device taints, named in
``/debug/nodes`` and explain; 1.36 with DRADeviceTaintRules on: v1beta2), explain's
``deterministic`` flag under the sorted 1.36 search, and ``kube.featureGates``.
"""

import json
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fakeapi"))

from fakeapi import FakeAPI  # noqa: E402
from test_live import http_get, railfit, wait_ready, write_kubeconfig  # noqa: E402
import test_live  # noqa: E402

RAILFIT = os.environ.get("RAILFIT")
SLOW = 3.0 if os.environ.get("RF_SANITIZED") else 1.0
DATA = os.path.join(HERE, "..", "data", "dra")
NODE = "hgx-h100-node-01"
CONFIG = "kube: {watchTimeout: 5s, staleAfter: 3s}\n"

TMP = None
SNAPSHOT = None


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


def setUpModule():
    global TMP, SNAPSHOT
    if not RAILFIT:
        raise unittest.SkipTest("set RAILFIT to the railfit binary")
    test_live.RAILFIT = RAILFIT
    TMP = tempfile.mkdtemp(prefix="railfit-dra-")
    SNAPSHOT = os.path.join(TMP, "cluster.json")
    node = {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    items = [node, load("resourceslice-gpu-nvidia-8xh100.json"),
             load("resourceslice-dranet-8xcx7-plus-frontend.json"),
             load("deviceclass-gpu.nvidia.com.json"), load("deviceclass-rdma-nic-dranet.json"),
             claim("one-gpu"), pod("trainer", "one-gpu")]
    with open(SNAPSHOT, "w") as f:
        json.dump({"kind": "List", "apiVersion": "v1", "items": items}, f)


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def claim(name):
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": "ml", "uid": "claim-" + name},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}]}}}


def pod(name, claim_name):
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "ml", "uid": "pod-" + name},
            "spec": {"schedulerName": "railfit",
                     "containers": [{"name": "main", "image": "x",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}]},
            "status": {"phase": "Pending"}}


RULE = {"kind": "DeviceTaintRule", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "drain-gpu-0"},
        "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0"},
                 "taint": {"key": "maintenance", "value": "firmware", "effect": "NoSchedule"}}}


def explain(tc, rf, name="trainer"):
    status, ex = http_get(rf, "/debug/explain/ml/%s?node=%s" % (name, NODE))
    tc.assertEqual(status, 200, ex)
    return [e for e in ex["nodes"] if e["node"] == NODE][0]


def wait_for(tc, what, fn, timeout=15.0):
    end = time.monotonic() + timeout * SLOW
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(0.1)
    tc.fail("%s did not happen within %.0f s" % (what, timeout * SLOW))


class DraVersions(unittest.TestCase):

    def run_rf(self, version, objs=(), api_config=None, config=CONFIG):
        api = FakeAPI(snapshot=SNAPSHOT, token="t", version=version, config=api_config).start()
        self.addCleanup(api.stop)
        if objs:
            api.put(*objs)
        kc = write_kubeconfig(os.path.join(TMP, "kc-" + version), api.url, {"token": "t"})
        rf = railfit(kc, config=config).start()
        self.addCleanup(rf.stop)
        return api, rf

    def test_136_rules_and_no_taint_rules(self):
        """1.36.1: the 1.36.1 rules from /version; v1 DeviceTaintRules answer 404, so the kind is
        not watched and readiness does not wait for it; the pick is deterministic."""
        api, rf = self.run_rf("v1.36.1")
        doc = wait_ready(self, rf)
        self.assertEqual(doc["kinds"]["devicetaintrules"].get("served"), False, doc)
        status, cfg = http_get(rf, "/debug/config")
        self.assertEqual(cfg["draRules"], {"version": "1.36.1", "from": "server",
                                           "serverVersion": "v1.36.1"})
        self.assertEqual(cfg["kube"]["draVersion"], "auto")
        entry = explain(self, rf)
        self.assertTrue(entry["deterministic"], entry)
        self.assertEqual([p["device"] for p in entry["predicted"]], ["gpu-0"])
        self.assertIn("not watching it", rf.stderr())
        self.assertIn('draRules="1.36.1"', rf.stderr())

    def test_136_taint_rules_v1beta2_with_the_gate(self):
        """1.36 with DRADeviceTaintRules on serves DeviceTaintRules as resource.k8s.io/v1beta2
        (kube-scheduler 1.36 reads that version: D362 resourceslice/tracker/tracker.go:122):
        v1 answers 404, railfit lists and watches v1beta2 and applies the rule."""
        api, rf = self.run_rf("v1.36.2", [RULE],
                              api_config={"enabledGroupVersions": ["resource.k8s.io/v1beta2"]})
        doc = wait_ready(self, rf)
        self.assertTrue(doc["kinds"]["devicetaintrules"]["synced"], doc)
        entry = explain(self, rf)
        self.assertEqual([p["device"] for p in entry["predicted"]], ["gpu-1"], entry)
        self.assertIn("device gpu-0 carries taint maintenance=firmware:NoSchedule from "
                      "DeviceTaintRule drain-gpu-0", entry["reasons"], entry)
        api.delete("devicetaintrules", "drain-gpu-0")
        wait_for(self, "the pick to return to gpu-0 (a v1beta2 watch event)",
                 lambda: [p["device"] for p in explain(self, rf)["predicted"]] == ["gpu-0"])
        self.assertNotIn("not watching it", rf.stderr())

    def test_136_list_attributes_feature_gate(self):
        """kube.featureGates.DRAListTypeAttributes tells railfit kube-scheduler's gate: on a
        1.36 server a GPU slice whose devices carry a list attribute is a CEL error for the
        class selector without it (the pod's attempt fails), and readable with it (gpu-0);
        /debug/config shows the gate."""
        gpus = load("resourceslice-gpu-nvidia-8xh100.json")
        for d in gpus["spec"]["devices"]:
            d["attributes"]["numaNodes"] = {"ints": [0, 1]}
        api, rf = self.run_rf("v1.36.2", [gpus])
        wait_ready(self, rf)
        entry = wait_for(self, "the list attribute to reach the model",
                         lambda: (lambda e: e if e["search"] == "cel-error" else None)(
                             explain(self, rf)))
        self.assertIn("numaNodes: unsupported attribute value", " ".join(entry["reasons"]), entry)
        self.assertIn("DRAListTypeAttributes", " ".join(entry["reasons"]), entry)
        status, cfg = http_get(rf, "/debug/config")
        self.assertEqual(cfg["kube"]["featureGates"], {"DRAListTypeAttributes": False})
        gated = CONFIG.rstrip("}\n") + ", featureGates: {DRAListTypeAttributes: true}}\n"
        api3, rf3 = self.run_rf("v1.36.2", [gpus], config=gated)
        wait_ready(self, rf3)
        status, cfg = http_get(rf3, "/debug/config")
        self.assertEqual(cfg["kube"]["featureGates"], {"DRAListTypeAttributes": True})
        entry = wait_for(self, "the pick with the gate on",
                         lambda: (lambda e: e if e.get("predicted") else None)(explain(self, rf3)))
        self.assertEqual(entry["verdict"], "pass", entry)
        self.assertEqual([p["device"] for p in entry["predicted"]], ["gpu-0"], entry)

    def all_counters_objects(self):
        """The partitionable H100 (its devices consume counters) as the node's GPU pool, and a
        pod asking allocationMode All of class gpu.nvidia.com."""
        mig = load("resourceslice-gpu-nvidia-mig-partitionable-k134.json")
        mig["spec"]["pool"]["resourceSliceCount"] = 1
        claim_all = claim("all-gpus")
        claim_all["spec"]["devices"]["requests"][0]["exactly"] = {
            "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}
        return [mig, claim_all, pod("takes-all", "all-gpus")]

    def test_1361_all_mode_with_counters_crashes_the_scheduler(self):
        """1.36.0-1.36.1: allocationMode All over counter-consuming devices crashes
        kube-scheduler (#138885): the node fails with a warning naming the fix, logged once;
        1.36.2 places the pod."""
        objs = self.all_counters_objects()
        api, rf = self.run_rf("v1.36.1", objs)
        wait_ready(self, rf)
        client = rf.client(node_cache_capable=True)
        res = client.filter(objs[2], [NODE])
        self.assertEqual(res.nodes, [], res)
        msg = str(res.failed.get(NODE, ""))
        self.assertIn("crashes kube-scheduler 1.36.1", msg, res)
        self.assertIn("upgrade to 1.36.2", msg, res)
        client.filter(objs[2], [NODE])
        self.assertEqual(rf.stderr().count("kube-scheduler of this version crashes"), 2)
        api2, rf2 = self.run_rf("v1.36.2", objs)
        wait_ready(self, rf2)
        res = rf2.client(node_cache_capable=True).filter(objs[2], [NODE])
        self.assertEqual(res.nodes, [NODE], res)

    def test_137_taint_rules_listed_watched_applied(self):
        """1.37: a DeviceTaintRule draining gpu-0 moves the pick to gpu-1, shows in
        /debug/nodes with the rule as its source; deleting it (a watch event) brings gpu-0
        back; a rule created later (watched) applies too."""
        api, rf = self.run_rf("v1.37.0", [RULE])
        doc = wait_ready(self, rf)
        self.assertTrue(doc["kinds"]["devicetaintrules"]["synced"], doc)
        status, cfg = http_get(rf, "/debug/config")
        self.assertEqual(cfg["draRules"]["version"], "1.37.0")
        entry = explain(self, rf)
        self.assertEqual([p["device"] for p in entry["predicted"]], ["gpu-1"], entry)
        self.assertIn("device gpu-0 carries taint maintenance=firmware:NoSchedule from "
                      "DeviceTaintRule drain-gpu-0", entry["reasons"], entry)
        status, node = http_get(rf, "/debug/nodes/" + NODE)
        gpu0 = [d for d in node["devices"] if d["device"] == "gpu-0"][0]
        self.assertEqual(gpu0["taints"], [{"key": "maintenance", "value": "firmware",
                                           "effect": "NoSchedule", "source": "DeviceTaintRule",
                                           "rule": "drain-gpu-0"}])
        status, snap = http_get(rf, "/debug/snapshot")
        self.assertIn("drain-gpu-0", [o["metadata"]["name"] for o in snap["items"]
                                      if o["kind"] == "DeviceTaintRule"])
        api.delete("devicetaintrules", "drain-gpu-0")
        wait_for(self, "the pick to return to gpu-0",
                 lambda: [p["device"] for p in explain(self, rf)["predicted"]] == ["gpu-0"])
        rule = json.loads(json.dumps(RULE))
        rule["metadata"]["name"] = "drain-all"
        rule["spec"]["deviceSelector"] = {"driver": "gpu.nvidia.com"}
        api.put(rule)
        entry = wait_for(self, "every GPU to be tainted",
                         lambda: (lambda e: e if e["verdict"] != "pass" else None)(explain(self, rf)))
        self.assertIn("from DeviceTaintRule drain-all", " ".join(entry["reasons"]), entry)

    def test_137_extended_resource_pod(self):
        """A pod asking nvidia.com/gpu: 2 in its limits, with the class gpu.nvidia.com naming
        that resource: kube-scheduler's synthetic claim, predicted and scored like any claim
        (filter and prioritize judge it, explain shows the claim and its two GPUs); a rule
        draining gpu-0 moves it to gpu-1 and gpu-2."""
        ext = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": "ext", "namespace": "ml", "uid": "pod-ext"},
               "spec": {"schedulerName": "railfit",
                        "containers": [{"name": "main", "image": "x", "resources": {
                            "limits": {"nvidia.com/gpu": "2", "cpu": "4"}}}]},
               "status": {"phase": "Pending"}}
        api, rf = self.run_rf("v1.37.0", [ext, RULE])
        wait_ready(self, rf)
        status, ex = http_get(rf, "/debug/explain/ml/ext?node=" + NODE)
        self.assertEqual(status, 200, ex)
        self.assertEqual(ex["demand"], "known", ex)
        self.assertEqual(ex["claims"], ["ml/ext-extended-resources"], ex)
        entry = [e for e in ex["nodes"] if e["node"] == NODE][0]
        self.assertEqual([(p["request"], p["device"]) for p in entry["predicted"]],
                         [("container-0-request-1", "gpu-1"), ("container-0-request-1", "gpu-2")],
                         entry)
        self.assertTrue(entry["deterministic"], entry)
        client = rf.client(node_cache_capable=True)
        res = client.filter(ext, [NODE])
        self.assertEqual(res.nodes, [NODE], res)
        scores = dict(client.prioritize(ext, [NODE]))
        self.assertIn(NODE, scores)
        status, metrics = http_get(rf, "/metrics")
        self.assertIn('railfit_pods_total{demand="known"}', metrics)

    def test_138_gets_newest_rules_with_a_warning(self):
        """A server newer than the newest rules railfit knows: those rules, a warning logged
        once and shown in /debug/config."""
        api, rf = self.run_rf("v1.38.2")
        wait_ready(self, rf)
        status, cfg = http_get(rf, "/debug/config")
        self.assertEqual(cfg["draRules"]["version"], "1.37")
        self.assertEqual(cfg["draRules"]["serverVersion"], "v1.38.2")
        self.assertIn("newer than the newest DRA allocator", cfg["draRules"]["warning"])
        self.assertEqual(rf.stderr().count("newer than the newest DRA allocator"), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
