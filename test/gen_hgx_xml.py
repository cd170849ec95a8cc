#!/usr/bin/env python3
"""Write synthetic hwloc 2.0 XML topologies of HGX-like GPU servers for railfit's topology tests.

The machines are small on the CPU side (2 cores per package) and detailed on the PCI side:

  2 packages (sockets), one NUMA node each (or a single NUMA node with --no-numa);
  per package N host bridges (root complexes), each with one root port leading to a PCIe switch
  (upstream port + downstream ports) that holds GPUs and NICs;
  optionally a front-end NIC (Intel X710, two functions) on its own root port.

How the NICs hang (--nic-attach):
  switch    each NIC on a downstream port of the GPUs' switch (HGX H100 style)
  card      each NIC card carries its own PCIe switch with --nics-per-card NIC functions behind
            it (two NICs per GPU, as dual-NIC cards with an on-board switch)
  rootport  each NIC on its own root port of the same host bridge, beside the switch

Only the Python 3 standard library is used; output is deterministic. `lstopo -i FILE` (hwloc 2.9)
loads every variant. Run with --list to see the named variants, --variant NAME -o FILE to write one.
"""

import argparse
import sys

VARIANTS = {
    # 2 sockets x 4 switches x (2 GPUs + 2 NICs) + a front-end NIC on its own root port
    "hgx-h100": dict(switches=4, gpus=2, nics=2, nic_attach="switch", frontend="rootport"),
    # the same with two NICs per GPU, on dual-NIC cards that have their own PCIe switch
    "hgx-h200-2nic": dict(switches=4, gpus=2, nics=2, nic_attach="card", nics_per_card=2,
                          frontend="rootport", gpu_device="2335"),
    # NICs on the CPU's root ports, beside the GPUs' switch
    "hgx-cpu-rootport": dict(switches=4, gpus=2, nics=2, nic_attach="rootport",
                             frontend="rootport"),
    # one switch per socket; socket 1 in PCI domain 0001; each rail NIC with 2 SR-IOV VFs
    "hgx-domains-vfs": dict(switches=1, gpus=2, nics=2, nic_attach="switch", frontend="none",
                            domain1=1, vfs=2),
    # one switch per socket and no NUMA information (one NUMA node for both packages)
    "hgx-nonuma": dict(switches=1, gpus=2, nics=1, nic_attach="switch", frontend="none",
                       no_numa=True),
    # 8 x L4 (PCIe cards, no NVLink): 2 sockets x 2 switches x (2 GPUs + 1 NIC), front end on
    # its own root port; GPU to GPU is PIX behind one switch, NODE/SYS beyond
    "l4-8": dict(switches=2, gpus=2, nics=1, nic_attach="switch", frontend="rootport",
                 gpu_device="27b8"),
    # DGX H100 at the PCI addresses of test/data/dra (8 GPUs, 8 rail NICs, X710 front end on its
    # own host bridge): one GPU and one NIC per switch
    "dgx-h100": dict(switches=4, gpus=1, nics=1, nic_attach="switch", frontend="hostbridge",
                     dra_addresses=True),
    # the same machine with each rail NIC behind a card switch: GPU and NIC two switches apart
    "dgx-h100-pxb": dict(switches=4, gpus=1, nics=1, nic_attach="card", nics_per_card=1,
                         frontend="hostbridge", dra_addresses=True),
}

# DGX H100: host bridge bus, GPU bus, NIC bus per switch (resourceslice examples in test/data/dra)
DRA_ADDRESSES = [
    [(0x15, 0x1b, 0x18), (0x37, 0x43, 0x40), (0x48, 0x52, 0x4f), (0x59, 0x61, 0x5e)],
    [(0x97, 0x9d, 0x9a), (0xb7, 0xc3, 0xc0), (0xc7, 0xd1, 0xce), (0xd7, 0xdf, 0xdc)],
]
DRA_FRONTEND = (0x26, 0x2a)  # host bridge bus, X710 bus (functions 0 and 1)

HOSTBRIDGE_BUSES = [[0x15, 0x37, 0x48, 0x59], [0x97, 0xb7, 0xc7, 0xd7]]


class Xml:
    def __init__(self):
        self.lines = []
        self.gp = 0
        self.depth = 0

    def gp_index(self):
        self.gp += 1
        return self.gp

    def open(self, attrs, close=False):
        text = " ".join('%s="%s"' % (k, v) for k, v in attrs)
        self.lines.append("  " * (self.depth + 1) + "<object %s%s>" % (text, "/" if close else ""))
        if not close:
            self.depth += 1

    def close(self):
        self.depth -= 1
        self.lines.append("  " * (self.depth + 1) + "</object>")

    def info(self, name, value):
        self.lines.append("  " * (self.depth + 1) + '<info name="%s" value="%s"/>' % (name, value))


