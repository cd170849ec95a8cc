#!/usr/bin/env python3
"""Fleet-scale benchmark of the real railfit binary: start time, memory, filter/prioritize
throughput and latency from 500 to 10,000 nodes, optionally next to a plain Go extender.

usage:
  fleet_bench.py [--sizes 500,1000,2000,5000,10000] [--seconds 5] [--railfit PATH]
                 [--cases f-c2,f-c4,p-c2,...] [--pods-per-node 2.4] [--ready-timeout 300]
                 [--no-peer] [--allow-unjudged] [--keep DIR]
  fleet_bench.py --quick                      # smoke check: sizes 500,2000, 2 s per case
  fleet_bench.py --churn 5000 [--churn-rate 1000] [--churn-objects 200] [--seconds 10] [--pin]

Workload, per size N:
  `railfit gen-cluster --nodes N --seed 1 --used 0.5 --pods-per-node 2.4`: HGX H100 nodes (8
  GPUs, 8 rail CX-7 NICs and a front-end NIC each) with NVIDIA and dranet shaped ResourceSlices
  (2 per node), half the GPUs allocated through ResourceClaims held by Running pods, 2.4 pods
  per node (at 5,000 nodes: 10,000 slices, 12,000 pods and claims, about half of the pods
  workers of multi-pod Jobs with batch.kubernetes.io/job-name labels, the rest standalone).
  Appended: two pending claims in the Jobs' namespace, `bench-aligned` (1 GPU + 1 RDMA NIC,
  matchAttribute resource.kubernetes.io/pcieRoot) and `bench-loose` (the same without the
  constraint), and the pending pod: the next worker of the existing Job with the most Running
  workers holding NICs (same labels and owner), so that railfit's rail-group path runs.
  `railfit serve --snapshot F` is started; the requests are the ones kube-scheduler sends
  (shared/reference/extender-protocol.md: POST, Content-Type application/json, the Go
  json.Marshal bytes of ExtenderArgs, Pod without TypeMeta; the node names, or Node objects, in
  an order like kube-scheduler's, not name order: scheduler_order()). wrk drives each case for
  --seconds on loopback (`wrk -t2 -cC --latency --timeout 30s`, a Lua script posting the body).

Cases (--cases picks a subset; every case is checked once with a plain request first):
  f-c2      filter, pod with bench-aligned, every node name (nodeCacheCapable: true), 2 conns
  f-c4      the same with 4 connections (2 wrk threads)
  p-c2      prioritize, same pod and names, 2 connections
  p-c4      prioritize, 4 connections
  loose-c2  filter, the pod with bench-loose instead, every node name, 2 connections
  cold-c2   filter, every request a demand shape railfit has not judged yet: the pod cycles
            through COLD_SHAPES claims like bench-aligned that differ only in a toleration
            (no device is tainted), more than railfit's memo keeps, so every node of every
            request runs the whole allocator mirror (the cost of a Job's first pod, or of the
            first request after the cluster changed); every node name, 2 connections
  f500-c2   filter, 500 node names spread over the cluster (kube-scheduler's
            percentageOfNodesToScore sends about 10% of 5,000 nodes), 2 connections; N > 500
  obj500-c2 filter, nodeCacheCapable: false: 500 full Node objects, 2 connections

Table columns (one row per size and case; the size columns only on its first row):
  size      nodes in the cluster
  pods, slices, claims   Running pods, ResourceSlices and ResourceClaims in the snapshot
  start s   seconds from exec to the first /readyz 200
  RSS MB    VmRSS once ready; end MB: VmRSS after the size's last case (what it holds once
            the snapshot's parse trees, freed on a helper thread at start, are gone and the
            cases filled its remembered verdicts); peak MB: VmHWM after the size's last case
  unjudged  railfit_unjudged_nodes_total after the size's cases (nodes passed or scored 0
            because a request's time budget ran out; must be 0)
  case, req nodes        the case and how many nodes one request carries
  pass      filter: nodes returned as passing; prioritize: nodes with a score > 0
  req/s, p50 ms, p99 ms  wrk's throughput and latency percentiles
  us/node   p50 divided by the request's node count: flat when the cost is linear
  non2xx    responses that were not 2xx (wrk)
  peer *    the same for test/bench/peer (Go, net/http + encoding/json, first-fit, no tricks),
            built and run only when `go` is on PATH; rf/peer = railfit req/s / peer req/s
            (both serve the size's snapshot at once, each holding it in memory; each case
            runs on railfit, then at once on the peer, so that a slow spell of the machine
            seldom falls on one side only)

--churn N: instead of the sweep, railfit runs in live mode against the fake kube-apiserver
(test/fakeapi) serving the same N-node snapshot plus --churn-objects churn pods and claims. It
reuses test/bench/watch_bench.py's driver: a closed-loop client measures filter latency (the
pending Job worker, every node name) for --seconds without churn, then while pods and claims are
updated at --churn-rate events/s; after each, wrk (-t1 -c1, one request at a time as
kube-scheduler's scheduling cycle sends them, the body byte-for-byte as it does) for --seconds
more: the client-side latency without Python's own cost in it (wrk shares the other CPU with the
fake and the churn driver under --pin), the churn still going on for the second. The lag is
measured from railfit's -v 3 'published a cache generation' lines (lagMs: store to published;
railfit_cache_lag_seconds is the same as a gauge) and from outside: once a second a new pending
pod is created in the fake and /debug/explain/churn/<pod>?node=<first node> is polled every 10 ms
until it stops answering 404;
that put-to-visible time includes the (Python) fake's watch delivery, railfit's coalescing window
and the generation build. After the filter's measurement under churn, with the churn going on, a
Node label and a ResourceSlice attribute of the first node also change in turn for 6 s, each 0.5 s
after the last one showed, each timed until /debug/nodes/{name} shows it. While idle it also
publishes, then deletes, a ResourceSlice served by every node (allNodes, a driver no class names):
a layout event railfit patches (its device is no GPU, NIC or CPU: only the nodes' pool lists
change), twice; then puts, then deletes, a DeviceTaintRule over a whole driver (every GPU), twice:
a layout event railfit patches (the pools kept, the devices' taints the layout's, the nodes copied;
built in full at a chain's bounds; the fake serves DeviceTaintRules as a 1.35 cluster with the
alpha gate on, v1alpha3); then Node label changes in 4 bursts of 40, each put as soon as the last
one shows, 2 s of quiet after each burst, then 540 Node label changes one after another without a
pause (past the bound of a chain of patched layouts, 512 patches): a chain worn past 64 patches is
compacted, built in full by railfit's publisher with the events' builds done from within its
checks (the lines count the builds by kind, and the compactions: published as they were,
layout="compacted", or caught up with the events that came meanwhile in one more patch). The last
line gives the peak RSS of each phase (VmHWM read, then restarted from the current RSS through
/proc/PID/clear_refs), the line before it what railfit held over each phase (VmRSS read every 0.2
s: min, median, max, last) and the times it gave its freed heap back (malloc_trim, once idle for
2 s) with the two builds after each. The start-up line gives railfit's CPU
time from exec to ready (all its threads, /proc) and its VmHWM at ready (the peak of the start
alone; "peak" in the line above is VmHWM at the end of the run).

Exit status: 1 when a railfit response was not 2xx (churn: wrk's filter answers), or
railfit_unjudged_nodes_total > 0 at a size <= 5000 (unless --allow-unjudged), or a server failed
to start.
"""
import argparse
import copy
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
JOB_LABEL = "batch.kubernetes.io/job-name"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
NS_JOBS = "ml-train"
RUN_EVENTS = 540  # churn: layout events in a row, past a chain's bound (512)
LAYOUT_UNDER_CHURN = 6.0  # churn: seconds of layout events after the filter's measurement
BURSTS, BURST_EVENTS, BURST_QUIET = 4, 40, 2.0  # churn: layout events in bursts, quiet between

