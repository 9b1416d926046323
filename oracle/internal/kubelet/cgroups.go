package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	libcontainercgroups "github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	noopotel "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criapitesting "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/klog/v2"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	cmqos "k8s.io/kubernetes/pkg/kubelet/cm/qos"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/kuberuntime"
	"k8s.io/kubernetes/pkg/kubelet/logs"
	proberesults "k8s.io/kubernetes/pkg/kubelet/prober/results"
	"k8s.io/utils/ptr"

	"podnuma.io/oracle/internal/scenario"
)

// The cgroup version and the host's huge page sizes are read once per
// process from the machine the code runs on (opencontainers/cgroups
// IsCgroup2UnifiedMode, HugePageSizes; the kubelet's root controller
// list). The simulated node is the scenario's: the oracle marks those reads
// done and sets the answers itself before each run.

//go:linkname cgroupsUnifiedOnce github.com/opencontainers/cgroups.isUnifiedOnce
var cgroupsUnifiedOnce sync.Once

//go:linkname cgroupsUnified github.com/opencontainers/cgroups.isUnified
var cgroupsUnified bool

//go:linkname cgroupsHugePageSizesOnce github.com/opencontainers/cgroups.initHPSOnce
var cgroupsHugePageSizesOnce sync.Once

//go:linkname cgroupsHugePageSizes github.com/opencontainers/cgroups.hugePageSizes
var cgroupsHugePageSizes []string

//go:linkname kubeletRootControllersOnce k8s.io/kubernetes/pkg/kubelet/cm.availableRootControllersOnce
var kubeletRootControllersOnce sync.Once

//go:linkname kubeletRootControllers k8s.io/kubernetes/pkg/kubelet/cm.availableRootControllers
var kubeletRootControllers map[string]struct{}

// The kubelet's cgroup manager turns a ResourceConfig into the runc
// Resources it applies (pkg/kubelet/cm cgroupCommon.toResources: cpu
// shares or the kubelet's cpu.weight, quota, period, memory, pids,
// hugetlb for every page size of the host).
//
//go:linkname kubeletToResources k8s.io/kubernetes/pkg/kubelet/cm.(*cgroupCommon).toResources
func kubeletToResources(m unsafe.Pointer, logger klog.Logger, rc *cm.ResourceConfig) *libcontainercgroups.Resources

// The runtime manager's container resources (pkg/kubelet/kuberuntime
// generateLinuxContainerResources): what the kubelet sends the runtime in
// a container's LinuxContainerResources.
//
//go:linkname kuberuntimeContainerResources k8s.io/kubernetes/pkg/kubelet/kuberuntime.(*kubeGenericRuntimeManager).generateLinuxContainerResources
func kuberuntimeContainerResources(m unsafe.Pointer, ctx context.Context, pod *v1.Pod, container *v1.Container, enforceMemoryQoS bool) *runtimeapi.LinuxContainerResources

// internalLifecycle has the layout of pkg/kubelet/cm's
// internalContainerLifecycleImpl (three manager interfaces, in that order),
// whose PreCreateContainer puts the CPU manager's cpuset and the memory
// manager's NUMA nodes into the container config.
type internalLifecycle struct {
	cpuManager      cpumanager.Manager
	memoryManager   memorymanager.Manager
	topologyManager topologymanager.Manager
}

//go:linkname preCreateContainer k8s.io/kubernetes/pkg/kubelet/cm.(*internalContainerLifecycleImpl).PreCreateContainer
func preCreateContainer(i *internalLifecycle, logger klog.Logger, pod *v1.Pod, container *v1.Container, config *runtimeapi.ContainerConfig) error

// simulateHost makes the process-wide host reads answer for the simulated
// node: its cgroup version, its huge page sizes, every controller enabled.
func simulateHost(version int, pageSizes []string) {
	cgroupsUnifiedOnce.Do(func() {})
	cgroupsUnified = version == 2
	cgroupsHugePageSizesOnce.Do(func() {})
	cgroupsHugePageSizes = pageSizes
	kubeletRootControllersOnce.Do(func() {})
	kubeletRootControllers = map[string]struct{}{"cpu": {}, "cpuset": {}, "memory": {}, "hugetlb": {}, "pids": {}}
	libcontainercgroups.TestMode = true // files in a plain directory (see writeFiles)
}

