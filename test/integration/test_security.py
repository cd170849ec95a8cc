"""Who can reach what (README "Threat model"): the real railfit binary with certificates this test
makes with openssl.

* server.tls serves the verbs over HTTPS; plain HTTP on that port gets no answer;
* server.tls.clientCAFile: the verbs need a client certificate signed by that CA, a wrong one
  fails the handshake, none gets 401; health, readiness and metrics stay open (kubelet probes and
  Prometheus send no certificate);
* certificate, key and client CA are read again when they change on disk, without a restart;
* broken TLS files are a configuration error (exit 2) naming the key;
* server.debugTokenFile protects /debug/* with a bearer token (re-read on change);
* POST /bind: 501 with the verb's Error on a snapshot, 403 while bind.enabled is false, and with
  it enabled only for pods whose schedulerName is in bind.schedulerNames (a kube-system pod of the
  default scheduler is refused and stays unbound).
"""

import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fakeapi"))

from fakeapi import FakeAPI  # noqa: E402

RAILFIT = os.environ.get("RAILFIT")
SLOW = 3.0 if os.environ.get("RF_SANITIZED") else 1.0
TMP = None


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class PKI:
    """A CA and the certificates it signs, as files in a directory."""

    def __init__(self, d, name):
        self.d = d
        self.name = name
        self.ca_key, self.ca = self.path(name + "-ca.key"), self.path(name + "-ca.crt")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.ca_key, "-out", self.ca, "-days", "2", "-subj", "/CN=" + name)

    def path(self, f):
        return os.path.join(self.d, f)

    def issue(self, cn, usage, serial):
        key, csr, crt, ext = (self.path("%s.%s" % (cn, x)) for x in ("key", "csr", "crt", "ext"))
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", csr, "-subj", "/CN=" + cn)
        with open(ext, "w") as f:
            f.write("extendedKeyUsage=%s\n" % usage)
            if usage == "serverAuth":
                f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", self.ca_key, "-set_serial",
                str(serial), "-out", crt, "-days", "2", "-extfile", ext)
        return crt, key


def setUpModule():
    global TMP
    if not RAILFIT:
        raise unittest.SkipTest("set RAILFIT to the railfit binary")
    if not shutil.which("openssl"):
        raise unittest.SkipTest("openssl is needed to make test certificates")
    TMP = tempfile.mkdtemp(prefix="railfit-sec-")


def tearDownModule():
    if TMP:
        shutil.rmtree(TMP, ignore_errors=True)


class Proc:
    """railfit serve on a free port (learnt from its "serving" log line)."""

    def __init__(self, config, args=("--demo",), env=None):
        self.dir = tempfile.mkdtemp(dir=TMP)
        self.cfg = os.path.join(self.dir, "config.yaml")
        with open(self.cfg, "w") as f:
            f.write(config)
        self.err = open(os.path.join(self.dir, "stderr"), "w+")
        self.p = subprocess.Popen([RAILFIT, "serve", "--config", self.cfg, "--listen",
                                   "127.0.0.1:0"] + list(args), stdout=subprocess.DEVNULL,
                                  stderr=self.err, env=env)
        self.port = None
        end = time.monotonic() + 20 * SLOW
        while time.monotonic() < end and self.port is None:
            m = re.search(r'"serving" .*port="?(\d+)', self.stderr())
            if m:
                self.port = int(m.group(1))
            elif self.p.poll() is not None:
                raise AssertionError("railfit exited %d: %s" % (self.p.returncode,
                                                                 self.stderr()))
            time.sleep(0.05)
        if self.port is None:
            raise AssertionError("railfit did not start: " + self.stderr())

    def stderr(self):
        self.err.flush()
        with open(self.err.name) as f:
            return f.read()

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10 * SLOW)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        err = self.stderr()
        self.err.close()
        # a clean shutdown: exit 0 and nothing from ASan, UBSan or LeakSanitizer
        if "Sanitizer" in err or "runtime error:" in err or self.p.returncode != 0:
            raise AssertionError("railfit did not shut down cleanly (%s):\n%s"
                                 % (self.p.returncode, err[-6000:]))

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def context(ca, cert=None, key=None):
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def request(port, method, path, body=None, ctx=None, headers=None):
    """(status, JSON or text body) over HTTPS when ctx is given, else plain HTTP."""
    if ctx:
        c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10 * SLOW)
    else:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10 * SLOW)
    try:
        data = json.dumps(body).encode() if body is not None else None
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, raw.decode("utf-8", "replace")
    finally:
        c.close()


