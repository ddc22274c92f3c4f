package file

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// document is one decoded document of a file.
type document struct {
	index int // from 1
	key   docKey
	value any // the registered kind's type
}

// docKey identifies a document across files.
type docKey struct {
	kind string
	name types.NamespacedName
}

// decodeFile decodes every document of the file at path. Any problem makes
// the whole file invalid: the error is a *DocumentError.
func decodeFile(path string, data []byte, kinds map[string]sink) (map[docKey]document, error) {
	raws, err := splitDocuments(path, data)
	if err != nil {
		return nil, err
	}
	docs := make(map[docKey]document, len(raws))
	for i, raw := range raws {
		index := i + 1
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue // an empty document, such as one holding only comments
		}
		fail := func(kind string, name types.NamespacedName, err error) error {
			return &DocumentError{File: path, Index: index, Kind: kind, Name: name, Err: err}
		}
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if raw[0] != '{' {
			return nil, fail("", types.NamespacedName{}, fmt.Errorf("%w: not an object: %.40s", ErrInvalid, raw))
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fail("", types.NamespacedName{}, fmt.Errorf("%w: %w", ErrInvalid, err))
		}
		name := types.NamespacedName{Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
		if head.Kind == "" {
			return nil, fail("", name, ErrMissingKind)
		}
		s, ok := kinds[head.Kind]
		if !ok {
			return nil, fail(head.Kind, name, ErrUnknownKind)
		}
		if name.Name == "" {
			return nil, fail(head.Kind, name, ErrMissingName)
		}
		key := docKey{kind: head.Kind, name: name}
		if other, dup := docs[key]; dup {
			return nil, fail(head.Kind, name, fmt.Errorf("%w: also document %d", ErrDuplicate, other.index))
		}
		v, err := s.decode(raw)
		if err != nil {
			return nil, fail(head.Kind, name, fmt.Errorf("%w: %w", ErrInvalid, err))
		}
		docs[key] = document{index: index, key: key, value: v}
	}
	return docs, nil
}

// splitDocuments returns the documents of a file as JSON. A file that starts
// with "{" is read as a stream of JSON objects; if its first object is not
// valid JSON and the file is not named .json, it is read as YAML in flow
// style instead. Any other file is read as YAML documents separated by
// "---". Either way, a key that appears twice in one object is an error.
func splitDocuments(path string, data []byte) ([][]byte, error) {
	if utilyaml.IsJSONBuffer(data) {
		docs, err := splitJSON(path, data)
		var derr *DocumentError
		if err == nil || strings.EqualFold(filepath.Ext(path), ".json") || !errors.As(err, &derr) || derr.Index > 1 {
			return docs, err
		}
		if docs, yerr := splitYAML(path, data); yerr == nil {
			return docs, nil
		}
		return nil, err
	}
	return splitYAML(path, data)
}

func splitJSON(path string, data []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs [][]byte
	for index := 1; ; index++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err == nil {
			err = checkDuplicateKeys(raw)
		}
		if err != nil {
			return nil, &DocumentError{File: path, Index: index, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		docs = append(docs, raw)
	}
}

// checkDuplicateKeys returns an error naming the first key that appears
// twice in one object of doc, a valid JSON value. encoding/json would keep
// the last one silently, where the YAML path rejects it; both must agree.
func checkDuplicateKeys(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // values are skipped: no need to parse numbers as floats
	return checkValue(dec)
}

// duplicateKeyError is a key found twice in an object, at path (built as
// the check returns from the nested values).
type duplicateKeyError struct {
	key  string
	path []string // outermost first: "spec", "x", "[0]"
}

func (e *duplicateKeyError) Error() string {
	if len(e.path) == 0 {
		return fmt.Sprintf("duplicate key %q", e.key)
	}
	var where strings.Builder
	for i, step := range e.path {
		if i > 0 && !strings.HasPrefix(step, "[") {
			where.WriteByte('.')
		}
		where.WriteString(step)
	}
	return fmt.Sprintf("duplicate key %q in %s", e.key, where.String())
}

// within records that e was found inside step (a key, or an index).
func within(err error, step string) error {
	if d, ok := err.(*duplicateKeyError); ok {
		d.path = append([]string{step}, d.path...)
	}
	return err
}

// checkValue reads one value from dec.
func checkValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := make(map[string]bool)
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key := tok.(string) // a key, since the document is valid
			if seen[key] {
				return &duplicateKeyError{key: key}
			}
			seen[key] = true
			if err := checkValue(dec); err != nil {
				return within(err, key)
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec); err != nil {
				return within(err, fmt.Sprintf("[%d]", i))
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

func splitYAML(path string, data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for index := 1; ; index++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, &DocumentError{File: path, Index: index, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, &DocumentError{File: path, Index: index, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		docs = append(docs, j)
	}
}
