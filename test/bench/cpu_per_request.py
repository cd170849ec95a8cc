#!/usr/bin/env python3
"""CPU time railfit spends per filter request, by cluster size: a measure that, unlike latency,
does not move when other work shares the machine.

Workload per size N: `railfit gen-cluster --nodes N --seed 1 --used 0.5 --pods-per-node 2.4`
(the fleet shape of fleet_bench.py) plus pending claims in the Jobs' namespace: `aligned` (1 GPU
+ 1 RDMA NIC, matchAttribute pcieRoot) and COLD claims like it that differ only in a toleration
(no device is tainted). The pod is a worker of an existing Job. `railfit serve --snapshot` is
started; then REQUESTS sequential filter calls with every node name for the same pod ("warm":
remembered verdicts after the first), then one call for each cold claim ("cold": a demand shape
railfit has not judged, the whole allocator mirror on every node). The server's utime+stime
(/proc/PID/stat) before and after each phase, divided by the calls, is the CPU per request.

usage: cpu_per_request.py [--sizes 1000,2000,5000,10000] [--requests 60] [--railfit PATH]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JOB_LABEL = "batch.kubernetes.io/job-name"
NS = "ml-train"
COLD = 60


def claim(name, toleration=None):
    reqs = [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                        "allocationMode": "ExactCount", "count": 1}},
            {"name": "nic", "exactly": {"deviceClassName": "rdma-nic",
                                        "allocationMode": "ExactCount", "count": 1}}]
    if toleration:
        reqs[0]["exactly"]["tolerations"] = [{"key": toleration, "operator": "Exists",
                                              "effect": "NoSchedule"}]
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": NS, "uid": "u-" + name},
            "spec": {"devices": {"requests": reqs, "constraints": [
                {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def post(url, body):
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
        return r.status


def one_size(railfit, n, requests, tmp):
    doc = json.loads(subprocess.run([railfit, "gen-cluster", "--nodes", str(n), "--seed", "1",
                                     "--used", "0.5", "--pods-per-node", "2.4"],
                                    capture_output=True, check=True).stdout)
    items = doc["items"]
    names = [i["metadata"]["name"] for i in items if i["kind"] == "Node"]
    job = next(p["metadata"]["labels"][JOB_LABEL] for p in items
               if p["kind"] == "Pod" and JOB_LABEL in (p["metadata"].get("labels") or {}))
    items.append(claim("aligned"))
    items += [claim("cold-%d" % k, "bench.railfit.io/cold-%d" % k) for k in range(COLD)]
    snap = os.path.join(tmp, "snap-%d.json" % n)
    with open(snap, "w") as f:
        json.dump(doc, f)
    del doc, items

    def body(cl):
        pod = {"metadata": {"name": "w-" + cl, "namespace": NS, "uid": "p-" + cl,
                            "labels": {JOB_LABEL: job}},
               "spec": {"schedulerName": "railfit", "resourceClaims": [
                   {"name": "gpu", "resourceClaimName": cl}]}}
        return json.dumps({"Pod": pod, "Nodes": None, "NodeNames": names}).encode()

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = subprocess.Popen([railfit, "serve", "--snapshot", snap, "--listen",
                            "127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        url = "http://127.0.0.1:%d" % port
        for _ in range(3000):
            try:
                urllib.request.urlopen(url + "/readyz", timeout=1).read()
                break
            except Exception:
                time.sleep(0.1)
        time.sleep(3)  # let the post-load freeing finish
        warm = body("aligned")
        a = cpu_seconds(srv.pid)
        for _ in range(requests):
            assert post(url + "/filter", warm) == 200
        b = cpu_seconds(srv.pid)
        for k in range(COLD):
            assert post(url + "/filter", body("cold-%d" % k)) == 200
        c = cpu_seconds(srv.pid)
        return ((b - a) * 1000 / requests, (c - b) * 1000 / COLD, rss_mb(srv.pid))
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        os.unlink(snap)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,2000,5000,10000")
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--railfit", default=os.environ.get(
        "RAILFIT", os.path.join(ROOT, "build", "server", "railfit")))
    a = ap.parse_args()
    print("%7s %12s %9s %12s %9s %8s" % ("nodes", "warm ms", "us/node", "cold ms", "us/node",
                                         "RSS MB"))
    with tempfile.TemporaryDirectory(prefix="railfit-cpu-") as tmp:
        for n in [int(x) for x in a.sizes.split(",")]:
            warm, cold, rss = one_size(a.railfit, n, a.requests, tmp)
            print("%7d %12.2f %9.2f %12.2f %9.2f %8.0f" % (n, warm, warm * 1000 / n, cold,
                                                          cold * 1000 / n, rss))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
