// Command peer is the baseline of test/bench/fleet_bench.py: a straightforward kube-scheduler
// extender written with the Go standard library only (net/http + encoding/json), the way a team
// would write its first one. It loads the same snapshot as `railfit serve --snapshot F` and
// answers /filter and /prioritize with first-fit, no optimization tricks:
//
//   - a node passes filter when it has a free GPU (driver gpu.nvidia.com) and a free RDMA NIC
//     (driver dra.net, dra.net/rdma true) with the same resource.kubernetes.io/pcieRoot; the
//     devices of allocated ResourceClaims are used. The pod's claims are not read: the peer
//     assumes every pod asks for one aligned GPU+NIC pair (the benchmark's pending pod does).
//   - prioritize scores every node with its free GPU count (0..8).
//
// Both modes of ExtenderArgs are answered (NodeNames, or Nodes.items echoed back). The device
// walk is done per request and per node, as the state would change in a live extender.
//
// usage: go build -o peer . && ./peer --snapshot cluster.json --listen 127.0.0.1:8889
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

const pcieRoot = "resource.kubernetes.io/pcieRoot"

type attribute struct {
	String *string `json:"string"`
	Bool   *bool   `json:"bool"`
	Int    *int64  `json:"int"`
}

type item struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status json.RawMessage `json:"status"`
}

type sliceSpec struct {
	Driver   string `json:"driver"`
	NodeName string `json:"nodeName"`
	Pool     struct {
		Name string `json:"name"`
	} `json:"pool"`
	Devices []struct {
		Name       string               `json:"name"`
		Attributes map[string]attribute `json:"attributes"`
	} `json:"devices"`
}

type claimStatus struct {
	Allocation *struct {
		Devices struct {
			Results []struct {
				Driver string `json:"driver"`
				Pool   string `json:"pool"`
				Device string `json:"device"`
			} `json:"results"`
		} `json:"devices"`
	} `json:"allocation"`
}

type device struct {
	driver, pool, name, root string
	gpu, rdmaNIC             bool
	used                     bool
}

type node struct {
	devices []*device
}

type cluster struct {
	nodes map[string]*node
	// driver/pool/device -> device, to mark allocations
	byKey map[string]*device
}

func load(path string) (*cluster, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var list struct {
		Items []item `json:"items"`
	}
	if err := json.NewDecoder(f).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	c := &cluster{nodes: map[string]*node{}, byKey: map[string]*device{}}
	var claims []claimStatus
	for _, it := range list.Items {
		switch it.Kind {
		case "Node":
			if c.nodes[it.Metadata.Name] == nil {
				c.nodes[it.Metadata.Name] = &node{}
			}
		case "ResourceSlice":
			var s sliceSpec
			if err := json.Unmarshal(it.Spec, &s); err != nil {
				return nil, fmt.Errorf("slice %s: %v", it.Metadata.Name, err)
			}
			if s.NodeName == "" {
				continue
			}
			n := c.nodes[s.NodeName]
			if n == nil {
				n = &node{}
				c.nodes[s.NodeName] = n
			}
			for _, d := range s.Devices {
				dev := &device{driver: s.Driver, pool: s.Pool.Name, name: d.Name}
				if a, ok := d.Attributes[pcieRoot]; ok && a.String != nil {
					dev.root = *a.String
				}
				switch s.Driver {
				case "gpu.nvidia.com":
					t, ok := d.Attributes["type"]
					dev.gpu = !ok || (t.String != nil && *t.String == "gpu")
				case "dra.net":
					r, ok := d.Attributes["dra.net/rdma"]
					dev.rdmaNIC = ok && r.Bool != nil && *r.Bool
				}
				n.devices = append(n.devices, dev)
				c.byKey[s.Driver+"/"+s.Pool.Name+"/"+d.Name] = dev
			}
		case "ResourceClaim":
			var st claimStatus
			if len(it.Status) > 0 {
				if err := json.Unmarshal(it.Status, &st); err != nil {
					return nil, fmt.Errorf("claim %s/%s: %v", it.Metadata.Namespace,
						it.Metadata.Name, err)
				}
			}
			claims = append(claims, st)
		}
	}
	for _, st := range claims {
		if st.Allocation == nil {
			continue
		}
		for _, r := range st.Allocation.Devices.Results {
			if d := c.byKey[r.Driver+"/"+r.Pool+"/"+r.Device]; d != nil {
				d.used = true
			}
		}
	}
	return c, nil
}

