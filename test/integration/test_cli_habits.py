"""The command line as kubectl and klog users expect it (issue 12 point 5): -v in every spelling and
in any order with --log-format, klog's value quoting and err=, explain reading pipes and picking a
pod of the snapshot by NS/NAME, the banner of a snapshot naming its own pods, conflicting flags as
errors, --help on every command, -o checked the same way everywhere, honest version output."""

import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

RAILFIT = os.environ.get("RAILFIT", "build/server/railfit")
SLOW = 3.0 if os.environ.get("RF_SANITIZED") else 1.0


def run(*args, stdin=None, timeout=120):
    return subprocess.run([RAILFIT] + list(args), capture_output=True, text=True, input=stdin,
                          timeout=timeout * SLOW)


def serve_briefly(*args, stdin=None, action=None):
    """Start `railfit serve ARGS --listen 127.0.0.1:0`, wait for the banner (or the "serving" log
    line), call action(port) if given, stop it; (stdout, stderr)."""
    p = subprocess.Popen([RAILFIT, "serve", "--listen", "127.0.0.1:0"] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=stdin if stdin is not None else subprocess.DEVNULL)
    so, se = p.stdout.fileno(), p.stderr.fileno()
    buf = {so: b"", se: b""}
    end = time.monotonic() + 30 * SLOW
    try:
        while time.monotonic() < end and b"metrics" not in buf[so]:
            r, _, _ = select.select(list(buf), [], [], 0.2)
            for fd in r:
                buf[fd] += os.read(fd, 65536)
            if p.poll() is not None:
                break
        m = re.search(r'"serving".*port="?(\d+)', buf[se].decode())
        if action and m:
            action(int(m.group(1)))
            time.sleep(0.2)
    finally:
        p.terminate()
        o, e = p.communicate(timeout=30 * SLOW)
    return (buf[so] + o).decode(), (buf[se] + e).decode()


