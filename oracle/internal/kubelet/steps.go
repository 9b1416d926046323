package kubelet

import (
	"encoding/json"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/utils/cpuset"

	"podnuma.io/oracle/internal/scenario"
)

// Document is the output of `simulate -o json`: the fields of podnuma's
// document that the kubelet itself produces.
type Document struct {
	Node        NodeDoc        `json:"node"`
	Steps       []StepDoc      `json:"steps"`
	Checkpoints CheckpointsDoc `json:"checkpoints"`
	files       map[string][]byte
}

// Files are the checkpoint files after the last step, by file name.
func (d *Document) Files() map[string][]byte { return d.files }

type NodeDoc struct {
	Name         string `json:"name"`
	CPUs         string `json:"cpus"`
	NUMANodes    []int  `json:"numaNodes"`
	ReservedCPUs string `json:"reservedCpus"`
}

type StepDoc struct {
	Index         int            `json:"index"`
	Op            string         `json:"op"`
	Pod           string         `json:"pod"`
	PodUID        string         `json:"podUID"`
	Container     *string        `json:"container,omitempty"`
	Admitted      *bool          `json:"admitted"`
	Reason        *string        `json:"reason"`
	Message       *string        `json:"message"`
	QOSClass      *string        `json:"qosClass"`
	PodAllocation *AllocationDoc `json:"podAllocation"`
	Containers    []ContainerDoc `json:"containers"`
	DefaultCPUSet string         `json:"defaultCpuSet"`
}

type AllocationDoc struct {
	CPUs   string     `json:"cpus"`
	Memory []BlockDoc `json:"memory"`
}

type BlockDoc struct {
	Type      string `json:"type"`
	NUMANodes []int  `json:"numaNodes"`
	Size      uint64 `json:"size"`
}

type ContainerDoc struct {
	Name         string              `json:"name"`
	Type         string              `json:"type"`
	CPUs         string              `json:"cpus"`
	Mems         []int               `json:"mems"`
	Isolation    string              `json:"isolation"`
	Memory       []BlockDoc          `json:"memory"`
	Devices      map[string][]string `json:"devices"`
	TopologyHint HintDoc             `json:"topologyHint"`
}

type HintDoc struct {
	NUMANodes []int `json:"numaNodes"`
	Preferred bool  `json:"preferred"`
}

type CheckpointsDoc struct {
	CPUManager    json.RawMessage `json:"cpuManager"`
	MemoryManager json.RawMessage `json:"memoryManager"`
}

// Run runs every step and gives the document.
func (n *Node) Run() (*Document, error) {
	doc := &Document{Node: n.nodeDoc(), Steps: []StepDoc{}}
	for i, st := range n.scn.Steps {
		sd, err := n.step(i, st)
		if err != nil {
			return nil, err
		}
		doc.Steps = append(doc.Steps, sd)
	}
	doc.files = map[string][]byte{}
	for _, name := range []string{cpuStateFile, memoryStateFile} {
		raw, err := n.stateFile(name)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			doc.files[name] = raw
		}
	}
	if raw, err := n.deviceCheckpointFile(); err != nil {
		return nil, err
	} else if raw != nil {
		doc.files[DeviceCheckpointPath] = raw
	}
	doc.Checkpoints.CPUManager = rawOrNull(doc.files[cpuStateFile])
	doc.Checkpoints.MemoryManager = rawOrNull(doc.files[memoryStateFile])
	return doc, nil
}

func rawOrNull(raw []byte) json.RawMessage {
	if raw == nil || !json.Valid(raw) {
		return json.RawMessage("null")
	}
	return json.RawMessage(raw)
}

func (n *Node) nodeDoc() NodeDoc {
	all := n.topo.CPUDetails.CPUs()
	reserved := cpuset.New()
	if n.cfg.kc.CPUManagerPolicy == string(cpumanager.PolicyStatic) {
		reserved = all.Difference(n.cpu.GetAllocatableCPUs())
	}
	return NodeDoc{Name: n.scn.NodeName, CPUs: all.String(), NUMANodes: n.numaIDs(), ReservedCPUs: reserved.String()}
}

func (n *Node) numaIDs() []int {
	ids := []int{}
	for _, node := range n.machine.Topology {
		ids = append(ids, node.Id)
	}
	sort.Ints(ids)
	return ids
}

