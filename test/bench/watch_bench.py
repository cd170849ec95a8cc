#!/usr/bin/env python3
"""Filter latency while watch events pour in: does ingestion (list/watch -> store -> rebuilt cache
generations) slow down the readers?

Workload: `railfit gen-cluster --nodes N --seed 1 --used 0.5` served by the fake kube-apiserver
(test/fakeapi/fakeapi.py), plus C churn pods and C churn claims in namespace "churn", and one pending
GPU+NIC pod whose filter call carries all N node names (nodeCacheCapable mode). railfit runs in live
mode against the fake. One closed-loop client measures filter latency for S seconds twice: without
churn, then while a driver updates churn pods and claims through the fake's control API at R events
per second (batches every 50 ms). The table compares both phases side by side, with the event rate
railfit really ingested (railfit_watch_events_total).

With --pin (Linux, 2+ CPUs) railfit runs on the last CPU and the fake, the churn driver and the
client on the others, so that the numbers show railfit's own ingestion cost rather than CPU
contention with the (Python) fake.

usage: watch_bench.py [--nodes N] [--seconds S] [--rate R] [--churn C] [--pin] [--railfit PATH]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
sys.path.insert(0, os.path.join(ROOT, "test", "fakeapi"))

from schedclient import Railfit  # noqa: E402
from fakeapi import FakeAPI  # noqa: E402


def claim(name, ns):
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": ns, "uid": "c-" + name},
            "spec": {"devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                "allocationMode": "ExactCount", "count": 1}},
                    {"name": "nic", "exactly": {"deviceClassName": "rdma-nic",
                                                "allocationMode": "ExactCount", "count": 1}}],
                "constraints": [{"requests": ["gpu", "nic"],
                                 "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}}


def pod(name, ns, claim_name):
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": ns, "uid": "p-" + name, "labels": {}},
            "spec": {"schedulerName": "railfit",
                     "containers": [{"name": "main", "image": "x",
                                     "resources": {"claims": [{"name": "gpu-nic"}]}}],
                     "resourceClaims": [{"name": "gpu-nic", "resourceClaimName": claim_name}]},
            "status": {"phase": "Pending"}}


def kubeconfig(path, url):
    """A kubeconfig for the fake API server at url, written to path (returned)."""
    with open(path, "w") as f:
        f.write("apiVersion: v1\nclusters:\n- name: fake\n  cluster:\n    server: %s\n"
                "contexts:\n- name: fake\n  context: {cluster: fake}\n"
                "current-context: fake\n" % url)
    return path


def wait_ready(rf, seconds):
    """Until railfit's /readyz answers 200; SystemExit with its log's end after seconds."""
    end = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(rf.url + "/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > end:
            raise SystemExit("railfit did not become ready:\n" + rf.stderr()[-3000:])
        time.sleep(0.1)


def percentile(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * (len(xs) - 1)))))
    return xs[k]


def filter_histogram(url):
    """Cumulative bucket counts of railfit_request_duration_seconds{verb="filter"}."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for le, v in re.findall(r'^railfit_request_duration_seconds_bucket\{verb="filter",le="([^"]+)"\} '
                            r'(\S+)$', text, re.M):
        out[float("inf") if le == "+Inf" else float(le)] = float(v)
    return out


def server_quantile(h0, h1, q):
    """Upper bound (ms) of the bucket holding quantile q of the requests between two scrapes."""
    les = sorted(h1)
    total = h1[les[-1]] - h0.get(les[-1], 0)
    for le in les:
        if h1[le] - h0.get(le, 0) >= q * total:
            return le * 1000.0
    return float("inf")


def events_total(url):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(float(m) for m in re.findall(
        r'^railfit_watch_events_total\{[^}]*type="(?:ADDED|MODIFIED|DELETED)"\} (\S+)$', text, re.M))


class Churn(threading.Thread):
    """Updates churn pods and claims through the control API at about `rate` events/s."""

    def __init__(self, api, objs, rate):
        super().__init__(daemon=True)
        self.api, self.objs, self.rate = api, objs, rate
        self.stop_ev = threading.Event()
        self.sent = 0
        self.tick = 0

    def run(self):
        period = 0.05
        per_batch = max(1, int(self.rate * period))
        nxt = time.monotonic()
        i = 0
        while not self.stop_ev.is_set():
            batch = []
            for _ in range(per_batch):
                o = self.objs[i % len(self.objs)]
                i += 1
                self.tick += 1
                o = dict(o, metadata=dict(o["metadata"], labels={"bench.railfit.io/tick":
                                                                 str(self.tick)}))
                batch.append(o)
            self.api.put(*batch)
            self.sent += len(batch)
            nxt += period
            delay = nxt - time.monotonic()
            if delay > 0:
                self.stop_ev.wait(delay)
            else:
                nxt = time.monotonic()  # the fake cannot keep up: do not accumulate debt

    def stop(self):
        self.stop_ev.set()
        self.join()


