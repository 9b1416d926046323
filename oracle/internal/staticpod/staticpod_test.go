package staticpod

import (
	"strings"
	"testing"
)

func TestDecodeAsTheFileSource(t *testing.T) {
	const head = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
	pod, err := Decode([]byte(head+"  resources: {limits: {cpu: \"2\"}}\n  containers: [{name: c, image: x}]\n"), "/m/web.yaml", "node-a")
	if err != nil {
		t.Fatal(err)
	}
	r := Summarize("f", pod)
	if r.Name != "web-node-a" || r.Namespace != "default" || r.QOSClass != "Burstable" || len(r.Resources.Pod.Requests) != 0 {
		t.Errorf("pod-level limits alone: %+v %+v", r, r.Resources.Pod)
	}
	same, _ := Decode([]byte(head+"  resources: {limits: {cpu: \"2\"}}\n  containers: [{name: c, image: x, imagePullPolicy: Always}]\n"), "/m/web.yaml", "node-a")
	if same == nil || same.UID != pod.UID {
		t.Errorf("a default written out changed the UID")
	}
	for text, want := range map[string]string{
		head + "  containers: [{name: c}]\n": "spec.containers[0].image: Required value",
		"metadata: {name: w}\n":              "Object 'Kind' is missing",
		head + "  containers: [{name: c, image: x, envFrom: [{secretRef: {name: s}}]}]\n": "static pods may not reference secrets",
	} {
		if _, err := Decode([]byte(text), "/m/x.yaml", "n"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
}
