"""The railfit command line as a user meets it: exit codes (0 ok, 1 runtime failure, 2 usage or
configuration error), messages that name the flag or key and what was expected, gen-cluster's
determinism, and offline explain on snapshots and pod files."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

RAILFIT = os.environ.get("RAILFIT", "build/server/railfit")


def run(*args, stdin=None, timeout=120):
    return subprocess.run([RAILFIT] + list(args), capture_output=True, text=True, input=stdin,
                          timeout=timeout)


class Cli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="railfit-cli-")
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def test_version_and_help(self):
        r = run("version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("railfit 0.1.0", r.stdout)
        self.assertIn("libmicrohttpd", r.stdout)
        r = run("version", "-o", "json")
        self.assertEqual(json.loads(r.stdout)["version"], "0.1.0")
        for cmd in ("serve", "explain", "gen-cluster"):
            r = run(cmd, "--help")
            self.assertEqual(r.returncode, 0, cmd)
            self.assertIn("usage: railfit " + cmd, r.stdout)
        r = run("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", r.stderr)

    def test_gen_cluster_is_deterministic_and_shaped_like_kubectl(self):
        a = run("gen-cluster", "--nodes", "4", "--seed", "7", "--used", "0.5")
        b = run("gen-cluster", "--nodes", "4", "--seed", "7", "--used", "0.5")
        c = run("gen-cluster", "--nodes", "4", "--seed", "8", "--used", "0.5")
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)
        doc = json.loads(a.stdout)
        self.assertEqual((doc["apiVersion"], doc["kind"]), ("v1", "List"))
        kinds = {}
        for it in doc["items"]:
            self.assertIn("apiVersion", it)
            kinds[it["kind"]] = kinds.get(it["kind"], 0) + 1
        self.assertEqual(kinds["Node"], 4)
        self.assertEqual(kinds["ResourceSlice"], 8)
        self.assertGreaterEqual(kinds["DeviceClass"], 2)

    def test_gen_cluster_usage_errors(self):
        for args, needle in ((("--nodes", "abc"), "--nodes: expected a number"),
                             (("--nodes", "3", "--used", "2"), "--used: expected a fraction"),
                             (("--nodes", "3", "--seed", "-1"), "--seed"),
                             ((), "--nodes N is required")):
            r = run("gen-cluster", *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(needle, r.stderr)

    def test_serve_config_and_snapshot_errors(self):
        bad = self.write("bad.yaml", "filter: {minAligment: PHB}\n")
        r = run("serve", "--demo", "--config", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("filter.minAligment", r.stderr)
        bad = self.write("bad2.yaml", "scoring: {weights: {alignment: high}}\n")
        r = run("serve", "--demo", "--config", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("scoring.weights.alignment", r.stderr)
        r = run("serve", "--snapshot", os.path.join(self.dir, "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)
        notjson = self.write("notjson.json", "{\"items\": [")
        r = run("serve", "--snapshot", notjson)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot parse", r.stderr)
        r = run("serve", "--demo", "--snapshot", notjson)
        self.assertEqual(r.returncode, 2)
        r = run("serve", "--demo", "--log-format", "xml")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--log-format", r.stderr)

    def test_explain_demo_pod_file(self):
        pod = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": "trainer-loose", "namespace": "demo"},
               "spec": {"resourceClaims": [{"name": "gpu-nic",
                                            "resourceClaimName": "trainer-loose-gpu-nic"}]}}
        path = self.write("pod.json", pod)
        r = run("explain", "--demo", "--pod", path, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        by = {n["node"]: n for n in doc["nodes"]}
        self.assertEqual(by["hgx-05"]["level"], "NODE")
        self.assertEqual(by["hgx-05"]["bestLevel"], "PHB")
        self.assertEqual(by["l4-01"]["verdict"], "unresolvable")
        r = run("explain", "--demo", "--pod", path)
        self.assertEqual(r.returncode, 0)
        self.assertIn("pod demo/trainer-loose: demand known", r.stdout)
        self.assertIn("hgx-05", r.stdout)
        r = run("explain", "--demo", "--pod", path, "--node", "nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("node 'nope'", r.stderr)
        r = run("explain", "--demo", "--pod", path, "-o", "yaml")
        self.assertEqual(r.returncode, 2)

    def test_explain_pod_list_with_template(self):
        # a snapshot of one node plus a pod whose claim comes from a template (not created yet)
        snap = json.loads(run("gen-cluster", "--nodes", "2", "--seed", "3", "--used", "0").stdout)
        spath = self.write("snap.json", snap)
        tmpl = {"kind": "ResourceClaimTemplate", "apiVersion": "resource.k8s.io/v1",
                "metadata": {"name": "gpu-nic-aligned", "namespace": "ml"},
                "spec": {"spec": {"devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                                 {"name": "nic", "exactly": {"deviceClassName": "rdma-nic"}}],
                    "constraints": [{"requests": ["gpu", "nic"],
                                     "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}}
        pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ml"},
               "spec": {"resourceClaims": [{"name": "gpu-nic",
                                            "resourceClaimTemplateName": "gpu-nic-aligned"}]}}
        ppath = self.write("podlist.json", {"kind": "List", "apiVersion": "v1",
                                            "items": [pod, tmpl]})
        r = run("explain", "--snapshot", spath, "--pod", ppath, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["demand"], "known")
        for n in doc["nodes"]:
            self.assertEqual(n["verdict"], "pass")
            self.assertEqual(n["level"], "PHB")
            self.assertEqual(n["predicted"][0]["claim"], "ml/p-gpu-nic")
        # a pod file without a Pod
        r = run("explain", "--snapshot", spath, "--pod", self.write("nopod.json", tmpl))
        self.assertEqual(r.returncode, 2)
        self.assertIn("expected exactly one Pod", r.stderr)


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2, warnings="ignore")
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
