package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The raw file (-raw) is what every benchmark invocation wrote, in the order
// they ran, so that benchstat can read it. compare adds two kinds of line:
// after each invocation's output, runMarker and the invocation (its package,
// command line and duration) in JSON; at the end, envMarker and the
// environment. benchstat ignores them, as it ignores any line that is
// neither a result nor a "key: value" configuration line, and -from reads
// them to render the report again from the file, measuring nothing.
const (
	runMarker = "# compare-run "
	envMarker = "# compare-env "
)

// rawWriter builds a raw file as the runs go.
type rawWriter struct{ buf bytes.Buffer }

// ran adds the output of one invocation, and the line that marks its end.
func (w *rawWriter) ran(output []byte, c command) error {
	w.buf.Write(output)
	return w.marker(runMarker, c)
}

// finish adds the environment line, the last of the file, and returns the
// file's contents.
func (w *rawWriter) finish(e env) ([]byte, error) {
	if err := w.marker(envMarker, e); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

func (w *rawWriter) marker(prefix string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the %sline: %w", prefix, err)
	}
	if n := w.buf.Len(); n > 0 && w.buf.Bytes()[n-1] != '\n' {
		w.buf.WriteByte('\n')
	}
	w.buf.WriteString(prefix)
	w.buf.Write(data)
	w.buf.WriteByte('\n')
	return nil
}

// readRaw reads a raw file that compare -raw wrote: the results of every
// invocation, each with the package it ran in, and the environment, whose
// Commands are the invocations in the order they ran. name names the file
// in errors. It checks each invocation's results as a run does (see
// invocationResults).
func readRaw(r io.Reader, name string) ([]result, env, error) {
	var (
		results []result
		e       env
		sawEnv  bool
		out     bytes.Buffer // the current invocation's output
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case sawEnv:
			if strings.TrimSpace(text) != "" {
				return nil, env{}, fmt.Errorf("%s:%d: text after the %s line, which ends the file", name, line, strings.TrimSpace(envMarker))
			}
		case strings.HasPrefix(text, runMarker):
			var c command
			if err := json.Unmarshal([]byte(text[len(runMarker):]), &c); err != nil {
				return nil, env{}, fmt.Errorf("%s:%d: reading the invocation: %w", name, line, err)
			}
			if c.Pkg == "" || c.Line == "" {
				return nil, env{}, fmt.Errorf("%s:%d: the invocation names no package or no command", name, line)
			}
			rs, err := invocationResults(&out, c)
			if err != nil {
				return nil, env{}, fmt.Errorf("%s: %w", name, err)
			}
			results = append(results, rs...)
			e.Commands = append(e.Commands, c)
			out.Reset()
		case strings.HasPrefix(text, envMarker):
			commands := e.Commands
			if err := json.Unmarshal([]byte(text[len(envMarker):]), &e); err != nil {
				return nil, env{}, fmt.Errorf("%s:%d: reading the environment: %w", name, line, err)
			}
			e.Commands = commands
			sawEnv = true
		default:
			out.WriteString(text)
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, env{}, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(e.Commands) == 0 {
		return nil, env{}, fmt.Errorf("%s has no %s line: it is not a raw file of compare -raw, or one written before compare marked its invocations", name, strings.TrimSpace(runMarker))
	}
	if rest, err := parse(&out); err != nil || len(rest) > 0 {
		return nil, env{}, fmt.Errorf("%s: benchmark output after the last %s line: the file is cut short", name, strings.TrimSpace(runMarker))
	}
	if !sawEnv {
		return nil, env{}, fmt.Errorf("%s has no %s line: the file is cut short", name, strings.TrimSpace(envMarker))
	}
	return results, e, nil
}
