package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"podnuma.io/oracle/internal/apiserver"
)

// decodeResult is one output line of `decode`.
type decodeResult struct {
	Index    int    `json:"index"`
	Accepted bool   `json:"accepted"`
	Message  string `json:"message,omitempty"`
}

// decodePods runs each pod of a JSON array (read as it is written: no
// YAML conversion, so a number keeps its text) through the API server's
// v1 decoding only (internal/apiserver.Decode: strict fields, no
// defaults, no validation). One JSON line per pod, in input order:
// accepted, or the decoder's message.
func decodePods(args []string, stdin io.Reader, stdout io.Writer) error {
	file := "-"
	switch len(args) {
	case 0:
	case 1:
		file = args[0]
	default:
		return &exitError{2, "error: decode takes one input (a JSON array of pods)"}
	}
	raw, err := readInput(file, stdin)
	if err != nil {
		return &exitError{2, "error: " + err.Error()}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return &exitError{2, fmt.Sprintf("error: %s: not a JSON array: %v", file, err)}
	}
	out := bufio.NewWriter(stdout)
	for i, item := range items {
		res := decodeResult{Index: i}
		if _, rej := apiserver.Decode(item); rej != nil {
			res.Message = rej.Message
		} else {
			res.Accepted = true
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
