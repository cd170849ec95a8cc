#!/usr/bin/env python3
"""Soak: does railfit stay flat over a long run of mixed verbs, watch churn and hostile clients?

Workload: `railfit gen-cluster --nodes N --seed 1 --used 0.5` served by the fake kube-apiserver
(test/fakeapi/fakeapi.py) with C churn pods and C churn claims; railfit in live mode against it,
with its probes on a probe listener (server.probeListen). For M minutes, at once:

* a kube-scheduler-like client calls filter and prioritize (all N node names, nodeCacheCapable),
  preempt (five candidate nodes with victims), POST /debug/explain, /debug/nodes, /metrics and
  /readyz in turn, closed loop;
* the churn driver updates churn pods and claims at R events/s through the fake's control API,
  and every minute the fake drops every watch (RST), so railfit re-watches under load;
* a hostile client, every 2 s, does one of: a slow-header connection (a byte a second until it is
  cut off), an idle connection, a 1,000-parameter query, a 200 MiB Content-Length, a gzip
  Transfer-Encoding, two different Content-Lengths, garbage JSON to /filter, a chunked 2 MiB
  upload to an unknown route, a Pod with wrong field types, a burst of 50 idle connections from
  another loopback address;
* a prober asks /healthz and /readyz on the probe listener every second.

Every 10 s railfit's resident memory (VmRSS), open file descriptors and threads are sampled. The
report shows the samples, the growth from the first minute's sample to the last one and the slope
over the second half (MB per minute), the requests and their failures by kind, and the probe
misses. Exit status 1 when railfit died, a verb or a probe failed, or --max-growth-mb is exceeded.

usage: soak_bench.py [--minutes M] [--nodes N] [--rate R] [--churn C] [--railfit PATH]
                     [--max-growth-mb X]
"""
import argparse
import json
import os
import random
import socket
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
sys.path.insert(0, HERE)

from fakeapi import FakeAPI  # noqa: E402
from schedclient import Railfit, free_port  # noqa: E402
from watch_bench import Churn, claim, kubeconfig, pod  # noqa: E402


def rss_fds_threads(pid):
    with open("/proc/%d/status" % pid) as f:
        st = f.read()
    rss = int(st.split("VmRSS:")[1].split()[0]) / 1024.0
    threads = int(st.split("Threads:")[1].split()[0])
    return rss, len(os.listdir("/proc/%d/fd" % pid)), threads


