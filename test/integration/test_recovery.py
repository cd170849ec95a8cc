"""Recovery from API server faults (issue 13): railfit notices an API server that is back within
10 s of the fault clearing, without hammering it meanwhile, and notices an etcd restore (the
resourceVersions go backwards): it relists everything, logs an error, counts it, and keeps
/readyz at 503 until the relist is done.

Run: RAILFIT=build/server/railfit python3 test/integration/test_recovery.py
"""

import os
import re
import subprocess
import sys
import tempfile
import shutil
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fakeapi"))

from fakeapi import FakeAPI  # noqa: E402
from test_live import (KINDS, SLOW, cached, converge, diff, http_get, metric_values,  # noqa: E402
                       railfit, touch_all, truth, wait_ready, write_kubeconfig)

RAILFIT = os.environ.get("RAILFIT")
RECOVERY_S = 10.0  # the bound, from the fault clearing to a cache equal to the truth
TMP = None
SNAPSHOT = None


def setUpModule():
    global TMP, SNAPSHOT
    if not RAILFIT:
        raise unittest.SkipTest("set RAILFIT to the railfit binary")
    TMP = tempfile.mkdtemp(prefix="railfit-recovery-")
    SNAPSHOT = os.path.join(TMP, "cluster.json")
    with open(SNAPSHOT, "wb") as f:
        f.write(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "4", "--seed", "5", "--used",
                                "0.25"], check=True, stdout=subprocess.PIPE).stdout)


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


def nodes_backoffs(stderr):
    """The delays (s) railfit's nodes reflector chose before retrying, from its -v 2 log."""
    out = []
    for line in stderr.splitlines():
        if "backing off before the next request" not in line:
            continue
        if not re.search(r'resource="?nodes"?(\s|$)', line):
            continue
        m = re.search(r'seconds="?([0-9.]+)', line)
        if m:
            out.append(float(m.group(1)))
    return out


class ReadyzWatcher(threading.Thread):
    """Polls /readyz every 50 ms and remembers every status seen."""

    def __init__(self, rf):
        super().__init__(daemon=True)
        self.rf = rf
        self.seen = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            try:
                status, _ = http_get(self.rf, "/readyz", timeout=2)
            except OSError:
                status = None
            self.seen.append((time.monotonic(), status))
            time.sleep(0.05)

    def finish(self):
        self.halt.set()
        self.join(5)


