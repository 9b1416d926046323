package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
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
	if len(args) == 0 {
		args = []string{"-"}
	}
	out := bufio.NewWriter(stdout)
	for _, file := range args {
		var raw []byte
		var err error
		if file == "-" {
			raw, err = io.ReadAll(stdin)
		} else {
			raw, err = os.ReadFile(file)
		}
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
		return append([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"), raw...)
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