def peer_serial(port, ca):
    ctx = context(ca)
    with socket.create_connection(("127.0.0.1", port), timeout=10 * SLOW) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            return t.getpeercert()["serialNumber"]


FILTER = {"Pod": {"metadata": {"name": "p", "namespace": "default"}}, "NodeNames": ["hgx-01"]}


class TLS(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(dir=TMP)
        cls.pki = PKI(cls.d, "cluster")
        cls.other = PKI(cls.d, "intruder")
        cls.srv_crt, cls.srv_key = cls.pki.issue("railfit", "serverAuth", 1001)
        cls.cli_crt, cls.cli_key = cls.pki.issue("kube-scheduler", "clientAuth", 2001)
        cls.bad_crt, cls.bad_key = cls.other.issue("stranger", "clientAuth", 3001)
        # files the server reads, replaced in place by the rotation test
        cls.live = {n: os.path.join(cls.d, "live-" + n) for n in ("tls.crt", "tls.key", "ca.crt")}

    def install(self, crt, key, ca):
        # the way a Secret volume changes: new files renamed over the old ones
        for src, dst in ((crt, "tls.crt"), (key, "tls.key"), (ca, "ca.crt")):
            tmp = self.live[dst] + ".tmp"
            shutil.copyfile(src, tmp)
            os.rename(tmp, self.live[dst])

    def config(self, client_ca=True):
        return ("server: {tls: {certFile: %s, keyFile: %s%s}}\n" % (
            self.live["tls.crt"], self.live["tls.key"],
            ", clientCAFile: " + self.live["ca.crt"] if client_ca else ""))

    def test_https_and_client_certificates(self):
        self.install(self.srv_crt, self.srv_key, self.pki.ca)
        with Proc(self.config()) as rf:
            good = context(self.pki.ca, self.cli_crt, self.cli_key)
            status, doc = request(rf.port, "POST", "/filter", FILTER, good)
            self.assertEqual(status, 200, doc)
            self.assertEqual(doc["NodeNames"], ["hgx-01"])
            # no client certificate: the handshake completes, the verbs refuse
            anon = context(self.pki.ca)
            status, doc = request(rf.port, "POST", "/filter", FILTER, anon)
            self.assertEqual(status, 401, doc)
            self.assertIn("clientCAFile", doc["detail"])
            status, doc = request(rf.port, "POST", "/prioritize", FILTER, anon)
            self.assertEqual(status, 401, doc)
            # health, readiness and metrics: kubelet and Prometheus send no certificate
            for path in ("/healthz", "/readyz", "/metrics"):
                status, _ = request(rf.port, "GET", path, None, anon)
                self.assertEqual(status, 200, path)
            # a certificate from another CA fails the handshake
            bad = context(self.pki.ca, self.bad_crt, self.bad_key)
            with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException,
                                    OSError)):
                request(rf.port, "POST", "/filter", FILTER, bad)
            self.assertIn("TLS client certificate rejected", rf.stderr())
            # plain HTTP on the HTTPS port gets no HTTP answer
            with self.assertRaises((ConnectionError, http.client.HTTPException, OSError)):
                request(rf.port, "GET", "/healthz")
            # the server's certificate is the configured one
            self.assertEqual(peer_serial(rf.port, self.pki.ca), "03E9")  # 1001
            # still serving after all that
            status, _ = request(rf.port, "POST", "/filter", FILTER, good)
            self.assertEqual(status, 200)

    def test_tls_without_client_ca(self):
        self.install(self.srv_crt, self.srv_key, self.pki.ca)
        with Proc(self.config(client_ca=False)) as rf:
            status, doc = request(rf.port, "POST", "/filter", FILTER, context(self.pki.ca))
            self.assertEqual(status, 200, doc)

    def test_files_read_again_when_they_change(self):
        self.install(self.srv_crt, self.srv_key, self.pki.ca)
        with Proc(self.config()) as rf:
            self.assertEqual(peer_serial(rf.port, self.pki.ca), "03E9")
            # cert-manager renews the server certificate
            crt2, key2 = self.pki.issue("railfit-renewed", "serverAuth", 1002)
            self.install(crt2, key2, self.pki.ca)
            end = time.monotonic() + 10 * SLOW
            serial = None
            while time.monotonic() < end:
                serial = peer_serial(rf.port, self.pki.ca)
                if serial == "03EA":
                    break
                time.sleep(0.3)
            self.assertEqual(serial, "03EA", rf.stderr())
            self.assertIn("loaded the changed TLS files", rf.stderr())
            # the client CA rotates too: the old client certificate stops working, the
            # new CA's works
            new_ca = PKI(self.d, "cluster2")
            cli2, cli2_key = new_ca.issue("kube-scheduler-2", "clientAuth", 2002)
            self.install(crt2, key2, new_ca.ca)
            time.sleep(1.5)
            end = time.monotonic() + 10 * SLOW
            status = None
            while time.monotonic() < end:
                try:
                    status, _ = request(rf.port, "POST", "/filter", FILTER,
                                        context(self.pki.ca, cli2, cli2_key))
                except (ssl.SSLError, OSError, http.client.HTTPException):
                    status = None
                if status == 200:
                    break
                time.sleep(0.3)
            self.assertEqual(status, 200, rf.stderr())
            with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException,
                                    OSError)):
                request(rf.port, "POST", "/filter", FILTER,
                        context(self.pki.ca, self.cli_crt, self.cli_key))
            # a broken write (key of another certificate) keeps the previous files in use
            self.install(self.srv_crt, key2, new_ca.ca)
            time.sleep(1.5)
            self.assertEqual(peer_serial(rf.port, self.pki.ca), "03EA")
            self.assertIn("cannot load the changed TLS files", rf.stderr())

    def test_bad_files_are_configuration_errors(self):
        cases = [
            ("server: {tls: {certFile: /nonexistent.crt, keyFile: %s}}" % self.srv_key,
             "server.tls.certFile: cannot open '/nonexistent.crt'"),
            ("server: {tls: {certFile: %s, keyFile: %s}}" % (self.srv_crt, self.cli_key),
             "does not belong to the certificate"),
            ("server: {tls: {certFile: %s, keyFile: %s}}" % (self.srv_key, self.srv_key),
             "server.tls.certFile"),
            ("server: {tls: {certFile: %s, keyFile: %s, clientCAFile: %s}}" % (
                self.srv_crt, self.srv_key, self.srv_key), "server.tls.clientCAFile"),
        ]
        for cfg, want in cases:
            with self.subTest(want=want):
                path = os.path.join(self.d, "bad.yaml")
                with open(path, "w") as f:
                    f.write(cfg + "\n")
                p = subprocess.run([RAILFIT, "serve", "--demo", "--config", path, "--listen",
                                    "127.0.0.1:0"], capture_output=True, text=True,
                                   timeout=30 * SLOW)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(want, p.stderr)


