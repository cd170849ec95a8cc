"""railfit simulate as a user runs it: the snapshot's Pending pods or a generated workload on a
gen-cluster snapshot, the three output formats (the SVG must be well-formed XML a browser opens),
the same report for the same seed, usage errors with exit code 2 naming the flag."""

import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

RAILFIT = os.environ.get("RAILFIT", "build/server/railfit")


def run(*args, timeout=600):
    return subprocess.run([RAILFIT] + list(args), capture_output=True, text=True,
                          timeout=timeout)


class Simulate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="railfit-sim-")
        cls.snap = os.path.join(cls.tmp.name, "cluster.json")
        r = run("gen-cluster", "--nodes", "24", "--seed", "3", "--used", "0.4")
        assert r.returncode == 0, r.stderr
        with open(cls.snap, "w") as f:
            f.write(r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def simulate(self, *args):
        r = run("simulate", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_demo_pending_pods_table(self):
        out = self.simulate("--demo")
        self.assertIn("kube-scheduler", out)
        self.assertIn("with railfit", out)
        self.assertIn("approximated", out)
        for row in ("pods placed", "GPU-NIC pairs by level", "NICs over-committed",
                    "front-end NICs over-committed", "rail consistency",
                    "free aligned GPU+NIC pairs"):
            self.assertIn(row, out)

    def test_workload_json_deterministic_per_seed(self):
        spec = "20x1gpu1nic,6x2pair,8x4gpu-job4,30xloader-egress20G,4x1gpu1nic-minPHB"
        a = json.loads(self.simulate("--snapshot", self.snap, "--workload", spec, "-o", "json"))
        b = json.loads(self.simulate("--snapshot", self.snap, "--workload", spec, "-o", "json"))
        self.assertEqual(a, b)
        self.assertEqual(a["pods"], 68)
        self.assertEqual(a["nodes"], 24)
        names = [c["name"] for c in a["columns"]]
        self.assertEqual(names, ["kube-scheduler", "railfit"])
        for c in a["columns"]:
            self.assertEqual(c["placed"] + c["pending"], 68, c)
            self.assertEqual(sum(c["pendingReasons"].values()), c["pending"])
            self.assertEqual(set(c["levels"]), {"PIX", "PXB", "PHB", "NODE", "SYS", "UNKNOWN"})
        rf = a["columns"][1]
        # railfit never places below a pod's min-alignment, never over-commits a NIC
        self.assertEqual(rf["minAlignment"]["met"], rf["minAlignment"]["asked"])
        self.assertEqual(rf["frontendOvercommitted"], 0)
        self.assertEqual(len(a["placements"]), 68)
        for p in a["placements"]:
            for col in ("kube-scheduler", "railfit"):
                self.assertTrue("node" in p[col] or "pending" in p[col], p)

    def test_svg_is_well_formed_xml(self):
        svg = self.simulate("--snapshot", self.snap, "--workload", "10x1gpu1nic,10xloader-egress5G",
                            "-o", "svg")
        root = ET.fromstring(svg)
        self.assertEqual(root.tag, "{http://www.w3.org/2000/svg}svg")
        rects = root.findall(".//{http://www.w3.org/2000/svg}rect")
        self.assertGreater(len(rects), 12)  # 6 levels x 2 columns + the over-commit bars
        texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
        self.assertIn("PHB", texts)
        self.assertIn("with railfit", texts)

    def test_snapshot_pending_pods_in_creation_order(self):
        with open(self.snap) as f:
            doc = json.load(f)
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "late", "namespace": "ml", "uid": "u-late",
                            "creationTimestamp": "2030-01-02T00:00:00Z",
                            "annotations": {"kubernetes.io/egress-bandwidth": "1G"}},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
               "status": {"phase": "Pending"}}
        early = json.loads(json.dumps(pod))
        early["metadata"].update(name="early", uid="u-early",
                                 creationTimestamp="2030-01-01T00:00:00Z")
        done = json.loads(json.dumps(pod))
        done["metadata"].update(name="done", uid="u-done")
        done["status"]["phase"] = "Succeeded"
        doc["items"] += [pod, early, done]
        path = os.path.join(self.tmp.name, "pending.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        rep = json.loads(self.simulate("--snapshot", path, "-o", "json"))
        self.assertEqual([p["pod"] for p in rep["placements"]], ["ml/early", "ml/late"])

    def test_usage_errors(self):
        cases = [
            (["simulate"], "--snapshot F (or --demo) is required"),
            (["simulate", "--demo", "-o", "xml"], "-o: expected table, json or svg"),
            (["simulate", "--demo", "--workload", "5x3gpuX"], "--workload item '5x3gpuX'"),
            (["simulate", "--demo", "--seed", "-1"], "--seed"),
            (["simulate", "--demo", "--weight", "0"], "--weight"),
            (["simulate", "--snapshot", "/nonexistent.json"], "/nonexistent.json"),
        ]
        for args, msg in cases:
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)
        bound = os.path.join(self.tmp.name, "bound.json")
        with open(bound, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "p", "namespace": "ml"},
                       "spec": {"nodeName": "hgx-001"}}, f)
        r = run("simulate", "--snapshot", self.snap, "--pods", bound)
        self.assertEqual(r.returncode, 2)
        self.assertIn("already bound", r.stderr)
        r = run("simulate", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: railfit simulate", r.stdout)

    def test_pods_file(self):
        pods = {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c1", "namespace": "ml", "uid": "c1"},
             "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
                 {"name": "nic", "exactly": {"deviceClassName": "rdma-nic", "count": 1}}]}}},
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "p1", "namespace": "ml", "uid": "p1"},
             "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "c1"}]}}]}
        path = os.path.join(self.tmp.name, "pods.json")
        with open(path, "w") as f:
            json.dump(pods, f)
        rep = json.loads(self.simulate("--snapshot", self.snap, "--pods", path, "-o", "json"))
        self.assertEqual(rep["pods"], 1)
        for c in rep["columns"]:
            self.assertEqual(c["placed"], 1, c)
            self.assertEqual(c["gpuNicPods"], 1, c)


if __name__ == "__main__":
    unittest.main(verbosity=2)
