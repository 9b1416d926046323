package sysfs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot writes a copy of /sys for 2 NUMA nodes x 2 cores x 2 threads
// (CPU c and c+4 are siblings), an L3 per pair of cores on node 0 only
// shared by the whole node (a node cache), CPU 7 offline.
func snapshot(t *testing.T) string {
	root := t.TempDir()
	write(t, root, "devices/system/cpu/online", "0-6\n")
	for cpu := 0; cpu < 8; cpu++ {
		core := cpu % 4
		node := core / 2
		base := fmt.Sprintf("devices/system/cpu/cpu%d", cpu)
		write(t, root, base+"/topology/core_id", fmt.Sprintf("%d\n", core))
		write(t, root, base+"/topology/physical_package_id", "0\n")
		write(t, root, base+"/cache/index3/id", fmt.Sprintf("%d\n", node))
		write(t, root, base+"/cache/index3/size", "16384K\n")
		write(t, root, base+"/cache/index3/level", "3\n")
		write(t, root, base+"/cache/index3/type", "Unified\n")
		mask := 0
		for _, c := range []int{2 * node, 2*node + 1, 2*node + 4, 2*node + 5} {
			mask |= 1 << c
		}
		write(t, root, base+"/cache/index3/shared_cpu_map", fmt.Sprintf("%08x\n", mask))
		// As in sysfs, nodeN/cpuM links to the CPU's directory.
		nodeDir := filepath.Join(root, fmt.Sprintf("devices/system/node/node%d", node))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(fmt.Sprintf("../../cpu/cpu%d", cpu), filepath.Join(nodeDir, fmt.Sprintf("cpu%d", cpu))); err != nil {
			t.Fatal(err)
		}
	}
	for node := 0; node < 2; node++ {
		base := fmt.Sprintf("devices/system/node/node%d", node)
		write(t, root, base+"/meminfo", fmt.Sprintf("Node %d MemTotal:       1048576 kB\n", node))
		write(t, root, base+"/distance", map[int]string{0: "10 21\n", 1: "21 10\n"}[node])
		write(t, root, base+"/hugepages/hugepages-2048kB/nr_hugepages", "4\n")
	}
	return root
}

