package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// runConfig runs `benthos-paimon <args> config.yaml` in dir with config
// written there, and returns its exit code and combined output. It fails
// the test if the binary has not exited within limit.
func runConfig(t *testing.T, dir, config string, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binarytest.Path(t), append(args, "config.yaml")...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("benthos-paimon %v did not exit within %s:\n%s", args, limit, out.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("run: %v\n%s", err, out.String())
	return -1, ""
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestPermanentErrorsEndTheRun: errors that retrying cannot fix end
// `benthos-paimon -c` with exit code 1 within seconds, log the error once,
// print it last, name a relative warehouse as given and as resolved, and
// leave no warehouse directory behind.
func TestPermanentErrorsEndTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	mismatch := t.TempDir()
	cat, err := lakecore.OpenCatalog(context.Background(), mismatch, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(context.Background(), "db", "t", lakecore.TableSpec{Fields: types.MustParse("ROW<id BIGINT, v STRING>").Fields}); err != nil {
		t.Fatal(err)
	}
	const generate = "http: { enabled: false }\ninput:\n  generate: { count: 1, interval: '', mapping: 'root = {\"id\": 1}' }\n"
	const drop = "output:\n  drop: {}\n"
	// Two messages for one table, then one for another, in one batch: the
	// first table's error stops the stream and is reported once.
	const routed = "http: { enabled: false }\ninput:\n  generate: { count: 3, batch_size: 3, interval: '', " +
		"mapping: 'root = {\"id\": 1, \"tbl\": if count(\"n\") <= 2 { \"missing\" } else { \"other\" }}' }\n"
	for _, tc := range []struct {
		name   string
		config string
		want   string // in the logged error and the last line; DIR is the working directory
		gone   string // must not exist afterwards, relative to DIR
	}{
		{"output, missing table", generate + "output:\n  paimon: { warehouse: ./warehouse, database: db, table: t }\n",
			"table db.t in ./warehouse (resolved against the working directory to DIR/warehouse): table not found: create it, or set create_table.enabled",
			"warehouse"},
		{"output, schema mismatch", generate + "output:\n  paimon:\n    warehouse: " + mismatch + "\n    database: db\n    table: t\n" +
			"    create_table: { schema: [ { name: id, type: INT } ] }\n",
			"the table does not match create_table", ""},
		{"output, missing table named per message", routed + "output:\n  paimon: { warehouse: ./warehouse, database: db, table: '${! json(\"tbl\") }' }\n",
			`table db.missing in ./warehouse (resolved against the working directory to DIR/warehouse): table not found: create it, or set create_table.enabled with a create_table.schema; the table was named by the message {"id":1,"tbl":"missing"}`,
			"warehouse"},
		{"output, schema mismatch of a table named per message", strings.ReplaceAll(routed, "missing", "t") + "output:\n  paimon:\n    warehouse: " + mismatch + "\n    database: db\n" +
			"    table: '${! json(\"tbl\") }'\n    create_table: { schema: [ { name: id, type: INT } ] }\n",
			`table db.t in ` + mismatch + `: the table does not match create_table (schema-0): column "id" has type BIGINT in the table, INT in create_table.schema; change create_table to match the table, or write to another table; the table was named by the message {"id":1,"tbl":"t"}`,
			""},
		{"bounded input, missing table", "http: { enabled: false }\ninput:\n  paimon: { warehouse: wh/nested, database: db, table: t, bounded: true }\n" + drop,
			"paimon input on db.t in wh/nested (resolved against the working directory to DIR/wh/nested): open table db.t", "wh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			binarytest.Path(t) // built before the clock starts
			start := time.Now()
			code, out := runConfig(t, dir, tc.config, time.Minute, "-c")
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if code != 1 {
				t.Fatalf("exit code %d, want 1:\n%s", code, out)
			}
			if d := time.Since(start); d > 10*time.Second { // about 1s; a stop stuck on the shutdown timeout takes 15s
				t.Errorf("took %s to stop", d)
			}
			if n := strings.Count(strings.ReplaceAll(out, `\"`, `"`), want); n != 2 { // the error log line, and the last line
				t.Errorf("%q appears %d times, want twice (logged once, printed last):\n%s", want, n, out)
			}
			if last := lastLine(out); !strings.HasPrefix(last, "benthos-paimon: the stream stopped: ") || !strings.Contains(last, want) {
				t.Errorf("last line %q does not say why the stream stopped", last)
			}
			if tc.gone != "" {
				if _, err := os.Stat(filepath.Join(dir, tc.gone)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s left behind (%v)", tc.gone, err)
				}
			}
		})
	}
}

// TestMissingBucketEndsTheRun: an S3 bucket that does not exist is an
// error retrying cannot fix.
func TestMissingBucketEndsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	s3 := s3test.Endpoint(t)
	config := fmt.Sprintf(`http: { enabled: false }
input:
  generate: { count: 1, interval: '', mapping: 'root = {"id": 1}' }
output:
  paimon:
    warehouse: s3://no-such-bucket-%d/wh
    database: db
    table: t
    create_table: { enabled: true, schema: [ { name: id, type: BIGINT } ] }
    s3: { endpoint: %q, region: %q, force_path_style: true, credentials: { id: %q, secret: %q } }
`, time.Now().UnixNano(), s3.Endpoint, s3.Region, s3.AccessKeyID, s3.SecretAccessKey)
	code, out := runConfig(t, t.TempDir(), config, time.Minute, "-c")
	if code != 1 || !strings.Contains(lastLine(out), "NoSuchBucket") {
		t.Fatalf("exit code %d, want 1 with NoSuchBucket last:\n%s", code, out)
	}
	if n := strings.Count(out, "NoSuchBucket"); n != 2 {
		t.Errorf("the error appears %d times, want twice (logged once, printed last):\n%s", n, out)
	}
}

