package kubelet

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	_ "unsafe" // go:linkname

	libcontainercgroups "github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

// The container manager's node allocatable cgroup configuration
// (node_container_manager_linux.go getCgroupConfigInternal: memory, cpu
// shares, pids and huge page limits of a resource list).
//
//go:linkname nodeCgroupConfig k8s.io/kubernetes/pkg/kubelet/cm.getCgroupConfigInternal
func nodeCgroupConfig(rl v1.ResourceList, compressibleResourcesOnly bool) *cm.ResourceConfig

// recordingCgroups is a cgroup manager that keeps, per cgroup, every
// configuration the kubelet creates it with or updates it to, in order,
// instead of touching the host. Everything else is the real manager's
// (names).
type recordingCgroups struct {
	cm.CgroupManager
	mu     sync.Mutex
	frozen bool
	writes map[string][]*cm.ResourceConfig
}

func (r *recordingCgroups) record(c *cm.CgroupConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen || c == nil || c.ResourceParameters == nil {
		return
	}
	name := r.CgroupManager.Name(c.Name)
	rc := *c.ResourceParameters
	r.writes[name] = append(r.writes[name], &rc)
}

func (r *recordingCgroups) Create(_ klog.Logger, c *cm.CgroupConfig) error { r.record(c); return nil }
func (r *recordingCgroups) Update(_ klog.Logger, c *cm.CgroupConfig) error { r.record(c); return nil }
func (r *recordingCgroups) Validate(cm.CgroupName) error                   { return nil }
func (r *recordingCgroups) Exists(name cm.CgroupName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.writes[r.CgroupManager.Name(name)]
	return ok
}

// nodeAndQoSCgroups gives the node allocatable cgroup (kubepods) and the
// Burstable and BestEffort tiers as the kubelet writes them for the pods
// running now: the container manager's setupNode (the node allocatable
// cgroup created from node allocatable, the QoS container manager's Start),
// the node allocatable enforcement's update, then one pass of the QoS
// container manager's UpdateCgroups with these pods active (the pass every
// pod sync makes). Each cgroup's configurations go through the cgroup
// manager's conversion and the runc library's writers in that order.
//
// Node allocatable is capacity minus system and kube reserved; the
// kubelet's internal capacity also holds the host's process id limit
// (pid_max), which a simulated node does not have: pids.max of kubepods is
// left out.
func (n *Node) nodeAndQoSCgroups(ctx context.Context, inner cm.CgroupManager, toRes func(*cm.ResourceConfig) *libcontainercgroups.Resources,
	dir string, version int, pods []*v1.Pod, lay cgroupLayout) ([]CgroupDoc, error) {
	logger := klog.FromContext(ctx)
	rec := &recordingCgroups{CgroupManager: inner, writes: map[string][]*cm.ResourceConfig{}}
	root := lay.root

	allocatable := n.allocatableAbsolute()
	// The node allocatable root is sized from allocatable only with
	// cgroupsPerQOS and "pods" in enforceNodeAllocatable; else from the
	// capacity (createNodeAllocatableCgroups, enforceNodeAllocatableCgroups).
	sized := allocatable
	if !lay.perQOS || !lay.enforcePods {
		sized = cadvisor.CapacityFromMachineInfo(n.machine)
	}
	// containerManagerImpl.getCgroupConfig: with no allocatable CPUs
	// (policy none) the cgroup gets every CPU as its cpuset.
	nodeConfig := func() *cm.ResourceConfig {
		rc := nodeCgroupConfig(sized, false)
		if n.cpu.GetAllocatableCPUs().IsEmpty() {
			rc.CPUSet = n.cpu.GetAllCPUs()
		}
		return rc
	}
	if !lay.perQOS {
		return rootCgroup(logger, rec, toRes, dir, version, root, nodeConfig())
	}
	// createNodeAllocatableCgroups
	_ = rec.Create(logger, &cm.CgroupConfig{Name: root, ResourceParameters: nodeConfig()})

	kc := n.cfg.kc
	qm, err := cm.NewQOSContainerManager(&cm.CgroupSubsystems{MountPoints: map[string]string{}}, root,
		cm.NodeConfig{CgroupsPerQOS: true, MemoryReservationPolicy: kc.MemoryReservationPolicy}, rec)
	if err != nil {
		return nil, err
	}
	active := func() []*v1.Pod { return pods }
	if err := qm.Start(ctx, func() v1.ResourceList { return allocatable }, active); err != nil {
		return nil, err
	}
	// enforceNodeAllocatableCgroups (its update runs in a goroutine of the
	// kubelet; it comes before the first pod sync's QoS update).
	_ = rec.Update(logger, &cm.CgroupConfig{Name: root, ResourceParameters: enforceConfig(nodeConfig(), version)})
	// A pod sync's UpdateQOSCgroups with the running pods. Start's own
	// periodic pass runs in a goroutine with the same pods: whichever
	// comes first, the values are these; later passes are not recorded.
	if err := qm.UpdateCgroups(logger); err != nil {
		return nil, err
	}
	rec.mu.Lock()
	rec.frozen = true
	writes := rec.writes
	rec.mu.Unlock()
	// kubepods, then the tiers in podnuma's order (Start creates them in
	// Go map order).
	order := []string{inner.Name(root)}
	for _, tier := range []string{"burstable", "besteffort"} {
		order = append(order, inner.Name(cm.NewCgroupName(root, tier)))
	}

	out := []CgroupDoc{}
	for k, name := range order {
		if len(writes[name]) == 0 {
			return nil, fmt.Errorf("cgroup %s: the kubelet wrote nothing", name)
		}
		var res []*libcontainercgroups.Resources
		for _, rc := range writes[name] {
			res = append(res, toRes(rc))
		}
		files, err := writeFilesSeq(filepath.Join(dir, fmt.Sprintf("node%d", k)), version, res)
		if err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", name, err)
		}
		kind := "qos"
		if name == inner.Name(root) {
			kind = "node"
		}
		out = append(out, CgroupDoc{Path: "/" + strings.TrimPrefix(name, "/"), Kind: kind, Files: files})
	}
	return out, nil
}