func TestMachineInfoFromSnapshot(t *testing.T) {
	mi, err := MachineInfo(snapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(mi.Topology) != 2 {
		t.Fatalf("nodes = %d", len(mi.Topology))
	}
	n1 := mi.Topology[1]
	var threads [][]int
	for _, c := range n1.Cores {
		threads = append(threads, c.Threads)
	}
	// CPU 7 is offline: core 3 keeps only CPU 3.
	if !reflect.DeepEqual(threads, [][]int{{2, 6}, {3}}) {
		t.Fatalf("node 1 threads = %v", threads)
	}
	if mi.NumCores != 7 || mi.NumSockets != 1 || mi.NumPhysicalCores != 4 {
		t.Fatalf("counts = %d cores, %d sockets, %d physical", mi.NumCores, mi.NumSockets, mi.NumPhysicalCores)
	}
	if n1.Memory != 1<<30 || mi.MemoryCapacity != 2<<30 {
		t.Fatalf("memory = %d / %d", n1.Memory, mi.MemoryCapacity)
	}
	if !reflect.DeepEqual(n1.Distances, []uint64{21, 10}) {
		t.Fatalf("distances = %v", n1.Distances)
	}
	if len(mi.HugePages) != 1 || mi.HugePages[0].PageSize != 2048 || mi.HugePages[0].NumPages != 8 {
		t.Fatalf("hugepages = %+v", mi.HugePages)
	}
	// Node 0's L3 spans its 4 CPUs: a node cache, so no uncore cache.
	n0 := mi.Topology[0]
	if len(n0.Caches) != 1 || n0.Caches[0].Level != 3 || len(n0.Cores[0].UncoreCaches) != 0 {
		t.Fatalf("node 0 caches = %+v, core uncore = %+v", n0.Caches, n0.Cores[0].UncoreCaches)
	}
}

func TestRootAcceptsADirectoryHoldingSys(t *testing.T) {
	outer := t.TempDir()
	inner := snapshot(t)
	if err := os.Symlink(inner, filepath.Join(outer, "sys")); err != nil {
		t.Fatal(err)
	}
	if got := Root(outer); got != filepath.Join(outer, "sys") {
		t.Fatalf("Root = %s", got)
	}
	if _, err := MachineInfo(outer); err != nil {
		t.Fatal(err)
	}
}

func TestNotASnapshot(t *testing.T) {
	if _, err := MachineInfo(t.TempDir()); err == nil {
		t.Fatal("want an error for a directory without devices/system/cpu")
	}
}

func TestMemoryCapacityIsMemTotalBesideTheTree(t *testing.T) {
	outer := t.TempDir()
	if err := os.Symlink(snapshot(t), filepath.Join(outer, "sys")); err != nil {
		t.Fatal(err)
	}
	summed, err := MachineInfo(outer)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outer, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	meminfo := filepath.Join(outer, "proc", "meminfo")
	if err := os.WriteFile(meminfo, []byte("MemTotal:        1000 kB\nMemFree: 5 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mi, err := MachineInfo(outer)
	if err != nil {
		t.Fatal(err)
	}
	if mi.MemoryCapacity != 1024000 || summed.MemoryCapacity == 1024000 {
		t.Fatalf("memory capacity = %d (the nodes' sum %d)", mi.MemoryCapacity, summed.MemoryCapacity)
	}
	if err := os.WriteFile(meminfo, []byte("MemFree: 5 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MachineInfo(outer); err == nil {
		t.Fatal("a meminfo without MemTotal was accepted")
	}
}

// TestCacheCPUCountIsCadvisors: shared_cpu_map words are trimmed one by
// one and parsed as uint64s (cadvisor's getCPUCount), so spaces around a
// comma and words wider than 32 bits are read.
func TestCacheCPUCountIsCadvisors(t *testing.T) {
	for text, want := range map[string]int{"0 , 33\n": 4, "ffffffffff\n": 40, "0000000000000000033\n": 4} {
		root := snapshot(t)
		write(t, root, "devices/system/cpu/cpu0/cache/index3/shared_cpu_map", text)
		fs := &rootedSysFs{root: root}
		info, err := fs.GetCacheInfo(0, "index3")
		if err != nil || info.Cpus != want {
			t.Errorf("%q: %d CPUs (%v), want %d", text, info.Cpus, err, want)
		}
	}
	root := snapshot(t)
	write(t, root, "devices/system/cpu/cpu0/cache/index3/shared_cpu_map", "0x33\n")
	if _, err := (&rootedSysFs{root: root}).GetCacheInfo(0, "index3"); err == nil {
		t.Error("0x33: no error, want strconv's")
	}
}

// TestWrappedFiguresPassThrough: a MemTotal whose bytes wrap cadvisor's
// uint64 and page counts whose sum wraps are handed on, not refused.
func TestWrappedFiguresPassThrough(t *testing.T) {
	root := snapshot(t)
	write(t, root, "devices/system/node/node0/meminfo", fmt.Sprintf("Node 0 MemTotal:       %d kB\n", uint64(1)<<54+1))
	write(t, root, "devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "\n9223372036854775808\n")
	write(t, root, "devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "9223372036854775808")
	mi, err := MachineInfo(root)
	if err != nil {
		t.Fatal(err)
	}
	if mi.Topology[0].Memory != 1024 || mi.MemoryCapacity != 1024+1048576*1024 {
		t.Errorf("memory %d, capacity %d", mi.Topology[0].Memory, mi.MemoryCapacity)
	}
	if len(mi.HugePages) != 1 || mi.HugePages[0].NumPages != 0 {
		t.Errorf("huge pages %+v, want 0 pages of 2048 kB", mi.HugePages)
	}
}
