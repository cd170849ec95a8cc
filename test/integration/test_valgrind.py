"""The server under valgrind: a session of good and bad requests (every route, malformed bodies,
explain of every demo pod), then SIGTERM. valgrind must report no errors and no leaks
(--error-exitcode), and railfit must exit 0. Skipped where valgrind is not installed."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request
import warnings

RAILFIT = os.environ.get("RAILFIT", "build/server/railfit")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def http(port, method, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@unittest.skipUnless(shutil.which("valgrind"), "valgrind not installed")
@unittest.skipIf(os.environ.get("RF_SANITIZED"), "sanitizer build: ASan and valgrind do not mix")
class Valgrind(unittest.TestCase):
    def test_serve_session_is_clean(self):
        port = free_port()
        log = os.path.join(os.environ.get("TMPDIR", "/tmp"), "railfit-valgrind-%d.log" % port)
        proc = subprocess.Popen(["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                                 "--error-exitcode=3", "--log-file=" + log, RAILFIT, "serve", "--demo",
                                 "--listen", "127.0.0.1:%d" % port],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    if http(port, "GET", "/healthz")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                self.fail("railfit did not come up under valgrind")
            snap = json.loads(http(port, "GET", "/debug/snapshot")[1])
            names = [i["metadata"]["name"] for i in snap["items"] if i["kind"] == "Node"]
            pods = [i for i in snap["items"] if i["kind"] == "Pod" and i["metadata"]["namespace"] == "demo"]
            for p in pods:
                body = json.dumps({"Pod": p, "Nodes": None, "NodeNames": names}).encode()
                self.assertEqual(http(port, "POST", "/filter", body)[0], 200)
                self.assertEqual(http(port, "POST", "/prioritize", body)[0], 200)
                path = "/debug/explain/%s/%s?o=table" % (p["metadata"]["namespace"], p["metadata"]["name"])
                self.assertEqual(http(port, "GET", path)[0], 200)
            for path in ("/readyz", "/version", "/metrics", "/debug/nodes?o=table",
                         "/debug/nodes/hgx-03", "/debug/config"):
                self.assertEqual(http(port, "GET", path)[0], 200, path)
            for method, path, body in (("POST", "/filter", b"{"), ("POST", "/filter", b"null"),
                                       ("POST", "/prioritize", b'{"Pod":[],"NodeNames":5}'),
                                       ("GET", "/nope", None), ("GET", "/filter", None),
                                       ("POST", "/debug/explain", b'{"metadata":7}'),
                                       ("GET", "/debug/nodes/nope", None),
                                       ("GET", "/debug/explain/demo", None)):
                code = http(port, method, path, body)[0]
                self.assertTrue(400 <= code < 500, (method, path, code))
        finally:
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=120)
        with open(log) as f:
            report = f.read()
        self.assertEqual(rc, 0, report[-4000:])
        self.assertIn("ERROR SUMMARY: 0 errors", report)


if __name__ == "__main__":
    warnings.simplefilter("ignore", ResourceWarning)
    prog = unittest.main(exit=False, verbosity=2, warnings="ignore")
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
