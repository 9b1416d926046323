// Package legacy writes CPU and memory manager checkpoints in the format
// versions older kubelets wrote, through the checkpoint types kubelet
// v1.37.2 still carries for reading them (their MarshalCheckpoint is the
// writer those versions used: same struct, same checksum over the legacy
// type name). The differential suite starts nodes from such files.
package legacy

import (
	"fmt"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
)

// Convert reads a checkpoint file of the current format (CPU V4, memory
// V3), checksums verified, and writes its content in format `version`:
// cpu 2, 3 or 4, memory 1, 2 or 3. What an older format cannot hold is
// dropped, as a kubelet of that version would not have written it (pod
// entries before CPU V3 and memory V2).
func Convert(manager string, version int, blob []byte) ([]byte, error) {
	switch manager {
	case "cpu":
		return convertCPU(version, blob)
	case "memory":
		return convertMemory(version, blob)
	}
	return nil, fmt.Errorf("unknown manager %q (cpu or memory)", manager)
}

func read(cp checkpointmanager.Checkpoint, blob []byte) error {
	if err := cp.UnmarshalCheckpoint(blob); err != nil {
		return err
	}
	return cp.VerifyChecksum()
}

func convertCPU(version int, blob []byte) ([]byte, error) {
	cur := &cpustate.CPUManagerCheckpoint{}
	if err := read(cur, blob); err != nil {
		return nil, err
	}
	d := cur.CheckpointData
	entries := d.Entries
	if entries == nil {
		entries = map[string]map[string]string{}
	}
	switch version {
	case 2:
		cp := &cpustate.CPUManagerCheckpointV2{PolicyName: d.PolicyName, DefaultCPUSet: d.DefaultCPUSet, Entries: entries}
		return cp.MarshalCheckpoint()
	case 3:
		pods := d.PodEntries
		if pods == nil {
			pods = cpustate.PodCPUAssignments{}
		}
		cp := &cpustate.CPUManagerCheckpointV3{PolicyName: d.PolicyName, DefaultCPUSet: d.DefaultCPUSet, Entries: entries, PodEntries: pods}
		return cp.MarshalCheckpoint()
	case 4:
		return cur.MarshalCheckpoint()
	}
	return nil, fmt.Errorf("CPU manager checkpoints come in versions 2, 3 and 4, not %d", version)
}

func convertMemory(version int, blob []byte) ([]byte, error) {
	cur := &memstate.MemoryManagerCheckpoint{}
	if err := read(cur, blob); err != nil {
		return nil, err
	}
	d := cur.CheckpointData
	entries := d.Entries
	if entries == nil {
		entries = memstate.ContainerMemoryAssignments{}
	}
	machine := d.MachineState
	if machine == nil {
		machine = memstate.NUMANodeMap{}
	}
	switch version {
	case 1:
		cp := &memstate.MemoryManagerCheckpointV1{PolicyName: d.PolicyName, MachineState: machine, Entries: entries}
		return cp.MarshalCheckpoint()
	case 2:
		pods := d.PodEntries
		if pods == nil {
			pods = memstate.PodMemoryAssignments{}
		}
		cp := &memstate.MemoryManagerCheckpointV2{PolicyName: d.PolicyName, MachineState: machine, Entries: entries, PodEntries: pods}
		return cp.MarshalCheckpoint()
	case 3:
		return cur.MarshalCheckpoint()
	}
	return nil, fmt.Errorf("memory manager checkpoints come in versions 1, 2 and 3, not %d", version)
}
