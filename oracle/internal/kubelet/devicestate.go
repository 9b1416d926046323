package kubelet

import (
	"os"
	"path/filepath"
)

// The device manager keeps its checkpoint beside its plugin socket
// (kubelet_internal_checkpoint in the device-plugins directory).
const (
	devicePluginsDir = "device-plugins"
	deviceStateFile  = "kubelet_internal_checkpoint"
)

// writeDeviceState puts a starting device manager checkpoint where the
// device manager reads it when it starts (readCheckpoint), before the
// manager is built; nil writes nothing.
func writeDeviceState(stateDir string, raw []byte) error {
	if raw == nil {
		return nil
	}
	dir := filepath.Join(stateDir, devicePluginsDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, deviceStateFile), raw, 0o600)
}
