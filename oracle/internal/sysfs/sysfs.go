// Package sysfs turns a copy of /sys into the cadvisor MachineInfo the
// kubelet builds its topology from, with cadvisor's own code.
//
// cadvisor reads sysfs through its sysfs.SysFs interface and assembles
// NUMA nodes, cores, caches, memory, huge pages and distances in
// sysinfo.GetNodesInfo. rootedSysFs implements that interface over a
// snapshot directory: every accessor that takes a path delegates to
// cadvisor's real implementation with the path moved under the snapshot
// root; the four accessors whose /sys paths are compiled into cadvisor
// (GetNodesPaths, GetCaches, GetCacheInfo, IsCPUOnline) read the same files
// under the snapshot root themselves, in the same formats.
package sysfs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	cadvisorsysfs "github.com/google/cadvisor/lib/utils/sysfs"
	"github.com/google/cadvisor/lib/utils/sysinfo"
)

type rootedSysFs struct {
	cadvisorsysfs.SysFs        // cadvisor's real implementation
	root                string // the directory that stands for /sys
}

// under maps a /sys path into the snapshot (paths already inside it are
// left alone).
func (fs *rootedSysFs) under(p string) string {
	if strings.HasPrefix(p, fs.root+"/") || p == fs.root {
		return p
	}
	if rest, ok := strings.CutPrefix(p, "/sys"); ok {
		return fs.root + rest
	}
	return p
}

func (fs *rootedSysFs) GetNodesPaths() ([]string, error) {
	return filepath.Glob(filepath.Join(fs.root, "devices/system/node/node*[0-9]"))
}

func (fs *rootedSysFs) GetCPUsPaths(p string) ([]string, error) {
	return fs.SysFs.GetCPUsPaths(fs.under(p))
}

func (fs *rootedSysFs) GetCoreID(p string) (string, error) {
	return fs.SysFs.GetCoreID(fs.under(p))
}

func (fs *rootedSysFs) GetCPUPhysicalPackageID(p string) (string, error) {
	return fs.SysFs.GetCPUPhysicalPackageID(fs.under(p))
}

func (fs *rootedSysFs) GetBookID(p string) (string, error) {
	return fs.SysFs.GetBookID(fs.under(p))
}

func (fs *rootedSysFs) GetDrawerID(p string) (string, error) {
	return fs.SysFs.GetDrawerID(fs.under(p))
}

func (fs *rootedSysFs) GetMemInfo(p string) (string, error) {
	return fs.SysFs.GetMemInfo(fs.under(p))
}

func (fs *rootedSysFs) GetHugePagesInfo(p string) ([]os.FileInfo, error) {
	return fs.SysFs.GetHugePagesInfo(fs.under(p))
}

func (fs *rootedSysFs) GetHugePagesNr(dir, name string) (string, error) {
	return fs.SysFs.GetHugePagesNr(fs.under(dir), name)
}

func (fs *rootedSysFs) GetDistances(p string) (string, error) {
	return fs.SysFs.GetDistances(fs.under(p))
}

func (fs *rootedSysFs) cacheDir(cpu int) string {
	return filepath.Join(fs.root, "devices/system/cpu", fmt.Sprintf("cpu%d", cpu), "cache")
}

// GetCaches lists cpuN/cache of the snapshot.
func (fs *rootedSysFs) GetCaches(cpu int) ([]os.FileInfo, error) {
	entries, err := os.ReadDir(fs.cacheDir(cpu))
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// GetCacheInfo reads id, size ("NK"), level, type and the CPU count of
// shared_cpu_map of one cache, as cadvisor does.
func (fs *rootedSysFs) GetCacheInfo(cpu int, name string) (cadvisorsysfs.CacheInfo, error) {
	dir := filepath.Join(fs.cacheDir(cpu), name)
	read := func(file string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		return string(b), err
	}
	var info cadvisorsysfs.CacheInfo
	text, err := read("id")
	if err != nil {
		return info, err
	}
	if n, err := fmt.Sscanf(text, "%d", &info.Id); err != nil || n != 1 {
		return cadvisorsysfs.CacheInfo{}, err
	}
	if text, err = read("size"); err != nil {
		return cadvisorsysfs.CacheInfo{}, err
	}
	if n, err := fmt.Sscanf(text, "%dK", &info.Size); err != nil || n != 1 {
		return cadvisorsysfs.CacheInfo{}, err
	}
	info.Size *= 1024
	if text, err = read("level"); err != nil {
		return cadvisorsysfs.CacheInfo{}, err
	}
	if n, err := fmt.Sscanf(text, "%d", &info.Level); err != nil || n != 1 {
		return cadvisorsysfs.CacheInfo{}, err
	}
	if text, err = read("type"); err != nil {
		return cadvisorsysfs.CacheInfo{}, err
	}
	info.Type = strings.TrimSpace(text)
	if text, err = read("shared_cpu_map"); err != nil {
		return cadvisorsysfs.CacheInfo{}, err
	}
	// cadvisor's getCPUCount (utils/sysfs/sysfs.go): the comma-separated
	// hex words, each trimmed and parsed as a uint64; count the set bits.
	for _, word := range strings.Split(text, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(word), 16, 64)
		if err != nil {
			return cadvisorsysfs.CacheInfo{}, err
		}
		for ; v != 0; v &= v - 1 {
			info.Cpus++
		}
	}
	return info, nil
}