CASES = [
    # id, verb, claim, names ("all" or 500), nodeCacheCapable, connections
    ("f-c2", "filter", "bench-aligned", "all", True, 2),
    ("f-c4", "filter", "bench-aligned", "all", True, 4),
    ("p-c2", "prioritize", "bench-aligned", "all", True, 2),
    ("p-c4", "prioritize", "bench-aligned", "all", True, 4),
    ("loose-c2", "filter", "bench-loose", "all", True, 2),
    ("cold-c2", "filter", "bench-cold", "all", True, 2),
    ("f500-c2", "filter", "bench-aligned", 500, True, 2),
    ("obj500-c2", "filter", "bench-aligned", 500, False, 2),
]


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ---- the bytes kube-scheduler sends ---------------------------------------------------------

def go_json(o):
    """json.Marshal's bytes for already Go-ordered data: compact, <>& and U+2028/9 escaped."""
    return (json.dumps(o, separators=(",", ":"), ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")).encode("utf-8")


def sorted_map(d):
    """Go writes map keys sorted bytewise (struct fields keep their declaration order)."""
    return {k: d[k] for k in sorted(d, key=lambda k: k.encode("utf-8"))}


def scheduler_order(xs):
    """The candidates in an order like kube-scheduler's, not name order: it lists its node tree
    (zones interleaved), starts where the last cycle stopped, and its 16 filter workers append
    feasible nodes as they finish. One fixed shuffle (the same body for every request)."""
    out = list(xs)
    random.Random(7).shuffle(out)
    return out


def informer_object(obj):
    """A Pod or Node as kube-scheduler's informer holds it: no TypeMeta, no managedFields on
    pods, Go map fields sorted (the snapshot's struct field order is already Go's)."""
    o = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
    md = dict(o.get("metadata") or {})
    if obj.get("kind") == "Pod":
        md.pop("managedFields", None)
    for k in ("labels", "annotations"):
        if isinstance(md.get(k), dict):
            md[k] = sorted_map(md[k])
    o["metadata"] = md
    st = o.get("status")
    if isinstance(st, dict):
        st = dict(st)
        for k in ("capacity", "allocatable"):
            if isinstance(st.get(k), dict):
                st[k] = sorted_map(st[k])
        o["status"] = st
    spec = o.get("spec")
    if isinstance(spec, dict):
        spec = dict(spec)
        if isinstance(spec.get("nodeSelector"), dict):
            spec["nodeSelector"] = sorted_map(spec["nodeSelector"])
        if isinstance(spec.get("containers"), list):
            ctrs = []
            for c in spec["containers"]:
                c = dict(c)
                res = c.get("resources")
                if isinstance(res, dict):
                    res = dict(res)
                    for k in ("limits", "requests"):
                        if isinstance(res.get(k), dict):
                            res[k] = sorted_map(res[k])
                    c["resources"] = res
                ctrs.append(c)
            spec["containers"] = ctrs
        o["spec"] = spec
    return o


COLD_SHAPES = 64


def pending_claim(name, constrained, toleration=None):
    spec = {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                    "allocationMode": "ExactCount", "count": 1}},
        {"name": "nic", "exactly": {"deviceClassName": "rdma-nic",
                                    "allocationMode": "ExactCount", "count": 1}}]}}
    if constrained:
        spec["devices"]["constraints"] = [{"requests": ["gpu", "nic"], "matchAttribute": PCIE_ROOT}]
    if toleration:
        spec["devices"]["requests"][0]["exactly"]["tolerations"] = [
            {"key": toleration, "operator": "Exists", "effect": "NoSchedule"}]
    return {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": name, "namespace": NS_JOBS, "uid": "bench-claim-" + name,
                         "resourceVersion": "1", "creationTimestamp": "2025-11-12T10:05:00Z"},
            "spec": spec}


def pending_worker(pods):
    """The next worker of the Job with the most Running workers holding NICs, on >= 2 nodes.
    Returns (pod object with kind, job name, nodes of its running workers)."""
    jobs = {}
    for p in pods:
        md = p["metadata"]
        job = (md.get("labels") or {}).get(JOB_LABEL)
        if not job or md.get("namespace") != NS_JOBS:
            continue
        claims = (p["spec"].get("resourceClaims") or [])
        tmpl = claims[0].get("resourceClaimTemplateName", "") if claims else ""
        if tmpl not in ("gpu-nic-aligned", "two-aligned-pairs"):
            continue  # no NIC, or NICs off the GPU's root: no rails to follow
        jobs.setdefault(job, []).append(p)
    best = max((j for j in jobs if len({p["spec"].get("nodeName") for p in jobs[j]}) >= 2),
               key=lambda j: (len(jobs[j]), j), default=None)
    if best is None:
        raise SystemExit("no Job with NIC-holding workers on two nodes in the snapshot")
    workers = jobs[best]
    model = workers[0]
    name = "%s-worker-%d" % (best, len(workers))
    md = model["metadata"]
    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": name, "namespace": md["namespace"], "uid": "bench-pod-" + name,
                        "resourceVersion": "2", "creationTimestamp": "2025-11-12T10:05:00Z",
                        "labels": dict(md.get("labels") or {})},
           "spec": {}, "status": {"phase": "Pending", "qosClass": "Burstable"}}
    if md.get("ownerReferences"):
        pod["metadata"]["ownerReferences"] = md["ownerReferences"]
    for k, v in model["spec"].items():
        if k == "nodeName":
            continue
        if k == "resourceClaims":
            v = [{"name": "gpu-nic", "resourceClaimName": "bench-aligned"}]
        if k == "containers":
            v = [dict(c, resources=dict(c.get("resources") or {}, claims=[{"name": "gpu-nic"}]))
                 for c in v]
        pod["spec"][k] = v
    return pod, best, sorted({p["spec"]["nodeName"] for p in workers})


def with_claim(pod, claim_name):
    p = json.loads(json.dumps(pod))
    p["spec"]["resourceClaims"] = [{"name": "gpu-nic", "resourceClaimName": claim_name}]
    return p


# ---- a cluster ----------------------------------------------------------------------------

