// Command schedule runs kube-scheduler 1.37.2's own scheduling framework on a dump of Kubernetes
// objects and reports, per pod, what the scheduler decided and why. See README.md beside it.
//
// Batch mode (--batch): one JSON request per input line, one JSON answer per output line:
//
//	{"dump": "<YAML or JSON stream>"}
//	{"pods": [...]} or {"error": "..."}
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"dra-playground/kube/internal/batch"
)

type request struct {
	Dump  string          `json:"dump"`
	Gates map[string]bool `json:"gates,omitempty"` // feature gates for this dump only (podgroups.go)
	// Reservations asks for each claim's status.reservedFor in the answer (podgroups.go).
	Reservations bool `json:"reservations,omitempty"`
	// Queue asks, per pending pod, what the real scheduling queue makes of it (queue.go).
	Queue bool `json:"queue,omitempty"`
	// Cycle asks for the scheduler's own loop: its queue, pod group cycles and failure handler (cycle.go).
	Cycle bool `json:"cycle,omitempty"`
}

func main() {
	batchMode := flag.Bool("batch", false, "read one JSON request per line from stdin, answer one JSON line each")
	flag.Parse()
	if !*batchMode {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out, _ := json.MarshalIndent(answer(string(data)), "", "  ")
		fmt.Println(string(out))
		return
	}
	if err := batch.Serve(os.Stdin, os.Stdout, func(req request) any {
		reportCycle = req.Cycle
		defer func() { reportCycle = false }()
		return answerWithGates(req.Dump, req.Gates, req.Reservations, req.Queue)
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// answer schedules one dump (batch.Serve turns a panic into an error answer).
func answer(dump string) any {
	objects, err := decodeDump(dump)
	if err != nil {
		return batch.Error(err.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if reportCycle {
		pods, groups, err := runScheduler(ctx, objects)
		if err != nil {
			return batch.Error(err.Error())
		}
		return map[string]any{"pods": pods, "podGroups": groups}
	}
	pods, err := scheduleAll(ctx, objects)
	if err != nil {
		return batch.Error(err.Error())
	}
	return map[string]any{"pods": pods}
}