class Habits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="railfit-habits-")
        cls.snap = os.path.join(cls.tmp.name, "cluster.json")
        r = run("gen-cluster", "--nodes", "3", "--seed", "5", "--used", "0.5")
        with open(cls.snap, "w") as f:
            f.write(r.stdout)
        cls.doc = json.loads(r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_verbosity_spellings_and_log_format_in_any_order(self):
        for args in (["--log-format", "json", "-v", "4"], ["-v", "4", "--log-format", "json"],
                     ["--v=4", "--log-format=json"], ["-v=4", "--log-format", "json"],
                     ["--log-format", "json", "--v", "4"]):
            with self.subTest(args=args):
                _, err = serve_briefly("--demo", *args)
                lines = [json.loads(l) for l in err.splitlines() if l.startswith("{")]
                self.assertTrue(lines, err)
                self.assertFalse([l for l in err.splitlines() if l and not l.startswith("{")],
                                 err)
        for bad in (["-v", "x"], ["--v=11"], ["-v=-1"], ["--log-format", "yaml"]):
            r = run("serve", "--demo", *bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertTrue("-v: expected a number" in r.stderr or
                            "--log-format: expected text or json" in r.stderr, r.stderr)

    def test_klog_quoting(self):
        _, err = serve_briefly("--demo")
        line = [l for l in err.splitlines() if '"cluster loaded"' in l][0]
        self.assertRegex(line, r'^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ serve\.c:\d+\] ')
        self.assertIn('source="demo" nodes=16 ', line)
        _, err = serve_briefly("--demo", "--log-format", "json")
        doc = [json.loads(l) for l in err.splitlines() if '"cluster loaded"' in l][0]
        self.assertEqual((doc["nodes"], doc["source"]), (16, "demo"))

    def test_errors_are_err(self):
        # a malformed request logged at -v 2 names its error err=, as klog does
        def bad_request(port):
            req = urllib.request.Request("http://127.0.0.1:%d/filter" % port, data=b'{"Pod":',
                                         headers={"Content-Type": "application/json"})
            try:
                urllib.request.urlopen(req, timeout=10 * SLOW)
            except urllib.error.HTTPError as e:
                self.assertEqual(e.code, 400)
        _, err = serve_briefly("--demo", "-v", "2", action=bad_request)
        line = [l for l in err.splitlines() if '"rejected ExtenderArgs"' in l]
        self.assertTrue(line, err)
        self.assertIn(' err="', line[0])
        self.assertNotIn("detail=", err)

    def pod_with_claims(self):
        for o in self.doc["items"]:
            if o["kind"] == "Pod" and o["spec"].get("resourceClaims"):
                return o
        self.fail("gen-cluster made no pod with claims")

    def test_explain_from_pipes_and_by_name(self):
        pod = self.pod_with_claims()
        ref = "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
        with open(self.snap) as f:
            text = f.read()
        # kubectl get ... -o json | railfit explain --snapshot - --pod ns/name
        r = run("explain", "--snapshot", "-", "--pod", ref, "-o", "json", stdin=text)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["pod"], ref)
        self.assertEqual(len(doc["nodes"]), 3)
        # the same from the file, and the pod from a pipe
        r2 = run("explain", "--snapshot", self.snap, "--pod", ref, "-o", "json")
        self.assertEqual(json.loads(r2.stdout), doc)
        r3 = run("explain", "--snapshot", self.snap, "--pod", "-", "-o", "json",
                 stdin=json.dumps(pod))
        self.assertEqual(r3.returncode, 0, r3.stderr)
        self.assertEqual(json.loads(r3.stdout)["pod"], ref)
        # a table too
        r4 = run("explain", "--snapshot", "-", "--pod", ref, stdin=text)
        self.assertEqual(r4.returncode, 0, r4.stderr)
        self.assertIn(pod["metadata"]["name"], r4.stdout)
        # errors
        r = run("explain", "--snapshot", "-", "--pod", "-", stdin=text)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot both read standard input", r.stderr)
        r = run("explain", "--snapshot", self.snap, "--pod", "nope/missing")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no pod nope/missing in the snapshot", r.stderr)
        r = run("explain", "--demo", "--pod", "demo/trainer-aligned", "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["pod"], "demo/trainer-aligned")

    def test_banner_names_pods_of_the_snapshot(self):
        out, err = serve_briefly("--snapshot", self.snap)
        self.assertIn("serving %s (3 nodes)" % self.snap, out, err)
        self.assertNotIn("trainer-aligned", out)
        self.assertNotIn("demo/", out)
        pod = self.pod_with_claims()
        names = re.findall(r"/debug/explain/([^/]+)/([^?]+)\?o=table", out)
        self.assertTrue(names, out)
        pods = {(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.doc["items"] if o["kind"] == "Pod"}
        for n in names:
            self.assertIn(n, pods)
        self.assertIn((pod["metadata"]["namespace"], pod["metadata"]["name"]), pods)
        out, _ = serve_briefly("--demo")
        self.assertIn("/debug/explain/demo/trainer-aligned", out)
        # from a pipe
        with open(self.snap) as f:
            out, err = serve_briefly("--snapshot", "-", stdin=f)
        self.assertIn("(3 nodes)", out, err)

    def test_conflicting_flags(self):
        cases = [
            (("serve", "--demo", "--kubeconfig", "/x"), "--kubeconfig is for live mode"),
            (("serve", "--snapshot", self.snap, "--kubeconfig", "/x"),
             "--kubeconfig is for live mode"),
            (("serve", "--demo", "--snapshot", self.snap), "exclude each other"),
            (("explain", "--demo", "--snapshot", self.snap, "--pod", "a/b"), "exclude each other"),
            (("topology", "--node", "n1"), "--node is only used with --publish"),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(want, r.stderr)

    def test_help_everywhere(self):
        for cmd in ("serve", "explain", "topology", "gen-cluster", "version"):
            for flag in ("--help", "-h"):
                r = run(cmd, flag)
                self.assertEqual(r.returncode, 0, (cmd, flag, r.stderr))
                self.assertTrue(r.stdout.startswith("usage: railfit " + cmd), r.stdout)
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("explain", r.stdout)

    def test_output_values_checked_alike(self):
        for args, allowed in ((("explain", "--demo", "--pod", "demo/x", "-o", "yaml"),
                               "table or json"),
                              (("topology", "-o", "yaml"), "table, json or annotation"),
                              (("version", "-o", "xml"), "json or yaml")):
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("railfit %s: -o: expected %s, got '" % (args[0], allowed), r.stderr)
            self.assertEqual(r.stdout, "")

    def test_version(self):
        r = run("version", "-o", "json")
        libs = json.loads(r.stdout)["libraries"]
        # the library's release (pkg-config), not hwloc's API version (2.8.0 in 2.9.x)
        hw = subprocess.run(["pkg-config", "--modversion", "hwloc"], capture_output=True,
                            text=True).stdout.strip()
        if hw:
            self.assertEqual(libs["hwloc"], hw)
        self.assertIn("gnutls", libs)
        r = run("version", "-o", "yaml")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r'^version: "[^"]+"\ncommit: ')
        r = run("version", "extra")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
