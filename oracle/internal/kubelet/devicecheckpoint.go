package kubelet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"google.golang.org/protobuf/proto"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
)

// DeviceCheckpointPath is the device manager's checkpoint file, relative to
// the kubelet's root directory, as Document.Files names it.
const DeviceCheckpointPath = devicePluginsDir + "/" + deviceStateFile

// startingDeviceState is the starting checkpoint file as placed (nil: none),
// to tell afterwards whether the device manager wrote the file again.
func startingDeviceState(stateDir string) os.FileInfo {
	fi, err := os.Stat(filepath.Join(stateDir, devicePluginsDir, deviceStateFile))
	if err != nil {
		return nil
	}
	return fi
}

// deviceCheckpointFile is the device manager's checkpoint after the run
// (nil: there is none). A starting file the manager never wrote again is
// returned as found. A file the manager wrote is read with the checkpoint
// package (its checksum verified) and written again by that package in
// the one order that does not depend on chance: the manager lists entries,
// device ids and the allocation responses' map entries in Go map order,
// which differs from run to run. Entries go by pod UID, container and
// resource, each id list sorted, each allocation response marshalled with
// the deterministic option (map entries by key). podnuma writes the same
// order.
func (n *Node) deviceCheckpointFile() ([]byte, error) {
	path := filepath.Join(n.stateDir, devicePluginsDir, deviceStateFile)
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if n.deviceFound != nil {
		if fi, err := os.Stat(path); err == nil && os.SameFile(fi, n.deviceFound) && fi.ModTime().Equal(n.deviceFound.ModTime()) {
			return raw, nil
		}
	}
	cp := checkpoint.New(make([]checkpoint.PodDevicesEntry, 0), make(map[string][]string))
	if err := cp.UnmarshalCheckpoint(raw); err != nil {
		return nil, fmt.Errorf("the device manager's checkpoint does not decode: %w", err)
	}
	if err := cp.VerifyChecksum(); err != nil {
		return nil, fmt.Errorf("the device manager's checkpoint fails its checksum: %w", err)
	}
	entries, registered := cp.GetData()
	for i := range entries {
		for _, ids := range entries[i].DeviceIDs {
			sort.Strings(ids)
		}
		resp := &pluginapi.ContainerAllocateResponse{}
		if err := proto.Unmarshal(entries[i].AllocResp, resp); err != nil {
			return nil, fmt.Errorf("an allocation response the device manager wrote does not decode: %w", err)
		}
		if entries[i].AllocResp, err = (proto.MarshalOptions{Deterministic: true}).Marshal(resp); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.PodUID != b.PodUID {
			return a.PodUID < b.PodUID
		}
		if a.ContainerName != b.ContainerName {
			return a.ContainerName < b.ContainerName
		}
		return a.ResourceName < b.ResourceName
	})
	for _, ids := range registered {
		sort.Strings(ids)
	}
	out, err := checkpoint.New(entries, registered).MarshalCheckpoint()
	if err != nil {
		return nil, err
	}
	return bytes.Clone(out), nil
}