func (n *Node) step(i int, st scenario.Step) (StepDoc, error) {
	path := fmt.Sprintf("steps[%d].%s", i, st.Op)
	switch st.Op {
	case "addPod":
		return n.addPod(i, st.Pod.DeepCopy(), path)
	case "reconcile":
		// A pass of the CPU manager's reconcile loop (reconcileState): its
		// removeStaleState with the sources ready; the rest of the pass
		// rewrites running containers' cpusets, which no step models (the
		// pod status provider knows no container).
		logger := klog.FromContext(n.ctx)
		n.withSources(func() { cpuRemoveStaleState(managerPointer(n.cpu), logger) })
		return StepDoc{Index: i, Op: st.Op, Containers: []ContainerDoc{},
			DefaultCPUSet: n.cpu.State().GetDefaultCPUSet().String()}, nil
	case "removeContainer":
		rp, err := n.find(st.Ref, path+".pod")
		if err != nil {
			return StepDoc{}, err
		}
		if !n.live(rp, st.Container) {
			return StepDoc{}, &scenario.InputError{Path: path + ".container", Message: fmt.Sprintf("container '%s' of pod %s is not running", st.Container, rp.ref)}
		}
		n.stopContainer(rp, st.Container)
		sd := n.removalDoc(i, st.Op, rp)
		name := st.Container
		sd.Container = &name
		return sd, nil
	default: // removePod
		rp, err := n.find(st.Ref, path)
		if err != nil {
			return StepDoc{}, err
		}
		for _, c := range allContainers(rp.pod) {
			if !rp.removed[c.Name] {
				n.stopContainer(rp, c.Name)
			}
		}
		n.mu.Lock()
		delete(n.running, string(rp.pod.UID))
		for j, uid := range n.order {
			if uid == string(rp.pod.UID) {
				n.order = append(n.order[:j], n.order[j+1:]...)
				break
			}
		}
		n.mu.Unlock()
		n.removeStaleState()
		return n.removalDoc(i, st.Op, rp), nil
	}
}

func (n *Node) live(rp *runningPod, name string) bool {
	for _, c := range allContainers(rp.pod) {
		if c.Name == name {
			return !rp.removed[name]
		}
	}
	return false
}

func (n *Node) find(ref, path string) (*runningPod, error) {
	if rp, ok := n.running[ref]; ok {
		return rp, nil
	}
	for _, uid := range n.order {
		if n.running[uid].ref == ref {
			return n.running[uid], nil
		}
	}
	return nil, &scenario.InputError{Path: path, Message: fmt.Sprintf("pod '%s' is not running on the node", ref)}
}

// stopContainer is the kubelet's PostStopContainer for one container of a
// pod that stays active: in v1.37.2 it tells only the topology manager
// (RemoveContainer, with the container's runtime id), which forgets the
// container's stored hint. The CPU and memory managers keep what the
// container holds until the pod leaves the active set (removeStaleState);
// the device manager keeps its devices until then too.
func (n *Node) stopContainer(rp *runningPod, name string) {
	logger := klog.FromContext(n.ctx)
	id := n.containerID(rp.pod, name)
	_ = n.topology.RemoveContainer(logger, id)
	rp.removed[name] = true
}

// removeStaleState is the CPU and memory managers' removeStaleState with
// the sources ready: every assignment of a container that is not in an
// active pod is released through the policies' RemoveContainer.
func (n *Node) removeStaleState() {
	logger := klog.FromContext(n.ctx)
	n.withSources(func() {
		cpuRemoveStaleState(managerPointer(n.cpu), logger)
		memoryRemoveStaleState(managerPointer(n.memory), logger)
	})
}

// podFeatures is the kubelet's pod features admit handler: a pod with
// pod-level resources on a kubelet whose PodLevelResources gate is off.
var podFeatures = lifecycle.NewPodFeaturesAdmitHandler()

// addPod is the kubelet's pod admission: the admit handlers in the
// kubelet's order, the resource-allocation handler (the topology
// manager's Admit, which has every provider allocate), the predicate
// handler (node allocatable fit), then the pod features handler; the
// first rejection wins.
func (n *Node) addPod(i int, pod *v1.Pod, path string) (StepDoc, error) {
	pod, err := asCreated(pod, path)
	if err != nil {
		return StepDoc{}, err
	}
	uid := string(pod.UID)
	ref := pod.Namespace + "/" + pod.Name
	for _, id := range n.order {
		if rp := n.running[id]; rp.ref == ref && id != uid {
			return StepDoc{}, &scenario.InputError{Path: path, Message: fmt.Sprintf("pod %s is already running on the node with UID %s", ref, id)}
		}
	}
	existing := n.running[uid]

	attrs := &lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: n.otherPods(pod.UID), Operation: lifecycle.AddOperation}
	var result lifecycle.PodAdmitResult
	n.mu.Lock()
	n.admitting = pod
	n.mu.Unlock()
	n.withSources(func() {
		result = n.topology.Admit(n.ctx, attrs)
		if result.Admit {
			result = n.predicate.Admit(n.ctx, attrs)
		}
		// (the AppArmor handler, between them, refuses no scenario pod)
		if result.Admit {
			result = podFeatures.Admit(n.ctx, attrs)
		}
	})
	n.mu.Lock()
	n.admitting = nil
	if result.Admit {
		removed := map[string]bool{}
		if existing != nil {
			removed = existing.removed
		} else {
			n.order = append(n.order, uid)
		}
		n.running[uid] = &runningPod{pod: pod, ref: ref, removed: removed}
	} else if existing != nil {
		// A rejected pod is terminal, no longer active.
		delete(n.running, uid)
		for j, id := range n.order {
			if id == uid {
				n.order = append(n.order[:j], n.order[j+1:]...)
				break
			}
		}
	}
	n.mu.Unlock()

	admitted := result.Admit
	if n.quiet {
		return StepDoc{Admitted: &admitted}, nil
	}
	qosClass := string(qos.GetPodQOS(pod))
	sd := StepDoc{Index: i, Op: "addPod", Pod: ref, PodUID: uid, Admitted: &admitted, QOSClass: &qosClass,
		Containers: []ContainerDoc{}, DefaultCPUSet: n.cpu.State().GetDefaultCPUSet().String()}
	if admitted {
		sd.PodAllocation = n.podAllocation(uid)
		sd.Containers = n.containerDocs(n.running[uid])
	} else {
		reason := result.Reason
		// The kubelet's rejectPod writes this message into the pod status.
		message := "Pod was rejected: " + result.Message
		sd.Reason, sd.Message = &reason, &message
	}
	return sd, nil
}