def raw(port, data, timeout=5.0, host="127.0.0.1", read=True):
    """Send bytes on a new connection; the status of the answer or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.bind((host, 0))
        s.connect(("127.0.0.1", port))
        try:
            s.sendall(data)
        except OSError:
            pass
        if not read:
            return None
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return int(buf.split(b" ")[1]) if buf.startswith(b"HTTP/1.") else None
    except (OSError, ValueError, IndexError):
        return None
    finally:
        s.close()


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, kind, ok):
        with self.lock:
            c = self.counts.setdefault(kind, [0, 0])
            c[0] += 1
            c[1] += 0 if ok else 1


class Worker(threading.Thread):
    def __init__(self, fn, period):
        super().__init__(daemon=True)
        self.fn, self.period = fn, period
        self.halt = threading.Event()
        self.error = None

    def run(self):
        while not self.halt.is_set():
            try:
                self.fn()
            except Exception as e:  # noqa: BLE001 - reported at the end
                self.error = repr(e)
            if self.period:
                self.halt.wait(self.period)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=50, help="churn events per second")
    ap.add_argument("--churn", type=int, default=200, help="churn pods (and as many claims)")
    ap.add_argument("--sample", type=float, default=10, help="seconds between samples")
    ap.add_argument("--max-growth-mb", type=float, default=None)
    ap.add_argument("--railfit", default=os.environ.get("RAILFIT") or
                    os.path.join(ROOT, "build", "server", "railfit"))
    a = ap.parse_args()
    counts = Counter()
    samples = []

    with tempfile.TemporaryDirectory(prefix="soak-bench-") as tmp:
        snap = os.path.join(tmp, "cluster.json")
        with open(snap, "wb") as f:
            f.write(subprocess.run([a.railfit, "gen-cluster", "--nodes", str(a.nodes), "--seed",
                                    "1", "--used", "0.5"], check=True,
                                   stdout=subprocess.PIPE).stdout)
        with FakeAPI(snapshot=snap, config={"bookmarkInterval": 5.0},
                     startup_timeout=300) as api:  # 1,000 nodes on a busy machine
            churn_objs = []
            for i in range(a.churn):
                churn_objs += [claim("churn-%d" % i, "churn"),
                               pod("churn-%d" % i, "churn", "churn-%d" % i)]
            api.put(*churn_objs)
            target = pod("soak-pod", "soak", "soak-gpu-nic")
            api.put(claim("soak-gpu-nic", "soak"), target)
            kc = kubeconfig(os.path.join(tmp, "kubeconfig"), api.url)
            probe_port = free_port()
            cfg = ("kube: {watchTimeout: 60s, staleAfter: 30s, qps: 1000}\n"
                   "server: {probeListen: \"127.0.0.1:%d\", requestTimeout: 5s}\n" % probe_port)
            with Railfit(demo=False, config=cfg, args=["--kubeconfig", kc],
                         binary=a.railfit, ready_timeout=120) as rf:
                end = time.monotonic() + 120
                while raw(rf.port, b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n") != 200:
                    if time.monotonic() > end:
                        raise SystemExit("railfit did not become ready:\n" + rf.stderr()[-3000:])
                    time.sleep(0.2)
                client = rf.client(node_cache_capable=True)
                names = ["hgx-%03d" % (i + 1) for i in range(a.nodes)]
                port = rf.port
                step = [0]

                def verbs():
                    i = step[0] % 7
                    step[0] += 1
                    try:
                        if i == 0:
                            client.filter(target, names)
                        elif i == 1:
                            client.prioritize(target, names)
                        elif i == 2:
                            victims = {n: {"pods": [pod("churn-%d" % k, "churn", "churn-%d" % k)
                                                    for k in range(2)]} for n in names[:5]}
                            client.preempt(target, victims)
                            counts.add("preempt", True)
                            return
                        else:
                            path, body = [("/debug/explain", json.dumps(target).encode()),
                                          ("/debug/nodes?o=table", None), ("/metrics", None),
                                          ("/readyz", None)][i - 3]
                            status = raw(port, post(path, body) if body else
                                         b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode(),
                                         timeout=30)
                            counts.add(path.split("?")[0], status == 200)
                            return
                        counts.add(["filter", "prioritize"][i], True)
                    except Exception:  # noqa: BLE001
                        counts.add(["filter", "prioritize", "preempt"][i], False)

                hostile_cases = hostile(port)

                def hostile_one():
                    name, fn = random.choice(hostile_cases)
                    counts.add("hostile " + name, fn())

                def probe():
                    for path in ("/healthz", "/readyz"):
                        counts.add("probe " + path, raw(probe_port, b"GET %s HTTP/1.1\r\nHost: "
                                                        b"x\r\n\r\n" % path.encode(),
                                                        timeout=1.0) == 200)

                def drop():
                    if not dropper.halt.wait(60.0):
                        api.drop_watches(mode="reset")

                dropper = Worker(drop, 0)
                workers = [Worker(verbs, 0), Worker(hostile_one, 2.0), Worker(probe, 1.0)]
                churn = Churn(api, churn_objs, a.rate)
                churn.start()
                t0 = time.monotonic()
                for w in workers + [dropper]:
                    w.start()
                duration = a.minutes * 60.0
                while True:
                    now = time.monotonic() - t0
                    if not rf.alive():
                        break
                    samples.append((now,) + rss_fds_threads(rf.proc.pid))
                    if now >= duration:
                        break
                    time.sleep(min(a.sample, max(0.0, duration - now)))
                for w in workers + [dropper]:
                    w.halt.set()
                churn.stop()
                for w in workers + [dropper]:
                    w.join(10)
                alive = rf.alive()
                events = sum(float(l.split()[-1]) for l in http_text(rf.url + "/metrics")
                             .splitlines() if l.startswith("railfit_watch_events_total{")) \
                    if alive else 0
                errors = [w.error for w in workers if w.error]
                stderr = rf.stderr()

    print("railfit soak: %.1f min, %d nodes, churn %d pods + %d claims at %.0f events/s, "
          "watches dropped every minute; %.0f watch events ingested"
          % (a.minutes, a.nodes, a.churn, a.churn, a.rate, events))
    print("%8s %9s %6s %8s" % ("t s", "RSS MB", "fds", "threads"))
    for t, rss, fds, th in samples:
        print("%8.0f %9.1f %6d %8d" % (t, rss, fds, th))
    growth = slope = None
    if len(samples) >= 2:
        # medians, not single samples: the heap is given back now and then (malloc_trim)
        def median(xs):
            xs = sorted(xs)
            return xs[len(xs) // 2]
        end_t = samples[-1][0]
        first = [s for s in samples if 10 <= s[0] <= 70] or samples[:1]
        last = [s for s in samples if s[0] >= end_t - 60] or samples[-1:]
        base_rss, end_rss = median([s[1] for s in first]), median([s[1] for s in last])
        growth = end_rss - base_rss
        half = [s for s in samples if s[0] >= end_t / 2]
        n = len(half)
        mx = sum(s[0] for s in half) / n
        my = sum(s[1] for s in half) / n
        den = sum((s[0] - mx) ** 2 for s in half) or 1.0
        slope = sum((s[0] - mx) * (s[1] - my) for s in half) / den * 60.0
        print("RSS median %.1f MB over 10-70 s -> %.1f MB over the last minute (%+.1f MB); "
              "second half slope %+.2f MB/min; fds %d -> %d (max %d); threads %d -> %d"
              % (base_rss, end_rss, growth, slope, first[0][2], samples[-1][2],
                 max(s[2] for s in samples), first[0][3], samples[-1][3]))
    print("%-28s %9s %8s" % ("requests", "count", "failed"))
    failed = 0
    for kind in sorted(counts.counts):
        n, bad = counts.counts[kind]
        print("%-28s %9d %8d" % (kind, n, bad))
        if not kind.startswith("hostile"):
            failed += bad
    for bad in ("AddressSanitizer", "runtime error:", "ThreadSanitizer"):
        if bad in stderr:
            print("sanitizer report in railfit's stderr")
            return 1
    if errors:
        print("worker errors: %s" % errors)
    if not alive:
        print("railfit exited during the run:\n" + stderr[-3000:])
        return 1
    if failed:
        print("%d verb or probe requests failed" % failed)
        return 1
    if a.max_growth_mb is not None and growth is not None and growth > a.max_growth_mb:
        print("RSS grew %.1f MB, more than --max-growth-mb %.1f" % (growth, a.max_growth_mb))
        return 1
    return 0


def post(path, body):
    if isinstance(body, str):
        body = body.encode()
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (path.encode(), len(body))) + body


def http_text(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def hostile(port):
    """(name, fn) pairs; fn returns whether railfit answered as it should."""
    held = []

    def slow_header():
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        t0 = time.monotonic()
        try:
            for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaa":
                s.send(bytes([b]))
                time.sleep(1.0)
        except OSError:
            pass
        finally:
            s.close()
        return time.monotonic() - t0 < 12  # cut off at requestTimeout (5 s)

    def idle():
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        held.append(s)
        while len(held) > 20:
            held.pop(0).close()
        return True

    def burst():
        socks = []
        host = "127.0.0.%d" % random.randint(2, 250)
        for _ in range(50):
            s = socket.socket()
            s.bind((host, 0))
            s.connect(("127.0.0.1", port))
            socks.append(s)
        time.sleep(1)
        for s in socks:
            s.close()
        return True

    query = "&".join("p%d=" % i for i in range(1000))
    return [
        ("slow-header", slow_header),
        ("idle", idle),
        ("burst", burst),
        ("long-query", lambda: raw(port, ("GET /debug/nodes?%s HTTP/1.1\r\nHost: x\r\n\r\n"
                                         % query).encode()) == 414),
        ("huge-length", lambda: raw(port, b"POST /filter HTTP/1.1\r\nHost: x\r\n"
                                          b"Content-Length: 209715200\r\n\r\n{") == 413),
        ("gzip", lambda: raw(port, b"POST /filter HTTP/1.1\r\nHost: x\r\n"
                                   b"Transfer-Encoding: gzip\r\n\r\nxx") == 501),
        ("two-lengths", lambda: raw(port, b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 2"
                                          b"\r\nContent-Length: 3\r\n\r\n{}") == 400),
        ("garbage", lambda: raw(port, post("/filter", b"{\"Pod\": [1, 2")) == 400),
        ("chunked-404", lambda: raw(port, b"POST /nowhere HTTP/1.1\r\nHost: x\r\n"
                                          b"Transfer-Encoding: chunked\r\n\r\n200000\r\n"
                                    + b"x" * (2 << 20) + b"\r\n0\r\n\r\n") == 404),
        ("wrong-types", lambda: raw(port, post("/debug/explain",
                                               b'{"metadata":{"name":5}}')) == 400),
    ]


if __name__ == "__main__":
    sys.exit(main())