class DebugListen(unittest.TestCase):
    def test_debug_routes_move_health_and_metrics_stay(self):
        with Proc("server: {debugListen: '127.0.0.1:0'}\n") as rf:
            m = None
            end = time.monotonic() + 10 * SLOW
            while not m and time.monotonic() < end:
                m = re.search(r'"serving the debug endpoints" .*port=(\d+)', rf.stderr())
                time.sleep(0.05)
            self.assertTrue(m, rf.stderr())
            dport = int(m.group(1))
            # the pod's address: verbs, probes and metrics, no cluster data
            for path in ("/healthz", "/livez", "/readyz", "/metrics", "/version"):
                self.assertEqual(request(rf.port, "GET", path)[0], 200, path)
            for path in ("/debug/nodes", "/debug/snapshot", "/debug/config"):
                self.assertEqual(request(rf.port, "GET", path)[0], 404, path)
            # the operators' address
            for path in ("/debug/nodes", "/debug/snapshot", "/metrics", "/readyz"):
                self.assertEqual(request(dport, "GET", path)[0], 200, path)
            self.assertEqual(request(dport, "POST", "/filter", FILTER)[0], 404)


class DebugToken(unittest.TestCase):
    def test_bearer_token_protects_debug_routes(self):
        d = tempfile.mkdtemp(dir=TMP)
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write("s3cret-one\n")
        with Proc("server: {debugTokenFile: %s}\n" % tok) as rf:
            for path in ("/debug/nodes", "/debug/snapshot", "/debug/config",
                         "/debug/explain/demo/trainer-aligned"):
                status, doc = request(rf.port, "GET", path)
                self.assertEqual(status, 401, path)
                self.assertIn("server.debugTokenFile", doc["detail"])
                status, doc = request(rf.port, "GET", path,
                                      headers={"Authorization": "Bearer wrong"})
                self.assertEqual(status, 401, path)
                status, _ = request(rf.port, "GET", path,
                                    headers={"Authorization": "Bearer s3cret-one"})
                self.assertEqual(status, 200, path)
            # the rest stays open; the verbs are not the token's business
            for path in ("/healthz", "/readyz", "/metrics", "/version"):
                self.assertEqual(request(rf.port, "GET", path)[0], 200, path)
            self.assertEqual(request(rf.port, "POST", "/filter", FILTER)[0], 200)
            # rotated token
            with open(tok + ".new", "w") as f:
                f.write("s3cret-two")
            os.rename(tok + ".new", tok)
            time.sleep(1.2)
            self.assertEqual(request(rf.port, "GET", "/debug/nodes", headers={
                "Authorization": "Bearer s3cret-two"})[0], 200)
            self.assertEqual(request(rf.port, "GET", "/debug/nodes", headers={
                "Authorization": "Bearer s3cret-one"})[0], 401)

    def test_missing_token_file_is_a_configuration_error(self):
        d = tempfile.mkdtemp(dir=TMP)
        cfg = os.path.join(d, "c.yaml")
        with open(cfg, "w") as f:
            f.write("server: {debugTokenFile: %s/none}\n" % d)
        p = subprocess.run([RAILFIT, "serve", "--demo", "--config", cfg, "--listen",
                            "127.0.0.1:0"], capture_output=True, text=True, timeout=30 * SLOW)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("server.debugTokenFile: cannot open", p.stderr)