// CgroupsDoc is the output of `cgroups`: the pod and container cgroups the
// kubelet and the runtime write after a step, in the shape of `podnuma
// cgroups plan -o json` (pod and container entries only).
type CgroupsDoc struct {
	Driver    string       `json:"driver"`
	Version   int          `json:"cgroupVersion"`
	Step      int          `json:"step"`
	Cgroups   []CgroupDoc  `json:"cgroups"`
	Unplanned []string     `json:"unplanned"`
	Runtime   RuntimeNotes `json:"runtime"`
}

// RuntimeNotes names what stands for the container runtime.
type RuntimeNotes struct {
	SwapController bool `json:"swapController"`
}

type CgroupDoc struct {
	Path      string            `json:"path,omitempty"`
	Kind      string            `json:"kind"`
	Pod       string            `json:"pod"`
	PodUID    string            `json:"podUID"`
	Container string            `json:"container,omitempty"`
	Files     map[string]string `json:"files"`
	// The CRI message the kubelet sends for a container (for debugging a
	// difference in the files).
	CRI *runtimeapi.LinuxContainerResources `json:"cri,omitempty"`
}

// CgroupsOptions select the cgroup driver and version.
type CgroupsOptions struct {
	Driver  string
	Version int
	Step    int // -1: the last step
	// CgroupRoot is the kubelet's --cgroup-root flag (nil: the
	// configuration's cgroupRoot; see cgrouproot.go).
	CgroupRoot *string
}

// hugePageSizes are the machine's huge page sizes as the runc library
// names them (2MB, 1GB): the library lists /sys/kernel/mm/hugepages, the
// directory cadvisor reads the MachineInfo's machine-wide HugePages from
// (every size the kernel offers, pages or not).
func (n *Node) hugePageSizes() []string {
	out := []string{}
	for _, hp := range n.machine.HugePages {
		if s, err := v1helper.HugePageUnitSizeFromByteSize(int64(hp.PageSize) * 1024); err == nil {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// podHasExclusiveCPUs and containerHasExclusiveCPUs are the container
// manager's PodHasExclusiveCPUs / ContainerHasExclusiveCPUs
// (container_manager_linux.go), restated over the oracle's CPU manager.
func (n *Node) podHasExclusiveCPUs(pod *v1.Pod) bool {
	all := append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodLevelResourceManagers) && resourcehelper.IsPodLevelResourcesSet(pod) {
		for i := range all {
			if n.cpu.GetResourceIsolationLevel(pod, &all[i]) != cmqos.ResourceIsolationContainer {
				return false
			}
		}
		return true
	}
	for i := range all {
		if !n.cpu.GetExclusiveCPUs(string(pod.UID), all[i].Name).IsEmpty() {
			return true
		}
	}
	return false
}

func (n *Node) containerHasExclusiveCPUs(pod *v1.Pod, c *v1.Container) bool {
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodLevelResourceManagers) {
		return n.cpu.GetResourceIsolationLevel(pod, c) == cmqos.ResourceIsolationContainer
	}
	return !n.cpu.GetExclusiveCPUs(string(pod.UID), c.Name).IsEmpty()
}

// runtimeContainerManager is what the runtime manager asks of the container
// manager while building a container's resources: the stub for everything
// else.
type runtimeContainerManager struct {
	cm.ContainerManager
	n *Node
}

func (r runtimeContainerManager) ContainerHasExclusiveCPUs(_ klog.Logger, pod *v1.Pod, c *v1.Container) bool {
	return r.n.containerHasExclusiveCPUs(pod, c)
}

func (r runtimeContainerManager) PodHasExclusiveCPUs(_ klog.Logger, pod *v1.Pod) bool {
	return r.n.podHasExclusiveCPUs(pod)
}

type noPodState struct{}

func (noPodState) IsPodTerminationRequested(types.UID) bool { return false }
func (noPodState) ShouldPodContentBeRemoved(types.UID) bool { return false }
func (noPodState) ShouldPodRuntimeBeRemoved(types.UID) bool { return false }

// runtimeManager builds the kubelet's runtime manager with the kubelet's
// arguments for the fields container resources read (cpuCFSQuota and its
// period, singleProcessOOMKill as kubelet.go defaults it, swap behaviour,
// memory QoS settings, node allocatable) and a fake CRI runtime. The swap
// controller is taken to be present.
func (n *Node) runtimeManager(dir string, version int) (unsafe.Pointer, error) {
	kc := n.cfg.kc
	var singleProcessOOMKill *bool
	if version == 1 {
		singleProcessOOMKill = ptr.To(true)
	} else if kc.SingleProcessOOMKill == nil {
		singleProcessOOMKill = ptr.To(false)
	} else {
		singleProcessOOMKill = kc.SingleProcessOOMKill
	}
	allocatable := n.allocatableAbsolute()
	rt, _, err := kuberuntime.NewKubeGenericRuntimeManager(n.ctx,
		record.NewFakeRecorder(100),
		proberesults.NewManager(), proberesults.NewManager(), proberesults.NewManager(),
		dir, filepath.Join(dir, "logs"), n.machine, noPodState{}, kc.MaxPods,
		kubecontainer.RealOS{}, nil, nil,
		flowcontrol.NewBackOff(time.Second, time.Minute), kc.SerializeImagePulls, kc.MaxParallelImagePulls,
		float32(kc.RegistryPullQPS), int(kc.RegistryBurst),
		string(kc.ImagePullCredentialsVerificationPolicy), kc.PreloadedImagesVerificationAllowlist, "", "",
		singleProcessOOMKill, kc.CPUCFSQuota, kc.CPUCFSQuotaPeriod, kc.DefaultPodSysctls,
		criapitesting.NewFakeRuntimeService(), criapitesting.NewFakeImageService(),
		runtimeContainerManager{cm.NewStubContainerManager(), n}, logs.NewStubContainerLogManager(), nil,
		kc.SeccompDefault, kc.MemorySwap.SwapBehavior,
		func() v1.ResourceList { return allocatable },
		kc.MemoryThrottlingFactor, kc.MemoryReservationPolicy,
		nil, noopotel.NewTracerProvider(), nil, nil, nil)
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(rt)
	// The swap controller check reads the host; the simulated node has one.
	f := v.Elem().FieldByName("getSwapControllerAvailable")
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(func() bool { return true }))
	return v.UnsafePointer(), nil
}

