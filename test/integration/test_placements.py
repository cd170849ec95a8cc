"""What the cluster really got, live: railfit against the fake kube-apiserver, a kube-scheduler-like
client filtering and binding, and the test allocating the claims as the DRA plugin would. One pod
gets exactly the devices railfit predicted, another a pair the test picks across PCIe roots; then
railfit_placement_alignment_total{level}, /debug/placements (predicted against actual devices and
levels) and railfit_nic_overcommitted must say so."""

import os
import re
import sys
import tempfile
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_live as live  # noqa: E402
from test_live import (FakeAPI, converge, http_get, metric_values, railfit,  # noqa: E402
                       truth, wait_ready, write_kubeconfig)


def setUpModule():
    live.setUpModule()


def tearDownModule():
    live.tearDownModule()


def claim(name, aligned):
    spec = {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                    "allocationMode": "ExactCount", "count": 1}},
        {"name": "nic", "exactly": {"deviceClassName": "rdma-nic",
                                    "allocationMode": "ExactCount", "count": 1}}]}
    if aligned:
        spec["constraints"] = [{"requests": ["gpu", "nic"],
                                "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": "pl", "uid": "claim-" + name},
            "spec": {"devices": spec}}


def pod(name, claim_name, annotations=None, node=None):
    p = {"kind": "Pod", "apiVersion": "v1",
         "metadata": {"name": name, "namespace": "pl", "uid": "pod-" + name,
                      "annotations": annotations or {}},
         "spec": {"schedulerName": "railfit",
                  "containers": [{"name": "main", "image": "x"}],
                  "resourceClaims": [{"name": "dev", "resourceClaimName": claim_name}]},
         "status": {"phase": "Pending"}}
    if node:
        p["spec"]["nodeName"] = node
        p["status"]["phase"] = "Running"
    return p


def levels(rf):
    return {re.search(r'level="([^"]+)"', k).group(1): v
            for k, v in metric_values(rf, "railfit_placement_alignment_total").items()}


