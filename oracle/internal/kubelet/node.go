package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe" // go:linkname, managerPointer

	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/pkg/kubelet/nodestatus"
	"k8s.io/kubernetes/pkg/kubelet/status"
	"k8s.io/utils/cpuset"

	"podnuma.io/oracle/internal/scenario"
)

// The device manager's exported constructor puts its plugin socket and its
// checkpoint under /var/lib/kubelet/device-plugins; the unexported one it
// calls takes the socket path, which lets every run keep them in its own
// temporary directory. Same code, other directory.
//
//go:linkname newDeviceManager k8s.io/kubernetes/pkg/kubelet/cm/devicemanager.newManagerImpl
func newDeviceManager(logger klog.Logger, socketPath string, topology []cadvisorapi.Node, store topologymanager.Store) (*devicemanager.ManagerImpl, error)

// The CPU and memory managers' removeStaleState (unexported methods of
// their unexported manager types; the receiver is passed as the pointer it
// is): what the managers run, with the sources ready, at the start of every
// hint and allocation request and (the CPU manager) in its reconcile loop.
//
//go:linkname cpuRemoveStaleState k8s.io/kubernetes/pkg/kubelet/cm/cpumanager.(*manager).removeStaleState
func cpuRemoveStaleState(m unsafe.Pointer, logger klog.Logger)

//go:linkname memoryRemoveStaleState k8s.io/kubernetes/pkg/kubelet/cm/memorymanager.(*manager).removeStaleState
func memoryRemoveStaleState(m unsafe.Pointer, logger klog.Logger)

// managerPointer is the pointer held by a manager interface value (both
// managers' NewManager return a *manager).
func managerPointer(iface any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&iface))[1]
}

// hardEvictionReservation is the container manager's own helper
// (pkg/kubelet/cm/helpers.go): what the hard eviction thresholds reserve of
// the node's capacity.
//
//go:linkname hardEvictionReservation k8s.io/kubernetes/pkg/kubelet/cm.hardEvictionReservation
func hardEvictionReservation(thresholds []evictionapi.Threshold, capacity v1.ResourceList) v1.ResourceList

// The checkpoint file names the CPU and memory managers use.
const (
	cpuStateFile    = "cpu_manager_state"
	memoryStateFile = "memory_manager_state"
)

// readiness is the kubelet's config.SourcesReady. The managers garbage
// collect stale state only when all sources are ready. The CPU manager's
// Start also launches its reconcile loop, which runs once at once and then
// every reconcile period; it would collect stale state at a moment the
// steps do not control. So sources are ready only while a step runs (the
// managers collect at the start of hints and allocation, as in the
// kubelet) and not ready between steps, where a reconcile pass does
// nothing. The loop never updates containers: the pod status provider
// knows no pod status, so reconcileState skips every pod.
type readiness struct{ ready atomic.Bool }

// reconcileNever is the CPU manager's reconcile period in the oracle (see
// NewNode).
const reconcileNever = 1000 * time.Hour

func (r *readiness) AddSource(string) {}
func (r *readiness) AllReady() bool   { return r.ready.Load() }

// noStatus is a pod status provider that knows no pod (see readiness).
type noStatus struct{}

func (noStatus) GetPodStatus(types.UID) (v1.PodStatus, bool) { return v1.PodStatus{}, false }

// passThroughFailures is the predicate admit handler's failure handler for
// pods that are not critical: the kubelet's critical-pod handler returns
// the failure reasons unchanged for them. (Preempting running pods for a
// critical pod is not driven.)
type passThroughFailures struct{}

func (passThroughFailures) HandleAdmissionFailure(_ context.Context, _ *v1.Pod, reasons []lifecycle.PredicateFailureReason, _ lifecycle.Operation) ([]lifecycle.PredicateFailureReason, error) {
	return reasons, nil
}

type runningPod struct {
	pod      *v1.Pod
	ref      string
	restored bool // known only from the starting checkpoints
	removed  map[string]bool
}

// Node is the kubelet's container manager on one machine: the topology,
// device, CPU and memory managers built and started as the kubelet builds
// and starts them, and the kubelet's admit handlers.
type Node struct {
	ctx      context.Context
	scn      *scenario.Scenario
	machine  *cadvisorapi.MachineInfo
	cfg      *nodeConfig
	stateDir string
	topo     *topology.CPUTopology

	topology  topologymanager.Manager
	devices   *devicemanager.ManagerImpl
	cpu       cpumanager.Manager
	memory    memorymanager.Manager
	predicate lifecycle.PodAdmitHandler
	node      *v1.Node
	sources   readiness

	// Container ids of the runtime, per manager (each keeps its own map).
	cpuContainers, memContainers containermap.ContainerMap
	nextContainer                int

	quiet bool // bench: steps build no document

	mu        sync.Mutex
	order     []string // pod UIDs in the order they started running
	running   map[string]*runningPod
	admitting *v1.Pod

	known knownPods // the pod manager's pods (podresources.go)

	deviceFound os.FileInfo // the starting device checkpoint as placed (devicecheckpoint.go)
}

