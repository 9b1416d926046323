package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const selectorUsage = "usage: kubelet-oracle selector < CASES.json"

// selectorCase is one input case of `selector`: a label selector, either
// kubectl's string form (labels.Parse) or a metav1.LabelSelector object
// (metav1.LabelSelectorAsSelector), and the labels to match it against.
type selectorCase struct {
	Selector json.RawMessage   `json:"selector"`
	Labels   map[string]string `json:"labels"`
}

// selectorRequirement is one requirement as the parsed selector holds it.
type selectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// selectorResult is one output line of `selector`.
type selectorResult struct {
	Index int `json:"index"`
	// Error is apimachinery's error text for an invalid selector.
	Error *string `json:"error,omitempty"`
	// DecodeError: the object did not decode into a metav1.LabelSelector.
	DecodeError  *string               `json:"decodeError,omitempty"`
	Requirements []selectorRequirement `json:"requirements"`
	// Nothing: a null selector (labels.Nothing()).
	Nothing bool  `json:"nothing,omitempty"`
	Matches *bool `json:"matches,omitempty"`
}

// selectorCmd reads a JSON list of cases on stdin and prints one JSON line
// per case, in input order: the parsed requirements (key, operator, values
// as the selector keeps them, in its order) and whether the labels match,
// or the error apimachinery returns. Nothing here restates the parser: a
// string goes to labels.Parse, an object to json.Unmarshal and
// metav1.LabelSelectorAsSelector, matching is Selector.Matches.
func selectorCmd(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{2, selectorUsage}
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return &exitError{2, "error: -: " + err.Error()}
	}
	var cases []selectorCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return &exitError{2, "error: -: " + err.Error()}
	}
	out := bufio.NewWriter(stdout)
	for i, c := range cases {
		res := selectorResult{Index: i}
		var sel labels.Selector
		var perr error
		trimmed := bytes.TrimSpace(c.Selector)
		switch {
		case len(trimmed) > 0 && trimmed[0] == '"':
			var s string
			if err := json.Unmarshal(trimmed, &s); err != nil {
				return &exitError{2, fmt.Sprintf("error: -: case %d: %v", i, err)}
			}
			sel, perr = labels.Parse(s)
		case len(trimmed) > 0 && trimmed[0] == '{':
			var ps metav1.LabelSelector
			if err := json.Unmarshal(trimmed, &ps); err != nil {
				msg := err.Error()
				res.DecodeError = &msg
				break
			}
			sel, perr = metav1.LabelSelectorAsSelector(&ps)
		case bytes.Equal(trimmed, []byte("null")):
			sel, perr = metav1.LabelSelectorAsSelector(nil)
		default:
			return &exitError{2, fmt.Sprintf("error: -: case %d: selector must be a string, an object or null", i)}
		}
		switch {
		case res.DecodeError != nil:
		case perr != nil:
			msg := perr.Error()
			res.Error = &msg
		default:
			reqs, selectable := sel.Requirements()
			res.Nothing = !selectable
			res.Requirements = make([]selectorRequirement, 0, len(reqs))
			for _, r := range reqs {
				res.Requirements = append(res.Requirements, selectorRequirement{
					Key: r.Key(), Operator: string(r.Operator()), Values: r.ValuesUnsorted(),
				})
			}
			m := sel.Matches(labels.Set(c.Labels))
			res.Matches = &m
		}
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
