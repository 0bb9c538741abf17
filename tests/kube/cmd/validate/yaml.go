package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	yaml3 "sigs.k8s.io/yaml/goyaml.v3"
)

// document is one object of a scenario as JSON, with where it came from.
type document struct {
	doc   int // 1-based position in the YAML stream
	item  int // index inside a List, or -1
	value []byte
}

// splitScenario reads a YAML stream the way the playground does (YAML 1.2
// scalars, `---` between documents) and returns each object as JSON text,
// the items of a List one by one.
func splitScenario(data []byte) ([]document, error) {
	var out []document
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var node yaml3.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		var buf bytes.Buffer
		if err := writeJSON(&buf, &node); err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		js := buf.Bytes()
		if s := strings.TrimSpace(string(js)); s == "null" || s == "" {
			continue
		}
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(js, &head) == nil && head.Kind == "List" {
			for i, item := range head.Items {
				out = append(out, document{doc: doc, item: i, value: item})
			}
			continue
		}
		out = append(out, document{doc: doc, item: -1, value: js})
	}
	return out, nil
}

// jsonNumber is the JSON number syntax: a YAML number written that way keeps
// its text, so a quantity such as `10e9` keeps its decimal-exponent format.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// writeJSON is the playground's YAML-to-JSON step (as tests/upstream/oracle does it).
func writeJSON(buf *bytes.Buffer, n *yaml3.Node) error {
	switch n.Kind {
	case yaml3.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeJSON(buf, n.Content[0])
	case yaml3.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml3.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(n.Content[i].Value)
			buf.Write(key)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml3.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	switch tag := n.ShortTag(); {
	case (tag == "!!int" || tag == "!!float") && jsonNumber.MatchString(n.Value):
		buf.WriteString(n.Value)
		return nil
	case tag == "!!str" || tag == "!!binary" || tag == "!!timestamp":
		out, _ := json.Marshal(n.Value)
		buf.Write(out)
		return nil
	}
	var value any
	if err := n.Decode(&value); err != nil {
		return err
	}
	out, err := json.Marshal(value)
	if err != nil {
		out, _ = json.Marshal(n.Value) // .inf and .nan have no JSON form: pass the text on
	}
	buf.Write(out)
	return nil
}
