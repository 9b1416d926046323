package apiserver

import (
	"strings"
	"testing"
)

func TestCreateDefaultsAndRefuses(t *testing.T) {
	pod, rej := Decode([]byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i",
		"resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}`))
	if rej != nil {
		t.Fatal(rej.Message)
	}
	created, rej, err := Create(pod)
	if err != nil || rej != nil {
		t.Fatalf("refused: %v %v", err, rej)
	}
	req := created.Spec.Containers[0].Resources.Requests
	if req.Cpu().String() != "1" || req.Memory().String() != "1Gi" {
		t.Errorf("requests not defaulted from limits: %v", req)
	}
	if created.Status.QOSClass != "Guaranteed" || created.Namespace != "default" {
		t.Errorf("qos %q, namespace %q", created.Status.QOSClass, created.Namespace)
	}

	pod, _ = Decode([]byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i",
		"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}`))
	_, rej, err = Create(pod)
	if err != nil || rej == nil {
		t.Fatalf("accepted: %v", err)
	}
	want := `spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`
	if len(rej.Errors) != 1 || rej.Errors[0].Error != want || !strings.HasPrefix(rej.Message, `Pod "p" is invalid: `) {
		t.Errorf("got %+v", rej)
	}

	if _, rej := Decode([]byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","bogus":1}]}}`)); rej == nil || !rej.Decode {
		t.Errorf("an unknown field decoded: %+v", rej)
	}
}

func TestEphemeralContainersAreAttachedAfterCreate(t *testing.T) {
	raw := []byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],
		"ephemeralContainers":[{"name":"debug","image":"busybox"}]}}`)
	pod, _ := Decode(raw)
	if _, rej, _ := Create(pod); rej == nil || rej.Errors[0].Error != "spec.ephemeralContainers: Forbidden: cannot be set on create" {
		t.Errorf("create: %+v", rej)
	}
	created, rej, err := CreateAndAttach(pod)
	if err != nil || rej != nil || len(created.Spec.EphemeralContainers) != 1 {
		t.Errorf("attach: %v %+v", err, rej)
	}
}
