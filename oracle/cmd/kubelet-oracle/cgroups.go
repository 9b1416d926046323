package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"podnuma.io/oracle/internal/kubelet"
	"podnuma.io/oracle/internal/scenario"
)

const cgroupsUsage = "usage: kubelet-oracle cgroups SCENARIO... [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--step N] [--cgroup-root PATH]"

// cgroupsCmd prints the pod and container cgroups of the pods running
// after a step (default the last), as the kubelet's own functions compute
// them (see internal/kubelet/cgroups.go).
func cgroupsCmd(args []string, stdout io.Writer) error {
	opts := kubelet.CgroupsOptions{Driver: "systemd", Version: 2, Step: -1}
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") || a == "--" {
			files = append(files, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return &exitError{2, fmt.Sprintf("error: flag %s needs a value\n%s", a, cgroupsUsage)}
			}
			i++
			val = args[i]
		}
		switch name {
		case "--cgroup-version":
			if val != "1" && val != "2" {
				return &exitError{2, fmt.Sprintf("error: --cgroup-version %q: 1 or 2", val)}
			}
			opts.Version, _ = strconv.Atoi(val)
		case "--driver":
			if val != "systemd" && val != "cgroupfs" {
				return &exitError{2, fmt.Sprintf("error: --driver %q: systemd or cgroupfs", val)}
			}
			opts.Driver = val
		case "--cgroup-root":
			// the kubelet's flag: in place of the configuration's cgroupRoot
			root := val
			opts.CgroupRoot = &root
		case "--step":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return &exitError{2, fmt.Sprintf("error: --step %q: a step index (0-based)", val)}
			}
			opts.Step = n
		default:
			return &exitError{2, fmt.Sprintf("error: unknown flag %s\n%s", name, cgroupsUsage)}
		}
	}
	if len(files) == 0 {
		return &exitError{2, "error: no scenario given\n" + cgroupsUsage}
	}
	if len(files) == 1 {
		doc, err := cgroupsOne(files[0], opts)
		if err != nil {
			return err
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", out)
		return err
	}
	// Several scenarios: JSON Lines, one document (or error) per scenario.
	for _, f := range files {
		var line []byte
		doc, err := cgroupsOne(f, opts)
		if err != nil {
			var ee *exitError
			msg := err.Error()
			if errors.As(err, &ee) {
				msg = ee.msg
			}
			line, _ = json.Marshal(struct {
				File  string `json:"file"`
				Error string `json:"error"`
			}{f, msg})
		} else if line, err = json.Marshal(doc); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
			return err
		}
	}
	return nil
}

func cgroupsOne(file string, opts kubelet.CgroupsOptions) (*kubelet.CgroupsDoc, error) {
	node, cleanup, err := startNode(file)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	doc, err := node.Cgroups(opts)
	if err != nil {
		return nil, classify(file, err)
	}
	return doc, nil
}

// startNode loads a scenario and starts the kubelet's managers for it in a
// fresh state directory; cleanup stops them and removes the directory.
func startNode(file string) (*kubelet.Node, func(), error) {
	s, err := load(file)
	if err != nil {
		return nil, nil, classify(file, err)
	}
	dir, err := os.MkdirTemp(kubelet.StateDirBase(), "kubelet-oracle-")
	if err != nil {
		return nil, nil, err
	}
	node, err := kubelet.NewNode(logContext(), s, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, classify(file, err)
	}
	return node, func() { node.Close(); os.RemoveAll(dir) }, nil
}

// classify gives an error its exit status: 2 for invalid input or a
// configuration the kubelet refuses, 1 otherwise.
func classify(file string, err error) error {
	var ie *scenario.InputError
	var se *kubelet.StartupError
	if errors.As(err, &ie) || errors.As(err, &se) {
		return &exitError{2, describe(file, err)}
	}
	return &exitError{1, describe(file, err)}
}
