// Command runtime-oracle gives the container runtime's side of a pod's
// cgroups, as containerd's CRI plugin (v2.4) and runc (v1.5) place a
// container: which cgroup it gets, or why runc refuses to create it.
//
// containerd's part is restated (its CRI plugin is an internal package):
// a sandbox or container whose pod the kubelet gives a cgroup parent gets
// getCgroupsPath(parent, id) (internal/cri/server/helpers.go: a parent
// whose last element ends in ".slice" gives runc's systemd form
// "<last element>:cri-containerd:<id>", any other the path parent/id); with
// no parent the spec keeps containerd's default cgroups path
// "/<namespace>/<id>" (pkg/oci/spec.go populateDefaultUnixSpec; the CRI
// namespace is "k8s.io"). runc's part is its own code: specconv's
// CreateCgroupConfig (libcontainer/specconv/spec_linux.go: with the systemd
// driver a path not of the form "slice:prefix:name" is refused) and the
// cgroup managers of opencontainers/cgroups (the path the systemd driver's
// unit or the cgroupfs driver's directory takes).
//
// With "version": 1 the cgroup v1 managers place it: the fs manager
// (cgroupfs) and the legacy systemd manager, each computing one directory
// per controller; the answer is the path under each controller's mount,
// the same for all (an error names them when they differ). Those managers
// find the controllers' mounts in /proc/self/mountinfo, which a cgroup v2
// host (or a container) has none of: the oracle gives them, through the
// package's own caches (cgroup_v1.go), the mounts systemd makes on a
// cgroup v1 host, so that the paths are computed by the managers' code
// whatever the host.
//
// Input: JSON Lines on stdin, {"driver": "systemd"|"cgroupfs", "parent":
// "...", "id": "...", "version": 1|2 (default 2)}. Output: one JSON line
// each, {"path": "/..."} (under the cgroup mount; with cgroup v1, under
// each controller's) or {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/systemd"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

type request struct {
	Driver  string `json:"driver"`
	Parent  string `json:"parent"`
	ID      string `json:"id"`
	Version int    `json:"version"`
}

type answer struct {
	CgroupsPath string `json:"cgroupsPath"`
	Path        string `json:"path,omitempty"`
	Error       string `json:"error,omitempty"`
}

// containerdCgroupsPath is the spec's cgroups path containerd's CRI plugin
// gives a sandbox or container (see the package comment).
func containerdCgroupsPath(parent, id string) string {
	if parent == "" {
		return path.Join("/", "k8s.io", id)
	}
	base := path.Base(parent)
	if strings.HasSuffix(base, ".slice") {
		return strings.Join([]string{base, "cri-containerd", id}, ":")
	}
	return filepath.Join(parent, id)
}

func place(r request) answer {
	a := answer{CgroupsPath: containerdCgroupsPath(r.Parent, r.ID)}
	spec := &specs.Spec{Linux: &specs.Linux{CgroupsPath: a.CgroupsPath}}
	c, err := specconv.CreateCgroupConfig(&specconv.CreateOpts{
		CgroupName: r.ID, UseSystemdCgroup: r.Driver == "systemd", Spec: spec,
	}, nil)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if r.Version == 1 {
		a.Path, err = placeV1(r.Driver, c)
		if err != nil {
			a.Error = err.Error()
		}
		return a
	}
	var full string
	if r.Driver == "systemd" {
		m, err := systemd.NewUnifiedManager(c, "")
		if err != nil {
			a.Error = err.Error()
			return a
		}
		full = m.Path("")
	} else {
		m, err := fs2.NewManager(c, "")
		if err != nil {
			a.Error = err.Error()
			return a
		}
		full = m.Path("")
	}
	rel, err := filepath.Rel(fs2.UnifiedMountpoint, full)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Path = "/" + rel
	return a
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var r request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(2)
		}
		b, _ := json.Marshal(place(r))
		out.Write(append(b, '\n'))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
}