// created is what the kubelet and the runtime wrote for a pod when it
// started: the pod cgroup's resources and each container's CRI resources.
type created struct {
	pod        *v1.Pod
	podRes     *libcontainercgroups.Resources
	containers map[string]*runtimeapi.LinuxContainerResources
}

// Cgroups runs the scenario up to the step and gives the pod and container
// cgroups of the pods running then. Each pod's cgroup and its containers'
// resources are computed when the pod is admitted, as the kubelet creates
// them then (pod cgroup: podContainerManagerImpl.EnsureExists, only when
// the cgroup does not exist yet; containers: the runtime manager's
// container config, then the internal lifecycle's PreCreateContainer).
// Afterwards only a container's cpuset changes: the CPU manager's
// reconcile loop gives every running container its current
// GetCPUAffinity.
func (n *Node) Cgroups(opts CgroupsOptions) (*CgroupsDoc, error) {
	if len(n.scn.Steps) == 0 {
		return nil, &scenario.InputError{Path: "steps", Message: "the scenario has no steps"}
	}
	if opts.Step >= len(n.scn.Steps) {
		return nil, &scenario.InputError{Message: fmt.Sprintf("--step %d: the scenario has steps 0-%d", opts.Step, len(n.scn.Steps)-1)}
	}
	lay, err := n.layout(opts)
	if err != nil {
		return nil, err
	}
	simulateHost(opts.Version, n.hugePageSizes())
	logger := klog.FromContext(n.ctx)
	dir, err := os.MkdirTemp(StateDirBase(), "kubelet-oracle-cgroups-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rtm, err := n.runtimeManager(dir, opts.Version)
	if err != nil {
		return nil, err
	}
	subsystems := &cm.CgroupSubsystems{MountPoints: map[string]string{}}
	for _, s := range []string{"cpu", "cpuacct", "cpuset", "memory", "hugetlb", "pids", "systemd"} {
		subsystems.MountPoints[s] = filepath.Join("/sys/fs/cgroup", s)
	}
	var cgm cm.CgroupManager
	if opts.Version == 2 {
		cgm = cm.NewCgroupV2Manager(logger, subsystems, opts.Driver)
	} else {
		cgm = cm.NewCgroupV1Manager(logger, subsystems, opts.Driver)
	}
	common := reflect.ValueOf(cgm).Elem().Field(0) // the embedded cgroupCommon
	commonPtr := unsafe.Pointer(common.UnsafeAddr())

	kc := n.cfg.kc
	enforceMemoryQoS := utilfeature.DefaultFeatureGate.Enabled(kubefeatures.MemoryQoS) && opts.Version == 2
	cpuPeriod := uint64(kc.CPUCFSQuotaPeriod.Duration / time.Microsecond)
	lifecycle := &internalLifecycle{n.cpu, n.memory, n.topology}

	made := map[string]*created{}
	start := func(pod *v1.Pod) error {
		enforceCPULimits := kc.CPUCFSQuota
		if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.DisableCPUQuotaWithExclusiveCPUs) && n.podHasExclusiveCPUs(pod) {
			enforceCPULimits = false
		}
		rc := cm.ResourceConfigForPod(pod, enforceCPULimits, cpuPeriod, enforceMemoryQoS, kc.MemoryReservationPolicy)
		if kc.PodPidsLimit > 0 {
			rc.PidsLimit = &kc.PodPidsLimit
		}
		if enforceMemoryQoS && kc.MemoryThrottlingFactor != nil {
			cm.ApplyPodLevelMemoryHigh(pod, rc, *kc.MemoryThrottlingFactor)
		}
		c := &created{pod: pod, podRes: kubeletToResources(commonPtr, logger, rc), containers: map[string]*runtimeapi.LinuxContainerResources{}}
		for _, ctr := range allContainers(pod) {
			lcr := kuberuntimeContainerResources(rtm, n.ctx, pod, ctr, enforceMemoryQoS)
			config := &runtimeapi.ContainerConfig{Linux: &runtimeapi.LinuxContainerConfig{Resources: lcr}}
			if err := preCreateContainer(lifecycle, logger, pod, ctr, config); err != nil {
				return err
			}
			c.containers[ctr.Name] = lcr
		}
		made[string(pod.UID)] = c
		return nil
	}

	last := opts.Step
	if last < 0 {
		last = len(n.scn.Steps) - 1
	}
	for i, st := range n.scn.Steps[:last+1] {
		sd, err := n.step(i, st)
		if err != nil {
			return nil, err
		}
		admitted := sd.Admitted != nil && *sd.Admitted
		switch {
		case st.Op == "addPod" && admitted:
			// A pod already running keeps the cgroups it has.
			if rp, ok := n.running[sd.PodUID]; ok && made[sd.PodUID] == nil {
				if err := start(rp.pod); err != nil {
					return nil, err
				}
			}
		case st.Op == "addPod" || st.Op == "removePod":
			delete(made, sd.PodUID) // rejected (terminal) or gone
		}
	}

	doc := &CgroupsDoc{Driver: opts.Driver, Version: opts.Version, Step: last, Cgroups: []CgroupDoc{},
		Unplanned: []string{}, Runtime: RuntimeNotes{SwapController: true}}
	// The QoS tiers' values come from the active pods' specs. A pod known
	// only from checkpoint entries has no spec (its stand-in's requests are
	// what its entries hold, not a pod's QoS class): it is left out.
	active := make([]*v1.Pod, 0, len(n.order))
	for _, uid := range n.order {
		if rp := n.running[uid]; !rp.restored {
			active = append(active, rp.pod)
		}
	}
	toRes := func(rc *cm.ResourceConfig) *libcontainercgroups.Resources {
		return kubeletToResources(commonPtr, logger, rc)
	}
	tiers, err := n.nodeAndQoSCgroups(n.ctx, cgm, toRes, dir, opts.Version, active, lay)
	if err != nil {
		return nil, err
	}
	doc.Cgroups = append(doc.Cgroups, tiers...)
	reserved, err := n.reservedCgroups(cgm, toRes, dir, opts.Version)
	if err != nil {
		return nil, err
	}
	doc.Cgroups = append(doc.Cgroups, reserved...)
	uids := make([]string, 0, len(n.running))
	for _, uid := range n.order {
		rp := n.running[uid]
		if rp.restored || made[uid] == nil {
			doc.Unplanned = append(doc.Unplanned, uid)
			continue
		}
		uids = append(uids, uid)
	}
	sort.Strings(doc.Unplanned)
	qosRank := map[v1.PodQOSClass]int{v1.PodQOSGuaranteed: 0, v1.PodQOSBurstable: 1, v1.PodQOSBestEffort: 2}
	sort.SliceStable(uids, func(i, j int) bool {
		a, b := n.running[uids[i]], n.running[uids[j]]
		qa, qb := qosRank[qos.GetPodQOS(a.pod)], qosRank[qos.GetPodQOS(b.pod)]
		if qa != qb {
			return qa < qb
		}
		if a.ref != b.ref {
			return a.ref < b.ref
		}
		return uids[i] < uids[j]
	})
	for k, uid := range uids {
		rp := n.running[uid]
		c := made[uid]
		// Without cgroupsPerQOS the pod container manager is the no-op
		// one: no pod cgroup (the runtime gets no cgroup parent).
		if lay.perQOS {
			files, err := writeFiles(filepath.Join(dir, fmt.Sprintf("pod%d", k)), opts.Version, c.podRes)
			if err != nil {
				return nil, fmt.Errorf("pod %s: %w", rp.ref, err)
			}
			doc.Cgroups = append(doc.Cgroups, CgroupDoc{Path: podCgroupPath(c.pod, opts.Driver, lay.root), Kind: "pod", Pod: rp.ref,
				PodUID: uid, Files: files})
		}
		for j, ctr := range allContainers(rp.pod) {
			if rp.removed[ctr.Name] || c.containers[ctr.Name] == nil {
				continue
			}
			lcr := proto.Clone(c.containers[ctr.Name]).(*runtimeapi.LinuxContainerResources)
			// The reconcile loop: UpdateContainerResources with the
			// container's current CPU affinity.
			if cpus := n.cpu.GetCPUAffinity(uid, ctr.Name); !cpus.IsEmpty() {
				lcr.CpusetCpus = cpus.String()
			}
			files, err := writeFiles(filepath.Join(dir, fmt.Sprintf("pod%d-c%d", k, j)), opts.Version, runtimeResources(lcr, opts.Version))
			if err != nil {
				return nil, fmt.Errorf("pod %s container %s: %w", rp.ref, ctr.Name, err)
			}
			doc.Cgroups = append(doc.Cgroups, CgroupDoc{Kind: "container", Pod: rp.ref, PodUID: uid, Container: ctr.Name,
				Files: files, CRI: lcr})
		}
	}
	return doc, nil
}