// fit: the first free GPU that has a free RDMA NIC on its pcieRoot, and the free GPU count.
func (c *cluster) fit(name string) (ok bool, freeGPUs int, msg string) {
	n := c.nodes[name]
	if n == nil {
		return false, 0, "peer: unknown node"
	}
	for _, g := range n.devices {
		if !g.gpu || g.used {
			continue
		}
		freeGPUs++
		if ok || g.root == "" {
			continue
		}
		for _, nic := range n.devices {
			if nic.rdmaNIC && !nic.used && nic.root == g.root {
				ok = true
				break
			}
		}
	}
	if !ok {
		msg = "peer: no free GPU with a free RDMA NIC on its pcieRoot"
	}
	return ok, freeGPUs, msg
}

type nodeList struct {
	Metadata struct{}          `json:"metadata"`
	Items    []json.RawMessage `json:"items"`
}

type extenderArgs struct {
	Pod       json.RawMessage `json:"Pod"`
	Nodes     *nodeList       `json:"Nodes"`
	NodeNames *[]string       `json:"NodeNames"`
}

type filterResult struct {
	Nodes                      *nodeList         `json:"Nodes"`
	NodeNames                  *[]string         `json:"NodeNames"`
	FailedNodes                map[string]string `json:"FailedNodes"`
	FailedAndUnresolvableNodes map[string]string `json:"FailedAndUnresolvableNodes"`
	Error                      string            `json:"Error"`
}

type hostPriority struct {
	Host  string `json:"Host"`
	Score int64  `json:"Score"`
}

// names of the request's nodes, and their objects in the Nodes mode
func requestNodes(a *extenderArgs) ([]string, []json.RawMessage, error) {
	if a.NodeNames != nil {
		return *a.NodeNames, nil, nil
	}
	if a.Nodes == nil {
		return nil, nil, nil
	}
	names := make([]string, len(a.Nodes.Items))
	for i, raw := range a.Nodes.Items {
		var n struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, nil, err
		}
		names[i] = n.Metadata.Name
	}
	return names, a.Nodes.Items, nil
}

func reply(w http.ResponseWriter, v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func main() {
	snapshot := flag.String("snapshot", "", "kubectl-style List (railfit gen-cluster output)")
	listen := flag.String("listen", "127.0.0.1:8889", "address to listen on")
	flag.Parse()
	if *snapshot == "" {
		fmt.Fprintln(os.Stderr, "peer: --snapshot F is required")
		os.Exit(2)
	}
	var ready atomic.Bool
	var c *cluster
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/filter", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		var a extenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		names, objs, err := requestNodes(&a)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res := filterResult{FailedNodes: map[string]string{}}
		var passNames []string
		var passObjs []json.RawMessage
		for i, name := range names {
			if ok, _, msg := c.fit(name); ok {
				passNames = append(passNames, name)
				if objs != nil {
					passObjs = append(passObjs, objs[i])
				}
			} else {
				res.FailedNodes[name] = msg
			}
		}
		if objs != nil {
			res.Nodes = &nodeList{Items: passObjs}
		} else {
			if passNames == nil {
				passNames = []string{}
			}
			res.NodeNames = &passNames
		}
		reply(w, &res)
	})
	mux.HandleFunc("/prioritize", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		var a extenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		names, _, err := requestNodes(&a)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := make([]hostPriority, 0, len(names))
		for _, name := range names {
			_, free, _ := c.fit(name)
			if free > 10 {
				free = 10
			}
			out = append(out, hostPriority{Host: name, Score: int64(free)})
		}
		reply(w, out)
	})
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		t0 := time.Now()
		var err error
		if c, err = load(*snapshot); err != nil {
			log.Fatalf("peer: %v", err)
		}
		ready.Store(true)
		log.Printf("peer: %d nodes loaded in %.1fs", len(c.nodes), time.Since(t0).Seconds())
	}()
	log.Fatal(srv.ListenAndServe())
}
