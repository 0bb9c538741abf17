// Command oracle runs a playground scenario through Kubernetes' own structured
// allocator (k8s.io/dynamic-resource-allocation) and prints the outcome in the
// shape of `manage.py allocate -o json`.
//
// It holds no allocation logic: it turns the scenario into the objects the
// kube-scheduler's DynamicResources plugin hands to the allocator (allocated
// state, class lister, slices, CEL cache, features) and calls Allocate. See
// README.md for what it does and does not model.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

const (
	exitAllocated     = 0
	exitUnsatisfiable = 1
	exitInvalid       = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("oracle", flag.ContinueOnError)
	flags.SetOutput(stderr)
	node := flags.String("node", "", "allocate for this node (default: every node named, first that fits)")
	gates := flags.String("feature-gates", "", "A=true,B=false (Kubernetes gate names)")
	output := flags.String("o", "", "json (the only machine-readable format)")
	batch := flags.Bool("batch", false, "read JSON lines {\"scenario\", \"node\", \"featureGates\"} (or {\"cel\", \"stored\", \"featureGates\"}) from stdin, write one result line each")
	timeout := flags.Duration("timeout", defaultTimeout, "time allowed for one node, as the scheduler's filter timeout")
	// Go's flag package stops at the first positional argument; the playground's
	// command line puts FILE first, so flags after it are parsed in a second pass.
	if err := flags.Parse(args); err != nil {
		return exitInvalid
	}
	rest := flags.Args()
	var file string
	if len(rest) > 0 {
		file = rest[0]
		if err := flags.Parse(rest[1:]); err != nil {
			return exitInvalid
		}
		if len(flags.Args()) > 0 {
			fmt.Fprintf(stderr, "oracle: unexpected arguments %v\n", flags.Args())
			return exitInvalid
		}
	}
	if *batch {
		return runBatch(stdin, stdout, *timeout)
	}
	if file == "" {
		fmt.Fprintln(stderr, "usage: oracle FILE [--node NAME] [--feature-gates A=true,B=false] [-o json]\n       oracle --batch < requests.jsonl")
		return exitInvalid
	}
	if *output != "" && *output != "json" {
		fmt.Fprintf(stderr, "oracle: -o %s: only json is supported\n", *output)
		return exitInvalid
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	var result *Result
	if err != nil {
		result = invalid(fmt.Sprintf("cannot read %s: %v", file, err))
	} else {
		result = Allocate(data, *node, *gates, *timeout)
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(result)
	} else {
		printReport(stdout, result)
	}
	return result.ExitCode()
}

// BatchRequest is one line of --batch input.
type BatchRequest struct {
	ID           any    `json:"id,omitempty"`
	Scenario     string `json:"scenario"`
	Node         string `json:"node,omitempty"`
	FeatureGates string `json:"featureGates,omitempty"`
	// Cel, when set, asks about one selector expression instead of a scenario.
	Cel    string `json:"cel,omitempty"`
	Stored bool   `json:"stored,omitempty"`
	// Derived compiles the expression as a derived attribute (any scalar or list of scalars).
	Derived bool `json:"derived,omitempty"`
}

// BatchResponse is one line of --batch output: the result plus the exit
// status the single-scenario command would have had.
type BatchResponse struct {
	ID any `json:"id,omitempty"`
	*Result
	ExitCode int `json:"exitCode"`
}

func runBatch(stdin io.Reader, stdout io.Writer, timeout time.Duration) int {
	reader := bufio.NewReaderSize(stdin, 1<<20)
	writer := bufio.NewWriter(stdout)
	defer writer.Flush()
	enc := json.NewEncoder(writer)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 && !blank(line) {
			var req BatchRequest
			var result *Result
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				result = invalid(fmt.Sprintf("batch line is not a request: %v", jerr))
			} else if req.Cel != "" {
				answer, cerr := compileCEL(req.Cel, req.FeatureGates, req.Stored, req.Derived)
				if cerr != nil {
					answer = &CelResult{Outcome: "invalid", Message: cerr.Error()}
				}
				_ = enc.Encode(answer)
				if ferr := writer.Flush(); ferr != nil {
					return exitInvalid
				}
				continue
			} else {
				result = Allocate([]byte(req.Scenario), req.Node, req.FeatureGates, timeout)
			}
			if eerr := enc.Encode(BatchResponse{ID: req.ID, Result: result, ExitCode: result.ExitCode()}); eerr != nil {
				// An answer that does not encode is still one line: the driver waits for it.
				_ = enc.Encode(BatchResponse{ID: req.ID, Result: invalid("oracle: " + eerr.Error()), ExitCode: exitInvalid})
			}
			// The driver waits for each answer before sending the next request.
			if ferr := writer.Flush(); ferr != nil {
				return exitInvalid
			}
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			return exitInvalid
		}
	}
}

func blank(line []byte) bool {
	for _, b := range line {
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			return false
		}
	}
	return true
}

func printReport(w io.Writer, r *Result) {
	fmt.Fprintf(w, "outcome: %s\n", r.Outcome)
	if r.Node != nil {
		fmt.Fprintf(w, "node: %s\n", *r.Node)
	}
	if r.Message != "" {
		fmt.Fprintf(w, "message: %s\n", r.Message)
	}
	for _, c := range r.Claims {
		fmt.Fprintf(w, "claim %s/%s:\n", c.Metadata.Namespace, c.Metadata.Name)
		if c.Status == nil || c.Status.Allocation == nil {
			fmt.Fprintln(w, "  not allocated")
			continue
		}
		for _, res := range c.Status.Allocation.Devices.Results {
			fmt.Fprintf(w, "  %s: %s/%s/%s\n", res.Request, res.Driver, res.Pool, res.Device)
		}
	}
}
