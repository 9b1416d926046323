// Package staticpod decodes static-pod manifests as the kubelet's file
// source does (k8s.io/kubernetes v1.37.2 pkg/kubelet/config/file.go
// extractFromFile, common.go tryDecodeSinglePod and applyDefaults).
//
// tryDecodeSinglePod and the file source's applyDefaults are unexported;
// Decode repeats their steps, in their order, with the exported pieces
// they call: utilyaml.ToJSON, the legacy scheme's universal decoder (v1
// defaults, conversion to the internal type), the FNV-128a hash of the
// internal pod with hash.DeepHashObject followed by "host:NODE" and
// "file:PATH", the name suffix, the namespace default, the node name, the
// config-hash annotation, the NoExecute toleration, phase Pending,
// validation.ValidatePodCreate with the options of
// podutil.GetValidationOptionsFromPodSpecAndMeta, conversion to v1 and
// podutil.HasAPIObjectReference. The warning about priorities (a log line)
// is left out.
package staticpod

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	k8s_api_v1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/capabilities"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/kubernetes/pkg/util/hash"
	utilio "k8s.io/utils/io"
)

// The kubelet's start (cmd/kubelet/app/server.go RunKubelet) allows
// privileged containers before any pod source runs; validation reads that
// setting (privileged containers, host-process containers).
func init() {
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
}

// The kubelet has loaded its local time zone long before its file source
// reads a manifest (its log lines' timestamps are local times). A
// metav1.Time decodes to local time, and the UID's hash prints the
// time.Time struct with the *Location it points to: in a fresh process a
// time read from "...Z" would point to the zone not loaded yet, one read
// from an offset (time.Parse looks the local zone up) to it loaded, and
// one instant would hash two ways. Loaded here first, as in the kubelet.
func init() {
	_ = time.Local.String()
}

// maxConfigLength is common.go's limit on a manifest's size (10 MiB).
const maxConfigLength = 10 * 1 << 20

// applyDefaults is the file source's applyDefaults (common.go, isFile true).
func applyDefaults(pod *api.Pod, source string, nodeName types.NodeName) {
	if len(pod.UID) == 0 {
		hasher := fnv.New128a()
		hash.DeepHashObject(hasher, pod)
		// (DeepHashObject resets the hash: the source goes after it)
		fmt.Fprintf(hasher, "host:%s", nodeName)
		fmt.Fprintf(hasher, "file:%s", source)
		pod.UID = types.UID(hex.EncodeToString(hasher.Sum(nil)[0:]))
	}
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(string(nodeName)))
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = string(nodeName)
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string)
	}
	pod.Annotations[kubetypes.ConfigHashAnnotationKey] = string(pod.UID)
	helper.AddOrUpdateTolerationInPod(pod, &api.Toleration{
		Operator: "Exists",
		Effect:   api.TaintEffectNoExecute,
	})
	pod.Status.Phase = api.PodPending
}

// tryDecodeSinglePod is common.go's, with the file source's defaults.
func tryDecodeSinglePod(data []byte, source string, nodeName types.NodeName) (parsed bool, pod *v1.Pod, err error) {
	json, err := utilyaml.ToJSON(data)
	if err != nil {
		return false, nil, err
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), json)
	if err != nil {
		return false, pod, err
	}
	newPod, ok := obj.(*api.Pod)
	if !ok {
		return false, pod, fmt.Errorf("invalid pod: %#v", obj)
	}
	if newPod.Name == "" {
		return true, pod, fmt.Errorf("invalid pod: name is needed for the pod")
	}
	applyDefaults(newPod, source, nodeName)
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&newPod.Spec, nil, &newPod.ObjectMeta, nil)
	if errs := validation.ValidatePodCreate(newPod, opts); len(errs) > 0 {
		return true, pod, fmt.Errorf("invalid pod: %v", errs)
	}
	v1Pod := &v1.Pod{}
	if err := k8s_api_v1.Convert_core_Pod_To_v1_Pod(newPod, v1Pod, nil); err != nil {
		return true, nil, err
	}
	_, resource, err := podutil.HasAPIObjectReference(newPod)
	if err != nil {
		return true, nil, err
	}
	if resource != "" {
		return true, nil, fmt.Errorf("static pods may not reference %s", resource)
	}
	return true, v1Pod, nil
}

// Decode is extractFromFile after the file is read: the pod of the
// manifest data read from source (the path as the kubelet names it), or
// the kubelet's error.
func Decode(data []byte, source string, nodeName types.NodeName) (*v1.Pod, error) {
	parsed, pod, err := tryDecodeSinglePod(data, source, nodeName)
	if parsed {
		if err != nil {
			return pod, err
		}
		return pod, nil
	}
	return pod, fmt.Errorf("%v: couldn't parse as pod(%v), please check config file", source, err)
}

// ReadFile is extractFromFile: the file at path read (at most 10 MiB) and
// decoded; source is the path the kubelet would name (path when empty).
func ReadFile(path, source string, nodeName types.NodeName) (*v1.Pod, error) {
	if source == "" {
		source = path
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := utilio.ReadAtMost(f, maxConfigLength)
	if err != nil {
		return nil, err
	}
	return Decode(data, source, nodeName)
}

// Container is one container's resources as the kubelet sees them.
type Container struct {
	Name string `json:"name"`
	// Kind is "init", "sidecar" (an init container restarting Always) or "app".
	Kind     string            `json:"kind"`
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

// Resources are the pod's requests and limits as the kubelet sees them.
type Resources struct {
	// Pod is spec.resources (nil when the pod has none).
	Pod        *Requirements `json:"pod"`
	Containers []Container   `json:"containers"`
}

// Requirements are requests and limits.
type Requirements struct {
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

// Result is one output line: the error, or the pod.
type Result struct {
	File      string     `json:"file"`
	Error     string     `json:"error,omitempty"`
	Name      string     `json:"name,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
	UID       string     `json:"uid,omitempty"`
	QOSClass  string     `json:"qosClass,omitempty"`
	Resources *Resources `json:"resources,omitempty"`
}

func list(l v1.ResourceList) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}

// Summarize is the Result of a decoded pod.
func Summarize(file string, pod *v1.Pod) Result {
	res := &Resources{Containers: []Container{}}
	if pod.Spec.Resources != nil {
		res.Pod = &Requirements{Requests: list(pod.Spec.Resources.Requests), Limits: list(pod.Spec.Resources.Limits)}
	}
	for _, c := range pod.Spec.InitContainers {
		kind := "init"
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			kind = "sidecar"
		}
		res.Containers = append(res.Containers, Container{c.Name, kind, list(c.Resources.Requests), list(c.Resources.Limits)})
	}
	for _, c := range pod.Spec.Containers {
		res.Containers = append(res.Containers, Container{c.Name, "app", list(c.Resources.Requests), list(c.Resources.Limits)})
	}
	return Result{
		File:      file,
		Name:      pod.Name,
		Namespace: pod.Namespace,
		UID:       string(pod.UID),
		QOSClass:  string(qos.GetPodQOS(pod)),
		Resources: res,
	}
}

// Run decodes one file: its Result.
func Run(path, source string, nodeName types.NodeName) Result {
	pod, err := ReadFile(path, source, nodeName)
	if err != nil {
		return Result{File: path, Error: err.Error()}
	}
	return Summarize(path, pod)
}