def mask(bits):
    v = 0
    for b in bits:
        v |= 1 << b
    return "0x%08x" % v


def busid(dom, bus, dev, fn):
    return "%04x:%02x:%02x.%x" % (dom, bus, dev, fn)


class Machine:
    def __init__(self, opts):
        self.o = opts
        self.x = Xml()
        self.gpu_index = 0
        self.nic_index = 0

    # ---- PCI objects ----
    def hostbridge(self, dom, first, last):
        self.x.open([("type", "Bridge"), ("gp_index", self.x.gp_index()), ("bridge_type", "0-1"),
                     ("depth", 0), ("bridge_pci", "%04x:[%02x-%02x]" % (dom, first, last))])

    def bridge(self, dom, bus, dev, depth, first, last, ids):
        self.x.open([("type", "Bridge"), ("gp_index", self.x.gp_index()), ("bridge_type", "1-1"),
                     ("depth", depth), ("bridge_pci", "%04x:[%02x-%02x]" % (dom, first, last)),
                     ("pci_busid", busid(dom, bus, dev, 0)),
                     ("pci_type", "0604 [%s] [0000:0000] 01" % ids),
                     ("pci_link_speed", "31.507692")])

    def pcidev(self, dom, bus, dev, fn, cls, ids, sub, osdevs):
        self.x.open([("type", "PCIDev"), ("gp_index", self.x.gp_index()),
                     ("pci_busid", busid(dom, bus, dev, fn)),
                     ("pci_type", "%s [%s] [%s] 00" % (cls, ids, sub)),
                     ("pci_link_speed", "31.507692")], close=not osdevs)
        if not osdevs:
            return
        for name, t in osdevs:
            self.x.open([("type", "OSDev"), ("gp_index", self.x.gp_index()), ("name", name),
                         ("osdev_type", t)], close=True)
        self.x.close()

    def gpu(self, dom, bus):
        i = self.gpu_index
        self.gpu_index += 1
        self.pcidev(dom, bus, 0, 0, "0302", "10de:%s" % self.o["gpu_device"], "10de:16c1",
                    [("nvml%d" % i, 5)])

    def nic(self, dom, bus):
        i = self.nic_index
        self.nic_index += 1
        self.pcidev(dom, bus, 0, 0, "0200", "15b3:1021", "15b3:0041",
                    [("rail%d" % i, 2), ("mlx5_%d" % i, 3)])
        for v in range(self.o["vfs"]):
            self.pcidev(dom, bus, 0, v + 1, "0200", "15b3:101e", "15b3:0041", [])

    def frontend_device(self, dom, bus):
        for fn in (0, 1):
            self.pcidev(dom, bus, 0, fn, "0200", "8086:1572", "8086:0000",
                        [("eno%d" % (fn + 1), 2)])

    # ---- one host bridge with its switch ----
    def complex(self, sock, sw, dom):
        o = self.o
        if o["dra_addresses"]:
            hb, gpu_bus, nic_bus = DRA_ADDRESSES[sock][sw]
        else:
            hb = HOSTBRIDGE_BUSES[sock][sw]
            gpu_bus = nic_bus = None
        last = hb + 0x0f
        self.hostbridge(dom, hb, last)
        # root port hb:01.0 -> switch upstream port (hb+1):00.0 -> downstream ports on hb+2
        self.bridge(dom, hb, 1, 1, hb + 1, last, "8086:352a")
        self.bridge(dom, hb + 1, 0, 2, hb + 2, last, "1000:c030")
        next_bus = hb + 3
        port = 0
        endpoints = []
        for g in range(o["gpus"]):
            endpoints.append(("gpu", gpu_bus if gpu_bus is not None else None))
        if o["nic_attach"] in ("switch", "card"):
            for n in range(o["nics"]):
                endpoints.append(("nic", nic_bus if nic_bus is not None else None))
        for kind, fixed in endpoints:
            if kind == "nic" and o["nic_attach"] == "card":
                per = o["nics_per_card"]
                # downstream port -> card upstream port -> card downstream ports -> NICs
                if fixed is not None:
                    card_us, card_ds, first_nic = hb + 0x0d, hb + 0x0e, fixed
                else:
                    card_us, card_ds, first_nic = next_bus, next_bus + 1, next_bus + 2
                    next_bus += 2 + per
                self.bridge(dom, hb + 2, port, 3, card_us, first_nic + per - 1, "1000:c030")
                self.bridge(dom, card_us, 0, 4, card_ds, first_nic + per - 1, "15b3:1979")
                for k in range(per):
                    self.bridge(dom, card_ds, k, 5, first_nic + k, first_nic + k, "15b3:1979")
                    self.nic(dom, first_nic + k)
                    self.x.close()
                self.x.close()
                self.x.close()
            else:
                bus = fixed if fixed is not None else next_bus
                if fixed is None:
                    next_bus += 1
                self.bridge(dom, hb + 2, port, 3, bus, bus, "1000:c030")
                if kind == "gpu":
                    self.gpu(dom, bus)
                else:
                    self.nic(dom, bus)
                self.x.close()
            port += 1
        self.x.close()  # upstream port
        self.x.close()  # root port
        rp = 2
        if o["nic_attach"] == "rootport":
            for n in range(o["nics"]):
                bus = next_bus
                next_bus += 1
                self.bridge(dom, hb, rp, 1, bus, bus, "8086:352b")
                self.nic(dom, bus)
                self.x.close()
                rp += 1
        if sock == 0 and sw == 0 and o["frontend"] == "rootport":
            bus = next_bus
            next_bus += 1
            self.bridge(dom, hb, rp, 1, bus, bus, "8086:352b")
            self.frontend_device(dom, bus)
            self.x.close()
        assert next_bus <= last + 1, "bus range overflow"
        self.x.close()  # host bridge

    def package(self, sock):
        o = self.o
        cpus = [2 * sock, 2 * sock + 1]
        nodes = [0] if o["no_numa"] else [sock]
        cs, ns = mask(cpus), mask(nodes)
        self.x.open([("type", "Package"), ("os_index", sock), ("cpuset", cs),
                     ("complete_cpuset", cs), ("nodeset", ns), ("complete_nodeset", ns),
                     ("gp_index", self.x.gp_index())])
        self.x.info("CPUModel", "Intel(R) Xeon(R) Platinum 8480+")
        if not o["no_numa"]:
            self.x.open([("type", "NUMANode"), ("os_index", sock), ("cpuset", cs),
                         ("complete_cpuset", cs), ("nodeset", ns), ("complete_nodeset", ns),
                         ("gp_index", self.x.gp_index()), ("local_memory", 1099511627776)],
                        close=True)
        for c in cpus:
            m = mask([c])
            self.x.open([("type", "Core"), ("os_index", c), ("cpuset", m),
                         ("complete_cpuset", m), ("nodeset", ns), ("complete_nodeset", ns),
                         ("gp_index", self.x.gp_index())])
            self.x.open([("type", "PU"), ("os_index", c), ("cpuset", m), ("complete_cpuset", m),
                         ("nodeset", ns), ("complete_nodeset", ns),
                         ("gp_index", self.x.gp_index())], close=True)
            self.x.close()
        dom = o["domain1"] if sock == 1 else 0
        for sw in range(o["switches"]):
            self.complex(sock, sw, dom)
        if sock == 0 and o["frontend"] == "hostbridge":
            hb, bus = DRA_FRONTEND
            self.hostbridge(0, hb, hb + 0x0f)
            self.bridge(0, hb, 1, 1, bus, bus, "8086:352b")
            self.frontend_device(0, bus)
            self.x.close()
            self.x.close()
        self.x.close()

    def render(self, name):
        o = self.o
        allc = mask(range(4))
        alln = mask([0] if o["no_numa"] else [0, 1])
        self.x.open([("type", "Machine"), ("os_index", 0), ("cpuset", allc),
                     ("complete_cpuset", allc), ("allowed_cpuset", allc), ("nodeset", alln),
                     ("complete_nodeset", alln), ("allowed_nodeset", alln),
                     ("gp_index", self.x.gp_index())])
        self.x.info("DMIProductName", "railfit synthetic %s" % name)
        self.x.info("Architecture", "x86_64")
        if o["no_numa"]:
            self.x.open([("type", "NUMANode"), ("os_index", 0), ("cpuset", allc),
                         ("complete_cpuset", allc), ("nodeset", alln), ("complete_nodeset", alln),
                         ("gp_index", self.x.gp_index()), ("local_memory", 2199023255552)],
                        close=True)
        for s in range(2):
            self.package(s)
        self.x.close()
        head = ['<?xml version="1.0" encoding="UTF-8"?>',
                '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
                '<topology version="2.0">']
        return "\n".join(head + self.x.lines + ["</topology>", ""])


def options(name):
    o = dict(switches=4, gpus=2, nics=2, nic_attach="switch", nics_per_card=2, frontend="none",
             domain1=0, vfs=0, no_numa=False, dra_addresses=False, gpu_device="2330")
    o.update(VARIANTS[name])
    return o


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", choices=sorted(VARIANTS), default="hgx-h100")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.add_argument("--list", action="store_true", help="list the variants")
    a = p.parse_args(argv)
    if a.list:
        for k in sorted(VARIANTS):
            print(k)
        return 0
    text = Machine(options(a.variant)).render(a.variant)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
