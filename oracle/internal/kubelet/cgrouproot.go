package kubelet

import (
	"fmt"

	"k8s.io/kubernetes/pkg/kubelet/cm"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"

	"podnuma.io/oracle/internal/scenario"
)

// cgroupLayout is where the kubelet puts the cgroups it manages, from the
// configuration's cgroupRoot and cgroupsPerQOS (the --cgroup-root flag,
// when given, in place of the configuration's field, as a flag overrides
// the configuration file).
type cgroupLayout struct {
	// perQOS: cgroupsPerQOS (kubepods, the QoS tiers and pod cgroups).
	perQOS bool
	// enforcePods: "pods" is in enforceNodeAllocatable (the node
	// allocatable root is sized from allocatable, else from capacity).
	enforcePods bool
	// root is the cgroup root as the container manager holds it: the
	// configured root, with kubepods under it when perQOS.
	root cm.CgroupName
}

// layout resolves the cgroup root as cmd/kubelet/app/server.go does
// (cgroupsPerQOS with no root: "/"), then NodeAllocatableRoot (the call
// the kubelet makes at start, which panics for a systemd name it cannot
// expand: the kubelet never starts).
func (n *Node) layout(opts CgroupsOptions) (lay cgroupLayout, err error) {
	kc := n.cfg.kc
	root := kc.CgroupRoot
	if opts.CgroupRoot != nil {
		root = *opts.CgroupRoot
	}
	lay.perQOS = kc.CgroupsPerQOS
	for _, v := range kc.EnforceNodeAllocatable {
		if v == kubetypes.NodeAllocatableEnforcementKey {
			lay.enforcePods = true
		}
	}
	if lay.perQOS && root == "" {
		root = "/"
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = &scenario.InputError{Path: "cgroupRoot", Message: fmt.Sprintf("the kubelet panics at start: %v", r)}
			}
		}()
		_ = cm.NodeAllocatableRoot(root, lay.perQOS, opts.Driver)
	}()
	if err != nil {
		return lay, err
	}
	lay.root = cm.ParseCgroupfsToCgroupName(root)
	if lay.perQOS {
		lay.root = cm.NewCgroupName(lay.root, "kubepods")
	}
	return lay, nil
}
