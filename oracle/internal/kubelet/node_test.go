package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"podnuma.io/oracle/internal/scenario"
)

const smtScenario = `
apiVersion: podnuma.io/v1
kind: Scenario
node:
  synthetic: {sockets: 2, numaNodesPerSocket: 1, coresPerNumaNode: 8, threadsPerCore: 2, memoryPerNumaNode: 64Gi}
kubeletConfig:
  cpuManagerPolicy: static
  cpuManagerPolicyOptions: {full-pcpus-only: "true"}
  reservedSystemCPUs: "0,16"
steps:
  - addPod:
      metadata: {name: db, namespace: shop}
      spec: {containers: [{name: postgres, resources: {limits: {cpu: "4", memory: 8Gi}}}]}
  - addPod:
      metadata: {name: odd, namespace: shop}
      spec: {containers: [{name: app, resources: {limits: {cpu: "3", memory: 1Gi}}}]}
  - addPod:
      metadata: {name: too-big, namespace: shop}
      spec: {containers: [{name: app, resources: {requests: {memory: 200Gi}}}]}
  - removePod: shop/db
`

func run(t *testing.T, text string) (*Document, error) {
	t.Helper()
	s, err := scenario.Parse([]byte(text), "test.yaml", t.TempDir())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ctx := klog.NewContext(context.Background(), logr.Discard())
	n, err := NewNode(ctx, s, t.TempDir())
	if err != nil {
		return nil, err
	}
	defer n.Close()
	return n.Run()
}

func TestStaticPolicyAdmissionThroughTheManagers(t *testing.T) {
	doc, err := run(t, smtScenario)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Node.CPUs != "0-31" || doc.Node.ReservedCPUs != "0,16" {
		t.Fatalf("node = %+v", doc.Node)
	}
	db := doc.Steps[0]
	if !*db.Admitted || db.Containers[0].CPUs != "1-2,17-18" || db.Containers[0].Isolation != "container" {
		t.Fatalf("db = %+v", db)
	}
	odd := doc.Steps[1]
	if *odd.Admitted || *odd.Reason != "SMTAlignmentError" ||
		*odd.Message != "Pod was rejected: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2" {
		t.Fatalf("odd = %s %s", *odd.Reason, *odd.Message)
	}
	big := doc.Steps[2]
	if *big.Admitted || *big.Reason != "OutOfmemory" || !strings.HasPrefix(*big.Message, "Pod was rejected: Node didn't have enough resource: memory") {
		t.Fatalf("too-big = %s %s", *big.Reason, *big.Message)
	}
	if rm := doc.Steps[3]; rm.DefaultCPUSet != "0-31" || rm.Admitted != nil {
		t.Fatalf("removePod = %+v", rm)
	}
	var ckpt map[string]any
	if err := json.Unmarshal(doc.Checkpoints.CPUManager, &ckpt); err != nil {
		t.Fatal(err)
	}
	if ckpt["policyName"] != "static" || ckpt["defaultCpuSet"] != "0-31" {
		t.Fatalf("cpu checkpoint = %v", ckpt)
	}
	if _, ok := doc.Files()[memoryStateFile]; !ok {
		t.Fatal("no memory manager checkpoint written")
	}
}

func TestKubeletStartupErrors(t *testing.T) {
	cases := map[string]string{
		"cpuManagerPolicy: static":                               "[cpumanager] unable to determine reserved CPU resources for static policy",
		"featureGates: {NoSuchGate: true}":                       "failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGate",
		`cpuManagerPolicy: Static`:                               `unknown policy: "Static"`,
		"memoryManagerPolicy: Static":                            `the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature`,
		`{cpuManagerPolicy: static, reservedSystemCPUs: "0,99"}`: "reserved-cpus: 0,99 is not a subset of online-cpus: 0-31",
	}
	for cfg, want := range cases {
		text := strings.Replace(smtScenario, `kubeletConfig:
  cpuManagerPolicy: static
  cpuManagerPolicyOptions: {full-pcpus-only: "true"}
  reservedSystemCPUs: "0,16"`, "kubeletConfig: "+cfgBlock(cfg), 1)
		_, err := run(t, text)
		var se *StartupError
		if !errors.As(err, &se) {
			t.Errorf("%s: want a StartupError, got %v", cfg, err)
			continue
		}
		if se.Message != want {
			t.Errorf("%s: %q, want %q", cfg, se.Message, want)
		}
	}
}

func cfgBlock(cfg string) string {
	if strings.HasPrefix(cfg, "{") {
		return cfg
	}
	return "{" + cfg + "}"
}
