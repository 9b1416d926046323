// Package kubelet assembles the kubelet v1.37.2 resource managers the way
// the kubelet does (cmd/kubelet/app/server.go, pkg/kubelet/cm) and runs a
// scenario's steps through them.
package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	utilcodec "k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"
	"k8s.io/kubernetes/pkg/kubelet/stats/pidlimit"
	"k8s.io/utils/cpuset"

	"podnuma.io/oracle/internal/scenario"
)

// StartupError is a configuration the kubelet refuses to start with; the
// message is the kubelet's own.
type StartupError struct{ Message string }

func (e *StartupError) Error() string { return e.Message }

func startupErr(err error) error { return &StartupError{Message: err.Error()} }

// kubeletRootDir is the kubelet's default --root-dir, where its checkpoint
// files live. Each run keeps them in a temporary directory instead; a
// start-up message naming a file there names it as the kubelet would.
const kubeletRootDir = "/var/lib/kubelet"

// inRootDir rewrites the run's state directory in a start-up error as the
// kubelet's root directory.
func inRootDir(err error, stateDir string) error {
	var se *StartupError
	if errors.As(err, &se) && stateDir != "" {
		return &StartupError{Message: strings.ReplaceAll(se.Message, stateDir, kubeletRootDir)}
	}
	return err
}

// pristineGates is the kubelet's feature gate as the packages registered it,
// before any scenario changed it.
var pristineGates = utilfeature.DefaultMutableFeatureGate.DeepCopy()

// resetFeatureGates gives the process-wide feature gate the kubelet packages
// read (utilfeature.DefaultFeatureGate) its v1.37 defaults again, so that
// every scenario of a run starts from them.
func resetFeatureGates() {
	fg := pristineGates.DeepCopy()
	utilfeature.DefaultMutableFeatureGate = fg
	utilfeature.DefaultFeatureGate = fg
}

// nodeConfig is what cmd/kubelet/app/server.go hands the container manager
// (cm.NodeConfig), for the fields the resource managers read.
type nodeConfig struct {
	kc                     *kubeletconfig.KubeletConfiguration
	reservedSystemCPUs     cpuset.CPUSet
	kubeReserved           v1.ResourceList
	systemReserved         v1.ResourceList
	hardEvictionThresholds []evictionapi.Threshold
	topologyPolicyOptions  map[string]string
}

// decodeConfig decodes a KubeletConfiguration as the kubelet decodes its
// config file: the kubelet's codec (strict decoding, then lenient
// decoding with a logged warning when strict decoding fails on unknown
// or duplicate fields only), v1beta1 defaults applied.
func decodeConfig(ctx context.Context, raw []byte) (*kubeletconfig.KubeletConfiguration, error) {
	kc, _, err := DecodeConfig(ctx, raw)
	return kc, err
}

// DecodeConfig is decodeConfig that also gives the warning the kubelet
// logs when it falls back to lenient decoding ("" when strict decoding
// succeeded): the strict decoding error, as the kubelet's log line
// carries it.
//
// A feature gate the kubelet does not know makes the v1beta1 defaulting
// panic (it merges the gates into a copy of the process's); the kubelet
// dies of it at start-up. That panic is returned as an error.
func DecodeConfig(ctx context.Context, raw []byte) (kc *kubeletconfig.KubeletConfiguration, warning string, err error) {
	defer func() {
		if r := recover(); r != nil {
			kc, warning, err = nil, "", fmt.Errorf("panic: %v", r)
		}
	}()
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		return nil, "", err
	}
	sink := &warningSink{onInfo: func(msg string, kv []any) {
		if msg != lenientMessage {
			return
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == "err" {
				warning = fmt.Sprint(kv[i+1])
			}
		}
	}}
	kc, err = utilcodec.DecodeKubeletConfiguration(klog.NewContext(ctx, logr.New(sink)), codecs, raw)
	if err != nil {
		return nil, "", err
	}
	return kc, warning, nil
}

// lenientMessage is the kubelet codec's log message when it decodes
// leniently.
const lenientMessage = "Using lenient decoding as strict decoding failed"

// warningSink is a logr sink that hands Info calls to onInfo.
type warningSink struct{ onInfo func(string, []any) }

func (w *warningSink) Init(logr.RuntimeInfo)             {}
func (w *warningSink) Enabled(int) bool                  { return true }
func (w *warningSink) Info(_ int, msg string, kv ...any) { w.onInfo(msg, kv) }
func (w *warningSink) Error(error, string, ...any)       {}
func (w *warningSink) WithValues(...any) logr.LogSink    { return w }
func (w *warningSink) WithName(string) logr.LogSink      { return w }

