// Package apiserver gives pods the treatment the kube-apiserver v1.37.2
// gives a pod create request before it is stored: decoding of the v1 JSON
// (strict field validation, as kubectl asks for by default), the v1
// defaults (SetObjectDefaults_Pod through the legacy scheme), conversion to
// the internal type, and the pod registry's create strategy through the
// generic registry's rest.BeforeCreate (PrepareForCreate, then
// ValidatePodCreate with the validation options the pod strategy computes
// from the feature gates, object meta and declarative validation). The
// feature gates are the process-wide ones (utilfeature.DefaultFeatureGate),
// which the caller sets.
package apiserver

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers the core types, defaults and conversions
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

// FieldError is one field.Error of a rejected pod.
type FieldError struct {
	Field  string `json:"field"`
	Type   string `json:"type"`
	Detail string `json:"detail"`
	// Error is the error as the API server's message shows it:
	// "FIELD: TYPE: VALUE: DETAIL".
	Error string `json:"error"`
	// Body is Error without the field ("TYPE: VALUE: DETAIL").
	Body string `json:"body"`
}

// Rejection is a pod the API server refuses: Message is the status
// message ("Pod \"NAME\" is invalid: ..."); Errors are its causes in
// order. A request the API server cannot decode (status 400) has Decode
// set and no Errors.
type Rejection struct {
	Message string       `json:"message"`
	Decode  bool         `json:"decode,omitempty"`
	Errors  []FieldError `json:"errors,omitempty"`
}

func (r *Rejection) Error() string { return r.Message }

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// strictCodecs decode as a request with fieldValidation=Strict.
var strictCodecs = serializer.NewCodecFactory(legacyscheme.Scheme, serializer.EnableStrict)

// Decode decodes a v1 Pod's JSON as the API server does for a create
// request with strict field validation (unknown or duplicate fields are
// refused), without defaults.
func Decode(raw []byte) (*v1.Pod, *Rejection) {
	obj, _, err := strictCodecs.UniversalDeserializer().Decode(raw, &podGVK, &v1.Pod{})
	if err != nil {
		if runtime.IsStrictDecodingError(err) {
			return nil, &Rejection{Message: err.Error(), Decode: true}
		}
		return nil, &Rejection{Message: fmt.Sprintf("Pod in version %q cannot be handled as a Pod: %v", "v1", err), Decode: true}
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, &Rejection{Message: fmt.Sprintf("not a Pod: %T", obj), Decode: true}
	}
	return pod, nil
}

// Create gives a decoded v1 pod the v1 defaults and runs the pod
// registry's create strategy on it, in rest.BeforeCreate's order
// (PrepareForCreate, then rest.ValidateCreate: the strategy's Validate,
// object meta, declarative validation; the rejection's message is
// apierrors.NewInvalid's). It returns the pod as stored (v1), or the
// rejection. The pod's namespace is the request's ("default" when unset);
// a UID it carries is kept (the API server would assign one).
func Create(pod *v1.Pod) (*v1.Pod, *Rejection, error) {
	return create(pod, false)
}

// CreateAndAttach is Create for a pod that carries ephemeral containers
// when it reaches the kubelet: the API server refuses them on create
// ("cannot be set on create"), so the pod is created without them and
// they are then added through the ephemeralcontainers subresource (the
// ephemeral containers strategy's PrepareForUpdate and ValidateUpdate), as
// kubectl debug adds them.
func CreateAndAttach(pod *v1.Pod) (*v1.Pod, *Rejection, error) {
	return create(pod, true)
}

func create(pod *v1.Pod, attach bool) (*v1.Pod, *Rejection, error) {
	pod = pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, nil, fmt.Errorf("converting the pod: %w", err)
	}
	if internal.Namespace == "" {
		internal.Namespace = metav1.NamespaceDefault
	}
	uid := internal.UID
	rest.FillObjectMetaSystemFields(internal)
	internal.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if uid != "" {
		internal.UID = uid
	}
	ctx := genericapirequest.WithNamespace(context.Background(), internal.Namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: "api", APIVersion: "v1",
		Namespace: internal.Namespace, Resource: "pods", Name: internal.Name,
	})
	var ephemeral []api.EphemeralContainer
	if attach {
		ephemeral, internal.Spec.EphemeralContainers = internal.Spec.EphemeralContainers, nil
	}
	podregistry.Strategy.PrepareForCreate(ctx, internal)
	if errs := rest.ValidateCreate(ctx, internal, podregistry.Strategy); len(errs) > 0 {
		return nil, rejection(internal.Name, errs), nil
	}
	podregistry.Strategy.Canonicalize(internal)
	if len(ephemeral) > 0 {
		updated := internal.DeepCopy()
		updated.Spec.EphemeralContainers = ephemeral
		updated.ResourceVersion = "1"
		internal.ResourceVersion = "1"
		podregistry.EphemeralContainersStrategy.PrepareForUpdate(ctx, updated, internal)
		if errs := podregistry.EphemeralContainersStrategy.ValidateUpdate(ctx, updated, internal); len(errs) > 0 {
			return nil, rejection(internal.Name, errs), nil
		}
		internal = updated
	}
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, nil, fmt.Errorf("converting the pod back: %w", err)
	}
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	return out, nil, nil
}

func rejection(name string, errs field.ErrorList) *Rejection {
	status := apierrors.NewInvalid(api.Kind("Pod"), name, errs)
	r := &Rejection{Message: status.ErrStatus.Message}
	for _, e := range errs {
		r.Errors = append(r.Errors, FieldError{
			Field: e.Field, Type: string(e.Type), Detail: e.Detail, Error: e.Error(), Body: e.ErrorBody(),
		})
	}
	return r
}
