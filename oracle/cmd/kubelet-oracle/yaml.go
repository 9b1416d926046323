package main

import (
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

const yamlUsage = "usage: kubelet-oracle yaml FILE|-"

// yamlToJSON prints the JSON sigs.k8s.io/yaml makes of a YAML file (its
// first document), as the kubelet's file source and kubectl convert a
// manifest before decoding it. A document it refuses exits 1 with the
// library's message.
func yamlToJSON(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 1 {
		return &exitError{2, yamlUsage}
	}
	data, err := readInput(args[0], stdin)
	if err != nil {
		return &exitError{2, fmt.Sprintf("error: %v", err)}
	}
	out, err := yaml.YAMLToJSON(data)
	if err != nil {
		return &exitError{1, fmt.Sprintf("error: %v", err)}
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
