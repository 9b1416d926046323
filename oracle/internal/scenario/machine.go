package scenario

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/apimachinery/pkg/api/resource"

	"podnuma.io/oracle/internal/sysfs"
)

// Distances podnuma gives a synthetic machine without a distance matrix:
// 10 to itself, 12 within a socket, 21 across sockets.
const (
	localDistance      = 10
	sameSocketDistance = 12
	remoteDistance     = 21
	// The size given to synthetic L3 caches; the kubelet only reads ids.
	syntheticL3Size         = 32 * 1024 * 1024
	defaultMemoryPerNUMA    = 64 * 1024 * 1024 * 1024
	hugepagesResourcePrefix = "hugepages-"
)

var machineForms = []string{"machineInfo", "machineInfoFile", "sysfs", "synthetic", "cpus"}

func (s *Scenario) loadNode(node map[string]any, dir string) error {
	if err := checkKeys(node, append(append([]string{}, machineForms...), "memory", "distances", "devices", "name"), "node"); err != nil {
		return err
	}
	s.NodeName = "node"
	if n, ok := node["name"]; ok && n != nil {
		name, ok := n.(string)
		if !ok {
			return inputErr("node.name", "must be a string")
		}
		s.NodeName = name
	}
	var forms []string
	for _, f := range machineForms {
		if v, ok := node[f]; ok && v != nil {
			forms = append(forms, f)
		}
	}
	if len(forms) != 1 {
		return inputErr("node", "give exactly one machine form (%s), found %d", strings.Join(machineForms, ", "), len(forms))
	}
	var err error
	switch forms[0] {
	case "machineInfo":
		var js []byte
		if js, err = json.Marshal(node["machineInfo"]); err == nil {
			s.Machine, err = parseMachineInfo(js, "node.machineInfo")
		}
	case "machineInfoFile":
		var p string
		var raw []byte
		if p, raw, err = readReferenced(dir, node["machineInfoFile"], "node.machineInfoFile", "machine info"); err == nil {
			s.Machine, err = parseMachineInfo(raw, p)
		}
	case "sysfs":
		var p string
		if p, err = resolve(dir, node["sysfs"], "node.sysfs"); err == nil {
			s.Machine, err = sysfs.MachineInfo(p)
			if err != nil {
				err = inputErr("node.sysfs", "%v", err)
			}
		}
	case "synthetic":
		s.Machine, err = synthetic(node["synthetic"], "node.synthetic")
	case "cpus":
		s.Machine, err = table(node)
	}
	if err != nil {
		return err
	}
	if forms[0] != "cpus" {
		for _, k := range []string{"memory", "distances"} {
			if _, ok := node[k]; ok {
				return inputErr("node."+k, "only the cpus form takes %s", k)
			}
		}
	}
	if d, ok := node["devices"]; ok && d != nil {
		return s.loadDevices(d)
	}
	return nil
}

func parseMachineInfo(raw []byte, where string) (*cadvisorapi.MachineInfo, error) {
	mi := &cadvisorapi.MachineInfo{}
	if err := json.Unmarshal(raw, mi); err != nil {
		return nil, inputErr(where, "invalid machine info: %v", err)
	}
	return mi, nil
}

func (s *Scenario) loadDevices(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return inputErr("node.devices", "must be a mapping of resource name to device list")
	}
	for res := range m {
		s.DeviceOrder = append(s.DeviceOrder, res)
	}
	sort.Strings(s.DeviceOrder)
	for _, res := range s.DeviceOrder {
		path := "node.devices." + res
		list, ok := m[res].([]any)
		if !ok {
			return inputErr(path, "must be a list of devices")
		}
		for i, raw := range list {
			dpath := fmt.Sprintf("%s[%d]", path, i)
			entry, ok := raw.(map[string]any)
			if !ok {
				return inputErr(dpath, "a device must be a mapping {id, numaNodes}")
			}
			if err := checkKeys(entry, []string{"id", "numaNodes"}, dpath); err != nil {
				return err
			}
			var id string
			switch x := entry["id"].(type) {
			case string:
				id = x
			case json.Number:
				id = x.String()
			default:
				return inputErr(dpath+".id", "must be a string")
			}
			dev := Device{ID: id}
			if nn, ok := entry["numaNodes"]; ok && nn != nil {
				ids, err := intList(nn, dpath+".numaNodes")
				if err != nil {
					return err
				}
				sort.Ints(ids)
				dev.NUMANodes = ids
			}
			s.Devices[res] = append(s.Devices[res], dev)
		}
	}
	return nil
}

func toInt(v any, path string) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, inputErr(path, "must be an integer")
	}
	i, err := strconv.Atoi(n.String())
	if err != nil {
		return 0, inputErr(path, "must be an integer, got %s", n)
	}
	return i, nil
}

