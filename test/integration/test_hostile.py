"""Hostile clients against the real railfit binary (issue 13): slow-header and idle-connection
attacks (1,030 connections from ten loopback addresses), the per-address limit, concurrent large
bodies against the buffered-body budget, request heads over the limits, malformed framing, and
Pods whose fields have the wrong types, and preempt's time budget. The probes are asked on the
probe listener (server.probeListen) throughout and must answer within a second.

Bounded: at most 1,100 connections at once, each test under 20 s.
Run: RAILFIT=build/server/railfit python3 test/integration/test_hostile.py
"""

import json
import os
import resource
import select
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from schedclient import Railfit, free_port, snapshot_with_pending  # noqa: E402

TIMEOUT_S = 3          # server.requestTimeout of these tests
ATTACKERS = 10         # 127.0.0.2 .. 127.0.0.11
PER_ATTACKER = 103     # 1,030 connections: more than the 1,024 a listener takes


def raise_fd_limit(want=4096):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect_from(port, host, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.%d" % host, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def exchange(port, raw, timeout=5.0, host=1):
    """Send raw bytes on a new connection; (status, headers text, body bytes) or (None, ...)."""
    s = connect_from(port, host, timeout)
    data = b""
    try:
        try:
            s.sendall(raw)
        except OSError:
            pass  # answered and closed before the whole body went out
        while True:
            try:
                chunk = s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        if len(body) >= int(line.split(b":")[1]):
                            return parse(data)
    finally:
        s.close()
    return parse(data)


def parse(data):
    if not data:
        return None, "", b""
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, head.decode("latin-1"), body


def probe(port, path="/healthz", timeout=1.0):
    """Status of GET path on port within timeout seconds, or None."""
    try:
        status, _, _ = exchange(port, ("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                       % path).encode(), timeout=timeout)
        return status
    except OSError:
        return None


class Prober(threading.Thread):
    """Asks the probe listener every 0.25 s; records failures and the slowest answer."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop_flag = threading.Event()
        self.failures = []
        self.count = 0
        self.slowest = 0.0

    def run(self):
        while not self.stop_flag.is_set():
            for path in ("/healthz", "/readyz"):
                t = time.monotonic()
                status = probe(self.port, path)
                took = time.monotonic() - t
                self.count += 1
                self.slowest = max(self.slowest, took)
                if status != 200:
                    self.failures.append((path, status, round(took, 2)))
            time.sleep(0.25)

    def finish(self):
        self.stop_flag.set()
        self.join(5)


def wait_all_closed(socks, limit):
    """Seconds until every socket saw EOF or a reset, or None after limit."""
    t0 = time.monotonic()
    open_ = list(socks)
    for s in open_:
        s.setblocking(False)
    while open_ and time.monotonic() - t0 < limit:
        still = []
        for s in open_:
            try:
                if s.recv(65536) == b"":
                    continue
                still.append(s)  # an answer: wait for the close
            except BlockingIOError:
                still.append(s)
            except OSError:
                continue
        open_ = still
        time.sleep(0.05)
    return None if open_ else time.monotonic() - t0


def trickle(socks, byte=b"X"):
    """One byte on every socket still open (a send error means it was closed)."""
    for s in socks:
        try:
            s.send(byte)
        except (BlockingIOError, OSError):
            pass


FILTER = json.dumps({"Pod": {"metadata": {"name": "p", "namespace": "demo", "uid": "u"}},
                     "NodeNames": ["gpu-01"]}).encode()


def post(path, body, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%s\r\n" % (path.encode(), len(body), extra)) + body


class Hostile(unittest.TestCase):
    rf = None

    @classmethod
    def setUpClass(cls):
        raise_fd_limit()
        cls.probe_port = free_port()
        cls.rf = Railfit(demo=True, config=(
            "server: {requestTimeout: %ds, probeListen: \"127.0.0.1:%d\",\n"
            "         maxBodyBytes: 64Mi, maxBufferedBytes: 128Mi}\n" % (TIMEOUT_S,
                                                                     cls.probe_port))).start()

    @classmethod
    def tearDownClass(cls):
        alive = cls.rf.alive()
        status = cls.rf.stop()
        err = cls.rf.stderr()
        cls.rf._tmp.cleanup()
        assert alive, "railfit died:\n" + err
        assert status == 0, err
        for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "ThreadSanitizer"):
            assert bad not in err, err

    def setUp(self):
        if raise_fd_limit() < 2400:
            self.skipTest("needs 2,400 file descriptors (RLIMIT_NOFILE)")

    def open_attack(self):
        socks = []
        for a in range(ATTACKERS):
            for _ in range(PER_ATTACKER):
                socks.append(connect_from(self.rf.port, 2 + a))
        return socks

    def test_slow_header_attack(self):
        """1,030 clients sending one header byte at a time: each is cut off within
        requestTimeout of its arrival, the probes never miss, kube-scheduler gets through."""
        prober = Prober(self.probe_port)
        prober.start()
        t0 = time.monotonic()
        socks = self.open_attack()
        trickle(socks, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        # the attack goes on while it lasts; a filter from 127.0.0.1 must get an answer
        served_after = None
        done = threading.Event()

        def scheduler():
            nonlocal served_after
            while not done.is_set() and time.monotonic() - t0 < 3 * TIMEOUT_S + 4:
                try:
                    status, _, body = exchange(self.rf.port, post("/filter", FILTER),
                                               timeout=2.0)
                except OSError:
                    status = None
                if status == 200:
                    served_after = time.monotonic() - t0
                    return
        th = threading.Thread(target=scheduler, daemon=True)
        th.start()
        closed_after = None
        while time.monotonic() - t0 < 3 * TIMEOUT_S + 4:
            trickle(socks)
            if wait_all_closed(socks, 0.5) is not None:
                closed_after = time.monotonic() - t0
                break
        done.set()
        th.join(5)
        prober.finish()
        for s in socks:
            s.close()
        # The first 1,024 are cut within the deadline; the last ones wait in the kernel's
        # backlog until slots free up, then get the deadline of their own.
        self.assertIsNotNone(closed_after, "slow clients were never all cut off")
        self.assertLess(closed_after, 2 * TIMEOUT_S + 3)
        self.assertIsNotNone(served_after, "no filter request got through the attack")
        self.assertLess(served_after, 2 * TIMEOUT_S + 3)
        self.assertGreater(prober.count, 10)
        self.assertEqual(prober.failures, [], "probes missed during the attack")
        metrics = exchange(self.rf.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")[2]
        line = [l for l in metrics.decode().splitlines()
                if l.startswith('railfit_http_rejected_total{reason="deadline"}')]
        self.assertTrue(line and float(line[0].split()[-1]) >= 1000, line)

    def test_idle_connection_attack(self):
        """1,030 keep-alive connections left idle after one request: closed by the idle
        timeout, the probes never miss, new clients are served once they are."""
        prober = Prober(self.probe_port)
        prober.start()
        socks = self.open_attack()
        t0 = time.monotonic()
        for s in socks:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        closed = wait_all_closed(socks, 3 * TIMEOUT_S + 4)
        status = probe(self.rf.port, "/healthz", timeout=3.0)
        prober.finish()
        for s in socks:
            s.close()
        self.assertIsNotNone(closed, "idle connections were not closed")
        self.assertLess(time.monotonic() - t0, 3 * TIMEOUT_S + 4)
        self.assertEqual(status, 200)
        self.assertEqual(prober.failures, [])

    def test_per_address_limit(self):
        """One address gets maxConnectionsPerAddress (128) connections; more are closed at
        once, and other addresses are served."""
        socks = [connect_from(self.rf.port, 12) for _ in range(200)]
        time.sleep(0.5)
        refused = 0
        for s in socks:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    refused += 1
            except BlockingIOError:
                pass
            except OSError:
                refused += 1
        self.assertEqual(refused, 72)
        self.assertEqual(probe(self.rf.port, "/healthz", timeout=2.0), 200)
        for s in socks:
            s.close()

    def test_large_bodies_against_the_budget(self):
        """Eight 60 MiB explain requests at once: two fit maxBufferedBytes (128 MiB), the others
        get 503 with Retry-After at once; memory stays bounded."""
        size = 60 << 20
        head = (b"POST /debug/explain HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % size)
        held, answers, senders, errors = [], [], [], []
        chunk = b" " * (1 << 20)

        def send_body(s):  # (not JSON): answered 400, and the budget comes back
            try:
                for _ in range(size >> 20):
                    s.sendall(chunk)
            except OSError as e:
                errors.append(e)

        # every head first, in order, then which were answered at once (503) and which are
        # held: the held ones' bodies go right after, within requestTimeout (3 s) of their
        # heads even on a loaded machine, and only once all eight were tried (a body done
        # early would give its budget back to a later head)
        socks = []
        for _ in range(8):
            s = connect_from(self.rf.port, 1)
            s.sendall(head)
            socks.append(s)
            time.sleep(0.05)
        waiting, end = list(socks), time.monotonic() + 2.0
        while waiting and len(answers) < 6 and time.monotonic() < end:
            ready, _, _ = select.select(waiting, [], [], 0.05)
            for s in ready:
                s.settimeout(2)
                data = s.recv(65536)
                answers.append(parse(data))
                waiting.remove(s)
                s.close()
        for s in waiting:
            held.append(s)
            s.settimeout(10)
            senders.append(threading.Thread(target=send_body, args=(s,)))
            senders[-1].start()
        for t in senders:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(held), 2)
        self.assertEqual(len(answers), 6)
        for status, headers, body in answers:
            self.assertEqual(status, 503)
            self.assertIn("Retry-After: 1", headers)
            self.assertEqual(json.loads(body)["error"], "server busy")
        for s in held:
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)
            self.assertEqual(parse(data)[0], 400)
            s.close()
        with open("/proc/%d/status" % self.rf.proc.pid) as f:
            rss = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0] << 10
        sanitized = os.environ.get("RF_SANITIZED") == "1"
        self.assertLess(rss, (1200 if sanitized else 600) << 20, "peak RSS %d MB" % (rss >> 20))
        status, _, _ = exchange(self.rf.port, post("/filter", FILTER))
        self.assertEqual(status, 200)

    def test_heads_over_the_limits(self):
        """A long query string gets a JSON 414 at once (it used to hang 10 s), so do long
        paths; too many header fields a JSON 431."""
        query = "&".join("p%d=" % i for i in range(1000))
        t = time.monotonic()
        status, headers, body = exchange(
            self.rf.port, ("GET /debug/nodes?%s HTTP/1.1\r\nHost: x\r\n\r\n" % query).encode())
        self.assertLess(time.monotonic() - t, 1.0)
        self.assertEqual(status, 414)
        self.assertIn("application/json", headers)
        self.assertIn("1000 query parameters", json.loads(body)["detail"])
        fields = "".join("X-H%d: v\r\n" % i for i in range(150))
        status, headers, body = exchange(
            self.rf.port, ("GET /healthz HTTP/1.1\r\nHost: x\r\n%s\r\n" % fields).encode())
        self.assertEqual(status, 431)
        self.assertEqual(json.loads(body)["error"], "request header fields too large")

    def test_malformed_framing(self):
        """Each malformed-framing case of the issue gets an answer with a JSON body."""
        cases = [
            (post("/filter", FILTER, b"Content-Length: 7\r\n"), 400, "different values"),
            (b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nxx", 501,
             "gzip"),
            (b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
             b"Content-Length: 5\r\n\r\n0\r\n\r\n", 400, "both Transfer-Encoding"),
            (b"POST /nowhere HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
             + b"100000\r\n" + b"x" * (1 << 20) + b"\r\n" + b"100000\r\n" + b"x" * (1 << 20)
             + b"\r\n0\r\n\r\n", 404, "no route"),
        ]
        for raw, want, detail in cases:
            status, headers, body = exchange(self.rf.port, raw)
            self.assertEqual(status, want, raw[:80])
            self.assertIn("application/json", headers)
            self.assertIn(detail, json.loads(body)["detail"])
        # an endless chunked upload to a verb: cut off at maxBodyBytes plus 1 MiB (and what the
        # sockets' buffers hold); libmicrohttpd 0.9.75 cannot answer in the middle of a body
        s = connect_from(self.rf.port, 1)
        s.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"100000\r\n" + b"x" * (1 << 20) + b"\r\n"
        sent, cut = 0, False
        s.settimeout(10)
        while sent < (80 << 20):
            try:
                s.sendall(chunk)
            except OSError:
                cut = True
                break
            sent += 1 << 20
        s.close()
        self.assertTrue(cut, "an endless chunked upload was never cut off")
        self.assertLessEqual(sent, (64 << 20) + (16 << 20))

    def test_pods_with_wrong_types(self):
        """/debug/explain and the verbs refuse a Pod whose fields have the wrong types, as Go's
        decoder does, with the field named."""
        for pod, field in (({"metadata": {"name": 5, "namespace": "demo"}}, "metadata.name"),
                           ({"metadata": {"name": "p", "annotations": ["a"]}},
                            "metadata.annotations"),
                           ({"metadata": {"name": "p", "labels": {"a": 1}}},
                            "metadata.labels[\"a\"]"),
                           ({"metadata": {"name": "p"}, "spec": {"resourceClaims": {}}},
                            "spec.resourceClaims")):
            status, _, body = exchange(self.rf.port, post("/debug/explain",
                                                          json.dumps(pod).encode()))
            self.assertEqual(status, 400, body)
            self.assertIn(field, json.loads(body)["detail"])
            status, _, body = exchange(self.rf.port, post("/filter", json.dumps(
                {"Pod": pod, "NodeNames": ["gpu-01"]}).encode()))
            self.assertEqual(status, 400, body)
            self.assertIn("Pod." + field, json.loads(body)["Error"])


class PreemptBudget(unittest.TestCase):
    """preempt has the filter's time budget (half of server.requestTimeout, at most 3 s): with a
    10 ms timeout, 2,000 candidate nodes (7-50 us each: at least 14 ms, against the 5 ms budget)
    are not all judged; the rest are kept (kube-scheduler's choice stands) and counted in
    railfit_unjudged_nodes_total."""

    def test_preempt_time_budget(self):
        import tempfile
        nodes = 2000  # 600 (20-50 us each before issue 9) now fit the budget on a quiet machine
        with tempfile.TemporaryDirectory(prefix="railfit-preempt-") as tmp:
            path, target, names = snapshot_with_pending(os.environ["RAILFIT"], tmp, nodes, 3, 0,
                                                        "pre")
            self.assertEqual(len(names), nodes)
            args = {"Pod": target, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                n: {"Pods": [], "NumPDBViolations": 0} for n in names}}
            body = json.dumps(args).encode()
            rf = Railfit(demo=False, snapshot=path,
                         config="server: {requestTimeout: 10ms}\n").start()
            try:
                status = None
                for _ in range(5):  # the request itself must arrive within the 10 ms
                    status, _, out = exchange(rf.port, post("/preempt", body), timeout=10)
                    if status is not None:
                        break
                self.assertEqual(status, 200, out)
                kept = json.loads(out)["NodeNameToMetaVictims"] or {}
                self.assertEqual(len(kept), nodes)  # judged ones pass, the rest are kept
                metrics = exchange(rf.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")[2]
                line = [l for l in metrics.decode().splitlines()
                        if l.startswith("railfit_unjudged_nodes_total ")]
                self.assertTrue(line and float(line[0].split()[-1]) > 0, line)
                self.assertIn("the remaining candidates are kept unjudged", rf.stderr())
            finally:
                self.assertTrue(rf.alive(), rf.stderr()[-3000:])
                self.assertEqual(rf.stop(), 0)
                rf._tmp.cleanup()

if __name__ == "__main__":
    unittest.main(verbosity=2)