SECRET_POD = {
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "leaky", "namespace": "ml", "uid": "uid-leaky",
                 "labels": {"app": "SECRET-label-not-a-group"},
                 "annotations": {"railfit.io/min-alignment": "PHB",
                                 "kubernetes.io/egress-bandwidth": "1G",
                                 "kubectl.kubernetes.io/last-applied-configuration":
                                     '{"env":"SECRET-annotation"}',
                                 "vault.hashicorp.com/agent-inject-secret-db": "SECRET-vault"},
                 "managedFields": [{"manager": "SECRET-manager"}]},
    "spec": {"schedulerName": "railfit", "serviceAccountName": "SECRET-sa",
             "containers": [{"name": "main", "image": "SECRET-image",
                             "command": ["sh", "-c", "SECRET-command"],
                             "args": ["--token=SECRET-arg"],
                             "env": [{"name": "HF_TOKEN", "value": "hf_SECRET-env"},
                                     {"name": "PW", "valueFrom": {"secretKeyRef": {
                                         "name": "SECRET-ref", "key": "k"}}}],
                             "resources": {"claims": [{"name": "gpu"}]}}],
             "volumes": [{"name": "v", "secret": {"secretName": "SECRET-volume"}}],
             "resourceClaims": [{"name": "gpu", "resourceClaimName": "leaky-gpu"}]},
    "status": {"phase": "Pending"}}