func (n *Node) removalDoc(i int, op string, rp *runningPod) StepDoc {
	sd := StepDoc{Index: i, Op: op, Pod: rp.ref, PodUID: string(rp.pod.UID), Containers: []ContainerDoc{},
		DefaultCPUSet: n.cpu.State().GetDefaultCPUSet().String()}
	if !rp.restored {
		q := string(qos.GetPodQOS(rp.pod))
		sd.QOSClass = &q
	}
	if still, ok := n.running[string(rp.pod.UID)]; ok {
		sd.PodAllocation = n.podAllocation(string(rp.pod.UID))
		sd.Containers = n.containerDocs(still)
	}
	return sd
}

// podAllocation is the pod-level reservation of a pod (its CPU set and
// memory blocks), or nil when the managers hold none.
func (n *Node) podAllocation(uid string) *AllocationDoc {
	cpus, hasCPUs := n.cpu.State().GetPodCPUSet(uid)
	blocks := n.memory.GetPodMemory(uid)
	if !hasCPUs && len(blocks) == 0 {
		return nil
	}
	return &AllocationDoc{CPUs: cpus.String(), Memory: blockDocs(blocks)}
}

func blockDocs(blocks []memstate.Block) []BlockDoc {
	out := []BlockDoc{}
	for _, b := range blocks {
		nodes := append([]int{}, b.NUMAAffinity...)
		sort.Ints(nodes)
		out = append(out, BlockDoc{Type: string(b.Type), NUMANodes: nodes, Size: b.Size})
	}
	return out
}

func containerType(pod *v1.Pod, c *v1.Container) string {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			if podutil.IsRestartableInitContainer(c) {
				return "sidecar"
			}
			return "init"
		}
	}
	return "app"
}

// containerDocs describes the pod's live containers as the kubelet would
// set them up: the cpuset and memory nodes it writes to the container's
// cgroup, its isolation level, memory blocks, devices and stored hint.
func (n *Node) containerDocs(rp *runningPod) []ContainerDoc {
	logger := klog.FromContext(n.ctx)
	uid := string(rp.pod.UID)
	out := []ContainerDoc{}
	for _, c := range allContainers(rp.pod) {
		if rp.removed[c.Name] {
			continue
		}
		cpus := n.cpu.GetCPUAffinity(uid, c.Name)
		if cpus.IsEmpty() {
			// No cpuset written: the container runs on every CPU.
			cpus = n.topo.CPUDetails.CPUs()
		}
		blocks := blockDocs(n.memory.GetMemory(logger, uid, c.Name))
		memSet := map[int]bool{}
		for _, b := range blocks {
			for _, id := range b.NUMANodes {
				memSet[id] = true
			}
		}
		mems := []int{}
		for id := range memSet {
			mems = append(mems, id)
		}
		sort.Ints(mems)
		if len(mems) == 0 {
			mems = n.numaIDs()
		}
		var isolation string
		if rp.restored {
			// No spec to ask the CPU manager about: exclusive CPUs or none.
			isolation = "host"
			if _, ok := n.cpu.State().GetCPUSet(uid, c.Name); ok {
				isolation = "container"
			}
		} else {
			isolation = string(n.cpu.GetResourceIsolationLevel(rp.pod, c))
		}
		devices := map[string][]string{}
		for res, devs := range n.devices.GetDevices(uid, c.Name) {
			ids := make([]string, 0, len(devs))
			for id := range devs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			devices[res] = ids
		}
		hint := n.topology.GetAffinity(logger, uid, c.Name)
		hd := HintDoc{Preferred: hint.Preferred}
		if hint.NUMANodeAffinity != nil {
			hd.NUMANodes = hint.NUMANodeAffinity.GetBits()
		}
		typ := containerType(rp.pod, c)
		if rp.restored {
			typ = "app"
		}
		out = append(out, ContainerDoc{Name: c.Name, Type: typ, CPUs: cpus.String(), Mems: mems, Isolation: isolation,
			Memory: blocks, Devices: devices, TopologyHint: hd})
	}
	return out
}
