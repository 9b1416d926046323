package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := Parse([]byte(text), "test.yaml", t.TempDir())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func TestDerivePodUIDIsUUID5OfNamespaceAndName(t *testing.T) {
	// The UID podnuma gives shop/db (see examples/static-dual-socket.yaml).
	if got, want := DerivePodUID("shop", "db"), "0a7a2d88-e834-56b5-99a4-02c408460acf"; got != want {
		t.Fatalf("DerivePodUID(shop, db) = %s, want %s", got, want)
	}
	if DerivePodUID("a", "b/c") == DerivePodUID("a/b", "c") {
		t.Log("namespace and name joined by '/' as podnuma does; identical inputs collide by design")
	}
}

const syntheticScenario = `
apiVersion: podnuma.io/v1
kind: Scenario
node:
  name: w1
  synthetic: {sockets: 2, numaNodesPerSocket: 1, coresPerNumaNode: 4, threadsPerCore: 2,
              memoryPerNumaNode: 8Gi, hugepagesPerNumaNode: {hugepages-2Mi: 1Gi}}
steps:
  - addPod:
      metadata: {name: p, namespace: ns}
      spec: {containers: [{name: c}]}
  - removeContainer: {pod: ns/p, container: c}
  - removePod: ns/p
`

func TestSyntheticNumbersCPUsAsLinuxOnX86(t *testing.T) {
	s := parse(t, syntheticScenario)
	m := s.Machine
	if m.NumCores != 16 || m.NumPhysicalCores != 8 || m.NumSockets != 2 {
		t.Fatalf("counts = %d/%d/%d", m.NumCores, m.NumPhysicalCores, m.NumSockets)
	}
	if len(m.Topology) != 2 {
		t.Fatalf("want 2 NUMA nodes, got %d", len(m.Topology))
	}
	// Core 1 of socket 1 is machine core 5: threads 5 and 5+8.
	core := m.Topology[1].Cores[1]
	if core.Id != 1 || core.SocketID != 1 || !reflect.DeepEqual(core.Threads, []int{5, 13}) {
		t.Fatalf("core = %+v", core)
	}
	if m.Topology[0].Memory != 8<<30 || m.MemoryCapacity != 16<<30 {
		t.Fatalf("memory = %d / %d", m.Topology[0].Memory, m.MemoryCapacity)
	}
	hp := m.Topology[0].HugePages
	if len(hp) != 1 || hp[0].PageSize != 2048 || hp[0].NumPages != 512 {
		t.Fatalf("node hugepages = %+v", hp)
	}
	if m.HugePages[0].NumPages != 1024 {
		t.Fatalf("machine hugepages = %+v", m.HugePages)
	}
	if !reflect.DeepEqual(m.Topology[0].Distances, []uint64{10, 21}) {
		t.Fatalf("distances = %v", m.Topology[0].Distances)
	}
	if s.NodeName != "w1" || len(s.Steps) != 3 {
		t.Fatalf("name %q, %d steps", s.NodeName, len(s.Steps))
	}
	pod := s.Steps[0].Pod
	if pod.Namespace != "ns" || string(pod.UID) != DerivePodUID("ns", "p") {
		t.Fatalf("pod = %s/%s %s", pod.Namespace, pod.Name, pod.UID)
	}
	if st := s.Steps[1]; st.Op != "removeContainer" || st.Ref != "ns/p" || st.Container != "c" {
		t.Fatalf("step 1 = %+v", st)
	}
}