def assert_no_secret(tc, text, what):
    tc.assertNotIn("SECRET", text, "%s carries data railfit does not read" % what)


class NoLeaks(unittest.TestCase):
    """What railfit does not read never leaves it: /debug/snapshot, /debug/explain and railfit
    explain show pods without env, commands, volumes, images, service accounts, managedFields,
    annotations other than railfit's and the CNI bandwidth ones, labels outside groups.labels."""

    def check(self, port):
        status, text = request(port, "GET", "/debug/snapshot")
        self.assertEqual(status, 200)
        raw = json.dumps(text)
        self.assertIn('"leaky"', raw)
        assert_no_secret(self, raw, "/debug/snapshot")
        pod = [o for o in text["items"] if o["kind"] == "Pod" and
               o["metadata"]["name"] == "leaky"][0]
        self.assertEqual(pod["metadata"]["annotations"],
                         {"railfit.io/min-alignment": "PHB",
                          "kubernetes.io/egress-bandwidth": "1G"})
        self.assertNotIn("containers", pod["spec"])
        self.assertNotIn("volumes", pod["spec"])
        status, text = request(port, "GET", "/debug/explain/ml/leaky")
        self.assertEqual(status, 200, text)
        assert_no_secret(self, json.dumps(text), "/debug/explain")
        status, text = request(port, "GET", "/debug/explain/ml/leaky?o=table")
        assert_no_secret(self, text, "/debug/explain?o=table")
        status, text = request(port, "POST", "/debug/explain", SECRET_POD)
        self.assertEqual(status, 200, text)
        assert_no_secret(self, json.dumps(text), "POST /debug/explain")

    def test_snapshot_mode(self):
        snap = json.loads(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "2"], check=True,
                                         stdout=subprocess.PIPE).stdout)
        snap["items"].append(SECRET_POD)
        path = os.path.join(TMP, "leaky.json")
        with open(path, "w") as f:
            json.dump(snap, f)
        with Proc("", args=("--snapshot", path)) as rf:
            self.check(rf.port)
        r = subprocess.run([RAILFIT, "explain", "--snapshot", path, "--pod", "ml/leaky", "-o",
                            "json"], capture_output=True, text=True, timeout=60 * SLOW)
        self.assertEqual(r.returncode, 0, r.stderr)
        assert_no_secret(self, r.stdout + r.stderr, "railfit explain")

    def test_live_mode(self):
        snap = os.path.join(TMP, "leaky-live.json")
        with open(snap, "wb") as f:
            f.write(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "2"], check=True,
                                   stdout=subprocess.PIPE).stdout)
        with FakeAPI(snapshot=snap, token="t") as api:
            api.put(SECRET_POD)
            with Bind().live(api, "") as rf:
                Bind().wait_ready(rf)
                end = time.monotonic() + 10 * SLOW
                while time.monotonic() < end:
                    if '"leaky"' in json.dumps(request(rf.port, "GET", "/debug/snapshot")[1]):
                        break
                    time.sleep(0.1)
                self.check(rf.port)


BIND = {"PodName": "p", "PodNamespace": "ns", "PodUID": "u", "Node": "hgx-01"}