// TestTransientErrorsAreRetried: a refused connection is retried with a
// growing wait that the log states, and the run goes on until it is
// stopped.
func TestTransientErrorsAreRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	config := `http: { enabled: false }
shutdown_timeout: 2s
input:
  generate: { count: 1, interval: '', mapping: 'root = {"id": 1}' }
output:
  paimon:
    warehouse: s3://bucket/wh
    table: t
    s3: { endpoint: "http://127.0.0.1:1", force_path_style: true, credentials: { id: a, secret: b } }
`
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binarytest.Path(t), "-c", "config.yaml")
	cmd.Dir = dir
	var out testenv.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	const third = "(failure 3 in a row; retrying in 2s, backing off exponentially from 500ms to at most 30s)"
	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), third) {
		select {
		case err := <-exited:
			t.Fatalf("exited (%v) on a transient error:\n%s", err, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("no third attempt within 30s:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, want := range []string{"(failure 1 in a row; retrying in 500ms,", "(failure 2 in a row; retrying in 1s,", "connection refused"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("did not exit after SIGINT:\n%s", out.String())
	}
	if strings.Contains(out.String(), "the stream stopped") {
		t.Errorf("a transient error was reported as permanent:\n%s", out.String())
	}
}

// TestInvalidConfigFailsLintAndStartUp: what needs no I/O is reported by
// lint and at start-up, with the field, and nothing is created.
func TestInvalidConfigFailsLintAndStartUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const head = "http: { enabled: false }\ninput:\n  generate: { count: 1, interval: '', mapping: 'root = {}' }\noutput:\n  paimon:\n" +
		"    warehouse: ./warehouse\n    table: t\n    create_table:\n      enabled: true\n      partition_keys: [ dt ]\n"
	for _, tc := range []struct {
		name, create, want string
	}{
		{"option value", "      schema: [ { name: dt, type: STRING } ]\n      options: { partition.expiration-time: 30 dayz }\n",
			`create_table.options: option partition.expiration-time: invalid table schema: invalid table option: duration "30 dayz": unknown unit "dayz"`},
		{"unknown option", "      schema: [ { name: dt, type: STRING } ]\n      options: { snapshot.num-retained.mx: '3' }\n",
			`create_table.options: unknown table option "snapshot.num-retained.mx" (did you mean "snapshot.num-retained.max"?)`},
		{"type", "      schema: [ { name: dt, type: STRING }, { name: id, type: BIGNT NOT NULL } ]\n",
			`create_table.schema[1] (id): invalid data type "BIGNT NOT NULL": unsupported type "BIGNT"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, out := runConfig(t, dir, head+tc.create, time.Minute, "lint")
			if code != 1 || !strings.Contains(out, "config.yaml(9,1) "+tc.want) {
				t.Errorf("lint: exit code %d, want 1 with %q:\n%s", code, tc.want, out)
			}
			code, out = runConfig(t, dir, head+tc.create, time.Minute, "-c")
			if code != 1 || !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), tc.want) {
				t.Errorf("run: exit code %d, want 1 with %q:\n%s", code, tc.want, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "warehouse")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("warehouse created (%v)", err)
			}
		})
	}
}

// TestInputEndWaitsForTheBatchPeriod pins what the output's docs say
// ("When the input ends, or the stream is stopped"): when a file input
// ends, Benthos' batcher hands over the last partial batch only once the
// running batching.period has elapsed, and then the rows are committed and
// the run ends with exit code 0. If Benthos starts flushing at the end of
// the input, the lower bound fails: update the docs.
func TestInputEndWaitsForTheBatchPeriod(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const period = 3 * time.Second
	_, took := runFileIntoTable(t, fmt.Sprintf("{ count: 1000, period: %s }", period))
	t.Logf("the run took %s with batching.period %s", took, period)
	if took < period-time.Second || took > period+12*time.Second {
		t.Errorf("the run took %s; the docs say about the period, %s", took, period)
	}
}

// TestBatchingCountOneWarns runs the binary with batching.count: 1, which
// Benthos takes for no batching: the output's default policy applies, and
// the log says so and how to write each input batch as it comes.
func TestBatchingCountOneWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	out, _ := runFileIntoTable(t, "{ count: 1 }")
	if !strings.Contains(out, "batching.count: 1 is Benthos' policy for no batching, so the output applies its default") {
		t.Errorf("no warning about batching.count: 1 in the log:\n%s", out)
	}
}

// runFileIntoTable runs the binary on a file of two rows into a new table
// t with the paimon output's batching, fails the test unless it exits
// with code 0 having committed both rows, and returns its log and how long
// it ran.
func runFileIntoTable(t *testing.T, batching string) (string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte("{\"id\":1}\n{\"id\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := `http: { enabled: false }
input:
  file: { paths: [ ./in.jsonl ], scanner: { lines: {} } }
output:
  paimon:
    warehouse: ./warehouse
    table: t
    create_table: { enabled: true, schema: [ { name: id, type: BIGINT } ] }
    batching: ` + batching + "\n"
	binarytest.Path(t) // built before the clock starts
	start := time.Now()
	code, out := runConfig(t, dir, config, time.Minute, "-c")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit code %d:\n%s", code, out)
	}
	tbl, err := lakecore.Open(context.Background(), filepath.Join(dir, "warehouse"), "default", "t")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := tbl.ReadAll(context.Background(), 0); err != nil || len(rows) != 2 {
		t.Errorf("rows %v (%v), want the 2 of the file", rows, err)
	}
	return out, took
}