func TestSyntheticUncoreCaches(t *testing.T) {
	s := parse(t, strings.Replace(syntheticScenario, "threadsPerCore: 2,", "threadsPerCore: 2, coresPerUncoreCache: 2,", 1))
	c := s.Machine.Topology[1].Cores[3] // machine core 7
	if len(c.UncoreCaches) != 1 || c.UncoreCaches[0].Id != 3 {
		t.Fatalf("uncore = %+v", c.UncoreCaches)
	}
	// An L3 spanning a whole NUMA node is a node cache (no uncore id).
	s = parse(t, strings.Replace(syntheticScenario, "threadsPerCore: 2,", "threadsPerCore: 2, coresPerUncoreCache: 4,", 1))
	if n := s.Machine.Topology[0]; len(n.Cores[0].UncoreCaches) != 0 || len(n.Caches) != 1 {
		t.Fatalf("node caches = %+v, core uncore = %+v", n.Caches, n.Cores[0].UncoreCaches)
	}
}

func TestCPUTable(t *testing.T) {
	s := parse(t, `
apiVersion: podnuma.io/v1
kind: Scenario
node:
  cpus:
    - {id: 0, core: 0, socket: 0, numaNode: 0, uncoreCache: 0}
    - {id: 2, core: 0, socket: 0, numaNode: 0, uncoreCache: 0}
    - {id: 1, core: 1, socket: 0, numaNode: 1}
  memory: {0: {memory: 4Gi, hugepages-1Gi: 2Gi}, 2: {memory: 1Gi}}
  distances: [[10, 20, 30], [20, 10, 30], [30, 30, 10]]
  devices:
    example.com/gpu: [{id: gpu0, numaNodes: [1]}, {id: 7}]
steps: []
`)
	m := s.Machine
	if len(m.Topology) != 3 || m.Topology[2].Id != 2 || len(m.Topology[2].Cores) != 0 {
		t.Fatalf("nodes = %+v", m.Topology)
	}
	core := m.Topology[0].Cores[0]
	if !reflect.DeepEqual(core.Threads, []int{0, 2}) || core.UncoreCaches[0].Id != 0 {
		t.Fatalf("core = %+v", core)
	}
	if m.NumCores != 3 || m.NumPhysicalCores != 2 || m.MemoryCapacity != 5<<30 {
		t.Fatalf("machine = %d %d %d", m.NumCores, m.NumPhysicalCores, m.MemoryCapacity)
	}
	if hp := m.Topology[0].HugePages; len(hp) != 1 || hp[0].PageSize != 1<<20 || hp[0].NumPages != 2 {
		t.Fatalf("hugepages = %+v", hp)
	}
	if hp := m.HugePages; len(hp) != 1 || hp[0].PageSize != 1<<20 || hp[0].NumPages != 2 {
		t.Fatalf("machine hugepages = %+v", hp)
	}
	if !reflect.DeepEqual(m.Topology[1].Distances, []uint64{20, 10, 30}) {
		t.Fatalf("distances = %v", m.Topology[1].Distances)
	}
	devs := s.Devices["example.com/gpu"]
	if len(devs) != 2 || devs[0].ID != "gpu0" || !reflect.DeepEqual(devs[0].NUMANodes, []int{1}) || devs[1].ID != "7" {
		t.Fatalf("devices = %+v", devs)
	}
}

// TestCPUTableDistanceRowsAsRead: the cpus form takes each node's row as
// its sysfs distance file reads (any length, 0 included); the synthetic
// shorthand still wants one positive distance per node.
func TestCPUTableDistanceRowsAsRead(t *testing.T) {
	s := parse(t, `
apiVersion: podnuma.io/v1
kind: Scenario
node:
  cpus:
    - {id: 0, core: 0, socket: 0, numaNode: 0}
    - {id: 1, core: 1, socket: 0, numaNode: 1}
  distances: {0: [10], 1: [0, 10, 30]}
steps: []
`)
	if d := s.Machine.Topology[0].Distances; !reflect.DeepEqual(d, []uint64{10}) {
		t.Fatalf("node 0 distances = %v", d)
	}
	if d := s.Machine.Topology[1].Distances; !reflect.DeepEqual(d, []uint64{0, 10, 30}) {
		t.Fatalf("node 1 distances = %v", d)
	}
	for text, path := range map[string]string{
		"node: {cpus: [{id: 0, core: 0, socket: 0, numaNode: 0}], distances: {0: []}}":   "node.distances.0",
		"node: {cpus: [{id: 0, core: 0, socket: 0, numaNode: 0}], distances: {0: [-1]}}": "node.distances.0[0]",
		"node: {synthetic: {sockets: 1, numaNodesPerSocket: 2, coresPerNumaNode: 1, threadsPerCore: 1, " +
			"distances: [[10], [20, 10]]}}": "node.synthetic.distances.0",
	} {
		_, err := Parse([]byte("apiVersion: podnuma.io/v1\nkind: Scenario\n"+text+"\nsteps: []\n"), "bad.yaml", t.TempDir())
		ie, ok := err.(*InputError)
		if !ok || ie.Path != path {
			t.Errorf("%s: want an input error at %q, got %v", text, path, err)
		}
	}
}