class Bind(unittest.TestCase):
    def test_snapshot_mode_answers_501_with_the_verbs_error(self):
        with Proc("") as rf:
            status, doc = request(rf.port, "POST", "/bind", BIND)
            self.assertEqual(status, 501, doc)
            self.assertIn("binding needs a live cluster", doc["Error"])

    def pod(self, name, ns, scheduler):
        return {"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": ns, "uid": "uid-" + name},
                "spec": {"schedulerName": scheduler,
                         "containers": [{"name": "c", "image": "x"}]},
                "status": {"phase": "Pending"}}

    def live(self, api, config):
        d = tempfile.mkdtemp(dir=TMP)
        kc = os.path.join(d, "kc")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: %s}\n"
                    "  name: f\ncontexts:\n- context: {cluster: f, user: u}\n  name: c\n"
                    "current-context: c\nusers:\n- name: u\n  user: {token: t}\n" % api.url)
        return Proc(config, args=("--kubeconfig", kc))

    def wait_ready(self, rf):
        end = time.monotonic() + 20 * SLOW
        while time.monotonic() < end:
            if request(rf.port, "GET", "/readyz")[0] == 200:
                return
            time.sleep(0.1)
        self.fail("not ready: " + rf.stderr())

    def node_of(self, api, ns, name):
        for o in api.state("pods")["objects"]["pods"]:
            if o["metadata"]["namespace"] == ns and o["metadata"]["name"] == name:
                return o["spec"].get("nodeName")
        return None

    def test_bind_only_when_enabled_and_only_for_served_profiles(self):
        snap = os.path.join(TMP, "bind-cluster.json")
        with open(snap, "wb") as f:
            f.write(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "2"], check=True,
                                   stdout=subprocess.PIPE).stdout)
        with FakeAPI(snapshot=snap, token="t") as api:
            node = sorted(o["metadata"]["name"]
                          for o in api.state("nodes")["objects"]["nodes"])[0]
            api.put(self.pod("coredns-x", "kube-system", "default-scheduler"),
                    self.pod("train", "ml", "railfit"), self.pod("late", "ml", "railfit"))
            args = {"PodUID": "", "Node": node}
            # off by default: nothing is bound
            with self.live(api, "") as rf:
                self.wait_ready(rf)
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="train", PodNamespace="ml"))
                self.assertEqual(status, 403, doc)
                self.assertIn("bind.enabled", doc["Error"])
            self.assertIsNone(self.node_of(api, "ml", "train"))
            with self.live(api, "bind: {enabled: true, schedulerNames: [railfit, gpu]}\n") as rf:
                self.wait_ready(rf)
                # another profile's pod: refused, not bound
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="coredns-x", PodNamespace="kube-system"))
                self.assertEqual(status, 200, doc)
                self.assertIn('schedulerName "default-scheduler"', doc["Error"])
                self.assertIsNone(self.node_of(api, "kube-system", "coredns-x"))
                # a wrong UID is not this pod
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="train", PodNamespace="ml",
                                           PodUID="other"))
                self.assertIn("not found", doc["Error"])
                # railfit's own pod binds
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="train", PodNamespace="ml"))
                self.assertEqual((status, doc["Error"]), (200, ""), doc)
                self.assertEqual(self.node_of(api, "ml", "train"), node)
                # a pod the cache has not seen yet is looked up on the API server
                api.put(self.pod("fresh", "ml", "railfit"))
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="fresh", PodNamespace="ml"))
                self.assertEqual((status, doc["Error"]), (200, ""), doc)
                api.put(self.pod("fresh-other", "ml", "default-scheduler"))
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="fresh-other", PodNamespace="ml"))
                self.assertIn("not in bind.schedulerNames", doc["Error"])
                self.assertIsNone(self.node_of(api, "ml", "fresh-other"))
                status, doc = request(rf.port, "POST", "/bind",
                                      dict(args, PodName="ghost", PodNamespace="ml"))
                self.assertIn("pod ml/ghost not found", doc["Error"])


if __name__ == "__main__":
    warnings.simplefilter("ignore", ResourceWarning)
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