class Recovery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.api = FakeAPI(snapshot=SNAPSHOT, config={"bookmarkInterval": 2.0}).start()
        cls.kubeconfig = write_kubeconfig(os.path.join(TMP, "kubeconfig"), cls.api.url,
                                          {"token": "t"})

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()

    def setUp(self):
        self.api.reset()
        self.api.config(bookmarkInterval=2.0)

    def start(self):
        rf = railfit(self.kubeconfig).start()
        self.addCleanup(self.stop_rf, rf)
        wait_ready(self, rf)
        converge(self, self.api, rf, what="start")
        return rf

    def stop_rf(self, rf):
        alive = rf.alive()
        code = rf.stop()
        err = rf.stderr()
        self.assertTrue(alive, "railfit died:\n" + err[-3000:])
        self.assertEqual(code, 0, err[-3000:])
        for bad in ("AddressSanitizer", "runtime error:", "ThreadSanitizer"):
            self.assertNotIn(bad, err)

    def test_fault_storm_capped_backoff_and_reset(self):
        """Every request fails for 12 s: each kind retries at most every 6 s (the 4 s cap plus
        jitter) and at least 0.7 s apart; once the faults clear the cache equals the truth within
        10 s; then the backoff is back at its start (a single failure is retried within 1.5 s)."""
        rf = self.start()
        time.sleep(1.2)  # watches older than a "very short watch"
        self.api.clear_requests()
        self.api.fault("500", kind="*", verb="list", count=-1)
        self.api.fault("500", kind="*", verb="watch", count=-1)
        self.api.drop_watches(mode="reset")
        time.sleep(12)
        touch_all(self.api)  # changes made while railfit could not see them
        self.api.clear_faults()
        cleared = time.monotonic()
        took = converge(self, self.api, rf, timeout=RECOVERY_S, what="a 12 s fault storm")
        self.assertLess(took, RECOVERY_S * SLOW)
        # the requests of each kind during and after the storm
        reqs = [r for r in self.api.requests() if r.get("kind") in KINDS]
        for rid in KINDS:
            times = sorted(r["mono"] for r in reqs if r["kind"] == rid
                           and r["verb"] in ("list", "watch"))
            self.assertGreaterEqual(len(times), 3, (rid, times))
            gaps = [b - a for a, b in zip(times, times[1:]) if a < cleared]
            self.assertLessEqual(max(gaps), 6.5 * SLOW, "%s retried after %.1f s" % (rid, max(gaps)))
            failing = [r for r in reqs if r["kind"] == rid and r["status"] == 500]
            # 12 s at no less than 0.8 s apart (list + watch share the backoff): bounded
            self.assertLessEqual(len(failing), 14, (rid, len(failing)))
        # a healthy watch resets the backoff: one failure is retried at once
        time.sleep(1.5)
        backoffs_before = len(nodes_backoffs(rf.stderr()))
        self.api.clear_requests()
        self.api.fault("500", kind="nodes", verb="watch", count=1)
        self.api.drop_watches(kind="nodes", mode="clean")
        touch_all(self.api)
        converge(self, self.api, rf, timeout=5, what="a single failure")
        # the cache can equal the truth before the retry (the relist came before the failed
        # watch): wait for the retry itself, then check how soon after the failure it came
        deadline = time.monotonic() + 3 * SLOW
        while True:
            node_reqs = [r for r in self.api.requests(kind="nodes")
                         if r["verb"] in ("list", "watch")]
            fail = [r["mono"] for r in node_reqs if r["status"] == 500]
            after = [r["mono"] for r in node_reqs if fail and r["mono"] > fail[0]]
            if after or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(len(fail), 1, node_reqs)
        self.assertTrue(after, node_reqs)
        # the delay railfit chose (its -v 2 log) is the first step, 0.8 s plus at most half of
        # it as jitter; when the retry then came is up to the machine's load (run-all runs three
        # builds' integration tests side by side), so that is bounded loosely
        waits = nodes_backoffs(rf.stderr())[backoffs_before:]
        self.assertTrue(waits, "no backoff logged for nodes after the single failure")
        self.assertLessEqual(waits[0], 1.2 + 1e-3, "backed off %.3f s after a single failure "
                             "(the backoff was not reset)" % waits[0])
        self.assertLess(after[0] - fail[0], 3.0 * SLOW, "retried %.2f s after a single failure"
                        % (after[0] - fail[0]))

    def test_etcd_restore(self):
        """The API server comes back from a backup with lower resourceVersions and an older
        state: railfit relists every kind within 10 s, says so in an error and a metric, and
        /readyz is 503 until the relist is done."""
        rf = self.start()
        time.sleep(1.2)
        for _ in range(3):
            touch_all(self.api)  # state that the backup does not have
        self.api.bump(by=500)
        converge(self, self.api, rf, what="changes before the restore")
        before = cached(rf)
        backup = [o for o in self.api.state()["objects"]["nodes"]][1:]  # one node fewer
        objs = self.api.state()["objects"]
        restored = backup + [o for rid in KINDS if rid != "nodes" for o in objs[rid]]
        watcher = ReadyzWatcher(rf)
        watcher.start()
        t0 = time.monotonic()
        self.api.restore(1000, drop="reset", objects=restored)
        try:
            took = converge(self, self.api, rf, timeout=RECOVERY_S, what="an etcd restore")
            wait_ready(self, rf, timeout=RECOVERY_S - (time.monotonic() - t0))
            # the watcher polls on its own: let it see the 200 wait_ready saw (on a busy
            # machine its last poll can still be the 503)
            end = time.monotonic() + 2 * SLOW
            while time.monotonic() < end and (not watcher.seen or watcher.seen[-1][1] != 200):
                time.sleep(0.05)
        finally:
            watcher.finish()
        self.assertLess(took, RECOVERY_S * SLOW)
        self.assertNotEqual(before, cached(rf), "the restore changed nothing railfit sees")
        statuses = [s for t, s in watcher.seen if t >= t0]
        runs = [s for i, s in enumerate(statuses) if i == 0 or statuses[i - 1] != s]
        self.assertIn(503, runs, "/readyz never said the cache was being relisted")
        self.assertIn(200, runs[runs.index(503):], runs)
        resets = metric_values(rf, "railfit_resource_version_resets_total")
        self.assertGreaterEqual(sum(resets.values()), 1, resets)
        self.assertIn("resourceVersion went backwards", rf.stderr())
        # the watches after the relist follow the restored server
        touch_all(self.api)
        converge(self, self.api, rf, timeout=5, what="changes after the restore")
        want, got = truth(self.api), cached(rf)
        self.assertEqual(got, want, diff(want, got))


if __name__ == "__main__":
    unittest.main(verbosity=2)
