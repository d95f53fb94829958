// Package bench is the benchmark harness behind `make bench`: it measures
// benthos-paimon against its peers (Benthos' file output, parquet-go used
// directly, Java Paimon and pypaimon) and against the targets of issues
// #3, #5, #6 and #19, and renders
// one reproducible markdown report (docs/BENCHMARKS.md).
//
// Every figure is measured [Config.Runs] times (at least 5 in a full run)
// and reported as the median with the min-max range; every comparison is a
// ratio computed inside each run, between variants run back to back in a
// rotating order, so that both sides see the same machine load. The
// machines this runs on are shared and noisy, so CPU time (user + system of
// the process, from getrusage) is reported beside wall time: rows per
// CPU-second is the "per core" figure.
//
// Each measurement is a function of this package (see [Measurements]); the
// report command (tests/bench/cmd/report) runs them all, or those named
// with -only, and a test runs them in quick mode so CI exercises the
// harness.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Config selects what to measure and how hard.
type Config struct {
	// Quick shrinks every measurement to a smoke run (seconds, not
	// minutes) that still exercises every code path of the harness.
	Quick bool
	// Runs is how often each figure is measured; 0 means 5 (3 when Quick).
	Runs int
	// Dir is the scratch directory for tables and files; "" means a new
	// temporary directory, removed at the end.
	Dir string
	// Only names the measurements to run (see Measurements); nil runs all.
	Only []string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Command is the command line recorded in the report.
	Command string
}

func (c Config) runs() int {
	switch {
	case c.Runs > 0:
		return c.Runs
	case c.Quick:
		return 3
	}
	return 5
}

// Measurement is one section of the report.
type Measurement struct {
	// Name is what -only selects, e.g. "write".
	Name string
	// Run measures and returns the section; an error is reported in the
	// section instead of the figures and the other measurements go on.
	Run func(ctx context.Context, e *Env) (*Section, error)
}

// Measurements lists the report's sections in order.
func Measurements() []Measurement {
	return []Measurement{
		{"write", measureWriteLocal},
		{"write-s3", measureWriteS3},
		{"pipeline", measurePipeline},
		{"freshness", measureFreshness},
		{"commit-history", measureCommitHistory},
		{"memory", measureMemory},
		{"tail", measureTail},
		{"planning", measurePlanning},
		{"small-files", measureSmallFiles},
		{"peers", measurePeers},
	}
}

// profileTopN is how many functions each profile table lists.
const profileTopN = 12

// profileUnmet adds to s, for each target it misses whose workload it can
// run again, a CPU profile of more runs of that workload: the top costs
// that explain the miss. A profile that cannot be taken becomes a note.
func profileUnmet(e *Env, s *Section) {
	for _, tg := range unmet(s) {
		run := s.profiles[tg.key]
		if run == nil {
			continue
		}
		goal := tg.issue + " " + tg.goal
		e.Logf("   target not met (%s): profiling its workload", goal)
		tables, err := profileTables(e.dir, tg.key, run, profileTopN)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("Target not met (%s); its CPU profile could not be taken: %v", goal, err))
			continue
		}
		s.Tables = append(s.Tables, tables...)
		s.Notes = append(s.Notes, fmt.Sprintf("Target not met (%s): the tables headed \"CPU profile of %s\" show where its workload spends its time.", goal, tg.key))
	}
}

// Env is what a measurement works with: the configuration, a scratch
// directory of its own and, on demand, an S3 server.
type Env struct {
	Config Config
	root   string // the scratch directory
	dir    string // root/work, emptied after each measurement
	log    io.Writer

	s3once sync.Once
	s3     *s3Server
	s3err  error
}

// Dir returns a new empty directory under the scratch directory.
func (e *Env) Dir(name string) string {
	d, err := os.MkdirTemp(e.dir, name+"-")
	if err != nil {
		panic(fmt.Sprintf("bench: scratch directory: %v", err)) // the scratch dir is ours; failing here is a harness bug
	}
	return d
}

// Logf writes a progress line.
func (e *Env) Logf(format string, args ...any) {
	if e.log != nil {
		fmt.Fprintf(e.log, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}

// pick returns n in a full run and quick in a quick one.
func (e *Env) pick(n, quick int) int {
	if e.Config.Quick {
		return quick
	}
	return n
}

// S3 returns a running S3 server (BP_S3_ENDPOINT, or versitygw from
// .ci/bin started for this report) and a fresh bucket on it.
func (e *Env) S3(name string) (storage.S3Config, string, error) {
	e.s3once.Do(func() { e.s3, e.s3err = startS3(e) })
	if e.s3err != nil {
		return storage.S3Config{}, "", e.s3err
	}
	bucket, err := e.s3.newBucket(name)
	return e.s3.cfg, bucket, err
}

// Run runs the selected measurements and returns the report. It fails only
// if nothing could run at all; a failed measurement becomes a section that
// says so.
func Run(ctx context.Context, c Config) (*Report, error) {
	if len(c.Only) > 0 {
		known := map[string]bool{}
		for _, m := range Measurements() {
			known[m.Name] = true
		}
		for _, n := range c.Only {
			if !known[n] {
				return nil, fmt.Errorf("bench: unknown measurement %q (have %s)", n, strings.Join(names(), ", "))
			}
		}
	}
	dir := c.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "bp-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: scratch directory: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: scratch directory: %w", err)
	}
	e := &Env{Config: c, root: dir, dir: filepath.Join(dir, "work"), log: c.Log}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: scratch directory: %w", err)
	}
	defer func() {
		if e.s3 != nil {
			e.s3.stop()
		}
	}()
	r := &Report{Config: c, Machine: readMachine(), Started: time.Now()}
	for _, m := range Measurements() {
		if len(c.Only) > 0 && !slices.Contains(c.Only, m.Name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		e.Logf("== %s", m.Name)
		start := time.Now()
		s, err := runOne(ctx, e, m)
		if s == nil {
			s = &Section{Name: m.Name}
		}
		s.Name = m.Name
		if err == nil {
			profileUnmet(e, s)
		}
		s.Elapsed = time.Since(start)
		if err != nil {
			s.Err = err.Error()
			e.Logf("   %s failed: %v", m.Name, err)
		} else {
			e.Logf("   %s done in %v", m.Name, s.Elapsed.Round(time.Second))
		}
		r.Sections = append(r.Sections, s)
		// Give the next measurement a collected heap and the disk back.
		debug.FreeOSMemory()
		_ = removeChildren(e.dir)
	}
	r.Finished = time.Now()
	return r, nil
}

// runOne runs m, turning a panic of the harness into an error so that
// one broken measurement does not lose the others' figures.
func runOne(ctx context.Context, e *Env, m Measurement) (s *Section, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return m.Run(ctx, e)
}

func names() []string {
	var out []string
	for _, m := range Measurements() {
		out = append(out, m.Name)
	}
	return out
}

func removeChildren(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range ents {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, d.Name())))
	}
	return errors.Join(errs...)
}

// timing is the wall and CPU time of one run of a variant.
type timing struct {
	Wall, CPU time.Duration
}

// measure collects the heap, then runs f and returns its wall and CPU
// time.
func measure(f func() error) (timing, error) {
	// Start from a collected heap, so that no variant pays for the
	// garbage of the one before it.
	runtime.GC()
	c0, w0 := cputime.Process(), time.Now()
	err := f()
	return timing{Wall: time.Since(w0), CPU: cputime.Process() - c0}, err
}

// rotate returns the indexes 0..n-1 starting at run % n, so that no
// variant always runs first (on a warm or a cold machine).
func rotate(n, run int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = (run + i) % n
	}
	return out
}
