// Command validate takes every object of a playground scenario through what
// kube-apiserver 1.37.2 does when the object is created: decoding into the
// resource.k8s.io/v1 (or core v1) type with strict field checking, defaulting,
// conversion to the internal type, the registry strategy's PrepareForCreate
// (fields of disabled gates dropped) and its validation (handwritten and
// declarative, CEL compilation and cost included) under the feature gates of
// the request. A ResourceClaim that carries a status is then taken through a
// status update, which is how a status is written.
//
// With --batch it reads one JSON request per line,
// {"scenario": "<YAML>", "featureGates": "A=true,B=false"}, and writes one
// JSON answer per line: per object, valid or not, its field errors (path,
// type, detail, message), strict-decoding warnings and the fields dropped.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	batch := flag.Bool("batch", false, "read JSON requests line by line from stdin")
	gates := flag.String("feature-gates", "", "A=true,B=false (single mode)")
	flag.Parse()
	if !*batch {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out, _ := json.MarshalIndent(answer(request{Scenario: string(data), FeatureGates: *gates}), "", "  ")
		fmt.Println(string(out))
		return
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var req request
			var resp response
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				resp = response{Error: "bad request: " + jerr.Error()}
			} else {
				resp = answer(req)
			}
			_ = enc.Encode(resp)
			_ = w.Flush()
		}
		if err != nil {
			return
		}
	}
}

type request struct {
	Scenario     string `json:"scenario"`
	FeatureGates string `json:"featureGates"`
}

type response struct {
	Objects []objectResult `json:"objects"`
	Error   string         `json:"error,omitempty"`
}

type fieldError struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Detail  string `json:"detail"`
	Message string `json:"message"` // the error as the apiserver prints it after "<field>: "
}

type objectResult struct {
	Doc        int          `json:"doc"`
	Item       int          `json:"item"`
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Name       string       `json:"name"`
	Namespace  string       `json:"namespace,omitempty"`
	Outcome    string       `json:"outcome"` // valid, invalid, decode-error, not-read
	Errors     []fieldError `json:"errors"`
	Decode     string       `json:"decode,omitempty"`
	Warnings   []string     `json:"warnings"`
	Dropped    []string     `json:"dropped"`
}

func answer(req request) (resp response) {
	defer func() {
		if r := recover(); r != nil {
			resp = response{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if err := useGates(req.FeatureGates); err != nil {
		return response{Error: "feature gates: " + err.Error()}
	}
	docs, err := splitScenario([]byte(req.Scenario))
	if err != nil {
		return response{Error: "yaml: " + err.Error()}
	}
	resp.Objects = []objectResult{}
	for _, d := range docs {
		resp.Objects = append(resp.Objects, create(d))
	}
	return resp
}

func parseGates(text string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, raw, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("missing bool value for %s", name)
		}
		v, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("invalid value of %s=%s, err: %v", name, raw, err)
		}
		out[strings.TrimSpace(name)] = v
	}
	return out, nil
}
