"""`railfit topology` as a user meets it: the real hwloc topologies of test/data/topology and the
synthetic HGX-like ones (test/gen_hgx_xml.py) as table, JSON and annotation; exit codes (an XML
hwloc cannot load: 1, naming the file and hwloc's reason; a bad flag: 2); --publish until the
Kubernetes API client is in the build; and `railfit explain` on a snapshot whose Node carries the
annotation, which must show the level from the annotation."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

RAILFIT = os.environ.get("RAILFIT", "build/server/railfit")
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
TOPO = os.path.join(DATA, "topology")
GEN = os.path.join(HERE, "..", "gen_hgx_xml.py")

FIXTURES = ["nvidiaDGX2.xml", "32em64t-2n8c2t-pci-wholeio.xml", "16intel64-manyVFs.xml"]
GENERATED = ["hgx-h100", "hgx-h200-2nic", "hgx-cpu-rootport", "hgx-domains-vfs", "hgx-nonuma",
             "dgx-h100", "dgx-h100-pxb", "l4-8"]
LEVELS = {"PIX", "PXB", "PHB", "NODE", "SYS", "UNKNOWN"}


def run(*args, timeout=120, env=None):
    e = dict(os.environ)
    e.setdefault("HWLOC_COMPONENTS", "-pci")  # host discovery without libpciaccess: fast
    if env:
        e.update(env)
    return subprocess.run([RAILFIT] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=e)


def xml(name):
    return os.path.join(TOPO, name)


def all_xml():
    return [xml(f) for f in FIXTURES] + [xml("gen-%s.xml" % g) for g in GENERATED] + \
        [xml("gen-dgx-h100-nobridges.xml")]


class Topology(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="railfit-topology-")
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, content):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def topo_json(self, path):
        r = run("topology", "--xml", path, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def annotation(self, path):
        r = run("topology", "--xml", path, "-o", "annotation")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("\n"), 1)
        return r.stdout.strip()

    # ---- output formats ----

    def test_json_has_every_ordered_pair(self):
        for path in all_xml():
            doc = self.topo_json(path)
            self.assertEqual(doc["source"], "xml:" + path)
            pcis = [d["pci"] for d in doc["devices"]]
            self.assertEqual(len(set(pcis)), len(pcis), path)
            kinds = [d["kind"] for d in doc["devices"]]
            self.assertEqual(kinds, sorted(kinds, key=lambda k: k != "gpu"), path)  # GPUs first
            for d in doc["devices"]:
                self.assertRegex(d["pci"], r"^[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]$")
                self.assertIn(d["kind"], ("gpu", "nic"))
                self.assertTrue(d["numa"] is None or isinstance(d["numa"], int))
                self.assertIsInstance(d["names"], list)
            m = doc["matrix"]
            self.assertEqual(sorted(m), sorted(pcis), path)
            for a in pcis:
                self.assertEqual(sorted(m[a]), sorted(p for p in pcis if p != a), path)
                for b, lvl in m[a].items():
                    self.assertIn(lvl, LEVELS)
                    self.assertEqual(lvl, m[b][a], "%s: %s/%s not symmetric" % (path, a, b))

    def test_known_levels(self):
        # hand-derived (see test/unit/topology/test_topology.c for the full matrices)
        m = self.topo_json(xml("32em64t-2n8c2t-pci-wholeio.xml"))["matrix"]
        self.assertEqual(m["0000:84:00.0"]["0000:04:00.0"], "PIX")  # one root port
        self.assertEqual(m["0000:83:00.0"]["0000:04:00.0"], "PHB")  # two root ports
        self.assertEqual(m["0000:03:00.0"]["0000:81:00.0"], "SYS")  # two NUMA nodes
        m = self.topo_json(xml("nvidiaDGX2.xml"))["matrix"]
        self.assertEqual(m["0000:34:00.0"]["0000:36:00.0"], "PIX")  # one leaf switch
        self.assertEqual(m["0000:34:00.0"]["0000:39:00.0"], "PXB")  # leaf, switch, leaf
        self.assertEqual(m["0000:34:00.0"]["0000:57:00.0"], "NODE")
        self.assertEqual(m["0000:34:00.0"]["0000:b7:00.0"], "SYS")
        m = self.topo_json(xml("gen-dgx-h100.xml"))["matrix"]
        self.assertEqual(m["0000:1b:00.0"]["0000:18:00.0"], "PIX")
        m = self.topo_json(xml("gen-dgx-h100-pxb.xml"))["matrix"]
        self.assertEqual(m["0000:1b:00.0"]["0000:18:00.0"], "PXB")
        m = self.topo_json(xml("gen-hgx-cpu-rootport.xml"))["matrix"]
        self.assertEqual(m["0000:18:00.0"]["0000:1a:00.0"], "PHB")
        doc = self.topo_json(xml("gen-hgx-domains-vfs.xml"))
        self.assertEqual(doc["matrix"]["0001:9a:00.0"]["0001:9c:00.2"], "PIX")
        self.assertIn("pci0001:97", [d["pcieRoot"] for d in doc["devices"]])

    def test_table_like_nvidia_smi(self):
        r = run("topology", "--xml", xml("gen-dgx-h100.xml"))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["GPU%d" % i for i in range(8)] +
                         ["NIC%d" % i for i in range(10)] + ["NUMA", "Affinity"])
        self.assertEqual(lines[1].split()[:10], ["GPU0", "X", "NODE", "NODE", "NODE", "SYS",
                                                 "SYS", "SYS", "SYS", "PIX"])
        self.assertEqual(lines[1].split()[-1], "0")
        for needle in ("Legend:", "PIX     = ", "PXB     = ", "PHB     = ", "NODE    = ",
                       "SYS     = ", "Device Legend:", "NIC0: 0000:18:00.0"):
            self.assertIn(needle, r.stdout)
        r2 = run("topology", "--xml", xml("gen-dgx-h100.xml"), "-o", "table")
        self.assertEqual(r2.stdout, r.stdout)

    def test_nvlink_like_nvidia_smi(self):
        # DGX-2: 6 NVLinks from each GPU to the 6 NVSwitches of its baseboard (hwloc's
        # NVLinkBandwidth distances): NV6 within a board; the file has no switch-to-switch
        # links, so GPUs of different boards keep their PCIe level (and a note says why)
        r = run("topology", "--xml", xml("nvidiaDGX2.xml"))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[1].split()[:18], ["GPU0", "X"] + ["NV6"] * 7 + ["SYS"] * 8 +
                         ["0"])
        self.assertEqual(lines[9].split()[:10], ["GPU8"] + ["SYS"] * 8 + ["X"])
        self.assertIn("NV#     = Connection traversing a bonded set of # NVLinks", r.stdout)
        self.assertIn("no NVLink path in the data", r.stdout)
        doc = self.topo_json(xml("nvidiaDGX2.xml"))
        self.assertEqual(doc["matrix"]["0000:34:00.0"]["0000:36:00.0"], "PIX")  # PCIe level
        self.assertEqual(doc["nvlinks"]["0000:34:00.0"]["0000:5e:00.0"], 6)
        self.assertNotIn("0000:b7:00.0", doc["nvlinks"]["0000:34:00.0"])
        self.assertEqual(len(doc["nvlinks"]), 16)
        a = json.loads(self.annotation(xml("nvidiaDGX2.xml")))
        self.assertEqual(a["v"], 2)
        self.assertTrue(all(link[2] == 6 for link in a["l"]))

    def test_l4_without_nvlink(self):
        # 8 x L4 on PCIe switches: no NV# anywhere, GPU to GPU levels from the PCI tree, and
        # the annotation stays version 1
        r = run("topology", "--xml", xml("gen-l4-8.xml"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("NV", r.stdout.replace("NVIDIA", ""))
        lines = r.stdout.splitlines()
        self.assertEqual(lines[1].split()[:9], ["GPU0", "X", "PIX", "NODE", "NODE", "SYS", "SYS",
                                                "SYS", "SYS"])
        doc = self.topo_json(xml("gen-l4-8.xml"))
        self.assertNotIn("nvlinks", doc)
        self.assertEqual([d["device"] for d in doc["devices"] if d["kind"] == "gpu"],
                         ["27b8"] * 8)
        self.assertEqual(json.loads(self.annotation(xml("gen-l4-8.xml")))["v"], 1)

    def test_no_gpus_or_no_nics_is_fine(self):
        r = run("topology", "--xml", xml("nvidiaDGX2.xml"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no NICs found (PCI class 02xx)", r.stdout)
        r = run("topology", "--xml", xml("16intel64-manyVFs.xml"), "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(any("no GPUs found" in n for n in json.loads(r.stdout)["notes"]))

    def test_no_numa_information_is_said(self):
        doc = self.topo_json(xml("gen-hgx-nonuma.xml"))
        self.assertTrue(all(d["numa"] is None for d in doc["devices"]))
        self.assertTrue(any("NODE and SYS cannot be told apart" in n for n in doc["notes"]))
        r = run("topology", "--xml", xml("gen-hgx-nonuma.xml"), "-o", "annotation")
        self.assertEqual(r.returncode, 0)
        self.assertIn("note: the topology has 1 NUMA node for 2 packages", r.stderr)

    def test_annotation_values(self):
        for path in all_xml():
            v = self.annotation(path)
            self.assertLessEqual(len(v), 16384)
            a = json.loads(v)
            # version 2 only where GPUs share NVLinks (the DGX-2), else version 1 as before
            self.assertEqual(a["v"], 2 if "nvidiaDGX2" in path else 1, path)
            self.assertEqual("l" in a, a["v"] == 2, path)
            n = len(a["d"])
            self.assertEqual((len(a["k"]), len(a["n"]), len(a["c"])), (n, n, n))
            nc = max(a["c"]) + 1 if n else 0
            self.assertEqual(len(a["m"]), nc * (nc + 1) // 2)
            doc = self.topo_json(path)
            self.assertEqual(a["d"], [d["pci"] for d in doc["devices"]])
        # 16 GPUs + 18 NICs of an HGX-like machine fit easily
        self.assertLess(len(self.annotation(xml("gen-hgx-h100.xml"))), 2048)

    def test_this_machine(self):
        r = run("topology")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("topology", "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["source"], "hwloc")

    # ---- errors ----

    def test_xml_hwloc_cannot_load(self):
        cases = [
            (self.write("garbage.xml", "garbage\n"), "garbage.xml"),
            (self.write("v3.xml", '<?xml version="1.0"?>\n<topology version="3.0">\n'
                                  '</topology>\n'), "cannot import XML version 3.0 > 2"),
            (self.write("truncated.xml", '<?xml version="1.0"?>\n<topology version="2.0">\n'
                                         '<object type="Machine"'), "truncated.xml"),
            (self.write("empty.xml", ""), "empty.xml"),
            (os.path.join(self.dir, "missing.xml"), "No such file or directory"),
        ]
        for path, needle in cases:
            r = run("topology", "--xml", path)
            self.assertEqual(r.returncode, 1, (path, r.stdout, r.stderr))
            self.assertIn("'%s'" % path, r.stderr)
            self.assertIn(needle, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertEqual(r.stdout, "")

    def test_usage_errors(self):
        f = xml("gen-dgx-h100.xml")
        for args, needle in ((("--frobnicate",), "usage: railfit topology"),
                             (("--xml", f, "-o", "yaml"), "-o: expected table, json or annotation"),
                             (("--xml", f, "--publish"), "--publish needs --node N"),
                             (("--xml", f, "--node", "n1"), "--node is only used with --publish"),
                             (("--xml", f, "extra"), "unexpected argument 'extra'"),
                             (("--xml",), "usage: railfit topology"),
                             (("--xml", ""), "--xml: expected a file name"),
                             (("--xml", f, "--config", os.path.join(self.dir, "nope.yaml")),
                              "nope.yaml")):
            r = run("topology", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)
        r = run("topology", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: railfit topology", r.stdout)

    def test_publish_patches_the_node_through_the_api(self):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakeapi"))
        from fakeapi import FakeAPI
        f = xml("gen-dgx-h100.xml")
        node = {"kind": "Node", "apiVersion": "v1",
                "metadata": {"name": "hgx-1", "annotations": {"keep.example.com/x": "y"}}}
        snap = self.write("snap.json", json.dumps({"kind": "List", "apiVersion": "v1",
                                                    "items": [node]}))
        with FakeAPI(snapshot=snap, token="s3cret") as api:
            kc = self.write("kubeconfig", """apiVersion: v1
