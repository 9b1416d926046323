package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/warning"
)

const warningsUsage = "usage: kubelet-oracle warnings < CASES.json"

// warningsCase is one input case of `warnings`: texts a handler adds as
// warnings to one response (through the API server's warning recorder),
// and Warning header values to parse as a client does.
type warningsCase struct {
	Texts   []string `json:"texts"`
	Headers []string `json:"headers"`
}

// warningsResult is one output line of `warnings`.
type warningsResult struct {
	Index int `json:"index"`
	// Written: the Warning header values the recorder left on the response,
	// in order.
	Written []string `json:"written"`
	// Parsed: the warnings utilnet.ParseWarningHeaders reads from Headers
	// (code, agent, text), and its errors' texts.
	Parsed      []parsedWarning `json:"parsed"`
	ParseErrors []string        `json:"parseErrors"`
}

type parsedWarning struct {
	Code  int    `json:"code"`
	Agent string `json:"agent"`
	Text  string `json:"text"`
}

// warningsCmd reads a JSON list of cases on stdin and prints one JSON line
// per case, in input order. Nothing here restates the API server: the texts
// go to warning.AddWarning inside a handler wrapped by
// filters.WithWarningRecorder (its dedupe, size limit and truncation, and
// utilnet.NewWarningHeader's quoting), the headers to
// utilnet.ParseWarningHeaders.
func warningsCmd(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{2, warningsUsage}
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return &exitError{2, "error: -: " + err.Error()}
	}
	var cases []warningsCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return &exitError{2, "error: -: " + err.Error()}
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for i, c := range cases {
		res := warningsResult{Index: i, Written: []string{}, Parsed: []parsedWarning{}, ParseErrors: []string{}}
		texts := c.Texts
		handler := filters.WithWarningRecorder(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, t := range texts {
				warning.AddWarning(r.Context(), "", t)
			}
		}))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		res.Written = append(res.Written, rec.Header().Values("Warning")...)
		parsed, errs := utilnet.ParseWarningHeaders(c.Headers)
		for _, p := range parsed {
			res.Parsed = append(res.Parsed, parsedWarning{Code: p.Code, Agent: p.Agent, Text: p.Text})
		}
		for _, e := range errs {
			res.ParseErrors = append(res.ParseErrors, e.Error())
		}
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("writing case %d: %w", i, err)
		}
	}
	return nil
}
