package kubelet

import (
	"sync"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/kubernetes/pkg/kubelet/apis/podresources"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	cmqos "k8s.io/kubernetes/pkg/kubelet/cm/qos"
)

// The container manager's conversions of device and memory assignments
// into PodResources messages (pkg/kubelet/cm).
//
//go:linkname containerDevicesFromResourceDeviceInstances k8s.io/kubernetes/pkg/kubelet/cm.containerDevicesFromResourceDeviceInstances
func containerDevicesFromResourceDeviceInstances(devs devicemanager.ResourceDeviceInstances) []*podresourcesapi.ContainerDevices

//go:linkname containerMemoryFromBlock k8s.io/kubernetes/pkg/kubelet/cm.containerMemoryFromBlock
func containerMemoryFromBlock(blocks []memstate.Block) []*podresourcesapi.ContainerMemory

// PodResourcesProviders are the providers the kubelet hands its
// PodResources server (pkg/kubelet/kubelet.go: the pod manager for pods,
// the container manager for devices, CPUs, memory and dynamic resources),
// over the oracle's managers. The container manager's provider methods
// (container_manager_linux.go GetCPUs, GetPodCPUs, GetAllocatableCPUs,
// GetMemory, GetPodMemory, GetAllocatableMemory, GetDevices,
// GetAllocatableDevices, UpdateAllocatedDevices) are restated: each asks
// the manager it names, with the same isolation-level checks.
// Dynamic resources: no claims (the scenarios have no DRA drivers).
func (n *Node) PodResourcesProviders() podresources.PodResourcesProviders {
	p := &providers{n: n}
	return podresources.PodResourcesProviders{Pods: p, Devices: p, Cpus: p, Memory: p, DynamicResources: p}
}

// Known pods (the pod manager's): every pod a step asked to admit,
// admitted or not, until a removePod step deletes it.
type knownPods struct {
	mu    sync.Mutex
	order []string
	pods  map[string]*v1.Pod // by UID
}

type providers struct{ n *Node }

// SeedKnown gives the pod manager the pods running before the first step
// (restored pods with their specs; stand-ins made from checkpoint entries
// have none and are left out).
func (n *Node) SeedKnown() {
	n.known.mu.Lock()
	defer n.known.mu.Unlock()
	if n.known.pods == nil {
		n.known.pods = map[string]*v1.Pod{}
	}
	for _, uid := range n.order {
		if rp := n.running[uid]; !rp.restored {
			n.known.order = append(n.known.order, uid)
			n.known.pods[uid] = rp.pod
		}
	}
}

// StepKnown runs step i and keeps the pod manager's pod list up to date.
func (n *Node) StepKnown(i int) (StepDoc, error) {
	st := n.scn.Steps[i]
	sd, err := n.step(i, st)
	if err != nil {
		return sd, err
	}
	n.known.mu.Lock()
	defer n.known.mu.Unlock()
	if n.known.pods == nil {
		n.known.pods = map[string]*v1.Pod{}
	}
	switch st.Op {
	case "addPod":
		if _, ok := n.known.pods[sd.PodUID]; !ok {
			n.known.order = append(n.known.order, sd.PodUID)
		}
		pod, err := asCreated(st.Pod.DeepCopy())
		if err != nil {
			return sd, err
		}
		n.known.pods[sd.PodUID] = pod
	case "removePod":
		delete(n.known.pods, sd.PodUID)
		for j, uid := range n.known.order {
			if uid == sd.PodUID {
				n.known.order = append(n.known.order[:j], n.known.order[j+1:]...)
				break
			}
		}
	}
	return sd, nil
}

// GetActivePods: the running pods (pods known only from a checkpoint
// stand in without a spec of their own and are left out).
func (p *providers) GetActivePods() []*v1.Pod {
	p.n.mu.Lock()
	defer p.n.mu.Unlock()
	out := []*v1.Pod{}
	for _, uid := range p.n.order {
		if rp := p.n.running[uid]; !rp.restored {
			out = append(out, rp.pod)
		}
	}
	return out
}

// GetPods: every pod the pod manager knows.
func (p *providers) GetPods() []*v1.Pod {
	k := &p.n.known
	k.mu.Lock()
	defer k.mu.Unlock()
	out := []*v1.Pod{}
	for _, uid := range k.order {
		out = append(out, k.pods[uid])
	}
	return out
}

func (p *providers) GetPodByName(namespace, name string) (*v1.Pod, bool) {
	for _, pod := range p.GetPods() {
		if pod.Namespace == namespace && pod.Name == name {
			return pod, true
		}
	}
	return nil, false
}

func (p *providers) UpdateAllocatedDevices(logger klog.Logger) {
	p.n.devices.UpdateAllocatedDevices(logger)
}

func (p *providers) GetDevices(podUID, containerName string) []*podresourcesapi.ContainerDevices {
	return containerDevicesFromResourceDeviceInstances(p.n.devices.GetDevices(podUID, containerName))
}

func (p *providers) GetAllocatableDevices(logger klog.Logger) []*podresourcesapi.ContainerDevices {
	return containerDevicesFromResourceDeviceInstances(p.n.devices.GetAllocatableDevices(logger))
}

func int64Slice(in []int) []int64 {
	out := make([]int64, 0, len(in))
	for _, v := range in {
		out = append(out, int64(v))
	}
	return out
}

func (p *providers) GetCPUs(pod *v1.Pod, container *v1.Container) []int64 {
	if p.n.cpu.GetResourceIsolationLevel(pod, container) != cmqos.ResourceIsolationContainer {
		return []int64{}
	}
	return int64Slice(p.n.cpu.GetExclusiveCPUs(string(pod.UID), container.Name).UnsortedList())
}

func (p *providers) GetPodCPUs(podUID string) []int64 {
	return int64Slice(p.n.cpu.GetPodCPUs(podUID).UnsortedList())
}

func (p *providers) GetAllocatableCPUs() []int64 {
	return int64Slice(p.n.cpu.GetAllocatableCPUs().UnsortedList())
}

func (p *providers) GetMemory(logger klog.Logger, pod *v1.Pod, container *v1.Container) []*podresourcesapi.ContainerMemory {
	if p.n.memory.GetResourceIsolationLevel(pod, container) != cmqos.ResourceIsolationContainer {
		return []*podresourcesapi.ContainerMemory{}
	}
	return containerMemoryFromBlock(p.n.memory.GetMemory(logger, string(pod.UID), container.Name))
}

func (p *providers) GetPodMemory(_ klog.Logger, podUID string) []*podresourcesapi.ContainerMemory {
	return containerMemoryFromBlock(p.n.memory.GetPodMemory(podUID))
}

func (p *providers) GetAllocatableMemory(logger klog.Logger) []*podresourcesapi.ContainerMemory {
	return containerMemoryFromBlock(p.n.memory.GetAllocatableMemory(logger))
}

func (p *providers) GetDynamicResources(klog.Logger, *v1.Pod, *v1.Container) []*podresourcesapi.DynamicResource {
	return nil
}

// StepCount is the number of steps of the scenario.
func (n *Node) StepCount() int { return len(n.scn.Steps) }