// enforceConfig is enforceNodeAllocatableCgroups' configuration: the node
// allocatable root's, with the stale memory protection reset on cgroup v2
// when MemoryQoS is off.
func enforceConfig(rc *cm.ResourceConfig, version int) *cm.ResourceConfig {
	if !utilfeature.DefaultFeatureGate.Enabled(kubefeatures.MemoryQoS) && version == 2 {
		if rc.Unified == nil {
			rc.Unified = map[string]string{}
		}
		rc.Unified[cm.Cgroup2MemoryMin] = "0"
		rc.Unified[cm.Cgroup2MemoryLow] = "0"
	}
	return rc
}

// rootCgroup is what the kubelet writes without cgroupsPerQOS: no
// kubepods, no QoS tiers (the no-op QoS container manager); only
// enforceNodeAllocatableCgroups' update of the cgroup root itself, sized
// from the capacity, and only when the root is not "/" (an empty name).
func rootCgroup(logger klog.Logger, rec *recordingCgroups, toRes func(*cm.ResourceConfig) *libcontainercgroups.Resources,
	dir string, version int, root cm.CgroupName, rc *cm.ResourceConfig) ([]CgroupDoc, error) {
	out := []CgroupDoc{}
	if len(root) == 0 {
		return out, nil
	}
	_ = rec.Update(logger, &cm.CgroupConfig{Name: root, ResourceParameters: enforceConfig(rc, version)})
	name := rec.CgroupManager.Name(root)
	files, err := writeFilesSeq(filepath.Join(dir, "root"), version, []*libcontainercgroups.Resources{toRes(rec.writes[name][0])})
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", name, err)
	}
	return append(out, CgroupDoc{Path: "/" + strings.TrimPrefix(name, "/"), Kind: "root", Files: files}), nil
}