def measure(client, pod_obj, nodes, seconds):
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        res = client.filter(pod_obj, nodes)
        lat.append((time.perf_counter() - t0) * 1000.0)
        if not res.nodes and not res.failed:
            raise RuntimeError("filter returned nothing: %r" % res)
    return lat


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--churn", type=int, default=200, help="churn pods (and as many claims)")
    ap.add_argument("--pin", action="store_true", help="railfit on its own CPU (taskset)")
    ap.add_argument("--railfit", default=os.environ.get("RAILFIT") or
                    os.path.join(ROOT, "build", "server", "railfit"))
    a = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="watch-bench-") as tmp:
        snap = os.path.join(tmp, "cluster.json")
        with open(snap, "wb") as f:
            f.write(subprocess.run([a.railfit, "gen-cluster", "--nodes", str(a.nodes), "--seed", "1",
                                    "--used", "0.5"], check=True, stdout=subprocess.PIPE).stdout)
        with FakeAPI(snapshot=snap, config={"bookmarkInterval": 5.0}) as api:
            churn_objs = []
            for i in range(a.churn):
                churn_objs += [claim("churn-%d" % i, "churn"),
                               pod("churn-%d" % i, "churn", "churn-%d" % i)]
            api.put(*churn_objs)
            target_claim = claim("bench-gpu-nic", "bench")
            target = pod("bench-pod", "bench", "bench-gpu-nic")
            api.put(target_claim, target)
            kc = kubeconfig(os.path.join(tmp, "kubeconfig"), api.url)
            cfg = "kube: {watchTimeout: 60s, staleAfter: 30s, qps: 1000}\n"
            with Railfit(demo=False, config=cfg, args=["--kubeconfig", kc],
                         binary=a.railfit) as rf:
                if a.pin:
                    cpus = sorted(os.sched_getaffinity(0))
                    if len(cpus) < 2:
                        raise SystemExit("--pin needs at least 2 CPUs")
                    rest = ",".join(str(c) for c in cpus[:-1])
                    for pid, cpu in ((rf.proc.pid, str(cpus[-1])), (api.proc.pid, rest)):
                        subprocess.run(["taskset", "-a", "-cp", cpu, str(pid)], check=True,
                                       stdout=subprocess.DEVNULL)
                    os.sched_setaffinity(0, set(cpus[:-1]))
                client = rf.client(node_cache_capable=True)
                nodes = ["hgx-%03d" % (i + 1) for i in range(a.nodes)]
                wait_ready(rf, 30)
                measure(client, target, nodes, 1.0)  # warm up
                h0 = filter_histogram(rf.url)
                idle = measure(client, target, nodes, a.seconds)
                h1 = filter_histogram(rf.url)

                e0 = events_total(rf.url)
                churn = Churn(api, churn_objs, a.rate)
                t0 = time.monotonic()
                churn.start()
                time.sleep(1.0)  # let the event flow settle
                h2 = filter_histogram(rf.url)
                busy = measure(client, target, nodes, a.seconds)
                h3 = filter_histogram(rf.url)
                churn.stop()
                dt = time.monotonic() - t0
                time.sleep(1.0)
                ingested = (events_total(rf.url) - e0) / dt
                sent = churn.sent / dt
                alive = rf.alive()

    print("railfit filter latency, %d nodes, %d churn pods + %d churn claims, %.0f s per phase%s"
          % (a.nodes, a.churn, a.churn, a.seconds, ", railfit pinned to its own CPU" if a.pin
             else ""))
    print("churn: %.0f events/s sent to the fake, %.0f events/s ingested by railfit"
          % (sent, ingested))
    print("client side (round trip); server side: railfit_request_duration_seconds bucket bounds")
    print("%-20s %9s %8s %8s %8s %12s %12s" % ("phase", "requests", "p50 ms", "p99 ms", "max ms",
                                              "server p50", "server p99"))
    for name, xs, ha, hb in (("no churn", idle, h0, h1),
                             ("churn %.0f ev/s" % ingested, busy, h2, h3)):
        print("%-20s %9d %8.3f %8.3f %8.3f %9s %.1f %9s %.1f" % (
            name, len(xs), percentile(xs, 50), percentile(xs, 99), max(xs),
            "<=", server_quantile(ha, hb, 0.5), "<=", server_quantile(ha, hb, 0.99)))
    if not alive:
        print("railfit exited during the run")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
