//go:build interop

// Package interop is the Go driver of the interop suite (README.md): it
// writes tables with lakecore and has Java Paimon (1.x and 2.x), pypaimon and
// DuckDB read them, and reads with lakecore what they write, comparing rows
// on the canonical JSON form. The oracles run as long-lived subprocesses in
// their batch mode. Build tag "interop": plain `go test ./...` skips the
// package; `make interop` runs it after tests/interop/setup.sh.
//
// Without the oracles (no java, mvn or python; setup.sh not run and failing)
// every test skips with the reason, unless REQUIRE_INTEROP=1, where it fails.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/oracle"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// env is what TestMain found: paths, and why the oracles are unavailable
// ("" when they are).
var env struct {
	root        string // repository root
	here        string // tests/interop
	fixtures    string // shared/fixtures/paimon ("" if absent)
	unavailable string
	oracles     map[string]*oracle.Process // java1, java2, py, flink, flink1, spark
}

// cleanups run when the test binary ends (after every test).
var cleanups []func()

// Oracle names: the reader/writer roles of the matrix.
const (
	java1  = "java1"  // Java Paimon 1.4.2
	java2  = "java2"  // Java Paimon 2.0.0
	py     = "py"     // pypaimon 2.1.0
	flink  = "flink"  // Flink 2.0.0 SQL with paimon-flink-2.0 2.0.0 (flink_test.go)
	flink1 = "flink1" // Flink 1.20.3 SQL with paimon-flink-1.20 1.3.1
	spark  = "spark"  // Spark SQL: pyspark 3.5.2 with paimon-spark-3.5 0.9.0 (spark_test.go)
)

func TestMain(m *testing.M) {
	code := func() int {
		if err := setupEnv(); err != nil {
			env.unavailable = err.Error()
		}
		defer func() {
			for _, o := range env.oracles {
				o.Close()
			}
			for _, f := range cleanups {
				f()
			}
		}()
		code := pgtest.Run(m) // stops the Postgres cluster TestJavaReadsPgCDCTable starts
		if code == 0 && env.unavailable == "" {
			code = checkKnownFilesUsed()
		}
		return code
	}()
	os.Exit(code)
}

