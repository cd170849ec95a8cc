"""Bandwidth as a platform team meets it (issue 6): a stream of data-loader pods with CNI bandwidth
annotations and GPU jobs on shared NICs with consumable bandwidth, placed one after another by a
client that speaks like kube-scheduler (filter -> prioritize -> pick the best). After each
placement the cluster is updated as kube-scheduler and the DRA plugin would (the pod bound, its
claim allocated with the devices railfit predicted, consumedCapacity rounded by the NIC's
requestPolicy) and railfit is restarted on the new snapshot. Checked: where each pod lands, that
no NIC and no front-end NIC is ever over-committed, and what explain says."""

import json
import os
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from schedclient import Railfit  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "dra")
G = 10 ** 9


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


def renamed(obj, node):
    return json.loads(json.dumps(obj).replace("hgx-h100-node-01", node))


def gbits(q):
    """Parse the quantities this test meets (400G, 10G, 48828125Ki) to bits/s."""
    if q.endswith("Ki"):
        return int(q[:-2]) * 1024
    if q.endswith("G"):
        return int(q[:-1]) * G
    return int(q)


class Cluster:
    """A snapshot the test mutates, and railfit restarted on it."""

    def __init__(self, nodes):
        self.items = [load("deviceclass-gpu.nvidia.com.json"), load("deviceclass-nic-bandwidth.json")]
        self.nodes = nodes
        for n in nodes:
            self.items.append({"kind": "Node", "apiVersion": "v1", "metadata": {
                "name": n, "labels": {"kubernetes.io/hostname": n}}})
            self.items.append(renamed(load("resourceslice-gpu-nvidia-8xh100.json"), n))
            self.items.append(renamed(load("resourceslice-nic-consumable-bandwidth.json"), n))
        self.tmp = tempfile.TemporaryDirectory(prefix="railfit-bw-")
        self.config = ("devices: {nicDrivers: [netbw.example.com], bandwidthCapacities: [bandwidth]}\n"
                       "scoring: {bandwidthPolicy: spread}\n")
        self.rf = None
        self.seq = 0

    def restart(self):
        if self.rf:
            self.rf.stop()
        path = os.path.join(self.tmp.name, "snap.json")
        with open(path, "w") as f:
            json.dump({"kind": "List", "apiVersion": "v1", "items": self.items}, f)
        self.rf = Railfit(snapshot=path, config=self.config).start()
        return self.rf.client()

    def close(self):
        if self.rf:
            self.rf.stop()
        self.tmp.cleanup()

    def slice_device(self, node, device):
        for it in self.items:
            if it["kind"] == "ResourceSlice" and it["spec"]["nodeName"] == node:
                for d in it["spec"]["devices"]:
                    if d["name"] == device:
                        return it["spec"]["driver"], d
        raise KeyError((node, device))

    def place(self, pod, claim, node, picks):
        """Bind the pod; allocate its claim as the DRA plugin would with railfit's picks."""
        pod["spec"]["nodeName"] = node
        pod["status"] = {"phase": "Running"}
        self.items.append(pod)
        if not claim:
            return
        results = []
        for p in picks:
            driver, dev = self.slice_device(node, p["device"])
            r = {"request": p["request"], "driver": driver, "pool": node, "device": p["device"]}
            if dev.get("allowMultipleAllocations"):
                req = [q for q in claim["spec"]["devices"]["requests"] if q["name"] == p["request"]][0]
                asked = ((req["exactly"].get("capacity") or {}).get("requests") or {})
                consumed = {}
                for key, cap in dev["capacity"].items():
                    pol = cap.get("requestPolicy") or {}
                    if key in asked:
                        v = gbits(asked[key])
                        rng = pol.get("validRange")
                        if rng:
                            lo, step = gbits(rng["min"]), gbits(rng.get("step", "0"))
                            v = max(v, lo)
                            if step:
                                v = lo + -(-(v - lo) // step) * step
                        consumed[key] = "%dKi" % (v // 1024) if v % 1024 == 0 else str(v)
                    else:
                        consumed[key] = pol.get("default") or cap["value"]
                self.seq += 1
                r["shareID"] = "00000000-0000-4000-8000-%012d" % self.seq
                r["consumedCapacity"] = consumed
            results.append(r)
        claim["status"] = {"allocation": {"devices": {"results": results}, "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": pod["metadata"]["name"],
                             "uid": pod["metadata"]["uid"]}]}

    def nic_load(self):
        """bits/s consumed per (node, NIC) according to the claims."""
        load_ = {}
        for it in self.items:
            if it["kind"] != "ResourceClaim":
                continue
            for r in (((it.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
                if "consumedCapacity" in r:
                    k = (r["pool"], r["device"])
                    load_[k] = load_.get(k, 0) + gbits(r["consumedCapacity"]["bandwidth"])
        return load_

    def ingress(self):
        out = {}
        for it in self.items:
            if it["kind"] == "Pod" and it["spec"].get("nodeName"):
                v = ((it["metadata"].get("annotations") or {}).get("kubernetes.io/ingress-bandwidth"))
                if v:
                    out[it["spec"]["nodeName"]] = out.get(it["spec"]["nodeName"], 0) + gbits(v)
        return out


def gpu_job(i, gbps):
    name = "train-%d" % i
    claim = {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
             "metadata": {"name": name + "-gpu-nic", "namespace": "ml", "uid": "c-%d" % i},
             "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}},
                 {"name": "nic", "exactly": {"deviceClassName": "nic-bandwidth.example.com",
                                             "count": 1,
                                             "capacity": {"requests": {"bandwidth": "%dG" % gbps}}}}],
                 "constraints": [{"requests": ["gpu", "nic"],
                                  "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}
    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": name, "namespace": "ml", "uid": "p-%d" % i},
           "spec": {"schedulerName": "railfit", "containers": [{"name": "main", "image": "x"}],
                    "resourceClaims": [{"name": "gpu-nic", "resourceClaimName": name + "-gpu-nic"}]}}
    return pod, claim


def nic_job(i, gbps):
    """A pod that only needs a share of a rail NIC (e.g. a data mover)."""
    pod, claim = gpu_job(1000 + i, gbps)
    claim["spec"]["devices"]["requests"] = claim["spec"]["devices"]["requests"][1:]
    del claim["spec"]["devices"]["constraints"]
    return pod, claim


def loader(i, gbps):
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "loader-%d" % i, "namespace": "data", "uid": "l-%d" % i,
                         "annotations": {"kubernetes.io/ingress-bandwidth": "%dG" % gbps}},
            "spec": {"schedulerName": "railfit", "containers": [{"name": "main", "image": "x"}]}}


def strip(pod):
    p = json.loads(json.dumps(pod))
    p.pop("kind", None)
    p.pop("apiVersion", None)
    return p


class BandwidthStream(unittest.TestCase):
    def schedule(self, c, client, pod, claim):
        """filter -> prioritize -> best node (ties by name), as kube-scheduler would with this
        extender alone; returns (node, explain entry) or (None, filter result)."""
        names = c.nodes
        res = client.filter(strip(pod), names)
        if not res.nodes:
            return None, res
        scores = dict(client.prioritize(strip(pod), res.nodes)) if len(res.nodes) > 1 else {res.nodes[0]: 0}
        best = sorted(res.nodes, key=lambda n: (-scores.get(n, 0), n))[0]
        doc = client.post_raw("/debug/explain?node=" + best, json.dumps(strip(pod)).encode()).json()
        return best, doc["nodes"][0]

    def test_shared_nics_never_overcommitted(self):
        c = Cluster(["gpu-a", "gpu-b"])
        try:
            # the reference claim on gpu-h100-node-01 is not used here: the cluster starts empty
            client = c.restart()
            placed = []
            # 8 GPUs x 2 nodes; each job asks 150G of its GPU's rail NIC (400G each): every
            # GPU gets a job, and no NIC ever carries more than 400G
            for i in range(20):
                pod, claim = gpu_job(i, 150)
                c.items.append(claim)
                client = c.restart()
                node, ex = self.schedule(c, client, pod, claim)
                if node is None:
                    placed.append(None)
                    continue
                self.assertEqual(ex["verdict"], "pass")
                self.assertEqual(ex["level"], "PHB")
                nic = [p for p in ex["predicted"] if p["kind"] == "nic"][0]
                self.assertIn(nic["device"], ("rail%d" % r for r in range(8)))
                self.assertIn("nics", ex)
                c.place(pod, claim, node, ex["predicted"])
                placed.append(node)
                for (n, dev), bits in c.nic_load().items():
                    self.assertLessEqual(bits, 400 * G, "%s/%s over-committed" % (n, dev))
            # 16 GPUs on 2 nodes: the 17th job does not fit anywhere
            self.assertEqual(sum(1 for p in placed if p), 16)
            self.assertIsNone(placed[16])
        finally:
            c.close()

    def check_policy(self, policy):
        """Each pick is the node whose predicted NIC keeps the most (spread) or the least
        (binpack) free bandwidth after placement; the allocator itself fills a node's NICs
        first-fit (rail0 until a share no longer fits, then rail1, ...)."""
        c = Cluster(["gpu-a", "gpu-b"])
        c.config = c.config.replace("bandwidthPolicy: spread", "bandwidthPolicy: " + policy)
        try:
            placed = []
            for i in range(6):
                pod, claim = nic_job(i, 150)
                c.items.append(claim)
                client = c.restart()
                doc = client.post_raw("/debug/explain", json.dumps(strip(pod)).encode()).json()
                free = {}
                for e in doc["nodes"]:
                    if e["verdict"] == "pass":
                        h = e["nics"][0]
                        free[e["node"]] = gbits(h["freeAfter"]) / gbits(h["capacity"])
                node, ex = self.schedule(c, client, pod, claim)
                self.assertIsNotNone(node)
                pick = max(free.values()) if policy == "spread" else min(free.values())
                self.assertAlmostEqual(free[node], pick, msg="%s picked %s, free %r" % (policy, node, free))
                c.place(pod, claim, node, ex["predicted"])
                placed.append(node)
                for (n, dev), bits in c.nic_load().items():
                    self.assertLessEqual(bits, 400 * G, "%s/%s over-committed" % (n, dev))
            return placed
        finally:
            c.close()

    def test_spread_and_binpack_policies(self):
        spread = self.check_policy("spread")
        binpack = self.check_policy("binpack")
        # binpack keeps stacking shares on one node's NIC while they fit; spread does not
        self.assertNotEqual(spread[:2], binpack[:2])

    def test_loader_stream_respects_front_end(self):
        c = Cluster(["n-1", "n-2", "n-3"])
        try:
            client = c.restart()
            landed = []
            for i in range(9):
                pod = loader(i, 40)
                node, ex = self.schedule(c, client, pod, None)
                if node is None:
                    landed.append(None)
                    msg = list(ex.failed.values())[0]
                    self.assertIn("front-end NIC has 20G of 100G ingress free", msg)
                    continue
                c.place(pod, None, node, [])
                landed.append(node)
                client = c.restart()
                for n, bits in c.ingress().items():
                    self.assertLessEqual(bits, 100 * G, n)
            # 100G front-end, 40G each: two loaders per node, spread before stacking
            self.assertEqual(sorted(landed[:3]), ["n-1", "n-2", "n-3"])
            self.assertEqual(sum(1 for x in landed if x), 6)
            self.assertEqual(landed[6:], [None, None, None])
        finally:
            c.close()


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2, warnings="ignore")
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