kind: Config
clusters:
- cluster:
    server: %s
  name: fake
contexts:
- context:
    cluster: fake
    user: publisher
  name: fake
current-context: fake
users:
- name: publisher
  user:
    token: s3cret
""" % api.url)
            r = run("topology", "--xml", f, "--publish", "--node", "hgx-1", "--kubeconfig", kc)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("annotated node hgx-1", r.stderr)
            nodes = [o for o in api.state("nodes")["objects"]["nodes"] if o["metadata"]["name"] == "hgx-1"]
            ann = nodes[0]["metadata"]["annotations"]
            # only railfit's own key is touched (merge patch)
            self.assertEqual(ann["railfit.io/pci-topology"], self.annotation(f))
            self.assertEqual(ann["keep.example.com/x"], "y")
            reqs = [q for q in api.requests() if q.get("method") == "PATCH"]
            self.assertTrue(reqs, "no PATCH seen")
            # the annotation key follows devices.topologyAnnotation
            cfg = self.write("cfg.yaml", "devices: {topologyAnnotation: example.com/pci}\n")
            r = run("topology", "--xml", f, "--publish", "--node", "hgx-1", "--config", cfg,
                    "--kubeconfig", kc, "-o", "json")
            self.assertEqual(r.returncode, 0, r.stderr)
            json.loads(r.stdout)  # -o still prints
            nodes = [o for o in api.state("nodes")["objects"]["nodes"] if o["metadata"]["name"] == "hgx-1"]
            self.assertIn("example.com/pci", nodes[0]["metadata"]["annotations"])
            # a node that does not exist: exit 1 naming it
            r = run("topology", "--xml", f, "--publish", "--node", "nope", "--kubeconfig", kc)
            self.assertEqual(r.returncode, 1)
            self.assertIn("nope", r.stderr)
            # the extender in live mode picks the published annotation up from the Node
            dra = os.path.join(DATA, "dra")
            objs = []
            for name in ("resourceslice-gpu-nvidia-8xh100.json",
                         "resourceslice-dranet-8xcx7-plus-frontend.json",
                         "deviceclass-gpu.nvidia.com.json", "deviceclass-rdma-nic-dranet.json"):
                with open(os.path.join(dra, name)) as fh:
                    objs.append(json.loads(fh.read().replace("hgx-h100-node-01", "hgx-1")))
            objs.append({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                         "metadata": {"name": "c", "namespace": "ml"},
                         "spec": {"devices": {"requests": [
                             {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                             {"name": "nic", "exactly": {"deviceClassName": "rdma-nic"}}]}}})
            api.put(*objs)
            import socket
            import time
            import urllib.request
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            sock.close()
            srv = subprocess.Popen([RAILFIT, "serve", "--kubeconfig", kc, "--listen",
                                    "127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            try:
                for _ in range(200):
                    try:
                        urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=1)
                        break
                    except Exception:
                        time.sleep(0.1)
                pod = {"metadata": {"name": "p", "namespace": "ml"},
                       "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "c"}]}}
                req = urllib.request.Request("http://127.0.0.1:%d/debug/explain" % port,
                                             data=json.dumps(pod).encode(), method="POST")
                doc = json.load(urllib.request.urlopen(req, timeout=10))
                n = [e for e in doc["nodes"] if e["node"] == "hgx-1"][0]
                self.assertEqual(n["level"], "PIX", n)
                self.assertEqual(n["predicted"][0]["levelSource"], "annotation")
            finally:
                srv.terminate()
                self.assertEqual(srv.wait(timeout=20), 0)
        # no usable configuration: exit 2
        r = run("topology", "--xml", f, "--publish", "--node", "hgx-1", "--kubeconfig",
                os.path.join(self.dir, "missing-kubeconfig"))
        self.assertEqual(r.returncode, 2, r.stderr)

    # ---- the generator ----

    def test_generator_reproduces_the_committed_files(self):
        for g in GENERATED:
            out = os.path.join(self.dir, g + ".xml")
            subprocess.run([sys.executable, GEN, "--variant", g, "-o", out], check=True)
            with open(out) as a, open(xml("gen-%s.xml" % g)) as b:
                self.assertEqual(a.read(), b.read(), g)

    # ---- explain with the annotation ----

    def test_explain_uses_the_node_annotation(self):
        def load(name):
            with open(os.path.join(DATA, "dra", name)) as f:
                return f.read()

        items = [json.loads(load("deviceclass-gpu.nvidia.com.json")),
                 json.loads(load("deviceclass-rdma-nic-dranet.json"))]
        for node, topo in (("hgx-annotated", "gen-dgx-h100.xml"), ("hgx-plain", None)):
            n = {"kind": "Node", "apiVersion": "v1",
                 "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                 "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            if topo:
                n["metadata"]["annotations"] = {
                    "railfit.io/pci-topology": self.annotation(xml(topo))}
            items.append(n)
            for s in ("resourceslice-gpu-nvidia-8xh100.json",
                      "resourceslice-dranet-8xcx7-plus-frontend.json"):
                items.append(json.loads(load(s).replace("hgx-h100-node-01", node)))
        snap = self.write("snap.json", {"kind": "List", "apiVersion": "v1", "items": items})
        claim = {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                 "metadata": {"name": "gpu-nic", "namespace": "ml"},
                 "spec": {"devices": {
                     "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                                  {"name": "nic", "exactly": {"deviceClassName": "rdma-nic"}}],
                     "constraints": [{"requests": ["gpu", "nic"],
                                      "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}
        pod = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": "trainer", "namespace": "ml"},
               "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "gpu-nic"}]}}
        podf = self.write("pod.json", {"kind": "List", "apiVersion": "v1", "items": [pod, claim]})
        r = run("explain", "--snapshot", snap, "--pod", podf, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("pci-topology", r.stderr)  # no warning about the annotation
        by = {n["node"]: n for n in json.loads(r.stdout)["nodes"]}
        a, p = by["hgx-annotated"], by["hgx-plain"]
        gpu = [x for x in a["predicted"] if x["kind"] == "gpu"][0]
        self.assertEqual((gpu["device"], gpu["level"], gpu["levelSource"]),
                         ("gpu-0", "PIX", "annotation"))
        self.assertEqual(a["sources"]["locality"], "annotation")
        gpu = [x for x in p["predicted"] if x["kind"] == "gpu"][0]
        self.assertEqual((gpu["level"], gpu["levelSource"]), ("PHB", "dra"))
        self.assertGreater(a["score"], p["score"])

        # a malformed annotation: a warning naming the node, and DRA attributes instead
        for it in items:
            if it["kind"] == "Node" and it["metadata"]["name"] == "hgx-annotated":
                it["metadata"]["annotations"]["railfit.io/pci-topology"] = '{"v":1,"d":['
        snap = self.write("snap-bad.json", {"kind": "List", "apiVersion": "v1", "items": items})
        r = run("explain", "--snapshot", snap, "--pod", podf, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("node hgx-annotated: annotation railfit.io/pci-topology: not valid JSON",
                      r.stderr)
        by = {n["node"]: n for n in json.loads(r.stdout)["nodes"]}
        gpu = [x for x in by["hgx-annotated"]["predicted"] if x["kind"] == "gpu"][0]
        self.assertEqual((gpu["level"], gpu["levelSource"]), ("PHB", "dra"))


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