// NewNode builds and starts the managers for a scenario. stateDir is the
// kubelet's root directory for this run (checkpoints go there); it must
// exist and be empty. Errors are *StartupError (the kubelet would not
// start) or *scenario.InputError.
func NewNode(ctx context.Context, s *scenario.Scenario, stateDir string) (*Node, error) {
	n, err := newNode(ctx, s, stateDir)
	if err != nil {
		return nil, inRootDir(err, filepath.Clean(stateDir))
	}
	return n, nil
}

func newNode(ctx context.Context, s *scenario.Scenario, stateDir string) (*Node, error) {
	logger := klog.FromContext(ctx)
	n := &Node{ctx: ctx, scn: s, machine: s.Machine, stateDir: stateDir, running: map[string]*runningPod{}}
	cfg, err := loadConfig(s, s.Machine)
	if err != nil {
		return nil, err
	}
	n.cfg = cfg
	kc := cfg.kc

	// The starting checkpoints are files in the state directory before the
	// managers start, so that their own restore code reads them.
	for name, raw := range map[string][]byte{cpuStateFile: s.CPUState, memoryStateFile: s.MemoryState} {
		if raw != nil {
			if err := os.WriteFile(filepath.Join(stateDir, name), raw, 0o600); err != nil {
				return nil, err
			}
		}
	}

	if err := writeDeviceState(stateDir, s.DeviceState); err != nil {
		return nil, err
	}
	n.deviceFound = startingDeviceState(stateDir)

	// NewContainerManager: capacity from the machine, then the managers in
	// the kubelet's order (topology, devices, CPUs, memory), each added as
	// a hint provider.
	capacity := cadvisor.CapacityFromMachineInfo(s.Machine)
	reservation := allocatableReservation(capacity, cfg)
	n.topology, err = topologymanager.NewManager(logger, s.Machine.Topology, kc.TopologyManagerPolicy, kc.TopologyManagerScope, cfg.topologyPolicyOptions)
	if err != nil {
		return nil, startupErr(err)
	}
	n.devices, err = newDeviceManager(logger, filepath.Join(stateDir, devicePluginsDir, "kubelet.sock"), s.Machine.Topology, n.topology)
	if err != nil {
		return nil, err
	}
	n.topology.AddHintProvider(logger, n.devices)
	// The reconcile loop gets a period no run reaches: it passes once at
	// Start (sources not ready: nothing to collect) and never again, so a
	// pass can never land inside a step, between admission and the step's
	// end, and collect the pod being admitted as stale (seen as a flaky
	// empty checkpoint on long runs with the configured 10s period).
	n.cpu, err = cpumanager.NewManager(logger, kc.CPUManagerPolicy, kc.CPUManagerPolicyOptions, reconcileNever,
		s.Machine, cfg.reservedSystemCPUs, reservation, stateDir, n.topology)
	if err != nil {
		return nil, startupErr(err)
	}
	n.topology.AddHintProvider(logger, n.cpu)
	n.memory, err = memorymanager.NewManager(logger, kc.MemoryManagerPolicy, s.Machine, reservation, kc.ReservedMemory, stateDir, n.topology)
	if err != nil {
		return nil, startupErr(err)
	}
	n.topology.AddHintProvider(logger, n.memory)

	// ContainerManager.Start: CPU manager, memory manager, the node
	// allocatable check, then the device manager.
	n.cpuContainers = containermap.NewContainerMap()
	n.memContainers = containermap.NewContainerMap()
	// The static CPU manager's Start launches its reconcile loop in a
	// goroutine whose first pass runs at once, at a moment of the
	// scheduler's choosing. The steps wait for that pass to have taken its
	// list of active pods (its stale-state sweep, just before, found the
	// sources not ready and did nothing; the rest of the pass only reads
	// that list), so it can never sweep inside a step.
	firstPass := make(chan struct{})
	var once sync.Once
	cpuActivePods := func() []*v1.Pod {
		pods := n.activePods()
		once.Do(func() { close(firstPass) })
		return pods
	}
	if err := n.cpu.Start(ctx, cpuActivePods, &n.sources, noStatus{}, nil, n.cpuContainers); err != nil {
		return nil, startupErr(fmt.Errorf("start cpu manager error: %w", err))
	}
	if kc.CPUManagerPolicy == string(cpumanager.PolicyStatic) {
		select {
		case <-firstPass:
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("the CPU manager's first reconcile pass did not run")
		}
	}
	if err := n.memory.Start(ctx, n.activePods, &n.sources, noStatus{}, nil, n.memContainers); err != nil {
		return nil, startupErr(fmt.Errorf("start memory manager error: %w", err))
	}
	if err := validateNodeAllocatable(capacity, reservation); err != nil {
		return nil, startupErr(err)
	}
	if err := n.devices.Start(logger, n.activePods, &n.sources, containermap.NewContainerMap(), nil); err != nil {
		return nil, err
	}
	if err := n.registerDevices(); err != nil {
		return nil, err
	}

	// The node object the predicate admit handler reads: capacity and
	// allocatable as the kubelet's node status sets them.
	// The labels the kubelet puts on its node object (initialNode).
	n.node = &v1.Node{}
	n.node.Name = s.NodeName
	n.node.Labels = map[string]string{
		v1.LabelHostname:   s.NodeName,
		v1.LabelOSStable:   goruntime.GOOS,
		v1.LabelArchStable: goruntime.GOARCH,
	}
	// The pod capacity is the configuration's maxPods and podsPerCore, as
	// NewMainKubelet keeps them for the node-status setter.
	setter := nodestatus.MachineInfo(s.NodeName, int(kc.MaxPods), int(kc.PodsPerCore),
		func() (*cadvisorapi.MachineInfo, error) { return s.Machine, nil },
		func(klog.Logger, bool) v1.ResourceList { return capacity },
		n.devices.GetCapacity,
		func() v1.ResourceList { return reservation },
		func(string, string, string) {},
		func() *bool { return nil },
		false)
	if err := setter(ctx, n.node); err != nil {
		return nil, err
	}
	n.predicate = lifecycle.NewPredicateAdmitHandler(
		func(context.Context, bool) (*v1.Node, error) { return n.node, nil },
		passThroughFailures{}, n.devices.UpdatePluginResources)

	if err := n.adoptRestoredPods(); err != nil {
		return nil, err
	}
	if n.topo, err = topology.Discover(logger, s.Machine); err != nil {
		return nil, startupErr(err)
	}
	return n, nil
}

