package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Memory is measured in child processes (the report binary, or the test
// binary, started again with childEnv set), so that the peak RSS is the
// pipeline's alone and not the harness's.

const childEnv = "BP_BENCH_CHILD"

// childSpec is the job of a child process.
type childSpec struct {
	// Kind is "write" (generate -> paimon), "writer" (lakecore's table
	// writer alone, rows made on the fly, a commit every BatchCount rows),
	// "tail" (paimon input,
	// bounded, full scan -> a counting consumer) or "idle" (generate of one
	// message -> drop: the RSS of the binary and Benthos alone).
	Kind       string
	Warehouse  string
	Rows       int
	Partitions int
	BatchCount int
	// InputOptions are fields of the tail's paimon input, YAML lines
	// "field: value" (e.g. "message_format: json"); none for its defaults.
	InputOptions []string `json:",omitempty"`
}

type childResult struct {
	Rows    int64
	Seconds float64
	// HWMKiB is VmHWM of /proc/self/status at the end: the peak RSS.
	HWMKiB int64
	Err    string
	// ProcessCPU is the child's CPU time, start-up included, from its
	// rusage (set by runChild).
	ProcessCPU time.Duration `json:"-"`
}

// MaybeRunChild runs the child job and exits when this process was started
// as a child of the harness; otherwise it returns at once. Call it first
// in main (and in TestMain).
func MaybeRunChild() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	var s childSpec
	res := childResult{}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		res.Err = fmt.Sprintf("bad %s: %v", childEnv, err)
	} else {
		start := time.Now()
		n, err := childJob(context.Background(), s)
		res.Rows, res.Seconds = n, time.Since(start).Seconds()
		if err != nil {
			res.Err = err.Error()
		}
	}
	res.HWMKiB = vmHWM()
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}

func childJob(ctx context.Context, s childSpec) (int64, error) {
	switch s.Kind {
	case "write":
		st := stream{input: generateYAML(s.Rows, s.Partitions, 1000), output: paimonOutputYAML(s.Warehouse, nil, s.BatchCount, "10s"), log: os.Stderr}
		return int64(s.Rows), st.run(ctx)
	case "writer":
		return childTableWriter(ctx, s)
	case "idle":
		st := stream{input: `generate: { count: 1, interval: "", mapping: 'root = {}' }`, output: "drop: {}", log: os.Stderr}
		return 1, st.run(ctx)
	case "tail":
		var n atomic.Int64
		st := stream{input: tailInputYAML(s.Warehouse, nil, s.InputOptions), log: os.Stderr,
			consume: func(_ context.Context, b service.MessageBatch) error { n.Add(int64(len(b))); return nil }}
		err := st.run(ctx)
		return n.Load(), err
	}
	return 0, fmt.Errorf("unknown child kind %q", s.Kind)
}

// tailInputYAML is the paimon input reading the whole bench table once,
// with options, YAML lines "field: value" of the input, added.
func tailInputYAML(warehouse string, s3 *s3Server, options []string) string {
	y := fmt.Sprintf(`
paimon:
  warehouse: %q
%s  database: bench
  table: events
  scan_mode: full
  bounded: true
`, warehouse, s3YAML(s3))
	for _, o := range options {
		y += "  " + o + "\n"
	}
	return y
}

// vmHWM reads the peak resident set size of this process in KiB.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// runChild runs s in a child process and returns its result, whose
// HWMKiB is the child's peak RSS. The kernel's ru_maxrss of the child is
// not used: Go starts children with vfork semantics, and exec carries the
// parent's RSS high-water mark into the child's (exec_mmap), so a large
// harness would inflate every child's figure.
func runChild(ctx context.Context, e *Env, s childSpec) (childResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return childResult{}, err
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return childResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if e.log != nil {
		cmd.Stderr = e.log
	}
	if err := cmd.Run(); err != nil {
		return childResult{}, fmt.Errorf("child %s: %w", s.Kind, err)
	}
	var res childResult
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return res, fmt.Errorf("child %s: result %q: %w", s.Kind, stdout.String(), err)
	}
	res.ProcessCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if res.Err != "" {
		return res, fmt.Errorf("child %s: %s", s.Kind, res.Err)
	}
	if res.HWMKiB == 0 {
		return res, errors.New("no peak RSS reported (VmHWM)")
	}
	return res, nil
}

// childTableWriter writes s.Rows rows into s.Partitions partitions with
// lakecore's TableWriter, committing every s.BatchCount rows.
func childTableWriter(ctx context.Context, s childSpec) (int64, error) {
	tbl, err := createBenchTable(ctx, s.Warehouse, nil, nil)
	if err != nil {
		return 0, err
	}
	return writeCommits(ctx, tbl, s.Rows, s.Partitions, s.BatchCount, nil)
}