class Cluster:
    """The snapshot of one size and what the requests need from it."""

    def __init__(self, railfit, nodes, pods_per_node, path):
        t0 = time.monotonic()
        cmd = [railfit, "gen-cluster", "--nodes", str(nodes), "--seed", "1", "--used", "0.5"]
        if pods_per_node:
            cmd += ["--pods-per-node", str(pods_per_node)]
        raw = subprocess.run(cmd, capture_output=True, check=True).stdout
        self.gen_s = time.monotonic() - t0
        doc = json.loads(raw)
        del raw
        items = doc["items"]
        kinds = {}
        for it in items:
            kinds.setdefault(it["kind"], []).append(it)
        self.n_nodes = len(kinds.get("Node", []))
        pods = kinds.get("Pod", [])
        self.n_pods = sum(1 for p in pods if p.get("status", {}).get("phase") == "Running")
        self.n_job_pods = sum(1 for p in pods if JOB_LABEL in (p["metadata"].get("labels") or {}))
        self.n_slices = len(kinds.get("ResourceSlice", []))
        claims = kinds.get("ResourceClaim", [])
        self.n_claims = sum(1 for c in claims if (c.get("status") or {}).get("allocation"))
        gpus = gpus_used = 0
        for s in kinds.get("ResourceSlice", []):
            if s["spec"]["driver"] == "gpu.nvidia.com":
                gpus += len(s["spec"].get("devices") or [])
        for c in claims:
            for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get(
                    "results", []):
                gpus_used += r["driver"] == "gpu.nvidia.com"
        self.gpus, self.gpus_used = gpus, gpus_used
        self.names = [n["metadata"]["name"] for n in kinds["Node"]]
        # the first node's objects for the layout probes (a slice event, a node label event)
        self.probe_node = copy.deepcopy(kinds["Node"][0])
        self.probe_slice = copy.deepcopy(next(
            s for s in kinds.get("ResourceSlice", [])
            if s["spec"].get("nodeName") == self.names[0] and s["spec"].get("devices")))
        # and all its slices, for a node joining and leaving (copies under a new name)
        self.probe_slices = [copy.deepcopy(s) for s in kinds.get("ResourceSlice", [])
                             if s["spec"].get("nodeName") == self.names[0]]
        step = max(1, self.n_nodes // 500)
        sub = kinds["Node"][::step][:500]
        self.names500 = [n["metadata"]["name"] for n in sub]
        self.nodes500 = [informer_object(n) for n in sub]
        self.pod, self.job, self.job_nodes = pending_worker(pods)
        items += [pending_claim("bench-aligned", True), pending_claim("bench-loose", False),
                  self.pod]
        items += [pending_claim("bench-cold-%d" % k, True, "bench.railfit.io/cold-%d" % k)
                  for k in range(COLD_SHAPES)]
        with open(path, "wb") as f:
            f.write(go_json(doc))
        self.path = path
        self.size_mb = os.path.getsize(path) / 1e6

    def body(self, claim, names, cache):
        pod = informer_object(with_claim(self.pod, claim))
        if cache:
            return go_json({"Pod": pod, "Nodes": None, "NodeNames": scheduler_order(
                self.names if names == "all" else self.names500)})
        assert names == 500
        return go_json({"Pod": pod, "Nodes": {"metadata": {}, "items": scheduler_order(
            self.nodes500)}, "NodeNames": None})


# ---- servers --------------------------------------------------------------------------------

def proc_mem_mb(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return out.get("VmRSS", float("nan")), out.get("VmHWM", float("nan"))


class RssSampler(threading.Thread):
    """VmRSS every 0.2 s, with the phase it belongs to (mark() starts the next one)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.phase, self.done = pid, [], 0, threading.Event()

    def run(self):
        while not self.done.wait(0.2):
            self.samples.append((self.phase, proc_mem_mb(self.pid)[0]))

    def mark(self):
        self.phase += 1

    def phases(self):
        """per phase: (min, median, max, last) MB, None where it has no sample"""
        out = []
        for k in range(self.phase + 1):
            xs = [mb for ph, mb in self.samples if ph == k]
            s = sorted(xs)
            out.append((s[0], s[len(s) // 2], s[-1], xs[-1]) if xs else None)
        return out


def builds_after_trims(log_text):
    """ms of the two builds after each 'gave the freed heap back' line of the -v 3 log, and the
    trims' own ms."""
    out, trims, want = [], [], 0
    for line in log_text.splitlines():
        m = re.search(r'gave the freed heap back.*?\bms="?([\d.]+)', line)
        if m:
            trims.append(float(m.group(1)))
            out.append([])
            want = 2
            continue
        m = re.search(r'published a cache generation.*?\bms="?([\d.]+)', line)
        if m and want:
            out[-1].append(float(m.group(1)))
            want -= 1
    return trims, out


def reset_peak(pid):
    """Start VmHWM again from the current RSS (/proc/PID/clear_refs 5), so that the next reading
    is the peak of what came since; False where the kernel does not allow it."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def proc_cpu_s(pid):
    """User + system CPU time of a process (all its threads), in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class Server:
    """A process answering the extender protocol on 127.0.0.1:port; stop() always."""

    def __init__(self, name, argv_fn, workdir):
        self.name = name
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.errpath = os.path.join(workdir, "%s-%d.stderr" % (name, self.port))
        self.err = open(self.errpath, "wb")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv_fn("127.0.0.1:%d" % self.port), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.err)

    def stderr_tail(self, n=2000):
        try:
            with open(self.errpath, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_ready(self, timeout):
        """Seconds from exec to the first /readyz 200."""
        end = self.t0 + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with status %d:\n%s" % (
                    self.name, self.proc.returncode, self.stderr_tail()))
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - self.t0
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError("%s not ready after %.0f s:\n%s" % (self.name, timeout,
                                                               self.stderr_tail()))

    def mem(self):
        return proc_mem_mb(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def post(url, body, timeout=120):
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def verdict(verb, raw):
    """Nodes passing filter (or scored > 0 by prioritize) in a response."""
    res = json.loads(raw)
    if verb == "prioritize":
        return sum(1 for h in res or [] if h.get("Score", 0) > 0)
    if res.get("Error"):
        raise RuntimeError("filter Error: %s" % res["Error"])
    if res.get("NodeNames") is not None:
        return len(res["NodeNames"])
    return len((res.get("Nodes") or {}).get("items") or [])


def metric(url, name):
    with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
        text = r.read().decode()
    vals = [float(v) for v in re.findall(r"^%s(?:\{[^}]*\})? (\S+)$" % re.escape(name), text, re.M)]
    return sum(vals) if vals else float("nan")


def wrk(url, body_paths, seconds, conns, threads=2):
    """wrk posting the bodies in turn (one body: the same request every time)."""
    lua = body_paths[0] + ".lua"
    with open(lua, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                'local bodies = {}\n')
        for p in body_paths:
            f.write('do local f = io.open("%s", "rb"); bodies[#bodies + 1] = f:read("*a"); '
                    'f:close() end\n' % p)
        # each wrk thread starts elsewhere in the list, so they do not send one body together
        f.write('wrk.body = bodies[1]\nlocal threads = 0\n'
                'setup = function(t) t:set("start", threads * 17); threads = threads + 1 end\n'
                'local i = nil\n'
                'request = function()\n  i = ((i or start or 0) % #bodies) + 1\n'
                '  return wrk.format(nil, nil, nil, bodies[i])\nend\n')
    out = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % seconds,
                          "--timeout", "30s", "--latency", "-s", lua, url],
                         capture_output=True, text=True, check=True).stdout

    def lat(label):
        m = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)\b" % label, out)
        if not m:
            return float("nan")
        v, u = float(m.group(1)), m.group(2)
        return v / 1000 if u == "us" else v if u == "ms" else v * 1000

    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": float(m.group(1)) if m else float("nan"), "p50": lat("50"), "p99": lat("99"),
            "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "errors": errors.group(1).strip() if errors else ""}


def run_case(server, cluster, case, seconds, tmp, tag):
    cid, verb, claim, names, cache, conns = case
    claims = [claim] if claim != "bench-cold" else [
        "bench-cold-%d" % k for k in range(COLD_SHAPES)]
    paths = []
    for k, cl in enumerate(claims):
        paths.append(os.path.join(tmp, "body-%s-%d.json" % (cid, k)))
        if not os.path.exists(paths[-1]):
            with open(paths[-1], "wb") as f:
                f.write(cluster.body(cl, names, cache))
    path = paths[-1]  # the first request: a shape the wrk run meets last
    with open(path, "rb") as f:
        body = f.read()
    t0 = time.monotonic()
    status, raw = post(server.url + "/" + verb, body)
    first_ms = (time.monotonic() - t0) * 1000
    passing = verdict(verb, raw) if status == 200 else -1
    log("%s %s: first request %d in %.0f ms, %d pass; wrk %d s" % (
        tag, cid, status, first_ms, passing, seconds))
    r = wrk(server.url + "/" + verb, paths, seconds, conns)
    r["pass"] = passing
    r["req_nodes"] = len(cluster.names) if names == "all" else len(cluster.names500)
    if r["errors"]:
        log("%s %s: wrk socket errors: %s" % (tag, cid, r["errors"]))
    return r


# ---- the Go peer ---------------------------------------------------------------------------


def start_peer(peer, cluster, sdir, res, n, ready_timeout):
    """The peer serving the size's snapshot beside railfit (None without one, or when it did
    not start: no peer column for that size)."""
    if not peer:
        return None
    psrv = None
    try:
        psrv = Server("peer", lambda listen: [peer, "--snapshot", cluster.path, "--listen",
                                              listen], sdir)
        res["peer_start"] = psrv.wait_ready(ready_timeout)
        res["peer_rss"], _ = psrv.mem()
        log("size %d: peer ready in %.1f s, RSS %.0f MB" % (n, res["peer_start"],
                                                           res["peer_rss"]))
        return psrv
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        log("size %d: peer failed: %s" % (n, e))
        if psrv:
            psrv.stop()
        return None