// Close stops the device plugin server.
func (n *Node) Close() {
	if n.devices != nil {
		_ = n.devices.Stop(klog.FromContext(n.ctx))
	}
}

// allocatableReservation is the container manager's
// GetNodeAllocatableReservation: for every resource of the capacity, system
// reserved + kube reserved + what the hard eviction thresholds reserve.
func allocatableReservation(capacity v1.ResourceList, cfg *nodeConfig) v1.ResourceList {
	eviction := hardEvictionReservation(cfg.hardEvictionThresholds, capacity)
	out := v1.ResourceList{}
	for k := range capacity {
		value := resource.NewQuantity(0, resource.DecimalSI)
		if cfg.systemReserved != nil {
			value.Add(cfg.systemReserved[k])
		}
		if cfg.kubeReserved != nil {
			value.Add(cfg.kubeReserved[k])
		}
		if eviction != nil {
			value.Add(eviction[k])
		}
		if !value.IsZero() {
			out[k] = *value
		}
	}
	return out
}

// validateNodeAllocatable is the container manager's start-up check that
// nothing reserves more than the node has.
func validateNodeAllocatable(capacity, reservation v1.ResourceList) error {
	var problems []string
	for k, v := range reservation {
		value := capacity[k].DeepCopy()
		value.Sub(v)
		if value.Sign() < 0 {
			problems = append(problems, fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", k, v, capacity[k]))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid Node Allocatable configuration. %s", strings.Join(problems, " "))
	}
	return nil
}

// activePods is the kubelet's GetActivePods: every running pod and the pod
// being admitted.
func (n *Node) activePods() []*v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*v1.Pod, 0, len(n.order)+1)
	for _, uid := range n.order {
		rp := n.running[uid]
		if n.admitting != nil && string(n.admitting.UID) == uid {
			// A restored pod being re-admitted: the spec being admitted is
			// the one the kubelet has (a stand-in made from checkpoint
			// entries gives way to it), so a checkpoint entry for a
			// container the spec lacks is stale.
			out = append(out, n.admitting)
			continue
		}
		out = append(out, rp.pod)
	}
	if n.admitting != nil {
		if _, ok := n.running[string(n.admitting.UID)]; !ok {
			out = append(out, n.admitting)
		}
	}
	return out
}

// otherPods are the allocated pods the predicate handler weighs the new pod
// against: the running pods but the one being admitted.
func (n *Node) otherPods(uid types.UID) []*v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*v1.Pod, 0, len(n.order))
	for _, id := range n.order {
		if id != string(uid) {
			out = append(out, n.running[id].pod)
		}
	}
	return out
}

