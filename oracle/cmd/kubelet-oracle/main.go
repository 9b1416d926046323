// Command kubelet-oracle runs podnuma scenarios through the kubelet
// v1.37.2 resource managers themselves (topology, CPU, memory and device
// managers and the kubelet's admit handlers), to check podnuma against.
//
//	kubelet-oracle simulate SCENARIO... [-o json] [--checkpoint-dir DIR]
//	kubelet-oracle bench SCENARIO
//	kubelet-oracle merge [--repeat N] < hints.jsonl
//	kubelet-oracle cgroups SCENARIO [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--step N]
//	kubelet-oracle podresources SCENARIO --socket PATH [--step N]
//	kubelet-oracle validate [--feature-gates NAME=BOOL,...] PODS|-
//	kubelet-oracle decode PODS.json|-
//	kubelet-oracle kubeletconfig CONFIG...|-
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"podnuma.io/oracle/internal/kubelet"
	"podnuma.io/oracle/internal/merge"
	"podnuma.io/oracle/internal/scenario"
	"podnuma.io/oracle/internal/staticpod"
)

const usage = `usage:
  kubelet-oracle simulate SCENARIO... [-o json] [--checkpoint-dir DIR]
  kubelet-oracle bench SCENARIO
  kubelet-oracle merge [--repeat N] < REQUESTS.jsonl
  kubelet-oracle cgroups SCENARIO [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--step N]
  kubelet-oracle podresources SCENARIO --socket PATH [--step N]
  kubelet-oracle legacy-checkpoint cpu|memory VERSION < CURRENT > OLDER
  kubelet-oracle yaml FILE|-
  kubelet-oracle validate [--feature-gates NAME=BOOL,...] PODS|-
  kubelet-oracle decode PODS.json|-
  kubelet-oracle kubeletconfig CONFIG...|-
  kubelet-oracle selector < CASES.json
  kubelet-oracle nodestatus SCENARIO
  kubelet-oracle warnings < CASES.json
  ` + staticpod.UsageLine + `
`

// exitError carries the exit status and the one line to print.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	quietKlog()
	// KUBELET_ORACLE_CPUPROFILE=FILE writes a CPU profile of the run.
	if path := os.Getenv("KUBELET_ORACLE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	err := run(os.Args[1:], os.Stdout)
	pprof.StopCPUProfile()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "error: "+err.Error())
		os.Exit(1)
	}
}

// quietKlog silences the kubelet packages' logging: the managers log at
// info and error level as they work, and the output must be the document.
// KUBELET_ORACLE_V=N instead sends the kubelet's logs at verbosity N to
// stderr, for debugging the harness.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if v := os.Getenv("KUBELET_ORACLE_V"); v != "" {
		_ = fs.Set("v", v)
		_ = fs.Set("logtostderr", "true")
		debugLogs = true
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
}

// debugLogs keeps the kubelet's logger in the context (KUBELET_ORACLE_V).
var debugLogs bool

func logContext() context.Context {
	if debugLogs {
		return klog.NewContext(context.Background(), klog.Background())
	}
	return klog.NewContext(context.Background(), logr.Discard())
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return &exitError{2, strings.TrimRight(usage, "\n")}
	}
	switch args[0] {
	case "simulate":
		return simulate(args[1:], stdout)
	case "bench":
		return bench(args[1:], stdout)
	case "merge":
		return mergeHints(args[1:], os.Stdin, stdout)
	case "cgroups":
		return cgroupsCmd(args[1:], stdout)
	case "podresources":
		return podresourcesCmd(args[1:], os.Stdin, stdout)
	case "legacy-checkpoint":
		return legacyCheckpoint(args[1:], os.Stdin, stdout)
	case "yaml":
		return yamlToJSON(args[1:], os.Stdin, stdout)
	case "validate":
		return validatePods(args[1:], os.Stdin, stdout)
	case "decode":
		return decodePods(args[1:], os.Stdin, stdout)
	case "kubeletconfig":
		return decodeKubeletConfigs(args[1:], os.Stdin, stdout)
	case "selector":
		return selectorCmd(args[1:], os.Stdin, stdout)
	case "nodestatus":
		return nodeStatusCmd(args[1:], stdout)
	case "warnings":
		return warningsCmd(args[1:], os.Stdin, stdout)
	case "staticpod":
		if err := staticpod.Command(args[1:], stdout); err != nil {
			var ue *staticpod.UsageError
			if errors.As(err, &ue) {
				return &exitError{2, ue.Msg}
			}
			return err
		}
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return &exitError{2, fmt.Sprintf("error: unknown command %q\n%s", args[0], strings.TrimRight(usage, "\n"))}
}

// parseArgs splits flags from positional arguments (flags may come after
// the scenario files, as with podnuma).
func parseArgs(args []string, withCheckpointDir bool) (files []string, output, checkpointDir string, err error) {
	output = "json"
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(name string) (string, error) {
			if k, v, ok := strings.Cut(a, "="); ok && k == name {
				return v, nil
			}
			if i+1 >= len(args) {
				return "", &exitError{2, fmt.Sprintf("error: flag %s needs a value", a)}
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "-o="):
			name := a
			if k, _, ok := strings.Cut(a, "="); ok {
				name = k
			}
			if output, err = value(name); err != nil {
				return
			}
			if output != "json" {
				return nil, "", "", &exitError{2, fmt.Sprintf("error: output format %q is not supported (json only)", output)}
			}
		case withCheckpointDir && (a == "--checkpoint-dir" || strings.HasPrefix(a, "--checkpoint-dir=")):
			if checkpointDir, err = value("--checkpoint-dir"); err != nil {
				return
			}
		case a == "--":
			files = append(files, args[i+1:]...)
			return
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, "", "", &exitError{2, fmt.Sprintf("error: unknown flag %s", a)}
		default:
			files = append(files, a)
		}
	}
	if len(files) == 0 {
		return nil, "", "", &exitError{2, "error: no scenario given\n" + strings.TrimRight(usage, "\n")}
	}
	return
}

