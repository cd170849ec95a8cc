"""What railfit decides, end to end: the real binary, driven by a client that speaks exactly like
kube-scheduler (schedclient.py), on the built-in demo cluster and on generated clusters.

The demo's expected verdicts follow from the DRA allocator's rules applied by hand to the demo's
hardware (see server/gen_demo.c for each node's state). The generated-cluster test checks railfit
against an independent computation in Python over the same snapshot.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from schedclient import Railfit, strip_node  # noqa: E402

RF = None
NODES = []    # Node objects of the demo
NAMES = []
PODS = {}


def setUpModule():
    global RF, NODES, NAMES, PODS
    RF = Railfit(demo=True).start()
    items = RF.client().get("/debug/snapshot").json()["items"]
    NODES = [strip_node(i) for i in items if i.get("kind") == "Node"]
    NAMES = [n["metadata"]["name"] for n in NODES]
    PODS = {"%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]): p
            for p in items if p.get("kind") == "Pod"}


def tearDownModule():
    if RF:
        RF.stop()


HGX = ["hgx-%02d" % i for i in range(1, 11)]
L4 = ["l4-01", "l4-02"]
CPU = ["cpu-01", "cpu-02"]
P4D = ["p4d-01", "p4d-02"]
NO_RDMA = L4 + CPU


def expect(pass_, fail, unres):
    return dict([(n, "pass") for n in pass_] + [(n, "unschedulable") for n in fail] +
                [(n, "unresolvable") for n in unres])


EXPECTED = {
    # pcieRoot-constrained GPU+NIC, min-alignment PHB
    "demo/trainer-aligned": expect([n for n in HGX if n not in ("hgx-03", "hgx-06")] + P4D,
                                   ["hgx-03", "hgx-06"], NO_RDMA),
    # unconstrained GPU+NIC: anything with a free GPU and a free rdma NIC
    "demo/trainer-loose": expect([n for n in HGX if n != "hgx-06"] + P4D, ["hgx-06"], NO_RDMA),
    # two aligned pairs on one NUMA node
    "demo/trainer-2pairs": expect(["hgx-01", "hgx-02", "hgx-05", "hgx-07", "hgx-08", "hgx-10",
                                   "p4d-01"],
                                  ["hgx-03", "hgx-04", "hgx-06", "p4d-02"],
                                  ["hgx-09"] + NO_RDMA),
    # one H100 by selector: the A100 and L4 nodes have no matching device at all
    "demo/inference-1gpu": expect([n for n in HGX if n != "hgx-06"], ["hgx-06"], P4D + NO_RDMA),
}


class DemoDecisions(unittest.TestCase):
    def check_pod(self, key, expected, cache_mode):
        client = RF.client(node_cache_capable=cache_mode)
        nodes = NAMES if cache_mode else NODES
        res = client.filter(PODS[key], nodes)
        got = {n: res.status(n) for n in NAMES}
        for node, want in expected.items():
            self.assertEqual(got[node], want, "%s on %s (cache=%s): %r" % (
                key, node, cache_mode, res.failed.get(node) or res.unresolvable.get(node)))
        for node, msg in list(res.failed.items()) + list(res.unresolvable.items()):
            self.assertTrue(msg.startswith("railfit: "), msg)
            self.assertNotIn("%", msg)
        return res

    def test_pending_pods_both_modes(self):
        for key, exp in EXPECTED.items():
            if not exp:
                continue
            for mode in (True, False):
                with self.subTest(pod=key, cache=mode):
                    self.check_pod(key, exp, mode)

    def test_loader_front_end(self):
        exp = {n: "pass" for n in NAMES}
        exp["cpu-01"] = "unschedulable"   # 80G of 100G ingress used, asks 40G
        exp["l4-02"] = "unresolvable"     # front-end annotated 25G < 40G
        res = self.check_pod("demo/loader", exp, True)
        self.assertIn("front-end NIC has 20G of 100G ingress free", res.failed["cpu-01"])

    def test_web_pod_is_not_railfits_business(self):
        res = self.check_pod("demo/web", {n: "pass" for n in NAMES}, True)
        scores = dict(RF.client().prioritize(PODS["demo/web"], NAMES))
        self.assertEqual(len(set(scores.values())), 1, scores)

    def test_failed_messages_name_devices(self):
        res = RF.client().filter(PODS["demo/trainer-aligned"], NAMES)
        msg = res.failed["hgx-03"]
        for dev in ("gpu-6", "gpu-7", "pci-0000-9a-00-0", "pci-0000-c0-00-0",
                    "resource.kubernetes.io/pcieRoot", "demo/trainer-aligned-gpu-nic"):
            self.assertIn(dev, msg)

    def test_min_alignment_failure_says_which_constraint_to_add(self):
        pod = json.loads(json.dumps(PODS["demo/trainer-loose"]))
        pod["metadata"].setdefault("annotations", {})["railfit.io/min-alignment"] = "PHB"
        res = RF.client().filter(pod, NAMES)
        msg = res.failed["hgx-05"]
        self.assertIn("allocator would pick gpu-1 + pci-0000-18-00-0 (NODE)", msg)
        self.assertIn("gpu-1 + pci-0000-40-00-0 (PHB) are free", msg)
        self.assertIn("add constraint matchAttribute resource.kubernetes.io/pcieRoot over "
                      "requests [gpu nic] to claim demo/trainer-loose-gpu-nic", msg)
        # hgx-03 has only NODE-level pairs left: fails, but evicting could help
        self.assertEqual(res.status("hgx-03"), "unschedulable")

    def test_prioritize_prefers_aligned(self):
        pod = PODS["demo/trainer-loose"]
        feasible = [n for n in NAMES if n in HGX + P4D and n != "hgx-06"]
        scores = dict(RF.client().prioritize(pod, feasible))
        for s in scores.values():
            self.assertTrue(0 <= s <= 10)
        # first fit misaligns on hgx-05, p4d-02 (NODE) and hgx-03 has only NODE pairs
        for worse in ("hgx-05", "p4d-02", "hgx-03"):
            for better in ("hgx-01", "hgx-04", "hgx-08"):
                self.assertLess(scores[worse], scores[better], scores)
        # hgx-01's annotation puts gpu-0 and its NIC behind one PCIe switch (PIX): best of all;
        # hgx-02's puts them two switches apart (PXB)
        self.assertEqual(max(scores, key=scores.get), "hgx-01")
        self.assertGreater(scores["hgx-01"], scores["hgx-02"])
        # among nodes known only by DRA attributes (PHB), the last aligned pair of an almost
        # full node wins (packing)
        for n in ("hgx-08", "hgx-09", "hgx-10", "p4d-01"):
            self.assertGreaterEqual(scores["hgx-04"], scores[n], scores)

    def test_unknown_node_is_failed_not_passed(self):
        res = RF.client().filter(PODS["demo/trainer-aligned"], ["hgx-01", "no-such-node"])
        self.assertEqual(res.status("no-such-node"), "unschedulable")
        self.assertIn("not in railfit's cache", res.failed["no-such-node"])

    def test_explain_matches_filter(self):
        doc = RF.client().get("/debug/explain/demo/trainer-loose").json()
        self.assertEqual(doc["pod"], "demo/trainer-loose")
        self.assertEqual(doc["demand"], "known")
        by = {n["node"]: n for n in doc["nodes"]}
        h5 = by["hgx-05"]
        self.assertEqual(h5["verdict"], "pass")
        self.assertEqual(h5["level"], "NODE")
        self.assertEqual(h5["bestLevel"], "PHB")
        self.assertEqual([p["device"] for p in h5["predicted"]], ["gpu-1", "pci-0000-18-00-0"])
        self.assertEqual(h5["predicted"][0]["claim"], "demo/trainer-loose-gpu-nic")
        self.assertTrue(h5["deterministic"])
        self.assertIn("alignment", h5["parts"])
        # below the root complex: the hwloc annotation of hgx-01 says PIX, and explain says so
        h1 = by["hgx-01"]
        self.assertEqual(h1["level"], "PIX")
        self.assertEqual(h1["predicted"][0]["levelSource"], "annotation")
        self.assertEqual(h1["sources"]["locality"], "annotation")
        self.assertEqual(by["hgx-09"]["predicted"][0]["levelSource"], "dra")
        scores = dict(RF.client().prioritize(PODS["demo/trainer-loose"], list(by)))
        for name, n in by.items():
            if n["verdict"] == "pass":
                self.assertEqual(n["score"], scores[name], name)

    def test_explain_of_posted_pod_and_unknown_demand(self):
        c = RF.client()
        pod = {"metadata": {"name": "x", "namespace": "demo"},
               "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "nope"}]}}
        doc = c.post_raw("/debug/explain", json.dumps(pod).encode()).json()
        self.assertEqual(doc["demand"], "unknown")
        self.assertIn("demo/nope", doc["unknownReason"])
        res = c.filter(pod, NAMES)
        self.assertEqual(sorted(res.nodes), sorted(NAMES))  # never guesses: passes every node


class DemoPreemption(unittest.TestCase):
    def test_keeps_only_nodes_where_eviction_helps(self):
        def victims(*names):
            return {"pods": [PODS[n] for n in names], "num_pdb_violations": 0}
        cand = {
            # full node: evicting a two-pair job frees aligned pairs
            "hgx-06": victims("ml-train/gpt-pt-worker-0"),
            # NIC dc is held by a NIC-only pod while gpu-7 is free: evicting it gives a pair
            "hgx-03": victims("data/nic-mover-0"),
            # no RDMA NIC at all: evicting GPUs never helps
            "l4-02": victims("inference/l4-infer-0"),
        }
        for mode in (True, False):
            with self.subTest(cache=mode):
                res = RF.client(node_cache_capable=mode).preempt(PODS["demo/trainer-aligned"], cand)
                self.assertEqual(sorted(res), ["hgx-03", "hgx-06"])
                # victims are returned exactly as sent
                self.assertEqual([p["metadata"]["uid"] for p in res["hgx-06"]["pods"]],
                                 [PODS["ml-train/gpt-pt-worker-0"]["metadata"]["uid"]])
        # a pod that is not railfit's business: nothing is dropped
        res = RF.client().preempt(PODS["demo/web"], cand)
        self.assertEqual(sorted(res), ["hgx-03", "hgx-06", "l4-02"])

    def test_front_end_eviction(self):
        # cpu-01 runs two ingest pods at 40G ingress each; the loader asks 40G
        res = RF.client().preempt(PODS["demo/loader"], {
            "cpu-01": {"pods": [PODS["etl/ingest-0"]], "num_pdb_violations": 0},
            "l4-02": {"pods": [PODS["inference/l4-infer-0"]], "num_pdb_violations": 0}})
        self.assertEqual(sorted(res), ["cpu-01"])  # l4-02's front-end is 25G: never enough


def independent_verdict(items, claim_constrained):
    """Per node: can a GPU and an rdma NIC be had (on one pcieRoot if constrained)? Computed
    straight from the snapshot JSON, without railfit."""
    held = set()
    for it in items:
        if it["kind"] != "ResourceClaim":
            continue
        for r in (((it.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            if not r.get("adminAccess"):
                held.add((r["driver"], r["pool"], r["device"]))
    out = {}
    for it in items:
        if it["kind"] != "ResourceSlice":
            continue
        s = it["spec"]
        node = s.get("nodeName")
        e = out.setdefault(node, {"gpus": [], "nics": []})
        for d in s.get("devices") or []:
            a = d.get("attributes") or {}
            free = (s["driver"], s["pool"]["name"], d["name"]) not in held
            root = (a.get("resource.kubernetes.io/pcieRoot") or {}).get("string")
            if s["driver"] == "gpu.nvidia.com" and (a.get("type") or {}).get("string") == "gpu":
                e["gpus"].append((free, root))
            if s["driver"] == "dra.net" and (a.get("dra.net/rdma") or {}).get("bool"):
                e["nics"].append((free, root))
    verdict = {}
    for node, e in out.items():
        fg = [r for f, r in e["gpus"] if f]
        fn = [r for f, r in e["nics"] if f]
        if claim_constrained:
            verdict[node] = any(g == n for g in fg for n in fn)
        else:
            verdict[node] = bool(fg) and bool(fn)
    return verdict


class GeneratedCluster(unittest.TestCase):
    def test_only_nodes_with_a_free_aligned_pair_pass_and_win(self):
        rf_bin = os.environ["RAILFIT"]
        doc = json.loads(subprocess.run([rf_bin, "gen-cluster", "--nodes", "60", "--seed", "42",
                                         "--used", "0.8"], capture_output=True, check=True).stdout)
        spec = {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
            {"name": "nic", "exactly": {"deviceClassName": "rdma-nic", "count": 1}}]}}
        aligned = json.loads(json.dumps(spec))
        aligned["devices"]["constraints"] = [{"requests": ["gpu", "nic"],
                                              "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
        for name, s in (("aligned", aligned), ("loose", spec)):
            doc["items"].append({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                                 "metadata": {"name": name, "namespace": "t", "uid": name},
                                 "spec": s})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "snap.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            with Railfit(snapshot=path) as rf:
                names = [i["metadata"]["name"] for i in doc["items"] if i["kind"] == "Node"]
                client = rf.client()
                want_aligned = independent_verdict(doc["items"], True)
                want_loose = independent_verdict(doc["items"], False)
                self.assertTrue(0 < sum(want_aligned.values()) < len(names), "degenerate cluster")
                pod_a = {"metadata": {"name": "pa", "namespace": "t"}, "spec": {
                    "resourceClaims": [{"name": "c", "resourceClaimName": "aligned"}]}}
                pod_l = {"metadata": {"name": "pl", "namespace": "t"}, "spec": {
                    "resourceClaims": [{"name": "c", "resourceClaimName": "loose"}]}}
                res = client.filter(pod_a, names)
                for n in names:
                    self.assertEqual(res.status(n) == "pass", want_aligned[n], n)
                # the loose pod passes wherever any GPU and NIC are free, but nodes that still
                # have an aligned pair score above nodes that have only misaligned ones
                res = client.filter(pod_l, names)
                for n in names:
                    self.assertEqual(res.status(n) == "pass", want_loose[n], n)
                scores = dict(client.prioritize(pod_l, res.nodes))
                doc_l = client.post_raw("/debug/explain", json.dumps(
                    dict(pod_l, metadata={"name": "pl", "namespace": "t"})).encode()).json()
                level = {e["node"]: e.get("level") for e in doc_l["nodes"]}
                phb = [n for n in res.nodes if level[n] == "PHB"]
                worse = [n for n in res.nodes if level[n] in ("NODE", "SYS")]
                self.assertTrue(phb and worse, (phb, worse))
                self.assertGreater(min(scores[n] for n in phb) + 0.0,
                                   sum(scores[n] for n in worse) / len(worse) - 0.0001)
                # every predicted PHB pair really shares a root and is free
                for e in doc_l["nodes"]:
                    if e.get("level") == "PHB":
                        roots = {p["pcieRoot"] for p in e["predicted"]}
                        self.assertEqual(len(roots), 1, e)


class RememberedVerdicts(unittest.TestCase):
    """Filter and prioritize remember a node's verdict per demand shape (alloc/memo.h): the pods of
    one job share it, and explain (never remembered) must agree with every answer, first or
    repeated, including failure messages that name each pod's own claim."""

    def test_job_pods_agree_with_explain(self):
        rf_bin = os.environ["RAILFIT"]
        doc = json.loads(subprocess.run([rf_bin, "gen-cluster", "--nodes", "40", "--seed", "7",
                                         "--used", "0.6"], capture_output=True, check=True).stdout)
        four = {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 4}},
            {"name": "nic", "exactly": {"deviceClassName": "rdma-nic", "count": 4}}]}}
        aligned = {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
            {"name": "nic", "exactly": {"deviceClassName": "rdma-nic", "count": 1}}],
            "constraints": [{"requests": ["gpu", "nic"],
                             "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}
        pods = []
        for shape, spec, ann in (("four", four, {"railfit.io/min-alignment": "PXB"}),
                                 ("aligned", aligned, {})):
            for w in range(3):
                name = "%s-w%d" % (shape, w)
                doc["items"].append({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                                     "metadata": {"name": name + "-c", "namespace": "t",
                                                  "uid": name + "-c"}, "spec": spec})
                pods.append({"metadata": {"name": name, "namespace": "t", "uid": name,
                                          "annotations": ann,
                                          "labels": {"batch.kubernetes.io/job-name": shape}},
                             "spec": {"resourceClaims": [{"name": "c",
                                                          "resourceClaimName": name + "-c"}]}})
        names = [i["metadata"]["name"] for i in doc["items"] if i["kind"] == "Node"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "snap.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            with Railfit(snapshot=path) as rf:
                client = rf.client()
                seen = set()
                for rnd in range(2):
                    for pod in pods if rnd == 0 else list(reversed(pods)):
                        ex = client.post_raw("/debug/explain", json.dumps(pod).encode()).json()
                        by = {e["node"]: e for e in ex["nodes"]}
                        for _ in range(2):
                            res = client.filter(pod, names)
                            scores = dict(client.prioritize(pod, names))
                            for n in names:
                                want = by[n]["verdict"]
                                got = res.status(n)
                                seen.add(want)
                                self.assertEqual(got, {"fail": "unschedulable"}.get(want, want),
                                                 (pod["metadata"]["name"], n))
                                if want == "pass":
                                    self.assertEqual(scores[n], by[n]["score"], n)
                                    continue
                                self.assertEqual(scores[n], 0, n)
                                msg = res.failed.get(n) or res.unresolvable.get(n)
                                self.assertEqual(msg, "railfit: " + by[n]["reasons"][0].replace(
                                    "%", " "), n)
                self.assertTrue({"pass", "fail"} <= seen, seen)


class NetworkLocality(unittest.TestCase):
    """The demo with its HGX nodes in three network blocks (two spines) and one running pod of
    rail group "job" on hgx-07: the locality part and railfit.io/max-spread, through filter and
    prioritize in both nodeCacheCapable modes, and through explain."""

    BLOCKS = {"hgx-01": ("b1", "s1"), "hgx-02": ("b1", "s1"), "hgx-03": ("b1", "s1"),
              "hgx-04": ("b2", "s1"), "hgx-05": ("b2", "s1"), "hgx-06": ("b2", "s1"),
              "hgx-07": ("b3", "s2"), "hgx-08": ("b3", "s2"), "hgx-09": ("b3", "s2"),
              "hgx-10": ("b3", "s2")}

    @classmethod
    def setUpClass(cls):
        items = RF.client().get("/debug/snapshot").json()["items"]
        for it in items:
            if it.get("kind") == "Node" and it["metadata"]["name"] in cls.BLOCKS:
                b, s = cls.BLOCKS[it["metadata"]["name"]]
                labels = it["metadata"].setdefault("labels", {})
                labels["network.topology.kubernetes.io/block"] = b
                labels["network.topology.kubernetes.io/spine"] = s
        items.append({"kind": "Pod", "apiVersion": "v1",
                      "metadata": {"name": "job-0", "namespace": "demo", "uid": "job-0",
                                   "annotations": {"railfit.io/group": "job"}},
                      "spec": {"nodeName": "hgx-07", "containers": [{"name": "c"}]},
                      "status": {"phase": "Running"}})
        cls.tmp = tempfile.TemporaryDirectory(prefix="railfit-blocks-")
        path = os.path.join(cls.tmp.name, "blocks.json")
        with open(path, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": items}, f)
        cls.rf = Railfit(snapshot=path).start()
        cls.nodes = [strip_node(i) for i in items if i.get("kind") == "Node"]
        cls.names = [n["metadata"]["name"] for n in cls.nodes]

    @classmethod
    def tearDownClass(cls):
        cls.rf.stop()
        cls.tmp.cleanup()

    def pod(self, annotations):
        p = json.loads(json.dumps(PODS["demo/trainer-loose"]))
        p["metadata"]["name"] = "job-1"
        p["metadata"].setdefault("annotations", {}).update(annotations)
        return p

    def test_max_spread_block_and_spine(self):
        base = RF.client().filter(PODS["demo/trainer-loose"], NAMES)
        passing = [n for n in NAMES if base.status(n) == "pass"]
        for spread, inside in (("block", {"hgx-07", "hgx-08", "hgx-09", "hgx-10"}),
                               ("spine", {"hgx-07", "hgx-08", "hgx-09", "hgx-10"})):
            pod = self.pod({"railfit.io/group": "job", "railfit.io/max-spread": spread})
            for mode in (True, False):
                res = self.rf.client(node_cache_capable=mode).filter(
                    pod, self.names if mode else self.nodes)
                for n in passing:
                    want = "pass" if n in inside else "unresolvable"
                    self.assertEqual(res.status(n), want, (spread, mode, n, res.unresolvable))
                msg = res.unresolvable["hgx-01"]
                self.assertTrue(msg.startswith("railfit: max-spread %s: node is in %s " % (
                    spread, spread)), msg)
                self.assertIn("group demo/job runs in %s %s" % (
                    spread, "b3" if spread == "block" else "s2"), msg)
                self.assertIn("has no %s label" % spread, res.unresolvable["p4d-01"])

    def test_locality_part_orders_nodes(self):
        pod = self.pod({"railfit.io/group": "job"})
        res = self.rf.client().filter(pod, self.names)
        feasible = [n for n in self.names if res.status(n) == "pass"]
        scores = dict(self.rf.client().prioritize(pod, feasible))
        doc = self.rf.client().post_raw("/debug/explain", json.dumps(pod).encode()).json()
        by = {n["node"]: n for n in doc["nodes"]}
        self.assertEqual(doc["groupPlaces"], {"members": 1, "blocks": ["b3"], "spines": ["s2"]})
        for n in feasible:
            want = {"b3": 1.0, "b1": 0.0, "b2": 0.0}.get(self.BLOCKS.get(n, ("-",))[0], 0.0)
            self.assertEqual(by[n]["parts"]["locality"], want, n)
            self.assertEqual(by[n]["score"], scores[n], n)
        # the table shows the network column only when the part applies somewhere
        table = self.rf.client().post_raw("/debug/explain?o=table",
                                          json.dumps(pod).encode()).body.decode()
        self.assertIn(" NET ", table.splitlines()[2])
        table = self.rf.client().post_raw("/debug/explain?o=table", json.dumps(
            PODS["demo/trainer-loose"]).encode()).body.decode()
        self.assertNotIn(" NET ", table.splitlines()[2])
        # without the group the part is gone and the scores are the demo's
        plain = dict(RF.client().prioritize(PODS["demo/trainer-loose"], feasible))
        doc = self.rf.client().post_raw("/debug/explain",
                                        json.dumps(PODS["demo/trainer-loose"]).encode()).json()
        for n in doc["nodes"]:
            self.assertNotIn("locality", n["parts"])
            if n["node"] in plain:
                self.assertEqual(n["score"], plain[n["node"]], n["node"])


if __name__ == "__main__":
    warnings.simplefilter("ignore", ResourceWarning)  # the test client's kept-alive sockets
    prog = unittest.main(exit=False, verbosity=2, warnings="ignore")
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
