package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/kubernetes/pkg/kubelet/server"
)

const podresourcesUsage = "usage: kubelet-oracle podresources SCENARIO --socket PATH [--step N]"

// podresourcesCmd serves the kubelet's PodResources API (v1 and v1alpha1,
// pkg/kubelet/server ListenAndServePodResources: the real gRPC server,
// rate limiter included) on a unix socket, over the managers of a scenario
// run step by step:
//
//   - the steps up to --step N run first (default: none), then the server
//     starts and "ready N" is printed on stdout (N = the last step run, -1
//     for none);
//   - each line "next" on stdin runs the next step and prints "ready N"
//     again, or "end" when no step is left; a step that fails prints
//     "error: MESSAGE" and the server keeps answering for the steps before;
//   - end of input (or a line "quit") stops the server and exits.
func podresourcesCmd(args []string, stdin io.Reader, stdout io.Writer) error {
	var file, socket string
	upto := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			if file != "" {
				return &exitError{2, "error: podresources takes one scenario\n" + podresourcesUsage}
			}
			file = a
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return &exitError{2, fmt.Sprintf("error: flag %s needs a value\n%s", a, podresourcesUsage)}
			}
			i++
			val = args[i]
		}
		switch name {
		case "--socket":
			socket = val
		case "--step":
			n, err := strconv.Atoi(val)
			if err != nil || n < -1 {
				return &exitError{2, fmt.Sprintf("error: --step %q: a step index (0-based)", val)}
			}
			upto = n
		default:
			return &exitError{2, fmt.Sprintf("error: unknown flag %s\n%s", name, podresourcesUsage)}
		}
	}
	if file == "" || socket == "" {
		return &exitError{2, "error: a scenario and --socket are needed\n" + podresourcesUsage}
	}
	abs, err := filepath.Abs(socket)
	if err != nil {
		return &exitError{2, "error: --socket: " + err.Error()}
	}
	if len(abs) > 107 {
		return &exitError{2, fmt.Sprintf("error: --socket %s: longer than a unix socket address holds", abs)}
	}
	node, cleanup, err := startNode(file)
	if err != nil {
		return err
	}
	defer cleanup()
	steps := node.StepCount()
	if upto >= steps {
		return &exitError{2, fmt.Sprintf("error: --step %d: the scenario has steps 0-%d", upto, steps-1)}
	}
	node.SeedKnown()
	done := -1
	for done < upto {
		if _, err := node.StepKnown(done + 1); err != nil {
			return classify(file, err)
		}
		done++
	}
	go server.ListenAndServePodResources(logContext(), "unix://"+abs, node.PodResourcesProviders())
	if err := waitForSocket(abs); err != nil {
		return &exitError{1, "error: " + err.Error()}
	}
	defer os.Remove(abs)
	out := bufio.NewWriter(stdout)
	say := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	say("ready %d", done)
	in := bufio.NewScanner(stdin)
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "next":
			if done+1 >= steps {
				say("end")
				continue
			}
			if _, err := node.StepKnown(done + 1); err != nil {
				say("error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
				continue
			}
			done++
			say("ready %d", done)
		case "quit":
			return nil
		case "":
		default:
			say("error: unknown command %q (next, quit)", in.Text())
		}
	}
	return nil
}

// waitForSocket waits until the server listens on path.
func waitForSocket(path string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("the PodResources server did not listen on %s", path)
}
