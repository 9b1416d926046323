package kubelet

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	"podnuma.io/oracle/internal/apiserver"
	"podnuma.io/oracle/internal/scenario"
)

// apiServerGate is the feature gate of the API server the scenario's pods
// go through (its apiServer section), or nil when it is the kubelet's.
var apiServerGate featuregate.MutableVersionedFeatureGate

// asCreated gives the pod the shape it has when the kubelet receives it
// from the API server, with the scenario's feature gates: the v1 defaults
// applied on decoding, then the pod registry's create strategy
// (PrepareForCreate: disabled fields dropped, pod-level resources
// defaulted, status.qosClass set; then ValidatePodCreate), its ephemeral
// containers attached afterwards through the ephemeralcontainers
// subresource. A pod the API server refuses is invalid input at path,
// named by its first field error.
//
// The scenario contract asks for the fields the resource managers read and
// no more: a container without an image gets a placeholder one first (the
// API server requires one; nothing the kubelet's managers do reads it).
func asCreated(pod *v1.Pod, path string) (*v1.Pod, error) {
	pod = withImages(pod)
	if apiServerGate != nil {
		// The API server's own gates for the create path, the kubelet's
		// again afterwards.
		kubeletGate := utilfeature.DefaultMutableFeatureGate
		utilfeature.DefaultMutableFeatureGate, utilfeature.DefaultFeatureGate = apiServerGate, apiServerGate
		defer func() {
			utilfeature.DefaultMutableFeatureGate, utilfeature.DefaultFeatureGate = kubeletGate, kubeletGate
		}()
	}
	out, rej, err := apiserver.CreateAndAttach(pod)
	if err != nil {
		return nil, err
	}
	if rej != nil {
		return nil, rejectedPod(rej, path)
	}
	return out, nil
}

func rejectedPod(rej *apiserver.Rejection, path string) error {
	if len(rej.Errors) == 0 {
		return &scenario.InputError{Path: path, Message: rej.Message}
	}
	first := rej.Errors[0]
	at := path
	if first.Field != "" {
		at = path + "." + first.Field
	}
	return &scenario.InputError{Path: at, Message: first.Body}
}

// checkPods runs every addPod step's pod through the API server's create
// path before the node starts (podnuma validates a scenario's pods when it
// reads the scenario); the first pod refused is invalid input.
func checkPods(s *scenario.Scenario) error {
	for i, st := range s.Steps {
		if st.Op != "addPod" || st.Pod == nil {
			continue
		}
		if _, err := asCreated(st.Pod, fmt.Sprintf("steps[%d].addPod", i)); err != nil {
			return err
		}
	}
	return nil
}

// placeholderImage is the image a scenario container without one is given.
const placeholderImage = "scenario.invalid/placeholder"

func withImages(pod *v1.Pod) *v1.Pod {
	pod = pod.DeepCopy()
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image == "" {
			pod.Spec.InitContainers[i].Image = placeholderImage
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image == "" {
			pod.Spec.Containers[i].Image = placeholderImage
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Image == "" {
			pod.Spec.EphemeralContainers[i].Image = placeholderImage
		}
	}
	return pod
}
