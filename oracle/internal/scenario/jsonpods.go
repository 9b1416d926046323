package scenario

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// withJSONPods gives a JSON scenario file (a name ending in .json, as
// podnuma tells JSON from YAML) its pods as the JSON text holds them: the
// steps and state.pods decoded from the file's own bytes, numbers kept as
// their text (json.Number), so that a number in a quantity field reaches
// resource.Quantity's UnmarshalJSON as written (1e-400 is 1n there), as
// a JSON pod reaches the kubelet (pkg/kubelet/config/common.go: utilyaml's
// ToJSON passes JSON through) and the API server. The rest of the scenario
// keeps what decode made of it (YAMLToJSON, which goes through float64:
// 1e-400 would be 0). Text that does not decode as one JSON value leaves
// top as it is.
func withJSONPods(top map[string]any, raw []byte, name string) {
	if !strings.HasSuffix(strings.ToLower(name), ".json") {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		return
	}
	if steps, ok := doc["steps"]; ok {
		top["steps"] = steps
	}
	state, ok := doc["state"].(map[string]any)
	if !ok {
		return
	}
	if cur, ok := top["state"].(map[string]any); ok {
		if pods, ok := state["pods"]; ok {
			cur["pods"] = pods
		}
	}
}