// load reads a scenario; "-" reads stdin.
func load(file string) (*scenario.Scenario, error) {
	if file == "-" {
		raw, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, err
		}
		dir, _ := os.Getwd()
		return scenario.Parse(raw, "-", dir)
	}
	return scenario.Load(file)
}

// simulateOne runs one scenario in a fresh kubelet state directory.
func simulateOne(file string) (*kubelet.Document, error) {
	s, err := load(file)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(kubelet.StateDirBase(), "kubelet-oracle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := logContext()
	node, err := kubelet.NewNode(ctx, s, dir)
	if err != nil {
		return nil, err
	}
	defer node.Close()
	return node.Run()
}

// describe turns an error into the one line podnuma's CLI would print.
func describe(file string, err error) string {
	var ie *scenario.InputError
	var se *kubelet.StartupError
	switch {
	case errors.As(err, &ie):
		if ie.File == "" {
			ie.File = file
		}
		return "error: " + ie.Error()
	case errors.As(err, &se):
		return fmt.Sprintf("error: kubelet would not start: %s (%s)", se.Message, file)
	}
	return fmt.Sprintf("error: %s: %v", file, err)
}

func simulate(args []string, stdout io.Writer) error {
	files, _, checkpointDir, err := parseArgs(args, true)
	if err != nil {
		return err
	}
	if len(files) > 1 && checkpointDir != "" {
		return &exitError{2, "error: --checkpoint-dir takes a single scenario"}
	}
	if len(files) == 1 {
		doc, err := simulateOne(files[0])
		if err != nil {
			var ie *scenario.InputError
			var se *kubelet.StartupError
			if errors.As(err, &ie) || errors.As(err, &se) {
				return &exitError{2, describe(files[0], err)}
			}
			return &exitError{1, describe(files[0], err)}
		}
		if checkpointDir != "" {
			if err := writeCheckpoints(checkpointDir, doc.Files()); err != nil {
				return &exitError{1, "error: " + err.Error()}
			}
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
		doc, err := simulateOne(f)
		if err != nil {
			line, _ = json.Marshal(struct {
				File  string `json:"file"`
				Error string `json:"error"`
			}{f, describe(f, err)})
		} else if line, err = json.Marshal(doc); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckpoints writes the kubelet's checkpoint files byte for byte,
// each atomically (temporary file, fsync, rename).
func writeCheckpoints(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		// a name may lie in a subdirectory (device-plugins/...)
		sub := filepath.Dir(filepath.Join(dir, name))
		if err := os.MkdirAll(sub, 0o750); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(sub, "."+filepath.Base(name)+".tmp-")
		if err != nil {
			return err
		}
		if _, err := io.Copy(tmp, bytes.NewReader(files[name])); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
		if err := tmp.Close(); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
			return err
		}
		if d, err := os.Open(sub); err == nil && sub != dir {
			_ = d.Sync()
			d.Close()
		} else if err == nil {
			d.Close()
		}
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// bench runs a scenario's steps through the real managers with in-memory
// state and reports the admission rate.
func bench(args []string, stdout io.Writer) error {
	files, _, _, err := parseArgs(args, false)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return &exitError{2, "error: bench takes one scenario"}
	}
	s, err := load(files[0])
	if err != nil {
		return &exitError{2, describe(files[0], err)}
	}
	ctx := logContext()
	res, err := kubelet.Bench(ctx, s)
	if err != nil {
		var se *kubelet.StartupError
		var ie *scenario.InputError
		if errors.As(err, &se) || errors.As(err, &ie) {
			return &exitError{2, describe(files[0], err)}
		}
		return &exitError{1, describe(files[0], err)}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// mergeHints reads merge requests as JSON Lines and writes one result line
// per request, in order: the topology policy's Merge (see internal/merge).
// Every line is decoded before any is merged, so bad input writes nothing.
// --repeat N merges each request N times and adds the median seconds.
func mergeHints(args []string, stdin io.Reader, stdout io.Writer) error {
	repeat := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		v, hasValue := "", false
		if k, val, ok := strings.Cut(a, "="); ok && k == "--repeat" {
			v, hasValue = val, true
		} else if a == "--repeat" && i+1 < len(args) {
			i++
			v, hasValue = args[i], true
		}
		if !hasValue {
			return &exitError{2, fmt.Sprintf("error: merge: unexpected argument %s\n%s", a, strings.TrimRight(usage, "\n"))}
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &exitError{2, fmt.Sprintf("error: merge: --repeat wants a positive integer, got %q", v)}
		}
		repeat = n
	}
	scanner := bufio.NewScanner(stdin)
	scanner.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var requests []*merge.Request
	for lineNo := 1; scanner.Scan(); lineNo++ {
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		r, err := merge.Decode(line)
		if err != nil {
			return &exitError{2, fmt.Sprintf("error: -: line %d: %v", lineNo, err)}
		}
		requests = append(requests, r)
	}
	if err := scanner.Err(); err != nil {
		return &exitError{2, "error: -: " + err.Error()}
	}
	logger := klog.FromContext(logContext())
	out := bufio.NewWriter(stdout)
	for _, r := range requests {
		line, err := json.Marshal(merge.Run(logger, r, repeat))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
			return err
		}
	}
	return out.Flush()
}