// loadConfig goes through the kubelet's start-up steps that turn the
// configuration into the container manager's inputs, in the kubelet's
// order: feature gates, configuration validation, reserved CPUs,
// kube/system reserved, hard eviction thresholds, topology manager policy
// options. Errors the kubelet would stop with are *StartupError.
func loadConfig(s *scenario.Scenario, machine *cadvisorapi.MachineInfo) (*nodeConfig, error) {
	inputErr := func(err error) error {
		if s.KubeletConfigFile != "" {
			return &scenario.InputError{File: s.KubeletConfigFile, Message: err.Error()}
		}
		return &scenario.InputError{Path: "kubeletConfig", Message: err.Error()}
	}
	// The gates come first: the kubelet sets them before anything reads
	// the configuration, and the v1beta1 defaulting itself merges them
	// (and panics on gates that cannot be set).
	var gates struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	if err := json.Unmarshal(s.KubeletConfig, &gates); err != nil {
		return nil, inputErr(err)
	}
	resetFeatureGates()
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates.FeatureGates); err != nil {
		return nil, startupErr(fmt.Errorf("failed to set feature gates from initial flags-based config: %w", err))
	}
	apiServerGate = nil
	if s.APIServerGates != nil {
		g := pristineGates.DeepCopy()
		if err := g.SetFromMap(s.APIServerGates); err != nil {
			return nil, &scenario.InputError{Path: "apiServer.featureGates", Message: err.Error()}
		}
		apiServerGate = g
	}
	kc, err := decodeConfig(context.Background(), s.KubeletConfig)
	if err != nil {
		return nil, inputErr(err)
	}
	// podnuma reads (and validates) the scenario's pods with the
	// configuration, before the kubelet's start-up checks.
	if err := checkPods(s); err != nil {
		return nil, err
	}
	// loadConfigFile's eviction defaults (they are OS-specific, so not
	// part of the v1beta1 defaults): the default thresholds when the file
	// sets none, merged into the file's with mergeDefaultEvictionSettings.
	if kc.EvictionHard == nil {
		kc.EvictionHard = copyMap(eviction.DefaultEvictionHard)
	} else if kc.MergeDefaultEvictionSettings {
		for k, v := range eviction.DefaultEvictionHard {
			if _, ok := kc.EvictionHard[k]; !ok {
				kc.EvictionHard[k] = v
			}
		}
	}
	// Validation also looks at the cgroup version of the machine it runs on
	// (failCgroupV1, singleProcessOOMKill). The simulated node is a cgroup
	// v2 node whatever this machine is, so those two host checks are left
	// out by validating a copy without them.
	checked := kc.DeepCopy()
	checked.FailCgroupV1 = false
	checked.SingleProcessOOMKill = nil
	if err := kubeletvalidation.ValidateKubeletConfiguration(checked, utilfeature.DefaultFeatureGate); err != nil {
		return nil, startupErr(err)
	}
	nc := &nodeConfig{kc: kc}
	if nc.reservedSystemCPUs, err = reservedCPUs(machine, kc.ReservedSystemCPUs); err != nil {
		return nil, startupErr(err)
	}
	// --reserved-cpus wins over the cpu of kube/system reserved: the kubelet
	// drops kubeReserved.cpu and sets systemReserved.cpu to the CPU count.
	kubeReserved := copyMap(kc.KubeReserved)
	systemReserved := copyMap(kc.SystemReserved)
	if nc.reservedSystemCPUs.Size() > 0 {
		delete(kubeReserved, "cpu")
		if systemReserved == nil {
			systemReserved = map[string]string{}
		}
		systemReserved["cpu"] = strconv.Itoa(nc.reservedSystemCPUs.Size())
	}
	if nc.kubeReserved, err = parseResourceList(kubeReserved); err != nil {
		return nil, startupErr(fmt.Errorf("--kube-reserved value failed to parse: %w", err))
	}
	if nc.systemReserved, err = parseResourceList(systemReserved); err != nil {
		return nil, startupErr(fmt.Errorf("--system-reserved value failed to parse: %w", err))
	}
	if nc.hardEvictionThresholds, err = eviction.ParseThresholdConfig([]string{}, kc.EvictionHard, nil, nil, nil); err != nil {
		return nil, startupErr(err)
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.TopologyManagerPolicyOptions) {
		nc.topologyPolicyOptions = kc.TopologyManagerPolicyOptions
	} else if kc.TopologyManagerPolicyOptions != nil {
		return nil, startupErr(fmt.Errorf("topology manager policy options %v require feature gates %q enabled",
			kc.TopologyManagerPolicyOptions, features.TopologyManagerPolicyOptions))
	}
	return nc, nil
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// reservedCPUs follows the kubelet's getReservedCPUs: the list must parse
// and be a subset of the CPUs topology.Discover finds.
func reservedCPUs(machine *cadvisorapi.MachineInfo, cpus string) (cpuset.CPUSet, error) {
	if cpus == "" {
		return cpuset.New(), nil
	}
	topo, err := topology.Discover(klog.Background(), machine)
	if err != nil {
		return cpuset.New(), fmt.Errorf("unable to discover CPU topology info: %s", err)
	}
	reserved, err := cpuset.Parse(cpus)
	if err != nil {
		return cpuset.New(), fmt.Errorf("unable to parse reserved-cpus list: %s", err)
	}
	all := topo.CPUDetails.CPUs()
	if !reserved.IsSubsetOf(all) {
		return cpuset.New(), fmt.Errorf("reserved-cpus: %s is not a subset of online-cpus: %s", cpus, all.String())
	}
	return reserved, nil
}

// parseResourceList follows the kubelet's parseResourceList: cpu, memory,
// ephemeral-storage and pid only, non-negative, cpu rounded to millicores.
func parseResourceList(m map[string]string) (v1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	rl := make(v1.ResourceList)
	for k, v := range m {
		switch v1.ResourceName(k) {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, pidlimit.PIDs:
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("failed to parse quantity %q for %q resource: %w", v, k, err)
			}
			if q.Sign() == -1 {
				return nil, fmt.Errorf("resource quantity for %q cannot be negative: %v", k, v)
			}
			if v1.ResourceName(k) == v1.ResourceCPU {
				q.SetMilli((q.ScaledValue(resource.Micro) + 500) / 1000)
			}
			rl[v1.ResourceName(k)] = q
		default:
			return nil, fmt.Errorf("cannot reserve %q resource", k)
		}
	}
	return rl, nil
}

// gateEnabled reads the kubelet's feature gate.
func gateEnabled(f featuregate.Feature) bool {
	return utilfeature.DefaultFeatureGate.Enabled(f)
}
