package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	_ "unsafe" // go:linkname

	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/systemd"
)

// The cgroup v1 managers of opencontainers/cgroups look their controllers'
// mounts up once per process and keep them: the mounts of fstype "cgroup"
// read from mountinfo (v1_utils.go readCgroupMountinfo), whether the host
// is cgroup v2 unified (utils.go IsCgroup2UnifiedMode), and, for the fs
// manager, the directory holding the hierarchies (fs/paths.go rootPath).
// The oracle fills those caches before the first v1 manager is made, with
// what a cgroup v1 host that systemd booted has: a tmpfs at /sys/fs/cgroup
// and one cgroup mount per hierarchy under it (cpu and cpuacct mounted
// together, net_cls and net_prio too, systemd's named hierarchy). The
// managers' own code then computes every path from them.

//go:linkname v1MountsOnce github.com/opencontainers/cgroups.readMountinfoOnce
var v1MountsOnce sync.Once

//go:linkname v1Mounts github.com/opencontainers/cgroups.cgroupMountinfo
var v1Mounts []*mountinfo.Info

//go:linkname unifiedOnce github.com/opencontainers/cgroups.isUnifiedOnce
var unifiedOnce sync.Once

//go:linkname unified github.com/opencontainers/cgroups.isUnified
var unified bool

//go:linkname fsRoot github.com/opencontainers/cgroups/fs.cgroupRoot
var fsRoot string

const v1Root = "/sys/fs/cgroup"

// v1Hierarchies: each mount's directory under v1Root and the options that
// name its controllers (as systemd mounts them on a cgroup v1 host).
var v1Hierarchies = [][2]string{
	{"systemd", "xattr,name=systemd"},
	{"blkio", "blkio"},
	{"cpu,cpuacct", "cpu,cpuacct"},
	{"cpuset", "cpuset"},
	{"devices", "devices"},
	{"freezer", "freezer"},
	{"hugetlb", "hugetlb"},
	{"memory", "memory"},
	{"misc", "misc"},
	{"net_cls,net_prio", "net_cls,net_prio"},
	{"perf_event", "perf_event"},
	{"pids", "pids"},
	{"rdma", "rdma"},
}

var v1Once sync.Once

func setUpV1() {
	v1Once.Do(func() {
		unifiedOnce.Do(func() {})
		unified = false
		v1MountsOnce.Do(func() {})
		v1Mounts = nil
		for _, h := range v1Hierarchies {
			v1Mounts = append(v1Mounts, &mountinfo.Info{
				Mountpoint: filepath.Join(v1Root, h[0]), Root: "/", FSType: "cgroup", Source: "cgroup",
				Options: "rw,nosuid,nodev,noexec,relatime", VFSOptions: "rw," + h[1],
			})
		}
		fsRoot = v1Root
	})
}

// placeV1 is the path under each controller's mount that the cgroup v1
// manager of the driver gives the cgroup c, or an error when the managers
// refuse it or give controllers different paths.
func placeV1(driver string, c *cgroups.Cgroup) (string, error) {
	setUpV1()
	if cgroups.IsCgroup2UnifiedMode() {
		return "", fmt.Errorf("the cgroup v1 mounts were not given to the managers")
	}
	var paths map[string]string
	if driver == "systemd" {
		m, err := systemd.NewLegacyManager(c, nil)
		if err != nil {
			return "", err
		}
		paths = m.GetPaths()
	} else {
		if c.Resources == nil {
			c.Resources = &cgroups.Resources{}
		}
		m, err := fs.NewManager(c, nil)
		if err != nil {
			return "", err
		}
		paths = m.GetPaths()
	}
	// Each controller's directory is its hierarchy's mount joined with the
	// path the manager computed; the mounts are directories of v1Root
	// (those given here, or the host's own where it has cgroup v1 ones:
	// the managers look at /sys/fs/cgroup/<controller> first, and a hybrid
	// host adds its cgroup v2 mount, /sys/fs/cgroup/unified).
	got := map[string][]string{}
	for subsys, full := range paths {
		rel, err := filepath.Rel(v1Root, full)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return "", fmt.Errorf("controller %q: %s is not under %s", subsys, full, v1Root)
		}
		_, inner, _ := strings.Cut(rel, "/")
		got["/"+inner] = append(got["/"+inner], subsys)
	}
	if len(got) != 1 {
		var said []string
		for p, ss := range got {
			sort.Strings(ss)
			said = append(said, p+" ("+strings.Join(ss, ",")+")")
		}
		sort.Strings(said)
		return "", fmt.Errorf("the controllers' paths differ: %s", strings.Join(said, "; "))
	}
	for p := range got {
		return p, nil
	}
	return "", fmt.Errorf("no controller")
}
