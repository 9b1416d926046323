package kubelet

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	internalqos "k8s.io/kubernetes/pkg/apis/core/helper/qos"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers the core conversions
	apiv1 "k8s.io/kubernetes/pkg/apis/core/v1"
)

// asCreated gives the pod the shape it has when the kubelet receives it
// from the API server, with the scenario's feature gates: the v1 defaults
// applied on decoding (SetObjectDefaults_Pod), then the steps of the pod
// registry's PrepareForCreate that touch what the resource managers read:
// fields of disabled features dropped (DropDisabledPodFields), pod-level
// resources defaulted (DefaultPodLevelResources) and status.qosClass set
// (the kubelet's QoS helper returns it as is).
func asCreated(pod *v1.Pod) (*v1.Pod, error) {
	apiv1.SetObjectDefaults_Pod(pod)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the pod: %w", err)
	}
	internal.Status = api.PodStatus{Phase: api.PodPending}
	podutil.DropDisabledPodFields(internal, nil)
	podutil.DefaultPodLevelResources(internal)
	internal.Status.QOSClass = internalqos.GetPodQOS(internal)
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, fmt.Errorf("converting the pod back: %w", err)
	}
	return out, nil
}
