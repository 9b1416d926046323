package staticpod

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// UsageLine is the subcommand's line in kubelet-oracle's usage.
const UsageLine = "kubelet-oracle staticpod [--node-name NAME] [--manifest-dir DIR] [--feature-gates NAME=BOOL,...] FILE..."

// UsageError is a bad command line (kubelet-oracle exits 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Command is `kubelet-oracle staticpod`: one JSON line per FILE, in
// argument order. --node-name is the kubelet's node name (default
// "node-a"); --manifest-dir DIR names each file as the kubelet would when
// its manifest directory is DIR (DIR/BASENAME: the path in its error
// messages and in the UID's hash; default: the path as given);
// --feature-gates changes the kubelet's defaults.
func Command(args []string, stdout io.Writer) error {
	node := "node-a"
	dir := ""
	gates := map[string]bool{}
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(name string) (string, error) {
			if k, v, ok := strings.Cut(a, "="); ok && k == name {
				return v, nil
			}
			if a != name {
				return "", &UsageError{fmt.Sprintf("error: staticpod: unknown flag %s", a)}
			}
			if i+1 >= len(args) {
				return "", &UsageError{fmt.Sprintf("error: flag %s needs a value", a)}
			}
			i++
			return args[i], nil
		}
		var err error
		switch {
		case strings.HasPrefix(a, "--node-name"):
			node, err = value("--node-name")
		case strings.HasPrefix(a, "--manifest-dir"):
			dir, err = value("--manifest-dir")
		case strings.HasPrefix(a, "--feature-gates"):
			var v string
			if v, err = value("--feature-gates"); err == nil {
				err = parseGates(v, gates)
			}
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			err = &UsageError{fmt.Sprintf("error: staticpod: unknown flag %s", a)}
		default:
			files = append(files, a)
		}
		if err != nil {
			return err
		}
	}
	if len(files) == 0 {
		return &UsageError{"error: staticpod: no manifest given\nusage: " + UsageLine}
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return &UsageError{"error: --feature-gates: " + err.Error()}
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, f := range files {
		src := ""
		if dir != "" {
			src = strings.TrimRight(dir, "/") + "/" + baseName(f)
		}
		r := Run(f, src, types.NodeName(node))
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func baseName(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

func parseGates(v string, gates map[string]bool) error {
	for _, kv := range strings.Split(v, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(strings.TrimSpace(val))
		if !ok || err != nil {
			return &UsageError{fmt.Sprintf("error: --feature-gates: %q is not NAME=true|false", kv)}
		}
		gates[strings.TrimSpace(k)] = b
	}
	return nil
}
