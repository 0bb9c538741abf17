// Command schedule runs kube-scheduler 1.37.2's own scheduling framework on a dump of Kubernetes
// objects and reports, per pod, what the scheduler decided and why. See README.md beside it.
//
// Batch mode (--batch): one JSON request per input line, one JSON answer per output line:
//
//	{"dump": "<YAML or JSON stream>"}
//	{"pods": [...]} or {"error": "..."}
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

type request struct {
	Dump  string          `json:"dump"`
	Gates map[string]bool `json:"gates,omitempty"` // feature gates for this dump only (podgroups.go)
	// Reservations asks for each claim's status.reservedFor in the answer (podgroups.go).
	Reservations bool `json:"reservations,omitempty"`
}

func main() {
	batch := flag.Bool("batch", false, "read one JSON request per line from stdin, answer one JSON line each")
	flag.Parse()
	if !*batch {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out, _ := json.MarshalIndent(answer(string(data)), "", "  ")
		fmt.Println(string(out))
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req request
		var reply any
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			reply = map[string]string{"error": "bad request: " + err.Error()}
		} else {
			reply = answerWithGates(req.Dump, req.Gates, req.Reservations)
		}
		line, _ := json.Marshal(reply)
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
}

// answer schedules one dump, turning a panic into an error answer so the batch goes on.
func answer(dump string) (reply any) {
	defer func() {
		if r := recover(); r != nil {
			reply = map[string]string{"error": fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	objects, err := decodeDump(dump)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods, err := scheduleAll(ctx, objects)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return map[string]any{"pods": pods}
}
