package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"sigs.k8s.io/yaml"

	"podnuma.io/oracle/internal/apiserver"
)

// validateResult is one output line of `validate`.
type validateResult struct {
	Index    int    `json:"index"`
	Name     string `json:"name,omitempty"`
	Accepted bool   `json:"accepted"`
	// Pod is the pod as the API server stores it (accepted pods).
	Pod any `json:"pod,omitempty"`
	*apiserver.Rejection
}

// validatePods runs pods through the API server's create path (see
// internal/apiserver): v1 decoding, defaulting, conversion, the pod
// strategy's PrepareForCreate and ValidatePodCreate, with the feature
// gates of --feature-gates (v1.37 defaults otherwise). The input (a file
// or "-") is a Pod, a list of pods, or a List with items, as JSON or YAML.
// One JSON line per pod, in input order.
func validatePods(args []string, stdin io.Reader, stdout io.Writer) error {
	var file string
	gates := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--feature-gates" || strings.HasPrefix(a, "--feature-gates="):
			v := strings.TrimPrefix(a, "--feature-gates=")
			if a == "--feature-gates" {
				if i+1 >= len(args) {
					return &exitError{2, "error: --feature-gates needs a value"}
				}
				i++
				v = args[i]
			}
			for _, kv := range strings.Split(v, ",") {
				if strings.TrimSpace(kv) == "" {
					continue
				}
				k, val, ok := strings.Cut(kv, "=")
				b, err := strconv.ParseBool(strings.TrimSpace(val))
				if !ok || err != nil {
					return &exitError{2, fmt.Sprintf("error: --feature-gates: %q is not NAME=true|false", kv)}
				}
				gates[strings.TrimSpace(k)] = b
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return &exitError{2, fmt.Sprintf("error: validate: unknown flag %s", a)}
		default:
			if file != "" {
				return &exitError{2, "error: validate takes one input (a pod, a list of pods or a List)"}
			}
			file = a
		}
	}
	if file == "" {
		file = "-"
	}
	raw, err := readInput(file, stdin)
	if err != nil {
		return &exitError{2, "error: " + err.Error()}
	}
	items, err := podItems(raw)
	if err != nil {
		return &exitError{2, fmt.Sprintf("error: %s: %v", file, err)}
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return &exitError{2, "error: --feature-gates: " + err.Error()}
	}
	out := bufio.NewWriter(stdout)
	for i, item := range items {
		res := validateResult{Index: i}
		var meta struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(item, &meta)
		res.Name = meta.Metadata.Name
		pod, rej := apiserver.Decode(item)
		if rej == nil {
			var created any
			created, rej, err = apiserver.Create(pod)
			if err != nil {
				return &exitError{1, fmt.Sprintf("error: %s: item %d: %v", file, i, err)}
			}
			if rej == nil {
				res.Accepted, res.Pod = true, created
			}
		}
		res.Rejection = rej
		line, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
			return err
		}
	}
	return out.Flush()
}

// podItems splits the input into the raw JSON of each pod.
func podItems(raw []byte) ([]json.RawMessage, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(js, &list); err == nil {
		return list, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(js, &obj); err != nil {
		return nil, fmt.Errorf("not a pod, a list of pods or a List: %v", err)
	}
	if items, ok := obj["items"]; ok {
		if err := json.Unmarshal(items, &list); err != nil {
			return nil, fmt.Errorf("items: %v", err)
		}
		return list, nil
	}
	return []json.RawMessage{js}, nil
}
