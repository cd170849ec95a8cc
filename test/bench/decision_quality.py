#!/usr/bin/env python3
"""Decision quality: what railfit changes on a fleet-shaped cluster, measured with
`railfit simulate`.

For each size, a `gen-cluster --seed S --used 0.5 --pods-per-node 2.4 --blocks B --cpu-slices`
snapshot (the shape of the fleet benchmark: HGX H100 nodes, NVIDIA and dranet slices, half of the
Running pods workers of multi-pod Jobs; B = one network block per 32 nodes, four blocks to a
spine; the DRA CPU driver's slices in grouped mode), then a mixed workload replayed without and
with railfit:

    --workload W  (default, for 1,000 nodes and scaled with the size: inference pods with one
                   GPU, single GPU+NIC pods without a constraint, GPU+NIC pods asking PHB,
                   aligned pairs, 4-pod training Jobs of 4 GPUs with their rails, data loaders
                   pulling 25G each through the front-end NIC, two-GPU pods with 16 DRA CPUs)

and prints one Markdown table row per size and seed: pods placed, GPU-NIC pairs at PHB or better,
pods with GPUs and NICs below PHB, min-alignment met, pods with 2+ GPUs whose GPUs straddle the
sockets (SYS), pods whose DRA CPUs sit on their GPUs' NUMA node, NICs and front-end NICs over-committed, Jobs whose pods all landed on the same
rails, Jobs inside one network block, nodes left with every GPU and rail NIC free, and the time
simulate took (both columns, two threads: wall clock and CPU).

    python3 test/bench/decision_quality.py [--railfit build/server/railfit]
        [--sizes 100,1000] [--seeds 1,2,3] [--workload SPEC] [--config F]
        [--nodes-per-block 32] [--json]

--config F is passed to `railfit simulate` (e.g. `scoring: {weights: {gpu: 0}}` stands for HGX
nodes whose NVLink railfit sees: every GPU pair is NVL there, so the gpu part is equal on every
node).

The kube-scheduler column is an approximation (see `railfit simulate --help` and the README).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

DEFAULT_WORKLOAD = ("300x1gpu,300x1gpu1nic,100x1gpu1nic-minPHB,100x2pair,48x4gpu-job4,"
                    "300xloader-egress25G,100x2gpu-cpu16")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(cmd[:2]), r.returncode, r.stderr[-2000:]))
    return r.stdout


def scale(spec, factor):
    """The workload with every count multiplied by factor (at least 1; job sizes kept)."""
    out = []
    for item in spec.split(","):
        count, _, rest = item.partition("x")
        out.append("%dx%s" % (max(1, round(int(count) * factor)), rest))
    return ",".join(out)


def pct(a, b):
    return "%.1f%%" % (100.0 * a / b) if b else "-"


def row(nodes, seed, rep, secs, cpu):
    k, r = rep["columns"]
    cells = [str(nodes), str(seed), str(rep["pods"])]

    def pair(f):
        return "%s / %s" % (f(k), f(r))

    def aligned(c):
        lv = c["levels"]
        good = lv["PIX"] + lv["PXB"] + lv["PHB"]
        return pct(good, sum(lv.values()))

    cells.append(pair(lambda c: str(c["placed"])))
    cells.append(pair(aligned))
    cells.append(pair(lambda c: "%d of %d" % (c["multiDeviceBelowPHB"], c["gpuNicPods"])))
    cells.append(pair(lambda c: "%d of %d" % (c["minAlignment"]["met"],
                                              c["minAlignment"]["asked"])))
    cells.append(pair(lambda c: "%d of %d" % (c["gpuLevels"]["SYS"], c["multiGpuPods"])))
    cells.append(pair(lambda c: "%d of %d" % (c["cpuClaims"]["podsAligned"],
                                              c["cpuClaims"]["pods"])))
    cells.append(pair(lambda c: str(c["nicsOvercommitted"])))
    cells.append(pair(lambda c: str(c["frontendOvercommitted"])))
    cells.append(pair(lambda c: "%d of %d (%s)" % (
        c["jobsOnSameRails"], len(c["jobs"]),
        "%.0f%%" % (100 * c["railConsistency"]) if c["railConsistency"] is not None else "-")))
    cells.append(pair(lambda c: "%d of %d" % (c["jobLocality"]["oneBlock"],
                                              c["jobLocality"]["jobs"])))
    cells.append(pair(lambda c: str(c["freeWholeNodes"])))
    cells.append("%.1f / %.1f" % (secs, cpu))
    return "| " + " | ".join(cells) + " |"


HEADER = ("| nodes | seed | pods | placed | GPU-NIC pairs PHB or better | pods below PHB | "
          "min-alignment met | pods with 2+ GPUs across sockets (SYS) | "
          "pods with DRA CPUs on their GPUs' NUMA node | NICs over-committed | "
          "front-end over-committed | "
          "Jobs on the same rails (mean share on the Job's most common rails) | "
          "Jobs inside one block | whole nodes left free | simulate s (wall / CPU) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--railfit", default="build/server/railfit")
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--workload", default=DEFAULT_WORKLOAD,
                    help="the workload for 1,000 nodes; scaled with the node count")
    ap.add_argument("--config", help="a railfit configuration for simulate (--config)")
    ap.add_argument("--nodes-per-block", type=int, default=32,
                    help="nodes per network block (gen-cluster --blocks); 0: no labels")
    ap.add_argument("--json", action="store_true", help="also print the raw reports")
    a = ap.parse_args()
    print("each cell: kube-scheduler (approximated) / with railfit\n")
    print(HEADER)
    reports = []
    with tempfile.TemporaryDirectory(prefix="railfit-dq-") as tmp:
        for nodes in [int(x) for x in a.sizes.split(",")]:
            spec = scale(a.workload, nodes / 1000.0)
            for seed in [int(x) for x in a.seeds.split(",")]:
                snap = os.path.join(tmp, "c%d-%d.json" % (nodes, seed))
                with open(snap, "w") as f:
                    gen = [a.railfit, "gen-cluster", "--nodes", str(nodes), "--seed",
                           str(seed), "--used", "0.5", "--pods-per-node", "2.4", "--cpu-slices"]
                    if a.nodes_per_block > 0:
                        gen += ["--blocks", str(max(1, nodes // a.nodes_per_block))]
                    f.write(run(gen))
                t0 = time.monotonic()
                c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                sim = [a.railfit, "simulate", "--snapshot", snap, "--workload", spec, "--seed",
                       str(seed), "-o", "json"]
                if a.config:
                    sim += ["--config", a.config]
                rep = json.loads(run(sim))
                secs = time.monotonic() - t0
                c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
                os.unlink(snap)
                print(row(nodes, seed, rep, secs, cpu), flush=True)
                rep.pop("placements", None)
                reports.append({"nodes": nodes, "seed": seed, "workload": spec,
                                "seconds": secs, "cpu_seconds": cpu, "report": rep})
    print("\nworkload at 1,000 nodes: " + a.workload)
    if a.config:
        print("configuration: " + a.config)
    if a.json:
        print(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
