package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTally(t *testing.T) {
	tests := []struct {
		verdicts []string
		want     string
	}{
		{[]string{"PASS", "MISS", "PASS, within noise"}, "2 of 3 PASS: PASS · MISS · PASS, within noise"},
		{[]string{"MISS, within noise", "MISS"}, "0 of 2 PASS: MISS, within noise · MISS"},
		{[]string{"n/a", "PASS"}, "1 of 1 PASS: n/a · PASS"},
		{[]string{"n/a", "n/a"}, "n/a"},
		// Target 6 is judged on its first verdict; the second is shown beside it.
		{[]string{"PASS (SubscribeKeys channel); lazy keyed reader: MISS", "MISS, within noise (SubscribeKeys channel); lazy keyed reader: PASS"},
			"1 of 2 PASS: PASS · MISS, within noise"},
	}
	for _, tt := range tests {
		if got := tally(tt.verdicts); got != tt.want {
			t.Errorf("tally(%q) = %q; want %q", tt.verdicts, got, tt.want)
		}
	}
}

// writeRun writes the raw file of a run whose Batch took batchNs against
// the floor's 1 ms, and returns its path.
func writeRun(t *testing.T, dir, name string, batchNs int, e env) string {
	t.Helper()
	return writeRunOf(t, dir, name, batchNs, e, "")
}

// writeRunOf is writeRun with the lines more added to the run's output.
func writeRunOf(t *testing.T, dir, name string, batchNs int, e env, more string) string {
	t.Helper()
	output := fmt.Sprintf(`pkg: github.com/switchyard-go/switchyard/bench
BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   %d ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   1000000 ns/op
%sPASS
`, batchNs, more)
	c := command{Pkg: "./bench", Line: "go test -run '^$' -bench '^BenchmarkBatch$' ./bench   # 5s"}
	var w rawWriter
	if err := w.ran([]byte(output), c); err != nil {
		t.Fatal(err)
	}
	e.Commands = []command{c}
	data, err := w.finish(e)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFromRawJudgesEveryRun checks that a report rendered from several
// raw files judges each run's figures on their own and counts the runs
// passing a target, while its tables show the first run.
func TestFromRawJudgesEveryRun(t *testing.T) {
	dir := t.TempDir()
	second := testEnv()
	second.Date = "2026-11-26"
	paths := []string{
		writeRun(t, dir, "1.txt", 1500000, testEnv()), // 1.5× the floor: PASS
		writeRun(t, dir, "2.txt", 2500000, second),    // 2.5×: MISS
		writeRun(t, dir, "3.txt", 1900000, testEnv()), // 1.9×: PASS
	}
	out := filepath.Join(dir, "report.md")
	if err := fromRaw(paths, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	for _, want := range []string{
		"This report judges 3 runs of the suite",
		"| 2 | 2026-11-26 | 4m23s | Test CPU |",
		"| 2. Batch of 10,000 Stores into a 100,000-entry map (int): ≤ 2× the floor | ours ÷ floor 1.50× | PASS | 2 of 3 PASS: PASS · MISS · PASS |",
		"| int, N=100000, k=10000 | 1.50 ms |", // the first run's figures
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "2.50 ms") {
		t.Error("the report's tables show a figure of a run other than the first")
	}

	one := filepath.Join(dir, "one.md")
	if err := fromRaw(paths[:1], one); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(one); strings.Contains(string(data), "every run") || strings.Contains(string(data), "judges 1 runs") {
		t.Errorf("a report of one run counts runs:\n%s", data)
	}
}

func TestFromRawRejectsRunsThatCannotBeJudgedTogether(t *testing.T) {
	dir := t.TempDir()
	other := testEnv()
	other.Commit = "def5678"
	quick := testEnv()
	quick.Quick = true
	first := writeRun(t, dir, "first.txt", 1500000, testEnv())
	tests := []struct {
		name, path string
		want       []string
	}{
		{"another commit", writeRun(t, dir, "other.txt", 1500000, other), []string{"first.txt", "other.txt", "abc1234", "def5678", "one commit"}},
		{"a quick run", writeRun(t, dir, "quick.txt", 1500000, quick), []string{"quick.txt", "-quick"}},
		{"a -large run", writeRunOf(t, dir, "large.txt", 1500000, testEnv(), largeLine), []string{"first.txt", "large.txt", "-large"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "report.md")
			err := fromRaw([]string{first, tt.path}, out)
			if err == nil {
				t.Fatal("fromRaw judged the runs together")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("fromRaw wrote a report anyway (stat: %v)", err)
			}
		})
	}
}

// TestFromRawRendersAQuickRunAlone checks that -from renders the raw file
// of one -quick run, which it refuses to judge beside others.
func TestFromRawRendersAQuickRunAlone(t *testing.T) {
	dir := t.TempDir()
	quick := testEnv()
	quick.Quick = true
	out := filepath.Join(dir, "quick.md")
	if err := fromRaw([]string{writeRun(t, dir, "quick.txt", 1500000, quick)}, out); err != nil {
		t.Fatalf("fromRaw refused one -quick run: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "## Targets") {
		t.Errorf("the report of the -quick run has no Targets section:\n%s", data)
	}
}

// largeLine is a result only a -large run has.
const largeLine = "BenchmarkStore/lib=switchyard/val=k8s/N=1000000/S=0-2   20000   5200 ns/op\n"

// TestReportSaysWhetherItRanLarge checks the line under the report's title
// that says whether the run had the million-entry rows of -large.
func TestReportSaysWhetherItRanLarge(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, more, want, not string
	}{
		{"without", "", "**Without -large**, this run left out the Stores of Kubernetes-style and proto values at N=1,000,000", "with -large"},
		{"with", largeLine, "This run measured everything, with -large: that includes the Stores of Kubernetes-style and proto values at N=1,000,000", "Without -large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".md")
			if err := fromRaw([]string{writeRunOf(t, dir, tt.name+".txt", 1500000, testEnv(), tt.more)}, out); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tt.want) || strings.Contains(string(data), tt.not) {
				t.Errorf("the report does not say %q, or says %q:\n%s", tt.want, tt.not, data)
			}
		})
	}
}
