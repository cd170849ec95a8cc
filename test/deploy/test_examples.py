"""deploy/examples/ match what railfit reads (and monitoring/'s PrometheusRule holds alerts.yaml's
rules): every example ResourceClaimTemplate, with the example
DeviceClasses, gives a pod whose demand railfit knows (no unknown selector or class), and the
aligned pair lands on a GPU and a NIC under one PCIe root on a generated HGX cluster. The YAML is
turned into a List by check-manifests --list (no YAML library needed)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

RAILFIT = os.environ.get("RAILFIT")
CHECK = os.environ.get("CHECK_MANIFESTS")
EXAMPLES = os.environ.get("EXAMPLES_DIR")


def documents(*paths):
    return json.loads(subprocess.run([CHECK, "--list"] + list(paths), check=True,
                                     capture_output=True, text=True).stdout)["items"]


class Examples(unittest.TestCase):
    def test_every_template_is_understood(self):
        if not (RAILFIT and CHECK and EXAMPLES):
            self.skipTest("set RAILFIT, CHECK_MANIFESTS and EXAMPLES_DIR")
        ex = json.loads(subprocess.run(
            [CHECK, "--list", os.path.join(EXAMPLES, "deviceclasses.yaml"),
             os.path.join(EXAMPLES, "resourceclaimtemplates.yaml")],
            check=True, capture_output=True, text=True).stdout)["items"]
        templates = [d["metadata"]["name"] for d in ex if d["kind"] == "ResourceClaimTemplate"]
        self.assertEqual(len(templates), 5)
        snap = json.loads(subprocess.run([RAILFIT, "gen-cluster", "--nodes", "2", "--used", "0"],
                                         check=True, capture_output=True, text=True).stdout)
        snap["items"] = [i for i in snap["items"] if i["kind"] != "DeviceClass"] + \
            [d for d in ex if d["kind"] != "Namespace"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cluster.json")
            with open(path, "w") as f:
                json.dump(snap, f)
            for t in templates:
                pod = {"kind": "Pod", "apiVersion": "v1",
                       "metadata": {"name": "p-" + t, "namespace": "ml"},
                       "spec": {"schedulerName": "railfit",
                                "resourceClaims": [{"name": "c",
                                                    "resourceClaimTemplateName": t}]}}
                r = subprocess.run([RAILFIT, "explain", "--snapshot", path, "--pod", "-", "-o",
                                    "json"], input=json.dumps(pod), capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["demand"], "known", (t, doc.get("unknownReason")))
                if t == "gpu-nic-aligned":
                    ok = [n for n in doc["nodes"] if n["verdict"] == "pass"]
                    self.assertTrue(ok, doc)
                    levels = {p["level"] for p in ok[0]["predicted"] if p.get("level")}
                    self.assertTrue(levels and levels <= {"PIX", "PXB", "PHB"}, ok[0])


class Monitoring(unittest.TestCase):
    def test_prometheusrule_holds_the_rules_of_alerts_yaml(self):
        if not (CHECK and EXAMPLES):
            self.skipTest("set CHECK_MANIFESTS and EXAMPLES_DIR")
        mon = os.path.join(os.path.dirname(EXAMPLES), "monitoring")
        plain = documents(os.path.join(mon, "alerts.yaml"))[0]["groups"]
        rule = documents(os.path.join(mon, "prometheusrule.yaml"))[0]["spec"]["groups"]
        self.assertEqual(rule, plain)
        self.assertTrue(plain[0]["rules"])


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed" % (r.testsRun - failed - len(r.skipped), failed))
    sys.exit(1 if failed else 0)