func intList(v any, path string) ([]int, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, inputErr(path, "must be a list of integers")
	}
	out := make([]int, 0, len(list))
	for i, x := range list {
		n, err := toInt(x, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// bytesOf reads a whole, non-negative number of bytes from a quantity.
func bytesOf(v any, path string) (uint64, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = x.String()
	default:
		return 0, inputErr(path, "must be a quantity (e.g. 64Gi)")
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return 0, inputErr(path, "invalid quantity %q: %v", text, err)
	}
	if q.Sign() < 0 {
		return 0, inputErr(path, "must not be negative, got %q", text)
	}
	b := q.AsDec().UnscaledBig()
	scale := q.AsDec().Scale()
	// A whole number of bytes: value * 10^-scale must be an integer.
	val := new(big.Int).Set(b)
	if scale > 0 {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
		var rem big.Int
		val.QuoRem(val, div, &rem)
		if rem.Sign() != 0 {
			return 0, inputErr(path, "must be a whole number of bytes, got %q", text)
		}
	} else if scale < 0 {
		val.Mul(val, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	if !val.IsUint64() {
		return 0, inputErr(path, "too large: %q does not fit in 64 bits", text)
	}
	return val.Uint64(), nil
}

// hugepagePools reads {hugepages-SIZE: TOTAL} into page size (bytes) ->
// total bytes.
func hugepagePools(v any, path string, skip string) (map[uint64]uint64, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, inputErr(path, "must be a mapping like {hugepages-2Mi: 1Gi}")
	}
	pools := map[uint64]uint64{}
	for k, qty := range m {
		if k == skip {
			continue
		}
		kpath := path + "." + k
		if !strings.HasPrefix(k, hugepagesResourcePrefix) {
			return nil, inputErr(kpath, "expected a key like hugepages-2Mi, got %q", k)
		}
		size, err := bytesOf(strings.TrimPrefix(k, hugepagesResourcePrefix), kpath)
		if err != nil {
			return nil, err
		}
		if size == 0 || size%1024 != 0 {
			return nil, inputErr(kpath, "invalid huge page size %q", k)
		}
		total, err := bytesOf(qty, kpath)
		if err != nil {
			return nil, err
		}
		if total%size != 0 {
			return nil, inputErr(kpath, "not a whole number of pages")
		}
		pools[size] = total
	}
	return pools, nil
}

func hugepagesInfo(pools map[uint64]uint64, times uint64) []cadvisorapi.HugePagesInfo {
	sizes := make([]uint64, 0, len(pools))
	for size := range pools {
		sizes = append(sizes, size)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	out := make([]cadvisorapi.HugePagesInfo, 0, len(sizes))
	for _, size := range sizes {
		out = append(out, cadvisorapi.HugePagesInfo{PageSize: size / 1024, NumPages: pools[size] / size * times})
	}
	return out
}

// distanceMatrix reads a list of rows (row i = i-th NUMA id) or a mapping
// {NUMA_ID: row}. Every node needs a row; asRead (the cpus table form) takes
// each row as a node's sysfs distance file reads (one or more non-negative
// numbers, any length), else a row has one positive entry per node.
func distanceMatrix(v any, path string, ids []int, asRead bool) (map[int][]uint64, error) {
	rows := map[int]any{}
	switch x := v.(type) {
	case map[string]any:
		for k, row := range x {
			id, err := strconv.Atoi(k)
			if err != nil {
				return nil, inputErr(path+"."+k, "expected a NUMA node id")
			}
			rows[id] = row
		}
	case []any:
		if len(x) != len(ids) {
			return nil, inputErr(path, "needs one row per NUMA node (%d), got %d", len(ids), len(x))
		}
		for i, row := range x {
			rows[ids[i]] = row
		}
	default:
		return nil, inputErr(path, "must be a list of rows or a mapping of rows")
	}
	out := map[int][]uint64{}
	for _, id := range ids {
		row, ok := rows[id]
		if !ok {
			return nil, inputErr(path, "missing the row of NUMA node %d", id)
		}
		items, err := intList(row, fmt.Sprintf("%s.%d", path, id))
		if err != nil {
			return nil, err
		}
		if asRead && len(items) == 0 {
			return nil, inputErr(fmt.Sprintf("%s.%d", path, id), "needs at least one distance (a node's distance file as read)")
		}
		if !asRead && len(items) != len(ids) {
			return nil, inputErr(fmt.Sprintf("%s.%d", path, id), "needs one distance per NUMA node (%d), got %d", len(ids), len(items))
		}
		for j, d := range items {
			if d < 0 || (d == 0 && !asRead) {
				return nil, inputErr(fmt.Sprintf("%s.%d[%d]", path, id, j), "must be a positive integer, got %d", d)
			}
			out[id] = append(out[id], uint64(d))
		}
	}
	return out, nil
}

// synthetic builds the MachineInfo podnuma builds for the synthetic form:
// cores numbered across sockets then NUMA nodes; logical CPU ids as Linux
// numbers them on x86 (the first thread of every core, then every core's
// second thread, ...); coresPerUncoreCache groups consecutive cores under
// one L3, except that an L3 spanning exactly a NUMA node is a node cache
// (cadvisor's rule), which leaves the kubelet using the socket id.
func synthetic(v any, path string) (*cadvisorapi.MachineInfo, error) {
	spec, ok := v.(map[string]any)
	if !ok {
		return nil, inputErr(path, "must be a mapping")
	}
	keys := []string{"sockets", "numaNodesPerSocket", "coresPerNumaNode", "threadsPerCore",
		"coresPerUncoreCache", "memoryPerNumaNode", "hugepagesPerNumaNode", "distances"}
	if err := checkKeys(spec, keys, path); err != nil {
		return nil, err
	}
	var n [4]int
	for i, k := range keys[:4] {
		x, err := toInt(spec[k], path+"."+k)
		if err != nil {
			return nil, err
		}
		if x < 1 {
			return nil, inputErr(path+"."+k, "must be at least 1")
		}
		n[i] = x
	}
	sockets, numaPerSocket, coresPerNUMA, threads := n[0], n[1], n[2], n[3]
	coresPerSocket := numaPerSocket * coresPerNUMA
	totalCores := sockets * coresPerSocket
	perUncore := 0
	if u, ok := spec["coresPerUncoreCache"]; ok && u != nil {
		x, err := toInt(u, path+".coresPerUncoreCache")
		if err != nil {
			return nil, err
		}
		if x < 1 || coresPerSocket%x != 0 || (coresPerNUMA%x != 0 && x%coresPerNUMA != 0) {
			return nil, inputErr(path+".coresPerUncoreCache", "%d cores per uncore cache do not tile the sockets", x)
		}
		perUncore = x
	}
	memory := uint64(defaultMemoryPerNUMA)
	if m, ok := spec["memoryPerNumaNode"]; ok && m != nil {
		var err error
		if memory, err = bytesOf(m, path+".memoryPerNumaNode"); err != nil {
			return nil, err
		}
	}
	pools := map[uint64]uint64{}
	if h, ok := spec["hugepagesPerNumaNode"]; ok && h != nil {
		var err error
		if pools, err = hugepagePools(h, path+".hugepagesPerNumaNode", ""); err != nil {
			return nil, err
		}
	}
	numa := sockets * numaPerSocket
	ids := make([]int, numa)
	for i := range ids {
		ids[i] = i
	}
	distances := map[int][]uint64{}
	if d, ok := spec["distances"]; ok && d != nil {
		var err error
		if distances, err = distanceMatrix(d, path+".distances", ids, false); err != nil {
			return nil, err
		}
	} else {
		for _, a := range ids {
			for _, b := range ids {
				d := uint64(remoteDistance)
				if a == b {
					d = localDistance
				} else if a/numaPerSocket == b/numaPerSocket {
					d = sameSocketDistance
				}
				distances[a] = append(distances[a], d)
			}
		}
	}
	nodeCache := perUncore != 0 && perUncore == coresPerNUMA
	hp := hugepagesInfo(pools, 1)
	mi := &cadvisorapi.MachineInfo{
		NumCores:         totalCores * threads,
		NumPhysicalCores: totalCores,
		NumSockets:       sockets,
		MemoryCapacity:   memory * uint64(numa),
		HugePages:        hugepagesInfo(pools, uint64(numa)),
	}
	for nid := 0; nid < numa; nid++ {
		socket := nid / numaPerSocket
		node := cadvisorapi.Node{Id: nid, Memory: memory, HugePages: hp, Distances: distances[nid]}
		for c := 0; c < coresPerNUMA; c++ {
			g := nid*coresPerNUMA + c
			core := cadvisorapi.Core{Id: g - socket*coresPerSocket, SocketID: socket}
			for t := 0; t < threads; t++ {
				core.Threads = append(core.Threads, g+t*totalCores)
			}
			if perUncore != 0 && !nodeCache {
				core.UncoreCaches = []cadvisorapi.Cache{{Id: g / perUncore, Size: syntheticL3Size, Type: "Unified", Level: 3}}
			}
			node.Cores = append(node.Cores, core)
		}
		if nodeCache {
			node.Caches = []cadvisorapi.Cache{{Id: nid, Size: syntheticL3Size, Type: "Unified", Level: 3}}
		}
		mi.Topology = append(mi.Topology, node)
	}
	return mi, nil
}

// table builds the MachineInfo of the cpus form: CPUs with the same
// (numaNode, socket, core) are the threads of one core, in row order.
func table(node map[string]any) (*cadvisorapi.MachineInfo, error) {
	rows, ok := node["cpus"].([]any)
	if !ok || len(rows) == 0 {
		return nil, inputErr("node.cpus", "needs a list of at least one CPU")
	}
	type coreKey struct{ socket, core int }
	type coreRows struct {
		label, socket int
		threads       []int
		uncore        *int
	}
	byNode := map[int][]*coreRows{}
	index := map[int]map[coreKey]*coreRows{}
	sockets := map[int]bool{}
	seen := map[int]bool{}
	for i, raw := range rows {
		rpath := fmt.Sprintf("node.cpus[%d]", i)
		row, ok := raw.(map[string]any)
		if !ok {
			return nil, inputErr(rpath, "must be a mapping")
		}
		if err := checkKeys(row, []string{"id", "core", "socket", "numaNode", "uncoreCache"}, rpath); err != nil {
			return nil, err
		}
		var v [4]int
		for j, k := range []string{"id", "core", "socket", "numaNode"} {
			x, err := toInt(row[k], rpath+"."+k)
			if err != nil {
				return nil, err
			}
			v[j] = x
		}
		cpu, core, socket, numa := v[0], v[1], v[2], v[3]
		if seen[cpu] {
			return nil, inputErr(rpath+".id", "CPU %d is listed twice", cpu)
		}
		seen[cpu] = true
		var uncore *int
		if u, ok := row["uncoreCache"]; ok && u != nil {
			x, err := toInt(u, rpath+".uncoreCache")
			if err != nil {
				return nil, err
			}
			uncore = &x
		}
		sockets[socket] = true
		if index[numa] == nil {
			index[numa] = map[coreKey]*coreRows{}
		}
		g := index[numa][coreKey{socket, core}]
		if g == nil {
			g = &coreRows{label: core, socket: socket, uncore: uncore}
			index[numa][coreKey{socket, core}] = g
			byNode[numa] = append(byNode[numa], g)
		} else if (g.uncore == nil) != (uncore == nil) || (uncore != nil && *g.uncore != *uncore) {
			return nil, inputErr(rpath+".uncoreCache", "the threads of core %d of socket %d must agree on uncoreCache", core, socket)
		}
		g.threads = append(g.threads, cpu)
	}
	type nodeMem struct {
		memory uint64
		pools  map[uint64]uint64
	}
	memory := map[int]nodeMem{}
	if m, ok := node["memory"]; ok && m != nil {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, inputErr("node.memory", "must be a mapping {NUMA_ID: {memory: QTY, hugepages-2Mi: QTY}}")
		}
		for k, entry := range mm {
			kpath := "node.memory." + k
			id, err := strconv.Atoi(k)
			if err != nil {
				return nil, inputErr(kpath, "expected a NUMA node id")
			}
			spec, ok := entry.(map[string]any)
			if !ok {
				return nil, inputErr(kpath, "must be a mapping")
			}
			total, err := bytesOf(spec["memory"], kpath+".memory")
			if err != nil {
				return nil, err
			}
			pools, err := hugepagePools(spec, kpath, "memory")
			if err != nil {
				return nil, err
			}
			memory[id] = nodeMem{total, pools}
		}
	}
	idSet := map[int]bool{}
	for id := range byNode {
		idSet[id] = true
	}
	for id := range memory {
		idSet[id] = true
	}
	ids := make([]int, 0, len(idSet))
	for id := range idSet {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	distances := map[int][]uint64{}
	if d, ok := node["distances"]; ok && d != nil {
		var err error
		if distances, err = distanceMatrix(d, "node.distances", ids, true); err != nil {
			return nil, err
		}
	}
	mi := &cadvisorapi.MachineInfo{NumCores: len(seen), NumSockets: len(sockets)}
	// Machine-wide huge pages as cadvisor reports them on such hardware
	// (/sys/kernel/mm/hugepages): the sum of the nodes' pools.
	total := map[uint64]uint64{}
	for _, nm := range memory {
		for size, bytes := range nm.pools {
			total[size] += bytes
		}
	}
	mi.HugePages = hugepagesInfo(total, 1)
	for _, id := range ids {
		nm := memory[id]
		node := cadvisorapi.Node{Id: id, Memory: nm.memory, HugePages: hugepagesInfo(nm.pools, 1), Distances: distances[id]}
		for _, g := range byNode[id] {
			core := cadvisorapi.Core{Id: g.label, Threads: g.threads, SocketID: g.socket}
			if g.uncore != nil {
				core.UncoreCaches = []cadvisorapi.Cache{{Id: *g.uncore, Level: 3}}
			}
			node.Cores = append(node.Cores, core)
		}
		mi.NumPhysicalCores += len(node.Cores)
		mi.MemoryCapacity += node.Memory
		mi.Topology = append(mi.Topology, node)
	}
	return mi, nil
}