// IsCPUOnline: every CPU is online without devices/system/cpu/online
// (kernel CPU hotplug disabled); otherwise the list is walked as cadvisor
// v0.60.5 (utils/sysfs isCPUOnline) walks it: the CPU's id is the first
// "cpu<digits>" of its /sys path cut to a uint16, and the CPU is online at
// the first entry holding it; an error before that (a bad entry, an empty
// file) makes it offline.
func (fs *rootedSysFs) IsCPUOnline(cpuPath string) bool {
	online := filepath.Join(fs.root, "devices/system/cpu/online")
	if _, err := os.Stat(online); err != nil && os.IsNotExist(err) {
		return true
	}
	// cadvisor sees /sys paths: match the id there, not in the snapshot's
	// own directory names
	sysPath := cpuPath
	if rest, ok := strings.CutPrefix(cpuPath, fs.root); ok {
		sysPath = "/sys" + rest
	}
	m := cpuIDPattern.FindStringSubmatch(sysPath)
	if len(m) != 2 {
		return false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return false
	}
	raw, err := os.ReadFile(online)
	if err != nil {
		return false
	}
	held, err := listHolds(raw, uint16(n))
	return err == nil && held
}

var cpuIDPattern = regexp.MustCompile("cpu([0-9]+)")

// listHolds reports whether the CPU list holds id, reading its entries in
// order and stopping at the first that holds it; ids and range bounds are
// uint16s, and a malformed entry reached first is an error.
func listHolds(raw []byte, id uint16) (bool, error) {
	if len(raw) == 0 {
		return false, fmt.Errorf("empty CPU list")
	}
	for _, entry := range strings.Split(strings.TrimSpace(string(raw)), ",") {
		bounds := strings.SplitN(entry, "-", 3)
		if len(bounds) > 2 {
			return false, fmt.Errorf("bad entry %q", entry)
		}
		lo, err := strconv.ParseUint(bounds[0], 10, 16)
		if err != nil {
			return false, err
		}
		hi := lo
		if len(bounds) == 2 {
			if hi, err = strconv.ParseUint(bounds[1], 10, 16); err != nil {
				return false, err
			}
			if lo > hi {
				return false, fmt.Errorf("bad range %q", entry)
			}
		}
		if uint64(id) >= lo && uint64(id) <= hi {
			return true, nil
		}
	}
	return false, nil
}

// Root is the directory standing for /sys: dir itself, or dir/sys when dir
// holds a copy of the root file system's sys/.
func Root(dir string) string {
	if st, err := os.Stat(filepath.Join(dir, "devices")); err == nil && st.IsDir() {
		return filepath.Clean(dir)
	}
	if st, err := os.Stat(filepath.Join(dir, "sys", "devices")); err == nil && st.IsDir() {
		return filepath.Join(filepath.Clean(dir), "sys")
	}
	return filepath.Clean(dir)
}

// memTotal matches the line cadvisor's GetMachineMemoryCapacity reads
// (machine/machine.go), in kB.
var memTotal = regexp.MustCompile(`MemTotal:\s*([0-9]+) kB`)

// machineMemory is cadvisor's GetMachineMemoryCapacity for the snapshot:
// MemTotal of the proc/meminfo beside the tree (/proc/meminfo for /sys), in
// bytes (the kB figure times 1024, wrapping as cadvisor's uint64 does).
// Found is false when there is no such file: the nodes' sum stands in.
func machineMemory(root string) (bytes uint64, found bool, err error) {
	path := filepath.Join(filepath.Dir(root), "proc", "meminfo")
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	m := memTotal.FindSubmatch(raw)
	if len(m) != 2 {
		return 0, false, fmt.Errorf("%s: failed to match MemTotal", path)
	}
	kb, err := strconv.ParseUint(string(m[1]), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return kb * 1024, true, nil
}

// MachineInfo reads the snapshot at dir with cadvisor's GetNodesInfo.
// Machine-wide figures are derived from the nodes, as cadvisor's would be on
// the machine the snapshot came from: the logical CPU count GetNodesInfo
// gives, sockets and physical cores counted over the online CPUs, huge pages
// summed over the nodes; memory is MemTotal of the proc/meminfo beside the
// tree when there is one (machineMemory), else the nodes' sum.
func MachineInfo(dir string) (*cadvisorapi.MachineInfo, error) {
	root := Root(dir)
	if st, err := os.Stat(filepath.Join(root, "devices/system/cpu")); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a copy of /sys (no devices/system/cpu)", dir)
	}
	fs := &rootedSysFs{SysFs: cadvisorsysfs.NewRealSysFs(), root: root}
	nodes, cores, err := sysinfo.GetNodesInfo(fs)
	if err != nil {
		return nil, err
	}
	mi := &cadvisorapi.MachineInfo{NumCores: cores, Topology: nodes}
	sockets := map[int]bool{}
	type coreKey struct{ socket, id int }
	physical := map[coreKey]bool{}
	pages := map[uint64]uint64{}
	var sizes []uint64
	for _, n := range nodes {
		mi.MemoryCapacity += n.Memory
		for _, c := range n.Cores {
			sockets[c.SocketID] = true
			physical[coreKey{c.SocketID, c.Id}] = true
		}
		for _, hp := range n.HugePages {
			if _, ok := pages[hp.PageSize]; !ok {
				sizes = append(sizes, hp.PageSize)
			}
			pages[hp.PageSize] += hp.NumPages
		}
	}
	if total, found, err := machineMemory(root); err != nil {
		return nil, err
	} else if found {
		mi.MemoryCapacity = total
	}
	mi.NumSockets = len(sockets)
	mi.NumPhysicalCores = len(physical)
	slices.Sort(sizes)
	for _, size := range sizes {
		mi.HugePages = append(mi.HugePages, cadvisorapi.HugePagesInfo{PageSize: size, NumPages: pages[size]})
	}
	return mi, nil
}
