package kubelet

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"podnuma.io/oracle/internal/scenario"
)

func cgroupsOf(t *testing.T, text string, opts CgroupsOptions) *CgroupsDoc {
	t.Helper()
	s, err := scenario.Parse([]byte(text), "test.yaml", t.TempDir())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ctx := klog.NewContext(context.Background(), logr.Discard())
	n, err := NewNode(ctx, s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	doc, err := n.Cgroups(opts)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The smt scenario after step 0: db, Guaranteed with 4 exclusive CPUs
// (quota lifted in the pod and the container), as the kubelet's functions
// and the runc library's writers give it.
func TestCgroupsOfAGuaranteedPod(t *testing.T) {
	doc := cgroupsOf(t, smtScenario, CgroupsOptions{Driver: "systemd", Version: 2, Step: 0})
	if len(doc.Cgroups) != 5 {
		t.Fatalf("cgroups = %+v", doc.Cgroups)
	}
	// kubepods and the QoS tiers first, from the container and QoS managers
	node, burstable, besteffort := doc.Cgroups[0], doc.Cgroups[1], doc.Cgroups[2]
	if node.Kind != "node" || node.Path != "/kubepods.slice" || node.Files["memory.min"] != "0" ||
		burstable.Path != "/kubepods.slice/kubepods-burstable.slice" || burstable.Files["cpu.weight"] != "1" ||
		besteffort.Path != "/kubepods.slice/kubepods-besteffort.slice" || besteffort.Files["cpu.weight"] != "1" {
		t.Fatalf("node and QoS cgroups = %+v", doc.Cgroups[:3])
	}
	pod, ctr := doc.Cgroups[3], doc.Cgroups[4]
	if pod.Kind != "pod" || ctr.Kind != "container" || ctr.Container != "postgres" {
		t.Fatalf("cgroups = %+v", doc.Cgroups)
	}
	wantPod := map[string]string{"cpu.weight": "157", "cpu.max": "max 100000", "memory.max": "8589934592"}
	for k, v := range wantPod {
		if pod.Files[k] != v {
			t.Errorf("pod %s = %q, want %q (files %v)", k, pod.Files[k], v, pod.Files)
		}
	}
	wantCtr := map[string]string{"cpu.weight": "303", "cpu.max": "max 100000", "memory.max": "8589934592",
		"memory.swap.max": "0", "cpuset.cpus": "1-2,17-18", "memory.oom.group": "1"}
	for k, v := range wantCtr {
		if ctr.Files[k] != v {
			t.Errorf("container %s = %q, want %q (files %v)", k, ctr.Files[k], v, ctr.Files)
		}
	}
	if want := "/kubepods.slice/kubepods-pod"; len(pod.Path) < len(want) || pod.Path[:len(want)] != want {
		t.Errorf("pod path = %s", pod.Path)
	}

	v1 := cgroupsOf(t, smtScenario, CgroupsOptions{Driver: "cgroupfs", Version: 1, Step: 0})
	if got := v1.Cgroups[0].Files; got["cpu.shares"] == "" || got["memory.limit_in_bytes"] == "" {
		t.Errorf("v1 kubepods files = %v", got)
	}
	if got := v1.Cgroups[4].Files; got["cpu.shares"] != "4096" || got["cpu.cfs_quota_us"] != "-1" ||
		got["memory.limit_in_bytes"] != "8589934592" || got["memory.memsw.limit_in_bytes"] != "8589934592" {
		t.Errorf("v1 container files = %v", got)
	}
}