// adoptRestoredPods makes the owners of the starting checkpoints' entries
// and the scenario's running pods (state.pods) running pods, as after a
// kubelet restart with those pods on the node. The kubelet knows their
// specs from the API server: a pod the scenario gives is that spec (as
// created); one it does not give stands in as a pod with the containers of
// its entries that requests the CPUs and memory they hold (podnuma's rule
// for such pods).
func (n *Node) adoptRestoredPods() error {
	specs := map[string]*v1.Pod{}
	for _, raw := range n.scn.RunningPods {
		pod, err := asCreated(raw.DeepCopy(), "runningPods")
		if err != nil {
			return err
		}
		specs[string(pod.UID)] = pod
	}
	containers := map[string]map[string]bool{}
	add := func(uid, name string) {
		if containers[uid] == nil {
			containers[uid] = map[string]bool{}
		}
		if name != "" {
			containers[uid][name] = true
		}
	}
	cpuState := n.cpu.State()
	memState := n.memory.State()
	for uid, entries := range cpuState.GetCPUAssignments() {
		for name := range entries {
			add(uid, name)
		}
	}
	for uid := range cpuState.GetPodCPUAssignments() {
		add(uid, "")
	}
	for uid, entries := range memState.GetMemoryAssignments() {
		for name := range entries {
			add(uid, name)
		}
	}
	for uid := range memState.GetPodMemoryAssignments() {
		add(uid, "")
	}
	for uid := range specs {
		add(uid, "")
	}
	uids := make([]string, 0, len(containers))
	for uid := range containers {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		if pod, ok := specs[uid]; ok {
			n.running[uid] = &runningPod{pod: pod, ref: pod.Namespace + "/" + pod.Name, removed: map[string]bool{}}
			n.order = append(n.order, uid)
			continue
		}
		names := make([]string, 0, len(containers[uid]))
		for name := range containers[uid] {
			names = append(names, name)
		}
		sort.Strings(names)
		cpus := cpuset.New()
		for _, set := range cpuState.GetCPUAssignments()[uid] {
			cpus = cpus.Union(set)
		}
		if podSet, ok := cpuState.GetPodCPUSet(uid); ok && podSet.Size() > cpus.Size() {
			cpus = podSet
		}
		requests := v1.ResourceList{}
		if cpus.Size() > 0 {
			requests[v1.ResourceCPU] = *resource.NewQuantity(int64(cpus.Size()), resource.DecimalSI)
		}
		blocks := memState.GetPodMemoryBlocks(uid)
		if len(blocks) == 0 {
			for _, name := range names {
				blocks = append(blocks, memState.GetMemoryBlocks(uid, name)...)
			}
		}
		amounts := map[v1.ResourceName]int64{}
		for _, b := range blocks {
			amounts[b.Type] += int64(b.Size)
		}
		for name, amount := range amounts {
			requests[name] = *resource.NewQuantity(amount, resource.BinarySI)
		}
		pod := &v1.Pod{}
		pod.UID = types.UID(uid)
		pod.Name = uid
		for i, name := range names {
			c := v1.Container{Name: name}
			if i == 0 {
				c.Resources.Requests = requests
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		n.running[uid] = &runningPod{pod: pod, ref: uid, restored: true, removed: map[string]bool{}}
		n.order = append(n.order, uid)
	}
	return nil
}

// containerID gives a running container the id the runtime would know it
// by, registered with the topology manager, which PostStopContainer tells
// by container id. (The CPU and memory managers learn container ids when
// containers start, which no step models: their container maps stay
// empty, so their removeStaleState works from their state alone.)
func (n *Node) containerID(pod *v1.Pod, name string) string {
	n.nextContainer++
	id := fmt.Sprintf("container-%d", n.nextContainer)
	// The topology manager learns container ids from AddContainer, which
	// has no other effect.
	for _, c := range allContainers(pod) {
		if c.Name == name {
			n.topology.AddContainer(klog.FromContext(n.ctx), pod, c, id)
		}
	}
	return id
}

func allContainers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

// withSources runs f with sources ready (see readiness).
func (n *Node) withSources(f func()) {
	n.sources.ready.Store(true)
	defer n.sources.ready.Store(false)
	f()
}

// stateFile reads one checkpoint file of the run back.
func (n *Node) stateFile(name string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(n.stateDir, name))
	if os.IsNotExist(err) {
		return nil, nil
	}
	return raw, err
}

var _ status.PodStatusProvider = noStatus{}

// NodeStatus is the capacity and allocatable of the node object, as the
// kubelet's node-status setter (nodestatus.MachineInfo) set them at start.
func (n *Node) NodeStatus() (capacity, allocatable v1.ResourceList) {
	return n.node.Status.Capacity, n.node.Status.Allocatable
}
