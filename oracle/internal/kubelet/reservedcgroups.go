package kubelet

import (
	"fmt"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"

	libcontainercgroups "github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// reservedEnforcement is one of enforceNodeAllocatableCgroups' reserved
// enforcements: its key in enforceNodeAllocatable, the cgroup it names,
// the reserved resource list, whether only the compressible resources are
// enforced, and the words of its failure event.
type reservedEnforcement struct {
	key          string
	cgroup       string
	reserved     v1.ResourceList
	compressible bool
	words        string
}

// reservedCgroups gives the reserved cgroups enforceNodeAllocatableCgroups
// updates at start (pkg/kubelet/cm/node_container_manager_linux.go), in its
// order (system-reserved, kube-reserved, then their -compressible forms),
// each update as enforceExistingCgroup makes it: the name read by the cgroup
// manager (CgroupName: for systemd only the last path element, a slice
// name), the configuration of getCgroupConfig (node allocatable's rules:
// memory, CPU shares, pids; every host huge page size limited to 0 as none
// can be reserved; every CPU when the CPU manager has no allocatable CPUs),
// memory.min = the reserved memory under MemoryQoS. The cgroup is taken to
// exist (Validate). Two enforcements naming one cgroup give one entry with
// the later update's values over the earlier's. A reserved list that is
// empty fails the kubelet's start, as a name the systemd driver cannot
// expand does (ToSystemd panics).
func (n *Node) reservedCgroups(inner cm.CgroupManager, toRes func(*cm.ResourceConfig) *libcontainercgroups.Resources,
	dir string, version int) ([]CgroupDoc, error) {
	kc := n.cfg.kc
	enforced := map[string]bool{}
	for _, v := range kc.EnforceNodeAllocatable {
		enforced[v] = true
	}
	all := []reservedEnforcement{
		{kubetypes.SystemReservedEnforcementKey, kc.SystemReservedCgroup, n.cfg.systemReserved, false, "System Reserved"},
		{kubetypes.KubeReservedEnforcementKey, kc.KubeReservedCgroup, n.cfg.kubeReserved, false, "Kube Reserved"},
		{kubetypes.SystemReservedCompressibleEnforcementKey, kc.SystemReservedCgroup, n.cfg.systemReserved, true, "System Reserved Compressible"},
		{kubetypes.KubeReservedCompressibleEnforcementKey, kc.KubeReservedCgroup, n.cfg.kubeReserved, true, "Kube Reserved Compressible"},
	}
	var order []string
	writes := map[string][]*libcontainercgroups.Resources{}
	for _, e := range all {
		if !enforced[e.key] {
			continue
		}
		name := inner.CgroupName(e.cgroup)
		rc := nodeCgroupConfig(e.reserved, e.compressible)
		if rc == nil {
			return nil, &StartupError{Message: fmt.Sprintf("Failed to enforce %s Cgroup Limits on %q: %q cgroup is not configured properly",
				e.words, e.cgroup, name)}
		}
		if n.cpu.GetAllocatableCPUs().IsEmpty() {
			rc.CPUSet = n.cpu.GetAllCPUs()
		}
		if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.MemoryQoS) && rc.Memory != nil {
			rc.Unified = map[string]string{cm.Cgroup2MemoryMin: strconv.FormatInt(*rc.Memory, 10)}
		}
		var path string
		var failure error
		func() {
			defer func() {
				if r := recover(); r != nil {
					failure = &StartupError{Message: fmt.Sprintf("the kubelet panics at start: %v", r)}
				}
			}()
			path = inner.Name(name) // (Validate's path: ToSystemd may panic)
		}()
		if failure != nil {
			return nil, failure
		}
		if res := toRes(rc); pathpkg.Clean("/"+path) == "/" && writesAnything(res) {
			// The hierarchy's root (the host's answer, not the kubelet's
			// code): with cgroupfs the kernel offers none of these files
			// there on v2 and refuses them on v1; with systemd Update goes
			// to the unit "-.scope" (libctCgroupConfig splits "/" into the
			// parent "-.slice" and an empty name), which does not exist.
			return nil, &StartupError{Message: fmt.Sprintf("Failed to enforce %s Cgroup Limits on %q: the cgroup hierarchy's root cannot be updated",
				e.words, e.cgroup)}
		}
		if _, seen := writes[path]; !seen {
			order = append(order, path)
		}
		writes[path] = append(writes[path], toRes(rc))
	}
	out := []CgroupDoc{}
	for k, path := range order {
		files, err := writeFilesSeq(filepath.Join(dir, fmt.Sprintf("reserved%d", k)), version, writes[path])
		if err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", path, err)
		}
		out = append(out, CgroupDoc{Path: "/" + strings.TrimPrefix(path, "/"), Kind: "reserved", Files: files})
	}
	return out, nil
}

// writesAnything: whether the runc writers would write a file for res.
func writesAnything(res *libcontainercgroups.Resources) bool {
	return res.Memory != 0 || res.CpuShares != 0 || res.CpuWeight != 0 || res.PidsLimit != nil ||
		res.CpusetCpus != "" || len(res.HugetlbLimit) > 0 || len(res.Unified) > 0
}
