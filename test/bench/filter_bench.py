#!/usr/bin/env python3
"""Filter/prioritize throughput and latency of the real railfit binary, side by side.

Workload: `railfit gen-cluster --nodes N --seed 1 --used 0.5` (HGX H100 nodes, NVIDIA + dranet
slices, half the GPUs allocated), plus two pending claims. Every request carries all N node names
(kube-scheduler's nodeCacheCapable mode) or all N Node objects (the other mode). wrk drives each
case for a fixed time on loopback; the table compares the cases in one run.

usage: filter_bench.py [--nodes N] [--seconds S] [--railfit PATH]
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def claim(name, constrained):
    spec = {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}},
        {"name": "nic", "exactly": {"deviceClassName": "rdma-nic", "allocationMode": "ExactCount", "count": 1}}]}}
    if constrained:
        spec["devices"]["constraints"] = [{"requests": ["gpu", "nic"],
                                           "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": "bench", "uid": name}, "spec": spec}


def pod(name, claim_name):
    p = {"metadata": {"name": name, "namespace": "bench", "uid": name}, "spec": {
        "schedulerName": "railfit", "containers": [{"name": "main", "image": "x"}]}}
    if claim_name:
        p["spec"]["resourceClaims"] = [{"name": "gpu-nic", "resourceClaimName": claim_name}]
    return p


def go_json(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c").replace(
        ">", "\\u003e").replace("&", "\\u0026")


def wrk(url, body_path, seconds):
    lua = body_path + ".lua"
    with open(lua, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                'local f = io.open("%s", "rb")\nwrk.body = f:read("*a")\nf:close()\n' % body_path)
    out = subprocess.run(["wrk", "-t2", "-c2", "-d%ds" % seconds, "--latency", "-s", lua, url],
                         capture_output=True, text=True, check=True).stdout
    def lat(label):
        m = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)" % label, out)
        if not m:
            return float("nan")
        v, u = float(m.group(1)), m.group(2)
        return v / 1000 if u == "us" else v if u == "ms" else v * 1000
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, lat("50"), lat("99"), int(non2xx.group(1)) if non2xx else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--railfit", default=os.environ.get("RAILFIT", os.path.join(ROOT, "build", "server", "railfit")))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="railfit-bench-")
    snap = os.path.join(tmp, "snapshot.json")
    doc = json.loads(subprocess.run([a.railfit, "gen-cluster", "--nodes", str(a.nodes), "--seed", "1",
                                     "--used", "0.5"], capture_output=True, check=True).stdout)
    doc["items"] += [claim("aligned", True), claim("loose", False)]
    with open(snap, "w") as f:
        json.dump(doc, f)
    nodes = [i for i in doc["items"] if i["kind"] == "Node"]
    names = [n["metadata"]["name"] for n in nodes]
    port = free_port()
    srv = subprocess.Popen([a.railfit, "serve", "--snapshot", snap, "--listen", "127.0.0.1:%d" % port],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        nodelist = {"metadata": {}, "items": [dict((k, v) for k, v in n.items() if k not in ("kind", "apiVersion")) for n in nodes]}
        cases = [
            ("filter", "no claims (fast path)", pod("web", None), True),
            ("filter", "GPU+NIC, pcieRoot constraint", pod("t1", "aligned"), True),
            ("filter", "GPU+NIC, no constraint", pod("t2", "loose"), True),
            ("filter", "GPU+NIC, Nodes objects (nodeCacheCapable=false)", pod("t1", "aligned"), False),
            ("prioritize", "GPU+NIC, pcieRoot constraint", pod("t1", "aligned"), True),
        ]
        rows = []
        for i, (verb, label, p, cache) in enumerate(cases):
            body = {"Pod": p, "Nodes": None, "NodeNames": names} if cache else {"Pod": p, "Nodes": nodelist, "NodeNames": None}
            path = os.path.join(tmp, "body%d.json" % i)
            with open(path, "w") as f:
                f.write(go_json(body))
            rps, p50, p99, bad = wrk("http://127.0.0.1:%d/%s" % (port, verb), path, a.seconds)
            rows.append((verb, label, os.path.getsize(path), rps, p50, p99, bad))
        print("railfit filter benchmark: %d nodes (%d GPUs), wrk -t2 -c2 -d%ds, loopback" % (
            a.nodes, 8 * a.nodes, a.seconds))
        print("%-11s %-48s %10s %9s %9s %9s %6s" % ("verb", "pod", "body", "req/s", "p50 ms", "p99 ms", "non200"))
        for r in rows:
            print("%-11s %-48s %9dK %9.1f %9.2f %9.2f %6d" % (r[0], r[1], r[2] // 1024, r[3], r[4], r[5], r[6]))
        if any(r[6] for r in rows):
            sys.exit(1)
    finally:
        srv.terminate()
        srv.wait(timeout=10)


if __name__ == "__main__":
    main()
