// Package batch is the request loop the oracles share: one JSON request per input line, one JSON
// answer per output line, flushed at once so that the Python driver can wait line by line; a
// panic while answering one request becomes an error answer and the loop goes on.
package batch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// maxLine is the longest request line read (a dump of a large cluster is a few MiB).
const maxLine = 64 << 20

// Serve reads requests of type R from in until it ends and writes answer's reply to each.
func Serve[R any](in io.Reader, out io.Writer, answer func(R) any) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), maxLine)
	w := bufio.NewWriter(out)
	for scanner.Scan() {
		var req R
		var reply any
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			reply = Error("bad request: " + err.Error())
		} else {
			reply = Safely(func() any { return answer(req) })
		}
		line, err := json.Marshal(reply)
		if err != nil {
			line, _ = json.Marshal(Error("answer not encodable: " + err.Error()))
		}
		w.Write(line)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return scanner.Err()
}

// Error is the answer for a request that could not be answered.
func Error(message string) map[string]string {
	return map[string]string{"error": message}
}

// Safely runs f, turning a panic into an error answer that carries the stack.
func Safely(f func() any) (reply any) {
	defer func() {
		if r := recover(); r != nil {
			reply = Error(fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	return f()
}

// WithGates runs f with the given feature gates set on the process's default gate, and puts the
// previous values back after it (the gates of one request apply to that request only).
func WithGates(gates map[string]bool, f func() any) any {
	if len(gates) == 0 {
		return f()
	}
	previous := map[string]bool{}
	for name := range gates {
		previous[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	defer func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(previous) }()
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return Error(fmt.Sprintf("feature gates: %v", err))
	}
	return f()
}