def build_peer(tmp):
    go = shutil.which("go")
    if not go:
        return None
    env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", CGO_ENABLED="0")
    env.setdefault("GOCACHE", os.path.join(tmp, "gocache"))
    if "HOME" not in env:
        env["HOME"] = tmp
    out = os.path.join(tmp, "peer")
    r = subprocess.run([go, "build", "-o", out, "."], cwd=os.path.join(HERE, "peer"), env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        log("go build of the peer failed, no peer column:\n" + r.stderr)
        return None
    return out


# ---- the sweep ------------------------------------------------------------------------------

def fmt(v, f):
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return f % v


def print_table(results, peer_on, a):
    print()
    print("railfit fleet benchmark: gen-cluster --seed 1 --used 0.5 --pods-per-node %s; "
          "wrk -t2 -cC -d%ds --latency, loopback, %d CPUs%s" % (
              a.pods_per_node or "default", a.seconds, os.cpu_count() or 0,
              "; peer = test/bench/peer (Go)" if peer_on else ""))
    left_fmt = "%6s %6s %6s %6s %7s %7s %7s %7s %8s"
    blank = " " * len(left_fmt % (("",) * 9))
    hdr = ((left_fmt + " | %-9s %5s %5s %8s %8s %8s %8s %6s") %
           ("size", "pods", "slices", "claims", "start s", "RSS MB", "end MB", "peak MB",
            "unjudged",
            "case", "nodes", "pass", "req/s", "p50 ms", "p99 ms", "us/node", "non2xx"))
    if peer_on:
        hdr += " | %7s %7s %5s %8s %8s %8s %7s" % ("start s", "RSS MB", "pass", "req/s",
                                                   "p50 ms", "p99 ms", "rf/peer")
    print(hdr)
    print("-" * len(hdr))
    late = False
    for res in results:
        c = res["cluster"]
        first = True
        if not res["rows"]:
            print((left_fmt + " | %s") % (
                c.n_nodes, c.n_pods, c.n_slices, c.n_claims, fmt(res.get("start"), "%.1f"),
                "-", "-", "-", "-", res.get("error", "no cases")))
            continue
        for cid, r in res["rows"].items():
            pr = res.get("peer_rows", {}).get(cid) or {}
            if first:
                left = left_fmt % (
                    c.n_nodes, c.n_pods, c.n_slices, c.n_claims, fmt(res["start"], "%.1f"),
                    fmt(res["rss"], "%.0f"), fmt(res.get("rss_end"), "%.0f"),
                    fmt(res.get("hwm"), "%.0f"), fmt(res.get("unjudged"), "%.0f"))
            else:
                left = blank
            us = r["p50"] * 1000.0 / r["req_nodes"] if r["req_nodes"] else float("nan")
            line = "%s | %-9s %5d %5d %8.1f %8.2f %8.2f %8.2f %6d" % (
                left, cid, r["req_nodes"], r["pass"], r["rps"], r["p50"], r["p99"], us,
                r["non2xx"])
            if peer_on:
                pl = ("%7s %7s" % (fmt(res.get("peer_start"), "%.1f"),
                                   fmt(res.get("peer_rss"), "%.0f"))) if first else " " * 15
                if pr:
                    line += " | %s %5d %8.1f %8.2f %8.2f %7.2f" % (
                        pl, pr["pass"], pr["rps"], pr["p50"], pr["p99"],
                        r["rps"] / pr["rps"] if pr["rps"] else float("nan"))
                else:
                    line += " | %s %5s %8s %8s %8s %7s" % (pl, "-", "-", "-", "-", "-")
            if r["p99"] > 5000 or pr.get("p99", 0) > 5000:
                line += "  !"
                late = True
            print(line)
            first = False
    if late:
        print("! a p99 above 5000 ms: kube-scheduler's default extender httpTimeout (5 s) "
              "would fail those scheduling attempts")
    print()
    for res in results:
        c = res["cluster"]
        print("size %d: snapshot %.0f MB (gen %.1f s), %d/%d GPUs used (%.0f%%), %d job-worker "
              "pods; pending pod %s/%s (Job %s, %d workers' nodes); load average %.2f at start" % (
                  c.n_nodes, c.size_mb, c.gen_s, c.gpus_used, c.gpus,
                  100.0 * c.gpus_used / c.gpus if c.gpus else 0, c.n_job_pods, NS_JOBS,
                  c.pod["metadata"]["name"], c.job, len(c.job_nodes), res["load"]))


def sweep(a, tmp):
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    wanted = a.cases.split(",") if a.cases else [c[0] for c in CASES]
    unknown = [w for w in wanted if w not in [c[0] for c in CASES]]
    if unknown:
        raise SystemExit("unknown case(s) %s; known: %s" % (
            ",".join(unknown), ",".join(c[0] for c in CASES)))
    peer = None if a.no_peer else build_peer(tmp)
    if not a.no_peer and not peer:
        log("go not on PATH (or its build failed): no peer column")
    results = []
    failed = False
    for n in sizes:
        cases = [c for c in CASES if c[0] in wanted and not (c[3] == 500 and c[4] and n <= 500)]
        sdir = os.path.join(tmp, "n%d" % n)
        os.makedirs(sdir, exist_ok=True)
        log("size %d: gen-cluster" % n)
        cluster = Cluster(a.railfit, n, a.pods_per_node, os.path.join(sdir, "snapshot.json"))
        log("size %d: %d nodes, %d pods (%d job workers), %d slices, %d claims, %d/%d GPUs used, "
            "%.0f MB, pending %s/%s" % (
                n, cluster.n_nodes, cluster.n_pods, cluster.n_job_pods, cluster.n_slices,
                cluster.n_claims, cluster.gpus_used, cluster.gpus, cluster.size_mb, NS_JOBS,
                cluster.pod["metadata"]["name"]))
        res = {"cluster": cluster, "rows": {}, "start": None, "load": os.getloadavg()[0]}
        if res["load"] > 0.5:
            log("size %d: load average %.2f before starting: something else is running, the "
                "numbers will be noisy" % (n, res["load"]))
        results.append(res)
        srv = Server("railfit", lambda listen: [a.railfit, "serve", "--snapshot", cluster.path,
                                                "--listen", listen], sdir)
        psrv = None
        try:
            res["start"] = srv.wait_ready(a.ready_timeout)
            res["rss"], _ = srv.mem()
            log("size %d: railfit ready in %.1f s, RSS %.0f MB" % (n, res["start"], res["rss"]))
            psrv = start_peer(peer, cluster, sdir, res, n, a.ready_timeout)
            # each case on railfit, then at once on the peer: a slow spell of the machine
            # falls on both sides of a ratio more often than with all of one side first
            res["peer_rows"] = {}
            for case in cases:
                res["rows"][case[0]] = run_case(srv, cluster, case, a.seconds, sdir,
                                                "railfit %d" % n)
                if psrv:
                    try:
                        res["peer_rows"][case[0]] = run_case(psrv, cluster, case, a.seconds,
                                                             sdir, "peer %d" % n)
                    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
                        log("size %d: peer failed: %s" % (n, e))
                        psrv.stop()
                        psrv = None
            res["rss_end"], res["hwm"] = srv.mem()
            res["unjudged"] = metric(srv.url, "railfit_unjudged_nodes_total")
            if srv.proc.poll() is not None:
                raise RuntimeError("railfit exited during the run:\n" + srv.stderr_tail())
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            log("size %d: railfit failed: %s" % (n, e))
            res["error"] = "railfit failed (see log)"
            failed = True
        finally:
            srv.stop()
            if psrv:
                psrv.stop()
        if res["rows"]:
            unjudged = res.get("unjudged")  # None: railfit failed before its last case
            log("size %d: railfit_unjudged_nodes_total %s" % (n, fmt(unjudged, "%.0f")))
            if unjudged is not None and unjudged > 0 and n <= 5000 and not a.allow_unjudged:
                failed = True
            if any(r["non2xx"] for r in res["rows"].values()):
                failed = True
        if not a.keep:
            os.unlink(cluster.path)
    print_table(results, bool(peer), a)
    return 1 if failed else 0


def build_times(log_text):
    """ms of every 'published a cache generation' line of railfit's -v 3 log."""
    return [float(m) for m in re.findall(
        r'published a cache generation.*?\bms="?([\d.]+)', log_text)]


def compactions(log_text):
    """(ms, longest turn ms, caught up) of every compaction in railfit's -v 3 log ('compacted
    the layout'): its build time on its thread, the longest it ran without letting the
    publisher build (what an event may have waited for), and whether it was patched at once
    with the changes that came while it ran (else published as it was)."""
    return [(float(a), float(b), c == "true") for a, b, c in re.findall(
        r'compacted the layout.*?\bms="?([\d.]+)"?.*?longestTurnMs="?([\d.]+)"?'
        r'.*?caughtUp="?(true|false)', log_text)]


def compactionstr(cs):
    if not cs:
        return "no compaction"
    return ("%d compacted beside them (%d caught up with the events that came meanwhile): "
            "build time %s ms, longest turn %s ms" % (
                len(cs), sum(1 for c in cs if c[2]),
                ", ".join("%.0f" % c[0] for c in sorted(cs)),
                ", ".join("%.0f" % c[1] for c in sorted(cs))))


def build_lags(log_text):
    """lagMs of every 'published a cache generation' line: from the first change a generation
    includes reaching railfit's store to the generation's publication."""
    return [float(m) for m in re.findall(
        r'published a cache generation.*?\blagMs="?([\d.]+)', log_text)]


def build_layouts(log_text):
    """layout of the same log lines: reused, patched, compacted or rebuilt."""
    return re.findall(r'published a cache generation.*?\blayout="?(\w+)', log_text)


def patched_lags(log_text, since):
    """lagMs of the builds from the since-th on that patched the layout: railfit's part of a
    layout event's lag (its first change in the store -> the generation published), coalesced
    pod and claim events included."""
    return sorted(lag for lag, kind in zip(build_lags(log_text)[since:],
                                           build_layouts(log_text)[since:])
                  if kind == "patched")


def ownstr(lags):
    """railfit's part, for the lines of layout events."""
    if not lags:
        return "railfit's part: no patched build"
    return "railfit's part (lagMs of the %d builds that patched the layout) median %.0f ms, " \
           "max %.0f ms" % (len(lags), lags[len(lags) // 2], lags[-1])


# ---- churn ----------------------------------------------------------------------------------

def churn(a, tmp):
    sys.path.insert(0, HERE)
    import watch_bench as wb  # also puts test/integration and test/fakeapi on sys.path
    from fakeapi import FakeAPI
    from schedclient import Railfit

    n = a.churn
    log("churn: gen-cluster %d nodes" % n)
    cluster = Cluster(a.railfit, n, a.pods_per_node, os.path.join(tmp, "snapshot.json"))
    target = cluster.pod
    first_node = cluster.names[0]
    log("churn: fake kube-apiserver loading %.0f MB" % cluster.size_mb)
    # DeviceTaintRules served as a 1.35 cluster with the alpha gate on does (v1alpha3): the
    # taint-rule probe below
    with FakeAPI(snapshot=cluster.path,
                 config={"bookmarkInterval": 5.0,
                         "enabledGroupVersions": ["resource.k8s.io/v1alpha3"]},
                 startup_timeout=a.ready_timeout) as api:
        churn_objs = []
        for i in range(a.churn_objects):
            churn_objs += [wb.claim("churn-%d" % i, "churn"),
                           wb.pod("churn-%d" % i, "churn", "churn-%d" % i)]
        api.put(*churn_objs)
        kc = wb.kubeconfig(os.path.join(tmp, "kubeconfig"), api.url)
        cfg = "kube: {watchTimeout: 60s, staleAfter: 120s, qps: 1000}\n"
        t0 = time.monotonic()
        with Railfit(demo=False, config=cfg, args=["--kubeconfig", kc, "-v", "3"], binary=a.railfit,
                     ready_timeout=a.ready_timeout) as rf:
            if a.pin:
                cpus = sorted(os.sched_getaffinity(0))
                if len(cpus) < 2:
                    raise SystemExit("--pin needs at least 2 CPUs")
                rest = ",".join(str(c) for c in cpus[:-1])
                for pid, cpu in ((rf.proc.pid, str(cpus[-1])), (api.proc.pid, rest)):
                    subprocess.run(["taskset", "-a", "-cp", cpu, str(pid)], check=True,
                                   stdout=subprocess.DEVNULL)
                os.sched_setaffinity(0, set(cpus[:-1]))
            end = time.monotonic() + a.ready_timeout
            while True:
                try:
                    with urllib.request.urlopen(rf.url + "/readyz", timeout=5) as r:
                        if r.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > end:
                    raise SystemExit("railfit did not become ready:\n" + rf.stderr()[-3000:])
                time.sleep(0.1)
            ready_s = time.monotonic() - t0
            rss, hwm_ready = proc_mem_mb(rf.proc.pid)
            cpu_ready = proc_cpu_s(rf.proc.pid)
            log("churn: railfit ready in %.1f s (list from the fake included), RSS %.0f MB" % (
                ready_s, rss))
            client = rf.client(node_cache_capable=True)
            names = cluster.names

            probe_seq, seq_lock = [0], threading.Lock()

            def next_seq():  # (the probers' threads take numbers too)
                with seq_lock:
                    probe_seq[0] += 1
                    return probe_seq[0]

            def lag_probe():
                """Seconds from putting a new pending pod into the fake to railfit's explain
                knowing it (polled every 10 ms); None after 60 s."""
                name = "lag-probe-%d" % next_seq()
                p = wb.pod(name, "churn", "none")
                p["spec"].pop("resourceClaims")
                p["spec"]["containers"][0].pop("resources")
                url = "%s/debug/explain/churn/%s?node=%s" % (rf.url, name, first_node)
                t = time.monotonic()
                api.put(p)
                while time.monotonic() - t < 60:
                    try:
                        with urllib.request.urlopen(url, timeout=10):
                            return time.monotonic() - t
                    except urllib.error.HTTPError as e:
                        if e.code != 404:
                            raise
                    time.sleep(0.01)
                return None

            class Prober(threading.Thread):
                """A new probe every second, each in its own thread (lags can exceed 1 s)."""

                def __init__(self):
                    super().__init__(daemon=True)
                    self.lags, self.stop_ev, self.threads = [], threading.Event(), []

                def run(self):
                    while not self.stop_ev.wait(1.0):
                        t = threading.Thread(target=lambda: self.lags.append(lag_probe()),
                                             daemon=True)
                        t.start()
                        self.threads.append(t)

                def finish(self):
                    self.stop_ev.set()
                    self.join()
                    for t in self.threads:
                        t.join()

            wb.measure(client, target, names, 1.0)  # warm up
            probe_builds0 = len(build_lags(rf.stderr()))
            idle_lags = []
            for _ in range(5):
                # a single event: railfit has been idle for a while (its publisher spaces
                # builds by 10 ms at least, and keeps them to a third of a core over time)
                time.sleep(1.0)
                idle_lags.append(lag_probe())
            idle_store_lags = sorted(build_lags(rf.stderr())[probe_builds0:])

            def layout_probe(kind):
                """Seconds from putting a changed ResourceSlice (a device attribute) or Node
                (its block label) of the first node into the fake to /debug/nodes/{name}
                showing it (polled every 10 ms); None after 60 s."""
                seq = next_seq()
                if kind == "slice":
                    o = copy.deepcopy(cluster.probe_slice)
                    o["spec"]["devices"][0].setdefault("attributes", {})[
                        "bench.railfit.io/probe"] = {"int": seq}
                else:
                    o = copy.deepcopy(cluster.probe_node)
                    o["metadata"].setdefault("labels", {})[
                        "network.topology.kubernetes.io/block"] = "probe-%d" % seq
                url = "%s/debug/nodes/%s" % (rf.url, first_node)
                t = time.monotonic()
                api.put(o)
                while time.monotonic() - t < 60:
                    with urllib.request.urlopen(url, timeout=10) as r:
                        body = json.loads(r.read())
                    if kind == "slice":
                        seen = any((d.get("attributes") or {}).get("bench.railfit.io/probe") == seq
                                   for d in body.get("devices") or [])
                    else:
                        seen = "probe-%d" % seq in json.dumps(body)
                    if seen:
                        return time.monotonic() - t
                    time.sleep(0.01)
                return None

            def node_get(name):
                """/debug/nodes/{name}, or None while it answers 404."""
                try:
                    with urllib.request.urlopen("%s/debug/nodes/%s" % (rf.url, name),
                                                timeout=10) as r:
                        return json.loads(r.read())
                except urllib.error.HTTPError as e:
                    if e.code == 404:
                        return None
                    raise

            def pod_known(ns, name):
                """/debug/explain/{ns}/{name} finds the pod."""
                try:
                    with urllib.request.urlopen("%s/debug/explain/%s/%s?node=%s" % (
                            rf.url, ns, name, first_node), timeout=10):
                        return True
                except urllib.error.HTTPError as e:
                    if e.code == 404:
                        return False
                    raise

            def wait_until(cond):
                t = time.monotonic()
                while time.monotonic() - t < 60:
                    if cond():
                        return time.monotonic() - t
                    time.sleep(0.01)
                return None

            def node_life_probe(seq):
                """A node joining then leaving in the order a real cluster deletes its objects:
                its Node object, then its drivers' ResourceSlices (new pools), two Running pods
                bound to it; then its Node object deleted first (the node stays, only its slices
                name it: its block label is gone), its slices deleted after it (the node goes;
                its pods are still listed), its pods deleted last; then its Node object and its
                slices back in one put, and deleted again (slices and Node together, the easy
                order). The seconds from each put or delete to /debug/nodes/{name} (or, for the
                pods, /debug/explain) showing it."""
                name = "probe-node-%d" % seq
                block = "probe-life-%d" % seq
                n = copy.deepcopy(cluster.probe_node)
                n["metadata"]["name"] = name
                n["metadata"].pop("uid", None)
                labels = n["metadata"].setdefault("labels", {})
                labels["kubernetes.io/hostname"] = name
                labels["network.topology.kubernetes.io/block"] = block
                slices = []
                for k, s in enumerate(cluster.probe_slices):
                    s = copy.deepcopy(s)
                    s["metadata"]["name"] = "%s-%d" % (name, k)
                    s["metadata"].pop("uid", None)
                    s["metadata"].pop("ownerReferences", None)
                    s["spec"]["nodeName"] = name
                    s["spec"]["pool"]["name"] = name
                    slices.append(s)
                pods = []
                for k in range(2):
                    p = wb.pod("%s-pod-%d" % (name, k), "churn", "none")
                    p["spec"].pop("resourceClaims")
                    p["spec"]["containers"][0].pop("resources")
                    p["spec"]["nodeName"] = name
                    p["status"]["phase"] = "Running"
                    pods.append(p)
                devices = sum(len(s["spec"].get("devices") or []) for s in slices)

                def shows(want):
                    return wait_until(lambda: want(node_get(name)))

                out = {}
                api.put(n)
                out["add"] = shows(lambda st: st is not None)
                time.sleep(1.0)
                api.put(*slices)
                out["slices"] = shows(lambda st: st is not None and
                                      len(st.get("devices") or []) == devices)
                time.sleep(1.0)
                api.put(*pods)
                out["pods"] = shows(lambda st: st is not None and st.get("pods") == len(pods))
                # the real order: the Node object first, its slices and pods garbage-collected
                time.sleep(1.0)
                api.delete("Node", name)
                out["node_gone"] = shows(lambda st: st is not None and st.get("block") is None
                                         and len(st.get("devices") or []) == devices)
                time.sleep(1.0)
                for s in slices:
                    api.delete("ResourceSlice", s["metadata"]["name"])
                out["slices_gone"] = shows(lambda st: st is None)
                time.sleep(1.0)
                for p in pods:
                    api.delete("Pod", p["metadata"]["name"], "churn")
                out["pods_gone"] = wait_until(lambda: not any(
                    pod_known("churn", p["metadata"]["name"]) for p in pods))
                # back with its slices in one put, then gone in the easy order
                time.sleep(1.0)
                n2 = copy.deepcopy(n)
                api.put(n2, *[copy.deepcopy(s) for s in slices])
                out["back"] = shows(lambda st: st is not None and st.get("block") == block and
                                    len(st.get("devices") or []) == devices)
                time.sleep(1.0)
                for s in slices:
                    api.delete("ResourceSlice", s["metadata"]["name"])
                api.delete("Node", name)
                out["remove"] = shows(lambda st: st is None)
                return out

            def shared_pool_probe(seq):
                """A pool served by every node (allNodes) published then deleted: a layout
                event railfit patches (its device is inert: every node's pool list composed
                again, nothing else rebuilt). Its one device belongs to a driver no class names. Seconds from the put
                or delete to /debug/nodes/{first node} showing it."""
                def devices(name):
                    st = node_get(name)
                    return None if st is None else len(st.get("devices") or [])

                before = devices(first_node)
                s = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": "bench-shared-%d" % seq},
                     "spec": {"driver": "bench.railfit.io", "allNodes": True,
                              "pool": {"name": "bench-shared-%d" % seq, "generation": 1,
                                       "resourceSliceCount": 1},
                              "devices": [{"name": "shared-0"}]}}
                out = {}
                api.put(s)
                out["add"] = wait_until(lambda: devices(first_node) == before + 1)
                time.sleep(1.0)
                api.delete("ResourceSlice", s["metadata"]["name"])
                out["remove"] = wait_until(lambda: devices(first_node) == before)
                return out

            def driver_rule_probe(seq):
                """A DeviceTaintRule over a whole driver (every GPU: a driver upgrade drains
                them) put, then deleted: it selects a pool on every node, which a patch keeps
                (only the devices' taints change, held by the layout). Seconds from the
                put or delete to /debug/nodes/{first node} showing it."""
                def tainted():
                    st = node_get(first_node)
                    return any(t.get("key") == "bench.railfit.io/drain"
                               for d in (st or {}).get("devices") or []
                               for t in d.get("taints") or [])

                r = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                     "metadata": {"name": "bench-drain-%d" % seq},
                     "spec": {"deviceSelector": {"driver": "gpu.nvidia.com"},
                              "taint": {"key": "bench.railfit.io/drain",
                                        "effect": "NoSchedule"}}}
                out = {}
                api.put(r)
                out["add"] = wait_until(tainted)
                time.sleep(1.0)
                api.delete("DeviceTaintRule", r["metadata"]["name"])
                out["remove"] = wait_until(lambda: not tainted())
                return out

            # the peak of each phase: VmHWM read, then started again from the current RSS
            peaks = {"start-up": hwm_ready}
            can_reset = reset_peak(rf.proc.pid)
            rss_sampler = RssSampler(rf.proc.pid)
            rss_sampler.start()

            def phase_peak(label):
                peaks[label] = proc_mem_mb(rf.proc.pid)[1]
                reset_peak(rf.proc.pid)
                rss_sampler.mark()

            layout_builds0 = len(build_lags(rf.stderr()))
            slice_lags, node_lags = [], []
            for _ in range(5):
                time.sleep(1.0)
                slice_lags.append(layout_probe("slice"))
                time.sleep(1.0)
                node_lags.append(layout_probe("node"))
            layout_builds1 = len(build_lags(rf.stderr()))
            life = []
            for k in range(3):
                time.sleep(1.0)
                life.append(node_life_probe(k))
            life_builds1 = len(build_lags(rf.stderr()))
            phase_peak("idle probes, layout and node events (patched)")
            shared = []
            for k in range(2):
                time.sleep(1.0)
                shared.append(shared_pool_probe(k))
            time.sleep(0.2)  # the last build's log line follows its publication
            shared_layouts = build_layouts(rf.stderr())[life_builds1:]
            shared_build_ms = sorted(build_times(rf.stderr())[life_builds1:])
            phase_peak("a pool on every node published and deleted (patched)")
            rules0 = len(build_lags(rf.stderr()))
            rules = []
            for k in range(2):
                time.sleep(1.0)
                rules.append(driver_rule_probe(k))
            time.sleep(0.2)
            rule_layouts = build_layouts(rf.stderr())[rules0:]
            rule_build_ms = sorted(build_times(rf.stderr())[rules0:])
            phase_peak("a DeviceTaintRule over a driver put and deleted")
            # layout events in bursts (a rollout relabelling nodes): the chain wears past 64
            # patches during the second burst and is compacted beside the events
            burst0 = len(build_lags(rf.stderr()))
            burst_text0 = len(rf.stderr())
            burst_lags = []
            for _ in range(BURSTS):
                burst_lags += [layout_probe("node") for _ in range(BURST_EVENTS)]
                time.sleep(BURST_QUIET)
            burst_layouts = build_layouts(rf.stderr())[burst0:]
            burst_own = patched_lags(rf.stderr(), burst0)
            burst_compactions = compactions(rf.stderr()[burst_text0:])
            phase_peak("%d bursts of %d Node label events" % (BURSTS, BURST_EVENTS))
            # a long run of layout events, past the bound of a chain of patched layouts (512):
            # each waited for, so each is its own build; the chain is compacted beside them
            run0 = len(build_lags(rf.stderr()))
            run_text0 = len(rf.stderr())
            run_lags = [layout_probe("node") for _ in range(RUN_EVENTS)]
            # the chain the run leaves may be worn: its compaction comes in this quiet, not
            # during the filter measured next (whose first request per shape is then cold:
            # warmed up below)
            time.sleep(BURST_QUIET)
            run_layouts = build_layouts(rf.stderr())[run0:]
            run_compactions = compactions(rf.stderr()[run_text0:])
            phase_peak("%d Node label events in a row (a chain's bound passed)" % RUN_EVENTS)
            layout_store = build_lags(rf.stderr())[layout_builds0:layout_builds1]
            layout_build_ms = sorted(build_times(rf.stderr())[layout_builds0:layout_builds1])
            patched_builds = build_layouts(rf.stderr())[layout_builds0:layout_builds1].count(
                "patched")
            life_build_ms = sorted(build_times(rf.stderr())[layout_builds1:life_builds1])
            life_patched = build_layouts(rf.stderr())[layout_builds1:life_builds1].count(
                "patched")
            life_reused = build_layouts(rf.stderr())[layout_builds1:life_builds1].count(
                "reused")
            wb.measure(client, target, names, 0.5)  # warm: remembered verdicts
            h0 = wb.filter_histogram(rf.url)
            idle = wb.measure(client, target, names, a.seconds)
            h1 = wb.filter_histogram(rf.url)
            # and with wrk, one request at a time as kube-scheduler's scheduling cycle sends
            # them, the body byte-for-byte as it does (the client's own cost in C, not Python)
            body_path = os.path.join(tmp, "body-churn-filter.json")
            with open(body_path, "wb") as f:
                f.write(cluster.body("bench-aligned", "all", True))
            idle_wrk = wrk(rf.url + "/filter", [body_path], a.seconds, 1, threads=1)
            h1w = wb.filter_histogram(rf.url)
            e0 = wb.events_total(rf.url)
            builds0 = len(build_times(rf.stderr()))
            driver = wb.Churn(api, churn_objs, a.churn_rate)
            t1 = time.monotonic()
            driver.start()
            time.sleep(1.0)
            prober = Prober()
            prober.start()
            h2 = wb.filter_histogram(rf.url)
            busy = wb.measure(client, target, names, a.seconds)
            h3 = wb.filter_histogram(rf.url)
            busy_wrk = wrk(rf.url + "/filter", [body_path], a.seconds, 1, threads=1)
            h3w = wb.filter_histogram(rf.url)
            prober.finish()  # the last probes see the churn too
            builds1 = len(build_times(rf.stderr()))  # the builds of pod and claim events
            # then layout events under the same churn (filter no longer measured): a Node
            # label and a slice attribute in turn, each 0.5 s after the last one showed
            layout_lags_churn, lt0 = [], time.monotonic()
            while time.monotonic() - lt0 < LAYOUT_UNDER_CHURN:
                try:
                    lag = layout_probe("slice" if len(layout_lags_churn) % 2 else "node")
                except (OSError, ValueError) as e:
                    log("churn: a layout probe failed: %s" % e)
                    lag = None
                layout_lags_churn.append(lag)
                time.sleep(0.5)
            layout_own_churn = patched_lags(rf.stderr(), builds1)
            dt = time.monotonic() - t1
            driver.stop()
            time.sleep(1.0)
            ingested = (wb.events_total(rf.url) - e0) / dt
            sent = driver.sent / dt
            unjudged = metric(rf.url, "railfit_unjudged_nodes_total")
            phase_peak("filter with and without churn")
            hwm = max(peaks.values()) if can_reset else proc_mem_mb(rf.proc.pid)[1]
            rss_sampler.done.set()
            rss_sampler.join()
            rss_phases = rss_sampler.phases()
            trim_ms, after_trim = builds_after_trims(rf.stderr())
            alive = rf.alive()
            if a.keep:  # railfit's -v 3 log, every build's line with it
                with open(os.path.join(tmp, "railfit-churn.log"), "w") as f:
                    f.write(rf.stderr())
            builds = build_times(rf.stderr())
            idle_builds, churn_builds = builds[:builds0], builds[builds0:builds1]
            # the two builds after each full one after the start (a compaction, a chain's
            # bound): the publisher gives the freed heap back then (malloc_trim), and they
            # fault it in again
            all_layouts = build_layouts(rf.stderr())
            after_full = [(builds[i + 1], builds[i + 2]) for i in range(1, len(builds) - 2)
                          if all_layouts[i] in ("compacted", "rebuilt")]
            patched_ms = sorted(ms for ms, k in zip(builds, all_layouts) if k == "patched")
            churn_lags = sorted(build_lags(rf.stderr())[builds0:builds1])

    def lagstr(xs):
        ok = sorted(x for x in xs if x is not None)
        if not ok:
            return "no probe seen within 60 s"
        return "median %.0f ms, max %.0f ms over %d probes%s" % (
            1000 * ok[len(ok) // 2], 1000 * ok[-1], len(ok),
            ", %d not seen within 60 s" % (len(xs) - len(ok)) if len(ok) < len(xs) else "")

    print()
    print("railfit under churn: %d nodes, %d pods, %d slices, %d claims (+%d churn pods and "
          "claims), live mode against test/fakeapi%s" % (
              cluster.n_nodes, cluster.n_pods, cluster.n_slices, cluster.n_claims,
              a.churn_objects, ", railfit pinned to its own CPU" if a.pin else ""))
    print("ready %.1f s after exec (includes the fake's lists), RSS %.0f MB, peak %.0f MB, "
          "unjudged %s" % (ready_s, rss, hwm, fmt(unjudged, "%.0f")))
    print("start-up: railfit's CPU time from exec to ready %.2f s, peak RSS until ready %.0f MB" % (
        cpu_ready, hwm_ready))
    print("churn: %.0f events/s sent to the fake, %.0f events/s ingested by railfit" % (sent,
                                                                                       ingested))
    print("filter: pending %s/%s with bench-aligned, all %d node names; client side round "
          "trip, server side railfit_request_duration_seconds bucket bounds" % (
              NS_JOBS, target["metadata"]["name"], len(names)))
    print("%-20s %9s %8s %8s %8s %12s %12s" % ("phase", "requests", "p50 ms", "p99 ms", "max ms",
                                              "server p50", "server p99"))
    for label, xs, ha, hb in (("no churn", idle, h0, h1),
                              ("churn %.0f ev/s" % ingested, busy, h2, h3)):
        print("%-20s %9d %8.1f %8.1f %8.1f %9s %.1f %9s %.1f" % (
            label, len(xs), wb.percentile(xs, 50), wb.percentile(xs, 99), max(xs),
            "<=", wb.server_quantile(ha, hb, 0.5), "<=", wb.server_quantile(ha, hb, 0.99)))
    print("the same with wrk -t1 -c1 -d%ds --latency (one request at a time, as kube-scheduler's "
          "scheduling cycle sends them; the same body):" % a.seconds)
    print("%-20s %9s %8s %8s %8s %12s %12s" % ("phase", "req/s", "p50 ms", "p99 ms", "non-2xx",
                                              "server p50", "server p99"))
    for label, r, ha, hb in (("no churn", idle_wrk, h1, h1w),
                             ("churn %.0f ev/s" % ingested, busy_wrk, h3, h3w)):
        print("%-20s %9.0f %8.2f %8.2f %8d %9s %.1f %9s %.1f" % (
            label, r["rps"], r["p50"], r["p99"], r["non2xx"],
            "<=", wb.server_quantile(ha, hb, 0.5), "<=", wb.server_quantile(ha, hb, 0.99)))
    for label, bs in (("before the churn (start-up, idle probes)", idle_builds),
                      ("during the churn's filter measurement (pod and claim events)",
                       churn_builds)):
        if bs:
            bs = sorted(bs)
            print("generation builds %s: %d, build time median %.0f ms, max %.0f ms "
                  "(railfit -v 3 'published a cache generation')" % (
                      label, len(bs), bs[len(bs) // 2], bs[-1]))
    if churn_lags:
        print("store-to-published lag under churn (an event in railfit's store -> the generation "
              "holding it published; lagMs of the same log lines): median %.0f ms, p99 %.0f ms, "
              "max %.0f ms" % (churn_lags[len(churn_lags) // 2],
                               churn_lags[min(len(churn_lags) - 1, len(churn_lags) * 99 // 100)],
                               churn_lags[-1]))
    print("put-to-visible lag (new pod in the fake -> railfit's explain finds it): idle %s; "
          "under churn %s" % (lagstr(idle_lags), lagstr(prober.lags)))
    print("layout events under churn, after the filter's measurement (a Node label and a "
          "ResourceSlice attribute in turn, each 0.5 s after the last one showed, put -> "
          "/debug/nodes/{name} shows it): %s; %s" % (lagstr(layout_lags_churn),
                                                      ownstr(layout_own_churn)))
    if idle_store_lags:
        print("of which railfit's part while idle (the probe pod in railfit's store -> published, "
              "lagMs): median %.0f ms, max %.0f ms over %d builds" % (
                  idle_store_lags[len(idle_store_lags) // 2], idle_store_lags[-1],
                  len(idle_store_lags)))
    print("layout events while idle (put into the fake -> /debug/nodes/{name} shows it): one "
          "ResourceSlice %s; one Node label %s" % (lagstr(slice_lags), lagstr(node_lags)))
    if layout_build_ms:
        print("  their generation builds: median %.0f ms, max %.0f ms over %d builds (%d with the "
              "layout patched); railfit's part (lagMs) median %.0f ms" % (
                  layout_build_ms[len(layout_build_ms) // 2], layout_build_ms[-1],
                  len(layout_build_ms), patched_builds, sorted(layout_store)[len(layout_store) // 2]))
    print("a node joining and leaving while idle (put or deleted -> /debug/nodes/{name} shows "
          "it): its Node object %s; its ResourceSlices (new pools) %s; two Running pods bound "
          "to it %s" % (lagstr([x["add"] for x in life]), lagstr([x["slices"] for x in life]),
                        lagstr([x["pods"] for x in life])))
    print("  leaving in the real order: its Node object deleted (slices and pods stay) %s; its "
          "slices deleted (pods still bound) %s; its pods deleted (-> /debug/explain no longer "
          "finds them) %s" % (lagstr([x["node_gone"] for x in life]),
                              lagstr([x["slices_gone"] for x in life]),
                              lagstr([x["pods_gone"] for x in life])))
    print("  back with its slices in one put %s; slices and Node deleted together %s" % (
        lagstr([x["back"] for x in life]), lagstr([x["remove"] for x in life])))
    if life_build_ms:
        print("  their generation builds: median %.0f ms, max %.0f ms over %d builds (%d with the "
              "layout patched, %d sharing the layout: the pod events)" % (
                  life_build_ms[len(life_build_ms) // 2], life_build_ms[-1], len(life_build_ms),
                  life_patched, life_reused))
    print("a pool on every node (allNodes) published, then deleted, while idle: shown %s; gone "
          "%s" % (lagstr([x["add"] for x in shared]), lagstr([x["remove"] for x in shared])))
    if shared_build_ms:
        print("  their generation builds: median %.0f ms, max %.0f ms over %d builds (%d with the "
              "layout patched, %d built in full)" % (
                  shared_build_ms[len(shared_build_ms) // 2], shared_build_ms[-1],
                  len(shared_build_ms), shared_layouts.count("patched"),
                  shared_layouts.count("rebuilt")))
    print("a DeviceTaintRule over every GPU (driver gpu.nvidia.com) put, then deleted, while "
          "idle: shown %s; gone %s" % (lagstr([x["add"] for x in rules]),
                                      lagstr([x["remove"] for x in rules])))
    if rule_build_ms:
        print("  their generation builds: median %.0f ms, max %.0f ms over %d builds (%d with the "
              "layout built in full)" % (rule_build_ms[len(rule_build_ms) // 2],
                                         rule_build_ms[-1], len(rule_build_ms),
                                         rule_layouts.count("rebuilt")))
    kinds = ("patched", "compacted", "rebuilt", "reused")
    print("%d bursts of %d Node label events, %.1f s quiet after each: shown %s; %s; their "
          "builds: %s; %s" % (BURSTS, BURST_EVENTS, BURST_QUIET, lagstr(burst_lags),
                              ownstr(burst_own), ", ".join(
              "%d %s" % (burst_layouts.count(k), k) for k in kinds if k in burst_layouts),
                      compactionstr(burst_compactions)))
    print("%d Node label events in a row, each put once the last one shows (a chain's bound is "
          "512 patches): shown %s; their builds: %s; %s" % (
              RUN_EVENTS, lagstr(run_lags), ", ".join(
                  "%d %s" % (run_layouts.count(k), k) for k in kinds if k in run_layouts),
              compactionstr(run_compactions)))
    if after_full and patched_ms:
        print("the two builds after each of the %d full builds: "
              "%s ms; patched builds median %.1f ms over %d" % (
                  len(after_full), ", ".join("%.0f/%.0f" % x for x in after_full),
                  patched_ms[len(patched_ms) // 2], len(patched_ms)))
    print("resident (VmRSS every 0.2 s) by phase, in order, min/median/max/last MB: " + "; ".join(
        "%s %s" % (label, "%.0f/%.0f/%.0f/%.0f" % r if r else "-")
        for label, r in zip(list(peaks)[1:], rss_phases)))
    print("freed heap given back %d times (%s ms); the two builds after each: %s ms" % (
        len(trim_ms), ", ".join("%.0f" % x for x in trim_ms) or "-",
        ", ".join("/".join("%.0f" % x for x in bs) for bs in after_trim) or "-"))
    if can_reset:
        print("peak RSS (VmHWM) by phase, in order: " + "; ".join(
            "%s %.0f MB" % kv for kv in peaks.items()) + "; the run's peak %.0f MB" % hwm)
    else:
        print("peak RSS by phase: not available (/proc/PID/clear_refs not writable)")
    if not alive:
        print("railfit exited during the run")
        return 1
    if idle_wrk["non2xx"] or busy_wrk["non2xx"]:
        print("railfit answered a filter with a status other than 2xx")
        return 1
    return 1 if unjudged > 0 and n <= 5000 and not a.allow_unjudged else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500,1000,2000,5000,10000")
    ap.add_argument("--seconds", type=int, default=5, help="wrk duration per case (churn: phase)")
    ap.add_argument("--cases", default="", help="comma-separated subset of: " +
                    ",".join(c[0] for c in CASES))
    ap.add_argument("--pods-per-node", type=float, default=2.4,
                    help="gen-cluster --pods-per-node (0: gen-cluster's default shape)")
    ap.add_argument("--ready-timeout", type=float, default=300)
    ap.add_argument("--railfit", default=os.environ.get("RAILFIT") or
                    os.path.join(ROOT, "build", "server", "railfit"))
    ap.add_argument("--quick", action="store_true", help="sizes 500,2000, 2 s per case")
    ap.add_argument("--no-peer", action="store_true", help="skip the Go peer even if go exists")
    ap.add_argument("--allow-unjudged", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep snapshots, bodies and logs in DIR")
    ap.add_argument("--churn", type=int, metavar="N", help="churn benchmark at N nodes instead")
    ap.add_argument("--churn-rate", type=float, default=1000, help="events/s (default 1000)")
    ap.add_argument("--churn-objects", type=int, default=200,
                    help="churn pods (and as many claims), default 200")
    ap.add_argument("--pin", action="store_true", help="churn: railfit on its own CPU")
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.seconds = "500,2000", 2
    if not os.access(a.railfit, os.X_OK):
        raise SystemExit("railfit binary not found: %s (--railfit PATH)" % a.railfit)
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found (apt-get install wrk)")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        tmp = a.keep
    else:
        tmp = tempfile.mkdtemp(prefix="railfit-fleet-")
    try:
        return churn(a, tmp) if a.churn else sweep(a, tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