// podCgroupPath is the pod cgroup's name under the node allocatable root
// (kubepods under the cgroup root, cgroupsPerQOS): Guaranteed pods under
// kubepods, the others under their QoS tier (qos_container_manager_linux.go),
// in the driver's form (the cgroup manager's ToSystemd / ToCgroupfs).
func podCgroupPath(pod *v1.Pod, driver string, kubepods cm.CgroupName) string {
	parent := kubepods
	switch qos.GetPodQOS(pod) {
	case v1.PodQOSBurstable:
		parent = cm.NewCgroupName(parent, strings.ToLower(string(v1.PodQOSBurstable)))
	case v1.PodQOSBestEffort:
		parent = cm.NewCgroupName(parent, strings.ToLower(string(v1.PodQOSBestEffort)))
	}
	name := cm.NewCgroupName(parent, cm.GetPodCgroupNameSuffix(pod.UID))
	if driver == "systemd" {
		return name.ToSystemd()
	}
	return name.ToCgroupfs()
}

// runtimeResources is what containerd and runc make of a container's CRI
// resources (containerd internal/cri/opts WithResources: every non-zero
// field into the OCI spec, swap = the memory limit when swap is
// controlled; runc's spec conversion: OCI resources into the cgroup
// library's, shares into cpu.weight on v2 with the library's own
// ConvertCPUSharesToCgroupV2Value). Neither is in the module graph, so
// this mapping is restated; the converter and the file writers are the
// library's.
func runtimeResources(lcr *runtimeapi.LinuxContainerResources, version int) *libcontainercgroups.Resources {
	r := &libcontainercgroups.Resources{SkipDevices: true}
	if lcr == nil {
		return r
	}
	r.CpuPeriod = uint64(lcr.CpuPeriod)
	r.CpuQuota = lcr.CpuQuota
	if lcr.CpuShares != 0 {
		r.CpuShares = uint64(lcr.CpuShares)
		if version == 2 {
			r.CpuWeight = libcontainercgroups.ConvertCPUSharesToCgroupV2Value(r.CpuShares)
		}
	}
	r.CpusetCpus = lcr.CpusetCpus
	r.CpusetMems = lcr.CpusetMems
	if lcr.MemoryLimitInBytes != 0 {
		r.Memory = lcr.MemoryLimitInBytes
		r.MemorySwap = lcr.MemoryLimitInBytes
		if lcr.MemorySwapLimitInBytes != 0 {
			r.MemorySwap = lcr.MemorySwapLimitInBytes
		}
	}
	for _, h := range lcr.HugepageLimits {
		r.HugetlbLimit = append(r.HugetlbLimit, &libcontainercgroups.HugepageLimit{Pagesize: h.PageSize, Limit: h.Limit})
	}
	if len(lcr.Unified) > 0 && version == 2 {
		r.Unified = map[string]string{}
		for k, v := range lcr.Unified {
			r.Unified[k] = v
		}
	}
	return r
}

