// Package scenario reads podnuma scenario files (contract v1, see
// docs/scenario.md) into the inputs the kubelet code takes: a cadvisor
// MachineInfo, device-plugin devices, the raw KubeletConfiguration, the
// starting checkpoint files and v1 Pods.
//
// The reader checks what it needs to drive the kubelet and no more: podnuma
// is the validating front end; the oracle is meant to be fed scenarios that
// podnuma accepts. Anything it cannot make sense of is an *InputError.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"github.com/google/uuid"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// InputError is a problem with the scenario: the CLI prints it on one line
// and exits 2.
type InputError struct {
	File, Path, Message string
}

func (e *InputError) Error() string {
	parts := []string{}
	for _, p := range []string{e.File, e.Path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	parts = append(parts, e.Message)
	return strings.Join(parts, ": ")
}

func inputErr(path, format string, args ...any) *InputError {
	return &InputError{Path: path, Message: fmt.Sprintf(format, args...)}
}

// podUIDNamespace is the UUID namespace podnuma derives pod UIDs from: a pod
// without metadata.uid gets uuid5(podUIDNamespace, "NAMESPACE/NAME").
var podUIDNamespace = uuid.MustParse("6f1d5a8e-3c2b-5b7e-9a41-2d0c7e5f9b13")

// DerivePodUID is the UID podnuma gives a pod that has none.
func DerivePodUID(namespace, name string) string {
	return uuid.NewSHA1(podUIDNamespace, []byte(namespace+"/"+name)).String()
}

// Device is one device-plugin device and the NUMA nodes it is attached to.
type Device struct {
	ID        string
	NUMANodes []int
}

// Step is one step of the scenario.
type Step struct {
	Op        string  // addPod, removeContainer, removePod or reconcile
	Pod       *v1.Pod // addPod
	Ref       string  // removeContainer/removePod: UID or NAMESPACE/NAME
	Container string  // removeContainer
}

// Scenario is a loaded scenario file.
type Scenario struct {
	File     string
	NodeName string
	Machine  *cadvisorapi.MachineInfo
	// Devices by resource name; DeviceOrder lists the resource names in
	// the order the file gives them.
	Devices     map[string][]Device
	DeviceOrder []string
	// KubeletConfig is the KubeletConfiguration as JSON (apiVersion and
	// kind filled in when the scenario leaves them out).
	KubeletConfig []byte
	// KubeletConfigFile names the file the configuration came from, if any.
	KubeletConfigFile string
	// CPUState and MemoryState are the bytes of the starting checkpoint
	// files (nil when the scenario gives none).
	CPUState, MemoryState []byte
	// DeviceState is the starting device manager checkpoint
	// (kubelet_internal_checkpoint), nil when the scenario gives none.
	DeviceState []byte
	// RunningPods are the pods running on the node when it starts
	// (state.pods): their full specs, as the kubelet knows them from the
	// API server after a restart.
	RunningPods []*v1.Pod
	Steps       []Step
	// APIServerGates are the feature gates of the API server the pods go
	// through when the scenario has an apiServer section (the API
	// server's own: its defaults with these set); nil means the kubelet's.
	APIServerGates map[string]bool
}

// Load reads the scenario file at path.
func Load(path string) (*Scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Message: "cannot read scenario file: " + describeOSError(err)}
	}
	s, err := Parse(raw, path, filepath.Dir(path))
	if err != nil {
		if ie, ok := err.(*InputError); ok && ie.File == "" {
			ie.File = path
		}
		return nil, err
	}
	return s, nil
}

