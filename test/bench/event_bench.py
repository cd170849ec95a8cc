#!/usr/bin/env python3
"""What one watch event costs the live publisher, store included: railfit in live mode against the
fake kube-apiserver (test/fakeapi) serving a fleet_bench cluster (`railfit gen-cluster --nodes N
--seed 1 --used 0.5 --pods-per-node 2.4`), then EVENTS single events SPACING seconds apart (each
its own build), of one kind: a Node label (`label`: the layout patched) or a new pod with no claim
(`pod`: the layout shared, usage by difference). Prints the median and max of the builds'
duration and of their lag (lagMs: the event in railfit's store -> its generation published) from
railfit's -v 3 log. With --perf FILE, `perf record --call-graph dwarf` on railfit while the
events come (perf must be installed): `perf report -i FILE --children --sort sym` shows where a
build's time goes. Run two binaries one after the other to compare them (--railfit A, then B).

usage: event_bench.py [--nodes 5000] [--kind label|pod] [--events 120] [--spacing 0.08]
                      [--railfit PATH] [--perf FILE]
"""
import argparse
import copy
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fleet_bench  # noqa: E402
import watch_bench as wb  # noqa: E402  (puts test/integration and test/fakeapi on sys.path)
from fakeapi import FakeAPI  # noqa: E402
from schedclient import Railfit  # noqa: E402


def builds(log_text):
    """(ms, lagMs, layout) of every 'published a cache generation' line."""
    return [(float(ms), float(lag), layout) for ms, lag, layout in re.findall(
        r'published a cache generation.*?\bms="?([\d.]+).*?\blagMs="?([\d.]+).*?'
        r'\blayout="?(\w+)', log_text)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--kind", choices=("label", "pod"), default="label")
    ap.add_argument("--events", type=int, default=120)
    ap.add_argument("--spacing", type=float, default=0.08)
    ap.add_argument("--railfit", default=os.path.join(HERE, "../../build/server/railfit"))
    ap.add_argument("--perf", help="perf record the events into this file")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = fleet_bench.Cluster(a.railfit, a.nodes, 2.4, os.path.join(tmp, "snap.json"))
        with FakeAPI(snapshot=cluster.path, config={"bookmarkInterval": 5.0},
                     startup_timeout=600) as api:
            kc = wb.kubeconfig(os.path.join(tmp, "kubeconfig"), api.url)
            cfg = "kube: {watchTimeout: 60s, staleAfter: 120s, qps: 1000}\n"
            with Railfit(demo=False, config=cfg, args=["--kubeconfig", kc, "-v", "3"],
                         binary=a.railfit, ready_timeout=600) as rf:
                wb.wait_ready(rf, 600)
                time.sleep(3.0)  # the start-up's builds out of the build budget's way
                n0 = len(builds(rf.stderr()))
                perf = None
                if a.perf:
                    perf = subprocess.Popen(
                        ["perf", "record", "-F", "2000", "--call-graph", "dwarf,16384", "-o",
                         a.perf, "-p", str(rf.proc.pid)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(1.0)
                for i in range(a.events):
                    if a.kind == "label":
                        o = copy.deepcopy(cluster.probe_node)
                        o["metadata"].setdefault("labels", {})[
                            "network.topology.kubernetes.io/block"] = "event-%d" % i
                    else:
                        o = wb.pod("event-%d" % i, "churn", "none")
                        o["spec"].pop("resourceClaims")
                        o["spec"]["containers"][0].pop("resources")
                    api.put(o)
                    time.sleep(a.spacing)
                time.sleep(0.5)
                if perf:
                    perf.send_signal(2)
                    perf.wait()
                b = builds(rf.stderr())[n0:]
    if not b:
        raise SystemExit("no build logged")
    ms = sorted(x[0] for x in b)
    lag = sorted(x[1] for x in b)
    kinds = sorted(set(x[2] for x in b))
    print("%d %s events at %d nodes, %.0f ms apart: %d builds (%s), build median %.2f ms, max "
          "%.1f ms; lag median %.2f ms, max %.1f ms" % (
              a.events, a.kind, a.nodes, 1000 * a.spacing, len(b), ", ".join(kinds),
              ms[len(ms) // 2], ms[-1], lag[len(lag) // 2], lag[-1]))


if __name__ == "__main__":
    main()
