package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"
	"sigs.k8s.io/yaml"

	"podnuma.io/oracle/internal/kubelet"
)

// configResult is one output line of `kubeletconfig`.
type configResult struct {
	File string `json:"file"`
	// Config is the decoded configuration (defaults applied), as v1beta1.
	Config any `json:"config,omitempty"`
	// Warning is the strict decoding error the kubelet logs when it falls
	// back to lenient decoding ("Using lenient decoding as strict
	// decoding failed").
	Warning string `json:"warning,omitempty"`
	// Error is the decoding error the kubelet stops with.
	Error string `json:"error,omitempty"`
}

// decodeKubeletConfigs decodes each file (or "-") as the kubelet decodes
// its config file, through pkg/kubelet/kubeletconfig/util/codec. A
// configz answer ({"kubeletconfig": {...}}) is unwrapped first, and a
// document without apiVersion and kind gets the v1beta1 ones (as the
// scenario reader gives them): both by editing the bytes, so duplicate
// and case-variant keys reach the decoder as written. One JSON line per
// file.
func decodeKubeletConfigs(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 1 && args[0] == "--schema" {
		js, err := json.Marshal(schemaOf(reflect.TypeOf(kubeletconfigv1beta1.KubeletConfiguration{})))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", js)
		return err
	}
	if len(args) > 0 && args[0] == "--file" {
		return loadKubeletConfigFiles(args[1:], stdout)
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	out := bufio.NewWriter(stdout)
	for _, file := range args {
		raw, err := readInput(file, stdin)
		if err != nil {
			return &exitError{2, "error: " + err.Error()}
		}
		res := configResult{File: file}
		kc, warning, err := kubelet.DecodeConfig(context.Background(), asKubeletConfiguration(raw))
		if err != nil {
			res.Error = err.Error()
		} else {
			scheme, _, serr := kubeletscheme.NewSchemeAndCodecs()
			if serr != nil {
				return serr
			}
			ext := &kubeletconfigv1beta1.KubeletConfiguration{}
			if err := scheme.Convert(kc, ext, nil); err != nil {
				return err
			}
			res.Config, res.Warning = ext, warning
		}
		if err := writeJSONLine(out, res); err != nil {
			return err
		}
	}
	return out.Flush()
}

// loadKubeletConfigFiles loads each FILE as the kubelet loads the file of
// its --config flag (cmd/kubelet/app/server.go loadConfigFile: the path
// made absolute, pkg/kubelet/kubeletconfig/configfiles' fsLoader, whose
// codec wants the document's own apiVersion and kind), nothing added to
// the bytes. The error is loadConfigFile's, wrapped as the kubelet's
// command wraps it. One JSON line per file (config left out: this is about
// what the loader accepts).
func loadKubeletConfigFiles(files []string, stdout io.Writer) error {
	out := bufio.NewWriter(stdout)
	for _, file := range files {
		res := configResult{File: file}
		if err := loadKubeletConfigFile(file); err != nil {
			res.Error = fmt.Sprintf("failed to load kubelet config file, path: %s, error: %v", file, err)
		}
		if err := writeJSONLine(out, res); err != nil {
			return err
		}
	}
	return out.Flush()
}

func loadKubeletConfigFile(name string) (err error) {
	const errFmt = "failed to load Kubelet config file %s, error %v"
	defer func() {
		// an unknown feature gate makes the v1beta1 defaulting panic
		if r := recover(); r != nil {
			err = fmt.Errorf(errFmt, name, fmt.Errorf("panic: %v", r))
		}
	}()
	abs, err := filepath.Abs(name)
	if err != nil {
		return fmt.Errorf(errFmt, name, err)
	}
	loader, err := configfiles.NewFsLoader(&utilfs.DefaultFs{}, abs)
	if err != nil {
		return fmt.Errorf(errFmt, name, err)
	}
	if _, err := loader.Load(context.Background()); err != nil {
		return fmt.Errorf(errFmt, name, err)
	}
	return nil
}

// asKubeletConfiguration unwraps a configz answer and adds apiVersion and
// kind where the document has none, without re-encoding it.
func asKubeletConfiguration(raw []byte) []byte {
	if !json.Valid(raw) {
		// YAML: the kind goes in front of the document as written
		js, err := yaml.YAMLToJSON(raw)
		var top map[string]json.RawMessage
		if err != nil || json.Unmarshal(js, &top) != nil {
			return raw
		}
		if _, ok := top["apiVersion"]; ok {
			return raw
		}
		// appended, so that the decoder's line numbers are the file's
		doc := bytes.TrimRight(raw, " \t\r\n")
		return append(doc, []byte("\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")...)
	}
	js := bytes.TrimSpace(raw)
	var top map[string]json.RawMessage
	if json.Unmarshal(js, &top) != nil {
		return raw
	}
	if inner, ok := top["kubeletconfig"]; ok && len(top) == 1 {
		js = bytes.TrimSpace(inner)
		top = nil
		if json.Unmarshal(js, &top) != nil {
			return js
		}
	}
	if _, ok := top["apiVersion"]; ok || len(js) == 0 || js[0] != '{' {
		return js
	}
	rest := bytes.TrimSpace(js[1:])
	sep := ","
	if len(rest) > 0 && rest[0] == '}' {
		sep = ""
	}
	head := `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration"` + sep
	return append([]byte(head), rest...)
}

// configSchema describes how encoding/json (as sigs.k8s.io/json decodes)
// reads a type: "struct" with its JSON fields, "map" and "list" with their
// element, or a scalar kind ("string", "bool", "int32", "int64", "uint32",
// "uint64", "float", or "any" for a type with a decoder of its own that
// takes more than one JSON form). `kubeletconfig --schema` prints the schema of
// v1beta1.KubeletConfiguration, which podnuma's decoder carries as data.
type configSchema struct {
	Kind   string                   `json:"kind"`
	Fields map[string]*configSchema `json:"fields,omitempty"`
	Elem   *configSchema            `json:"elem,omitempty"`
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func schemaOf(t reflect.Type) *configSchema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		// its own decoding: metav1.Duration reads a JSON string; other
		// types (the logging flush frequency) take more than one form
		if t == reflect.TypeOf(metav1.Duration{}) {
			return &configSchema{Kind: "string"}
		}
		return &configSchema{Kind: "any"}
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &configSchema{Kind: "struct", Fields: map[string]*configSchema{}}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				for k, v := range schemaOf(f.Type).Fields {
					s.Fields[k] = v
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.Fields[name] = schemaOf(f.Type)
		}
		return s
	case reflect.Map:
		return &configSchema{Kind: "map", Elem: schemaOf(t.Elem())}
	case reflect.Slice, reflect.Array:
		return &configSchema{Kind: "list", Elem: schemaOf(t.Elem())}
	case reflect.String:
		return &configSchema{Kind: "string"}
	case reflect.Bool:
		return &configSchema{Kind: "bool"}
	case reflect.Int32:
		return &configSchema{Kind: "int32"}
	case reflect.Int, reflect.Int64:
		return &configSchema{Kind: "int64"}
	case reflect.Uint32:
		return &configSchema{Kind: "uint32"}
	case reflect.Uint, reflect.Uint64:
		return &configSchema{Kind: "uint64"}
	case reflect.Float32, reflect.Float64:
		return &configSchema{Kind: "float"}
	}
	return &configSchema{Kind: "any"}
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(out io.Writer, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", line)
	return err
}