func setupEnv() error {
	dir, err := fixturetest.RepoRoot()
	if err != nil {
		return err
	}
	env.root = dir
	env.here = filepath.Join(dir, "tests", "interop")
	env.fixtures = os.Getenv("PAIMON_FIXTURES")
	if env.fixtures == "" {
		env.fixtures, _ = fixturetest.Root() // "" when absent
	}
	if _, err := os.Stat(env.fixtures); err != nil {
		env.fixtures = ""
	}

	// The artifacts setup.sh builds; run it when one is missing (it says
	// exactly which tool is missing and exits 1).
	need := []string{
		filepath.Join(env.here, "java", "target", "paimon1", "paimon-interop.jar"),
		filepath.Join(env.here, "java", "target", "paimon2", "paimon-interop.jar"),
		filepath.Join(env.here, "java", "target", "flink2", "paimon-interop.jar"),
		filepath.Join(env.here, "java", "target", "flink1", "paimon-interop.jar"),
		filepath.Join(env.here, ".venv", "bin", "python"),
		filepath.Join(env.root, ".cache", "paimon-jars", "paimon-spark-3.5-0.9.0.jar"),
	}
	built := true
	for _, p := range need {
		if _, err := os.Stat(p); err != nil {
			built = false
		}
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("java is not on PATH (a JDK 17; run tests/interop/setup.sh for the full list of what is missing)")
	}
	if !built {
		cmd := exec.Command("bash", filepath.Join(env.here, "setup.sh"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("tests/interop/setup.sh failed (%v):\n%s", err, stderr.String())
		}
	}
	javaBin := filepath.Join(env.here, "bin", "paimon-java")
	pyBin := filepath.Join(env.here, ".venv", "bin", "python")
	env.oracles = map[string]*oracle.Process{
		java1:  oracle.New(java1, javaBin, oracle.Paimon1, "batch"),
		java2:  oracle.New(java2, javaBin, oracle.Paimon2, "batch"),
		py:     oracle.New(py, pyBin, filepath.Join(env.here, "python", "paimon_py.py"), "batch"),
		flink:  oracle.New(flink, filepath.Join(env.here, "bin", "flink-sql"), "flink2", "batch"),
		flink1: oracle.New(flink1, filepath.Join(env.here, "bin", "flink-sql"), "flink1", "batch"),
		spark:  oracle.New(spark, pyBin, filepath.Join(env.here, "python", "spark_sql.py"), "batch"),
	}
	return nil
}

// requireOracles fails (REQUIRE_INTEROP=1) or skips the test when the
// oracles are not available.
func requireOracles(t *testing.T) {
	t.Helper()
	if env.unavailable == "" {
		return
	}
	if os.Getenv("REQUIRE_INTEROP") == "1" {
		t.Fatalf("interop oracles required (REQUIRE_INTEROP=1) but unavailable: %s", env.unavailable)
	}
	t.Skipf("interop oracles unavailable: %s", env.unavailable)
}

// requireFixtures returns the shared fixtures directory, failing under
// REQUIRE_INTEROP=1 and skipping otherwise when it is absent.
func requireFixtures(t *testing.T) string {
	t.Helper()
	if env.fixtures != "" {
		return env.fixtures
	}
	msg := "shared fixtures not found beside the repository (../shared/fixtures/paimon) and PAIMON_FIXTURES unset"
	if os.Getenv("REQUIRE_INTEROP") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// tableRef names a table of a warehouse for the oracles.
type tableRef struct {
	warehouse, db, table string
}

func (r tableRef) String() string { return r.db + "." + r.table }

func (r tableRef) flags() []string {
	return []string{"--warehouse", r.warehouse, "--database", r.db, "--table", r.table}
}

// readOpts are the optional flags of an oracle read.
type readOpts struct {
	snapshot int64  // 0 = latest
	filter   string // "" = none
}

// oracleRead returns the sorted canonical lines an oracle reads.
func oracleRead(name string, ref tableRef, o readOpts) ([]string, error) {
	if name == flink || name == flink1 {
		return flinkRead(name, ref, o)
	}
	args := append([]string{"read"}, ref.flags()...)
	if o.snapshot > 0 {
		args = append(args, "--snapshot", fmt.Sprint(o.snapshot))
	}
	if o.filter != "" {
		args = append(args, "--filter", o.filter)
	}
	lines, err := env.oracles[name].Call(args...)
	sortCodePoints(lines)
	return lines, err
}

// oracleWrite runs a write spec (a value marshalled to JSON in a temporary
// file) with an oracle and returns its step lines.
func oracleWrite(t *testing.T, name string, ref tableRef, spec any) []string {
	t.Helper()
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "spec-*.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	lines, err := env.oracles[name].Call(append(append([]string{"write"}, ref.flags()...), "--spec", f.Name())...)
	if err != nil {
		t.Fatalf("%s writes %s: %v\nspec: %s", name, ref, err, data)
	}
	return lines
}

// javaSnapshot is one line of the oracles' "snapshots" command.
type javaSnapshot struct {
	ID               int64  `json:"id"`
	SchemaID         int64  `json:"schemaId"`
	Kind             string `json:"kind"`
	TotalRecordCount *int64 `json:"totalRecordCount"`
	DeltaRecordCount *int64 `json:"deltaRecordCount"`
	CommitUser       string `json:"commitUser"`
	CommitIdentifier int64  `json:"commitIdentifier"`
}

func oracleSnapshots(name string, ref tableRef) ([]javaSnapshot, error) {
	lines, err := env.oracles[name].Call(append([]string{"snapshots"}, ref.flags()...)...)
	if err != nil {
		return nil, err
	}
	out := make([]javaSnapshot, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			return nil, fmt.Errorf("%s snapshots: %q: %w", name, l, err)
		}
	}
	return out, nil
}

// oraclePlanPaths returns the absolute paths of the data files of an
// oracle's scan plan (Java's "plan").
func oraclePlanPaths(name string, ref tableRef) ([]string, error) {
	lines, err := env.oracles[name].Call(append([]string{"plan"}, ref.flags()...)...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, l := range lines {
		var p struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			return nil, err
		}
		paths = append(paths, p.Path)
	}
	return paths, nil
}

// duckdbRead returns DuckDB's canonical rows of Parquet files (one process
// per call: duckdb_read.py has no batch mode).
func duckdbRead(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	args := append([]string{filepath.Join(env.here, "python", "duckdb_read.py")}, paths...)
	cmd := exec.Command(filepath.Join(env.here, ".venv", "bin", "python"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("duckdb_read.py: %v: %s", err, stderr.String())
	}
	lines := splitLines(string(out))
	sortCodePoints(lines)
	return lines, nil
}

// specExpect returns tools/spec_expect.py's expected rows of every spec, by
// spec file name without extension, from one Python process.
func specExpect(specs []string) (map[string][]string, error) {
	script := `
import json, sys
sys.path.insert(0, sys.argv[1])
import spec_expect
from decimal import Decimal
out = {}
for p in sys.argv[2:]:
    with open(p, encoding="utf-8") as fh:
        out[p] = spec_expect.expect(json.load(fh, parse_float=Decimal))
sys.stdout.reconfigure(encoding="utf-8")
sys.stdout.write(json.dumps(out, ensure_ascii=False))
`
	args := append([]string{"-c", script, filepath.Join(env.here, "tools")}, specs...)
	cmd := exec.Command(filepath.Join(env.here, ".venv", "bin", "python"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("spec_expect.py: %v: %s", err, stderr.String())
	}
	var byPath map[string][]string
	if err := json.Unmarshal(out, &byPath); err != nil {
		return nil, err
	}
	res := map[string][]string{}
	for p, lines := range byPath {
		sortCodePoints(lines)
		res[strings.TrimSuffix(filepath.Base(p), ".json")] = lines
	}
	return res, nil
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// sortCodePoints sorts lines by code point (= UTF-8 byte order), the order
// the oracles print.
func sortCodePoints(lines []string) { sort.Strings(lines) }

// ctxT returns a context cancelled when the test ends.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