def _plain(rf, name):
    """The value of a metric without labels."""
    status, text = http_get(rf, "/metrics")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class Placements(unittest.TestCase):
    def test_predicted_against_actual(self):
        with FakeAPI(snapshot=live.SNAPSHOT, token="t") as api, \
                tempfile.TemporaryDirectory() as d:
            kc = write_kubeconfig(os.path.join(d, "kc"), api.url, {"token": "t"})
            api.put(claim("good-c", True), pod("good", "good-c"),
                    claim("bad-c", False), pod("bad", "bad-c"))
            # the test binds through railfit as a profile with bindVerb would (bind is off
            # unless enabled, and only for pods of the railfit profile)
            with railfit(kc, config=live.CONFIG + "bind: {enabled: true}\n") as rf:
                wait_ready(self, rf)
                converge(self, api, rf)
                client = rf.client(node_cache_capable=True)
                nodes = sorted(truth(api)["nodes"])
                self.assertEqual(levels(rf), {"PIX": 0, "PXB": 0, "PHB": 0, "NODE": 0,
                                              "SYS": 0, "UNKNOWN": 0})
                self.assertEqual(http_get(rf, "/debug/placements"), (200, {"placements": []}))

                placed = {}
                for name in ("good", "bad"):
                    p = pod(name, name + "-c")
                    res = client.filter(p, nodes)
                    self.assertTrue(res.nodes, res)
                    scores = dict(client.prioritize(p, res.nodes))
                    best = sorted(res.nodes, key=lambda n: (-scores.get(n, 0), n))[0]
                    status, ex = http_get(rf, "/debug/explain/pl/%s?node=%s" % (name, best))
                    entry = [e for e in ex["nodes"] if e["node"] == best][0]
                    pred = entry["predicted"]
                    results = [{"request": x["request"], "driver": x["driver"],
                                "pool": x["pool"], "device": x["device"]} for x in pred]
                    if name == "bad":
                        # the DRA plugin of this test gives a NIC on another PCIe root
                        gpu = [x for x in pred if x["request"] == "gpu"][0]
                        status, nd = http_get(rf, "/debug/nodes/" + best)
                        devs = {x["device"]: x for x in nd["devices"]}
                        root = devs[gpu["device"]]["pcieRoot"]
                        other = [x for x in nd["devices"] if x["kind"] == "nic" and
                                 x.get("rdma") and x["allocatedTo"] is None and
                                 x["pcieRoot"] != root]
                        self.assertTrue(other, nd)
                        results = [r for r in results if r["request"] == "gpu"] + [
                            {"request": "nic", "driver": other[0]["driver"],
                             "pool": other[0]["pool"], "device": other[0]["device"]}]
                    api.allocate("pl", name + "-c", results, node=best, pod="pl/" + name)
                    client.bind(name, "pl", "pod-" + name, best)
                    converge(self, api, rf, what="placing " + name)
                    placed[name] = (best, pred, results, entry)

                status, doc = http_get(rf, "/debug/placements")
                self.assertEqual(status, 200, doc)
                got = {e["claim"]: e for e in doc["placements"]}
                self.assertEqual(set(got), {"pl/good-c", "pl/bad-c"}, doc)
                self.assertEqual(doc["placements"][0]["claim"], "pl/bad-c")  # newest first
                for name in ("good", "bad"):
                    best, pred, results, entry = placed[name]
                    e = got["pl/%s-c" % name]
                    self.assertEqual(e["pod"], "pl/" + name)
                    self.assertEqual(e["node"], best)
                    self.assertEqual(sorted(e["predicted"]["devices"]),
                                     sorted("%s/%s/%s" % (x["driver"], x["pool"], x["device"])
                                            for x in pred))
                    self.assertEqual(sorted(e["actual"]["devices"]),
                                     sorted("%s/%s/%s" % (x["driver"], x["pool"], x["device"])
                                            for x in results))
                    self.assertIn(e["predicted"]["level"], ("PIX", "PXB", "PHB", "NODE", "SYS"))
                good, bad = got["pl/good-c"], got["pl/bad-c"]
                self.assertEqual(good["outcome"], "exact")
                self.assertEqual(good["actual"]["level"], good["predicted"]["level"])
                self.assertIn(good["actual"]["level"], ("PIX", "PXB", "PHB"))
                self.assertEqual(bad["outcome"], "differs")
                self.assertIn(bad["actual"]["level"], ("NODE", "SYS"))
                lv = levels(rf)
                self.assertEqual(sum(lv.values()), 2, lv)
                self.assertEqual(lv[good["actual"]["level"]], 1, lv)
                self.assertEqual(lv[bad["actual"]["level"]], 1, lv)

                # a pod the scheduler never asked railfit about, holding a NIC with more
                # declared bandwidth than the NIC has: the over-commitment shows, without node
                # labels; it is not a placement railfit predicted
                self.assertEqual(_plain(rf, "railfit_nic_overcommitted"), 0)
                node = placed["good"][0]
                status, nd = http_get(rf, "/debug/nodes/" + node)
                free_nic = [x for x in nd["devices"] if x["kind"] == "nic" and x.get("rdma")
                            and x["allocatedTo"] is None][0]
                api.put(claim("hog-c", False),
                        pod("hog", "hog-c", {"railfit.io/nic-bandwidth": "500G"}, node=node))
                free_gpu = [x for x in nd["devices"] if x["kind"] == "gpu" and
                            x["allocatedTo"] is None][0]
                api.allocate("pl", "hog-c", [
                    {"request": "gpu", "driver": free_gpu["driver"], "pool": free_gpu["pool"],
                     "device": free_gpu["device"]},
                    {"request": "nic", "driver": free_nic["driver"], "pool": free_nic["pool"],
                     "device": free_nic["device"]}], node=node, pod="pl/hog")
                converge(self, api, rf, what="the hog")
                self.assertEqual(_plain(rf, "railfit_nic_overcommitted"), 1)
                self.assertEqual(_plain(rf, "railfit_frontend_overcommitted"), 0)
                self.assertEqual(sum(levels(rf).values()), 2)
                self.assertEqual(len(http_get(rf, "/debug/placements")[1]["placements"]), 2)
                for line in http_get(rf, "/metrics")[1].splitlines():
                    if line.startswith("railfit_nic_overcommitted"):
                        self.assertNotIn("node", line)


if __name__ == "__main__":
    warnings.simplefilter("ignore", ResourceWarning)
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    sys.exit(1 if failed else 0)
