package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// exampleFiles returns the repository's examples/*.yaml.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.RepoDir(t), "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("only %d examples: %v", len(files), files)
	}
	return files
}

// runBinary runs benthos-paimon with args in dir and returns its exit code
// and combined output.
func runBinary(t *testing.T, dir string, timeout time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binarytest.Path(t), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("run %v: %v\n%s", args, err, out.String())
	return -1, ""
}

// TestExamplesLint: `benthos-paimon lint examples/*.yaml` passes; the
// examples for a Redpanda Connect build (examples/connect/, whose inputs
// this binary lacks) pass with their input replaced by generate.
func TestExamplesLint(t *testing.T) {
	files := exampleFiles(t)
	connect, err := filepath.Glob(filepath.Join(fixturetest.RepoDir(t), "examples", "connect", "*.yaml"))
	if err != nil || len(connect) == 0 {
		t.Fatalf("examples/connect: %v %v", connect, err)
	}
	dir := t.TempDir()
	for _, f := range connect {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, ok := doc["input"]; !ok {
			t.Fatalf("%s has no input", f)
		}
		doc["input"] = map[string]any{"generate": map[string]any{"mapping": "root = {}", "count": 1}}
		out, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	code, out := runBinary(t, fixturetest.RepoDir(t), time.Minute, append([]string{"lint"}, files...)...)
	if code != 0 {
		t.Errorf("lint exited %d:\n%s", code, out)
	}
}

// TestReadmeConfigsLint: every YAML config in README.md passes
// `benthos-paimon lint` in an environment without HOSTNAME or any other
// variable a snippet might reference without a default (a user pasting one
// must not have to guess what to set).
func TestReadmeConfigsLint(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(fixturetest.RepoDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for i, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		p := filepath.Join(dir, fmt.Sprintf("readme-%d.yaml", i))
		if err := os.WriteFile(p, []byte(block[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if len(files) < 2 {
		t.Fatalf("README.md has %d YAML blocks", len(files))
	}
	cmd := exec.Command(binarytest.Path(t), append([]string{"lint"}, files...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("lint of README.md's configs: %v\n%s", err, out)
	}
}

// TestExamplesWriteTheirOwnTables: no two examples write the same table
// of the default warehouse under a fixed name, so that a user trying them
// one after another in one directory does not meet a table of another
// example's schema ("the table does not match create_table").
func TestExamplesWriteTheirOwnTables(t *testing.T) {
	writers := map[string]string{} // database.table → example
	var walk func(file string, v any)
	walk = func(file string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["paimon"].(map[string]any); ok {
				db, _ := p["database"].(string)
				table, _ := p["table"].(string)
				if db == "" {
					db = "default"
				}
				if table != "" && !strings.Contains(db+table, "${!") {
					name := db + "." + table
					if other, ok := writers[name]; ok && other != file {
						t.Errorf("%s and %s both write %s", other, file, name)
					}
					writers[name] = file
				}
			}
			for _, c := range x {
				walk(file, c)
			}
		case []any:
			for _, c := range x {
				walk(file, c)
			}
		}
	}
	for _, f := range exampleFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(filepath.Base(f), doc["output"])
	}
	if len(writers) < 5 {
		t.Fatalf("found only %d tables written: %v", len(writers), writers)
	}
}

// TestBrokenConfigLintFails: lint reports a misspelled field and a broken
// field combination of the paimon output, with exit code 1.
func TestBrokenConfigLintFails(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	err := os.WriteFile(bad, []byte(`
input:
  stdin: {}
output:
  paimon:
    warehouse: /tmp/lake
    table: events
    create_table:
      enabled: true
      partiton_keys: [ dt ]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	code, out := runBinary(t, t.TempDir(), time.Minute, "lint", bad)
	if code != 1 {
		t.Errorf("lint exited %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"field partiton_keys not recognised", "create_table.schema is required when create_table.enabled is true"} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
}

// TestExamplesBuild: every example also passes the plugins' own parsing
// (what lint cannot check: types parse, keys are columns), by building it
// as a stream without running it.
func TestExamplesBuild(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sb := service.NewStreamBuilder()
			sb.SetEnvVarLookupFunc(func(string) (string, bool) { return "", false })
			if err := sb.SetYAML(string(data)); err != nil {
				t.Fatal(err)
			}
			if _, err := sb.Build(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDemoCommand runs `benthos-paimon demo` (what `make run` runs) for a
// few seconds and finds its table with rows, and the hint on how to read
// it.
func TestDemoCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for 6 s")
	}
	dir := t.TempDir()
	code, out := runBinary(t, dir, time.Minute, "demo", "--duration", "6s")
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	for _, want := range []string{"Created table demo.payments", "rows/s", "examples/paimon_to_stdout.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	tbl, rows := readTable(t, filepath.Join(dir, "warehouse"), "demo", "payments")
	if len(rows) < 1000 {
		t.Errorf("demo wrote %d rows in 6 s", len(rows))
	}
	if got := tbl.Schema().PartitionKeys; len(got) != 1 || got[0] != "dt" {
		t.Errorf("partition keys %v", got)
	}
}