func TestMachineInfoFileAndStateFiles(t *testing.T) {
	dir := t.TempDir()
	mi := `{"num_cores": 2, "num_physical_cores": 1, "num_sockets": 1, "memory_capacity": 1024,
	        "topology": [{"node_id": 0, "memory": 1024, "cores": [{"core_id": 0, "thread_ids": [0, 1], "socket_id": 0}]}]}`
	must(t, os.WriteFile(filepath.Join(dir, "machine.json"), []byte(mi), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "cpu.json"), []byte(`{"policyName":"none","defaultCpuSet":"","checksum":1}`), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "kubelet.yaml"), []byte("cpuManagerPolicy: static\n"), 0o600))
	scn := `apiVersion: podnuma.io/v1
kind: Scenario
node: {machineInfoFile: machine.json}
kubeletConfigFile: kubelet.yaml
state:
  cpuManagerFile: cpu.json
  memoryManager: {policyName: None, machineState: {}, checksum: 2}
steps: []
`
	must(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scn), 0o600))
	s, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Machine.NumCores != 2 || s.Machine.Topology[0].Cores[0].Threads[1] != 1 {
		t.Fatalf("machine = %+v", s.Machine)
	}
	if !strings.Contains(string(s.CPUState), `"policyName":"none"`) || !strings.Contains(string(s.MemoryState), `"None"`) {
		t.Fatalf("state = %s / %s", s.CPUState, s.MemoryState)
	}
	if !strings.Contains(string(s.KubeletConfig), `"cpuManagerPolicy":"static"`) ||
		!strings.Contains(string(s.KubeletConfig), `"kind":"KubeletConfiguration"`) {
		t.Fatalf("config = %s", s.KubeletConfig)
	}
}

func TestInvalidInputNamesTheField(t *testing.T) {
	cases := map[string]string{
		"unknown top-level key": "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {}\nsteps: []\nextra: 1\n",
		"two machine forms":     "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {synthetic: {}, cpus: []}\nsteps: []\n",
		"bad quantity": "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {synthetic: {sockets: 1, numaNodesPerSocket: 1, " +
			"coresPerNumaNode: 1, threadsPerCore: 1, memoryPerNumaNode: lots}}\nsteps: []\n",
		"unknown pod field": "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {synthetic: {sockets: 1, numaNodesPerSocket: 1, " +
			"coresPerNumaNode: 1, threadsPerCore: 1}}\nsteps: [{addPod: {metadata: {name: p}, spec: {containerz: []}}}]\n",
	}
	want := map[string]string{
		"unknown top-level key": "extra",
		"two machine forms":     "node",
		"bad quantity":          "node.synthetic.memoryPerNumaNode",
		"unknown pod field":     "steps[0].addPod",
	}
	for name, text := range cases {
		_, err := Parse([]byte(text), "bad.yaml", t.TempDir())
		ie, ok := err.(*InputError)
		if !ok {
			t.Errorf("%s: want *InputError, got %v", name, err)
			continue
		}
		if ie.Path != want[name] {
			t.Errorf("%s: path %q, want %q (%v)", name, ie.Path, want[name], ie)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