func describeOSError(err error) string {
	if os.IsNotExist(err) {
		return "no such file"
	}
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// decode turns YAML (or JSON) into generic values; numbers stay json.Number
// so that large integers keep every digit.
func decode(raw []byte) (any, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// Parse reads a scenario given as bytes; dir resolves the relative paths it
// references.
func Parse(raw []byte, name, dir string) (*Scenario, error) {
	doc, err := decode(raw)
	if err != nil {
		return nil, &InputError{File: name, Message: "invalid YAML: " + err.Error()}
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, inputErr("", "a scenario must be a mapping")
	}
	withJSONPods(top, raw, name)
	known := []string{"apiVersion", "kind", "node", "kubeletConfig", "kubeletConfigFile", "apiServer", "state", "steps"}
	if err := checkKeys(top, known, ""); err != nil {
		return nil, err
	}
	if top["apiVersion"] != "podnuma.io/v1" {
		return nil, inputErr("apiVersion", "must be 'podnuma.io/v1'")
	}
	if top["kind"] != "Scenario" {
		return nil, inputErr("kind", "must be 'Scenario'")
	}
	s := &Scenario{File: name, Devices: map[string][]Device{}}

	node, ok := top["node"].(map[string]any)
	if !ok {
		return nil, inputErr("node", "required field is missing or not a mapping: the machine")
	}
	if err := s.loadNode(node, dir); err != nil {
		return nil, err
	}
	if err := s.loadKubeletConfig(top, dir); err != nil {
		return nil, err
	}
	if as, ok := top["apiServer"]; ok && as != nil {
		if s.APIServerGates, err = loadAPIServer(as); err != nil {
			return nil, err
		}
	}
	if st, ok := top["state"]; ok && st != nil {
		state, ok := st.(map[string]any)
		if !ok {
			return nil, inputErr("state", "must be a mapping")
		}
		if err := checkKeys(state, []string{"cpuManager", "cpuManagerFile", "memoryManager", "memoryManagerFile", "deviceManager", "deviceManagerFile", "pods"}, "state"); err != nil {
			return nil, err
		}
		if raw, ok := state["pods"]; ok && raw != nil {
			items, ok := raw.([]any)
			if !ok {
				return nil, inputErr("state.pods", "must be a list of pods")
			}
			for i, item := range items {
				pod, err := loadPod(item, fmt.Sprintf("state.pods[%d]", i))
				if err != nil {
					return nil, err
				}
				s.RunningPods = append(s.RunningPods, pod)
			}
		}
		if s.CPUState, err = loadCheckpoint(state, "cpuManager", dir); err != nil {
			return nil, err
		}
		if s.MemoryState, err = loadCheckpoint(state, "memoryManager", dir); err != nil {
			return nil, err
		}
		if s.DeviceState, err = loadCheckpoint(state, "deviceManager", dir); err != nil {
			return nil, err
		}
	}
	steps, ok := top["steps"].([]any)
	if !ok {
		return nil, inputErr("steps", "required field is missing or not a list: the list of steps")
	}
	for i, raw := range steps {
		st, err := loadStep(raw, fmt.Sprintf("steps[%d]", i))
		if err != nil {
			return nil, err
		}
		s.Steps = append(s.Steps, st)
	}
	return s, nil
}

func checkKeys(m map[string]any, known []string, path string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, want := range known {
			if k == want {
				found = true
				break
			}
		}
		if !found {
			return inputErr(join(path, k), "unknown field %q (expected one of: %s)", k, strings.Join(known, ", "))
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func resolve(dir string, v any, path string) (string, error) {
	p, ok := v.(string)
	if !ok || p == "" {
		return "", inputErr(path, "must be a file path")
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p, nil
}

func readReferenced(dir string, v any, path, what string) (string, []byte, error) {
	p, err := resolve(dir, v, path)
	if err != nil {
		return "", nil, err
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return "", nil, inputErr(path, "cannot read %s file %q: %s", what, p, describeOSError(err))
	}
	return p, raw, nil
}

func (s *Scenario) loadKubeletConfig(top map[string]any, dir string) error {
	_, inline := top["kubeletConfig"]
	_, file := top["kubeletConfigFile"]
	var cfg any = map[string]any{}
	switch {
	case inline && file:
		return inputErr("kubeletConfigFile", "give the kubelet configuration inline (kubeletConfig) or as a file (kubeletConfigFile), not both")
	case file:
		p, raw, err := readReferenced(dir, top["kubeletConfigFile"], "kubeletConfigFile", "kubelet configuration")
		if err != nil {
			return err
		}
		s.KubeletConfigFile = p
		if cfg, err = decode(raw); err != nil {
			return &InputError{File: p, Message: "invalid YAML: " + err.Error()}
		}
	case inline && top["kubeletConfig"] != nil:
		cfg = top["kubeletConfig"]
	}
	m, ok := cfg.(map[string]any)
	if !ok {
		return inputErr("kubeletConfig", "must be a mapping (a KubeletConfiguration)")
	}
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"] = "kubelet.config.k8s.io/v1beta1"
	}
	if _, ok := m["kind"]; !ok {
		m["kind"] = "KubeletConfiguration"
	}
	js, err := json.Marshal(m)
	if err != nil {
		return inputErr("kubeletConfig", "%v", err)
	}
	s.KubeletConfig = js
	return nil
}

// loadCheckpoint gives the bytes of one starting checkpoint: the file as
// it is, or the inline object encoded as JSON (the kubelet's restore code
// verifies checksums over its own encoding, not over the file's bytes).
func loadCheckpoint(state map[string]any, key, dir string) ([]byte, error) {
	fileKey := key + "File"
	_, inline := state[key]
	_, file := state[fileKey]
	switch {
	case inline && file:
		return nil, inputErr("state."+fileKey, "give the checkpoint inline (%s) or as a file (%s), not both", key, fileKey)
	case file:
		_, raw, err := readReferenced(dir, state[fileKey], "state."+fileKey, "checkpoint")
		return raw, err
	case inline && state[key] != nil:
		obj, ok := state[key].(map[string]any)
		if !ok {
			return nil, inputErr("state."+key, "a checkpoint must be a mapping")
		}
		return json.Marshal(obj)
	}
	return nil, nil
}

func loadStep(raw any, path string) (Step, error) {
	m, ok := raw.(map[string]any)
	if !ok || len(m) != 1 {
		return Step{}, inputErr(path, "a step must be a mapping with exactly one of addPod, removeContainer, removePod, reconcile")
	}
	for op, body := range m {
		at := path + "." + op
		switch op {
		case "addPod":
			pod, err := loadPod(body, at)
			if err != nil {
				return Step{}, err
			}
			return Step{Op: op, Pod: pod, Ref: pod.Namespace + "/" + pod.Name}, nil
		case "removePod":
			ref, ok := body.(string)
			if !ok || strings.TrimSpace(ref) == "" {
				return Step{}, inputErr(at, "the pod (uid or namespace/name) must be a non-empty string")
			}
			return Step{Op: op, Ref: ref}, nil
		case "removeContainer":
			b, ok := body.(map[string]any)
			if !ok {
				return Step{}, inputErr(at, "removeContainer must be a mapping")
			}
			if err := checkKeys(b, []string{"pod", "container"}, at); err != nil {
				return Step{}, err
			}
			ref, _ := b["pod"].(string)
			name, _ := b["container"].(string)
			if strings.TrimSpace(ref) == "" {
				return Step{}, inputErr(at+".pod", "the pod (uid or namespace/name) must be a non-empty string")
			}
			if strings.TrimSpace(name) == "" {
				return Step{}, inputErr(at+".container", "the container name must be a non-empty string")
			}
			return Step{Op: op, Ref: ref, Container: name}, nil
		case "reconcile":
			if body != nil {
				b, ok := body.(map[string]any)
				if !ok {
					return Step{}, inputErr(at, "reconcile must be an empty mapping")
				}
				if err := checkKeys(b, []string{}, at); err != nil {
					return Step{}, err
				}
			}
			return Step{Op: op}, nil
		default:
			return Step{}, inputErr(path, "unknown field %q (expected one of: addPod, removeContainer, removePod, reconcile)", op)
		}
	}
	panic("unreachable")
}

// loadPod decodes a v1 Pod manifest strictly (unknown fields are an error)
// and gives it podnuma's namespace and UID defaults.
func loadPod(body any, path string) (*v1.Pod, error) {
	if _, ok := body.(map[string]any); !ok {
		return nil, inputErr(path, "a pod manifest must be a mapping")
	}
	js, err := json.Marshal(body)
	if err != nil {
		return nil, inputErr(path, "%v", err)
	}
	pod := &v1.Pod{}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(pod); err != nil {
		return nil, inputErr(path, "invalid pod: %v", err)
	}
	if pod.Name == "" {
		return nil, inputErr(path+".metadata.name", "name or generateName is required")
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	if pod.UID == "" {
		pod.UID = types.UID(DerivePodUID(pod.Namespace, pod.Name))
	}
	return pod, nil
}

// loadAPIServer reads the apiServer section: its feature gates.
func loadAPIServer(raw any) (map[string]bool, error) {
	as, ok := raw.(map[string]any)
	if !ok {
		return nil, inputErr("apiServer", "must be a mapping")
	}
	if err := checkKeys(as, []string{"featureGates"}, "apiServer"); err != nil {
		return nil, err
	}
	gates := map[string]bool{}
	if fg, ok := as["featureGates"]; ok && fg != nil {
		m, ok := fg.(map[string]any)
		if !ok {
			return nil, inputErr("apiServer.featureGates", "must be a mapping")
		}
		for k, v := range m {
			b, ok := v.(bool)
			if !ok {
				return nil, inputErr("apiServer.featureGates."+k, "must be a boolean")
			}
			gates[k] = b
		}
	}
	return gates, nil
}