// epoch marks the files a fresh cgroup has before anything is written.
var epoch = time.Unix(0, 0)

// writeFiles applies resources with the cgroup library's own writers
// (fs2.Manager.Set on v2, fs.Manager.Set on v1) to a directory standing
// for a new cgroup (the library's test mode: files are created as
// written), and gives the files written with their final contents.
func writeFiles(dir string, version int, r *libcontainercgroups.Resources) (map[string]string, error) {
	return writeFilesSeq(dir, version, []*libcontainercgroups.Resources{r})
}

// writeFilesSeq is writeFiles for a cgroup created with the first
// resources and updated to each of the others in turn.
func writeFilesSeq(dir string, version int, all []*libcontainercgroups.Resources) (map[string]string, error) {
	r := all[0]
	seed := map[string]string{}
	paths := map[string]string{}
	if version == 2 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		seed[filepath.Join(dir, "cgroup.controllers")] = "cpuset cpu io memory hugetlb pids rdma misc\n"
		seed[filepath.Join(dir, "memory.current")] = "0\n"
	} else {
		for _, s := range []string{"cpu", "cpuacct", "cpuset", "memory", "hugetlb", "pids", "devices", "freezer",
			"blkio", "net_cls", "net_prio", "perf_event", "rdma", "misc", "name=systemd"} {
			p := filepath.Join(dir, strings.TrimPrefix(s, "name="))
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, err
			}
			paths[s] = p
		}
		seed[filepath.Join(paths["memory"], "memory.limit_in_bytes")] = "9223372036854771712\n"
		seed[filepath.Join(paths["memory"], "memory.memsw.limit_in_bytes")] = "9223372036854771712\n"
		seed[filepath.Join(paths["memory"], "memory.usage_in_bytes")] = "0\n"
		seed[filepath.Join(paths["freezer"], "freezer.state")] = "THAWED\n"
	}
	for p, v := range seed {
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			return nil, err
		}
		if err := os.Chtimes(p, epoch, epoch); err != nil {
			return nil, err
		}
	}
	cg := &libcontainercgroups.Cgroup{Resources: r}
	if version == 2 {
		m, err := fs2.NewManager(cg, dir)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if err := m.Set(r); err != nil {
				return nil, err
			}
		}
	} else {
		m, err := fs.NewManager(cg, paths)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if err := m.Set(r); err != nil {
				return nil, err
			}
		}
	}
	files := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.ModTime().Equal(epoch) {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.Base(p)] = strings.TrimRight(string(raw), "\n")
		return nil
	})
	return files, err
}

// allocatableAbsolute is the container manager's GetNodeAllocatableAbsolute:
// capacity minus system and kube reserved (no eviction threshold), never
// negative.
func (n *Node) allocatableAbsolute() v1.ResourceList {
	allocatable := v1.ResourceList{}
	for k, v := range cadvisor.CapacityFromMachineInfo(n.machine) {
		value := v.DeepCopy()
		if r, ok := n.cfg.systemReserved[k]; ok {
			value.Sub(r)
		}
		if r, ok := n.cfg.kubeReserved[k]; ok {
			value.Sub(r)
		}
		if value.Sign() < 0 {
			value.Set(0)
		}
		allocatable[k] = value
	}
	return allocatable
}
