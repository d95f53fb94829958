// Package faultfs is test machinery: a storage.FileIO that injects faults
// into the calls it passes to an inner FileIO, as pebble's vfs/errorfs does
// for its vfs. It lets tests of commit, expiry, the plugins and the e2e
// suite fail the Nth WriteExclusive of a snapshot, make a write land and
// then report failure (the ambiguous outcome of an S3 PUT), fail
// Writer.Close, or slow calls down, against real storage.
//
// The contract:
//   - With no rule firing, an FS behaves exactly as its inner FileIO (it
//     passes the storage conformance suite).
//   - Every injected error wraps [ErrInjected], plus Fault.Err when set; an
//     ApplyThenFail WriteExclusive without Err also wraps
//     storage.ErrAmbiguous, the error real storage gives for that outcome.
//   - Given the same seed and the same sequence of calls, the same faults
//     fire.
//   - An FS is safe for concurrent use, and rules may be added while it is
//     in use.
//
// It injects errors and latency only: it does not lose writes as a crash
// would. Production code must not import it.
package faultfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/pause"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// ErrInjected is wrapped by every error an [FS] injects.
var ErrInjected = errors.New("injected fault")

// Op is a set of FileIO operations, for Fault rules.
type Op uint32

// The operations a Fault can target.
const (
	OpOpen           Op = 1 << iota // FileIO.Open
	OpRead                          // File.ReadAt
	OpReadFile                      // FileIO.ReadFile
	OpCreate                        // FileIO.Create
	OpWrite                         // Writer.Write
	OpClose                         // Writer.Close
	OpWriteFile                     // FileIO.WriteFile
	OpWriteExclusive                // FileIO.WriteExclusive
	OpStat                          // FileIO.Stat
	OpList                          // FileIO.List (the path is the directory)
	OpDelete                        // FileIO.Delete
	opEnd

	// OpAll is every operation.
	OpAll = opEnd - 1
)

var opNames = [...]string{"open", "read", "read file", "create", "write", "close", "write file",
	"create exclusively", "stat", "list", "delete"}

// String names the operations in o.
func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Mode says what a Fault does when it fires.
type Mode int

const (
	// FailBefore fails the operation without performing it: nothing is
	// read or written (a failed Close aborts the inner writer).
	FailBefore Mode = iota
	// ApplyThenFail performs the operation, then reports an error: the
	// "request landed but the answer was lost" case. For WriteExclusive the
	// error wraps ErrAmbiguous unless Err is set; for Close the file is
	// published.
	ApplyThenFail
	// Slow waits Delay and then performs the operation normally.
	Slow
)

// Fault is one rule of an FS. A call matches when its operation is in
// Ops, its path matches Path and Match (when set) agrees. Matching calls
// are counted per rule; the rule fires on matching call number Nth and
// after, at most Times times, each time with chance Probability.
type Fault struct {
	// Ops the rule targets; 0 means OpAll.
	Ops Op
	// Path is a path.Match pattern on the FileIO path ("snapshot/snapshot-*");
	// a trailing "/**" matches everything below a directory; "" matches
	// every path. A malformed pattern makes matching calls fail loudly.
	Path string
	// Match, if set, must also accept the call.
	Match func(op Op, path string) bool
	// Nth is the first matching call (1-based) the rule may fire on; 0 or 1
	// means from the first.
	Nth int
	// Times caps how often the rule fires; 0 means no cap.
	Times int
	// Probability of firing on an eligible call, drawn from the FS's
	// seeded generator; 0 means always.
	Probability float64
	// Mode is what firing does.
	Mode Mode
	// Err is wrapped into the injected error besides ErrInjected (for
	// example storage.ErrAmbiguous for a "timed out before it landed" PUT).
	Err error
	// Delay is waited (honouring the context) before the operation in
	// every mode.
	Delay time.Duration
}

// Injection records one fired fault.
type Injection struct {
	Op   Op
	Path string
	// Rule is the index of the fault in the order it was added.
	Rule int
	Mode Mode
}

// The FS must satisfy the interface it wraps.
var _ storage.FileIO = (*FS)(nil)

type faultState struct {
	Fault
	seen, fired int
}

// FS is a storage.FileIO that injects faults into the calls it passes to an
// inner FileIO, in the manner of pebble's vfs/errorfs: fail the Nth
// WriteExclusive of a snapshot, make one land and then fail (ambiguous),
// fail Writer.Close, slow down reads. Given the same seed and the same
// sequence of calls it injects the same faults. Safe for concurrent use;
// rules may be added while it is in use.
type FS struct {
	inner storage.FileIO

	mu     sync.Mutex
	rng    *rand.Rand
	rules  []*faultState
	log    []Injection
	counts map[Op]int
	// byPath counts the calls of each operation on each path.
	byPath map[string]map[Op]int
}

// New wraps inner with the given faults and a generator seeded with
// seed.
func New(inner storage.FileIO, seed uint64, faults ...Fault) *FS {
	f := &FS{inner: inner, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), counts: map[Op]int{}, byPath: map[string]map[Op]int{}}
	f.Add(faults...)
	return f
}

// Add appends rules; they apply to calls from now on.
func (f *FS) Add(faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range faults {
		f.rules = append(f.rules, &faultState{Fault: r})
	}
}

// Clear removes all rules (the log and counts stay).
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Injected returns the faults fired so far, in order.
func (f *FS) Injected() []Injection {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Injection(nil), f.log...)
}

// Calls returns how many calls of the operations in ops were made.
func (f *FS) Calls(ops Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for op, c := range f.counts {
		if ops&op != 0 {
			n += c
		}
	}
	return n
}

// PathCalls returns how many calls of the operations in ops were made on
// each path that had any (tests count the reads of each data file with
// it).
func (f *FS) PathCalls(ops Op) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for p, counts := range f.byPath {
		for op, c := range counts {
			if ops&op != 0 {
				out[p] += c
			}
		}
	}
	return out
}

// ExtraOpens counts the opens of the files whose base name starts with
// prefix beyond the expected opens of each (by base name): extra is the
// opens beyond, reread the files opened more than once beyond theirs.
// Tests count with it what a cache saves: the lookups' reads of data
// files beyond the compactions' reads of their inputs.
func (f *FS) ExtraOpens(prefix string, expected map[string]int) (extra, reread int) {
	for p, n := range f.PathCalls(OpOpen) {
		name := path.Base(p)
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if more := n - expected[name]; more > 0 {
			extra += more
			if more > 1 {
				reread++
			}
		}
	}
	return extra, reread
}

// String names the inner FileIO.
func (f *FS) String() string { return f.inner.String() }

// decision is what happens to one call.
type decision struct {
	fire  bool
	mode  Mode
	err   error
	delay time.Duration
}

func matchPattern(pattern, p string) (bool, error) {
	if pattern == "" {
		return true, nil
	}
	if dir, ok := strings.CutSuffix(pattern, "/**"); ok {
		if m, err := path.Match(dir, p); m || err != nil {
			return m, err
		}
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			if m, err := path.Match(dir, d); m || err != nil {
				return m, err
			}
		}
		return false, nil
	}
	return path.Match(pattern, p)
}

// decide applies the rules to one call; the first rule that fires wins.
func (f *FS) decide(op Op, p string) (decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[op]++
	if f.byPath[p] == nil {
		f.byPath[p] = map[Op]int{}
	}
	f.byPath[p][op]++
	for i, r := range f.rules {
		if r.Ops != 0 && r.Ops&op == 0 {
			continue
		}
		m, err := matchPattern(r.Path, p)
		if err != nil {
			return decision{}, fmt.Errorf("fault rule %d: bad path pattern %q: %w", i, r.Path, err)
		}
		if !m || (r.Match != nil && !r.Match(op, p)) {
			continue
		}
		r.seen++
		if r.seen < r.Nth || (r.Times > 0 && r.fired >= r.Times) {
			continue
		}
		if r.Probability > 0 && f.rng.Float64() >= r.Probability {
			continue
		}
		r.fired++
		f.log = append(f.log, Injection{Op: op, Path: p, Rule: i, Mode: r.Mode})
		return decision{fire: true, mode: r.Mode, err: r.Err, delay: r.Delay}, nil
	}
	return decision{}, nil
}

// before runs the rules for a call and waits any delay. It returns the
// decision and, for FailBefore, the error to return.
func (f *FS) before(ctx context.Context, op Op, p string) (decision, error) {
	d, err := f.decide(op, p)
	if err != nil {
		return d, err
	}
	if !d.fire {
		return d, nil
	}
	if d.delay > 0 {
		if err := pause.For(ctx, d.delay); err != nil {
			return d, fmt.Errorf("%s %s/%s: %w", op, f.inner, p, err)
		}
	}
	if d.mode == FailBefore {
		return d, f.injected(op, p, d.err)
	}
	return d, nil
}

// after turns the result of a performed operation into the injected
// failure for ApplyThenFail.
func (f *FS) after(d decision, op Op, p string, err error) error {
	if err != nil || !d.fire || d.mode != ApplyThenFail {
		return err
	}
	e := d.err
	if e == nil && op == OpWriteExclusive {
		e = storage.ErrAmbiguous
	}
	return f.injected(op, p, e)
}

func (f *FS) injected(op Op, p string, e error) error {
	if e == nil {
		return fmt.Errorf("%s %s/%s: %w", op, f.inner, p, ErrInjected)
	}
	return fmt.Errorf("%s %s/%s: %w: %w", op, f.inner, p, ErrInjected, e)
}

// Open implements FileIO.
func (f *FS) Open(ctx context.Context, p string) (storage.File, error) {
	d, err := f.before(ctx, OpOpen, p)
	if err != nil {
		return nil, err
	}
	file, err := f.inner.Open(ctx, p)
	if err = f.after(d, OpOpen, p, err); err != nil {
		if file != nil {
			file.Close()
		}
		return nil, err
	}
	return &faultyFile{File: file, ctx: ctx, f: f, path: p}, nil
}

type faultyFile struct {
	storage.File
	ctx  context.Context
	f    *FS
	path string
}

func (ff *faultyFile) ReadAt(b []byte, off int64) (int, error) {
	d, err := ff.f.before(ff.ctx, OpRead, ff.path)
	if err != nil {
		return 0, err
	}
	n, err := ff.File.ReadAt(b, off)
	if d.fire && d.mode == ApplyThenFail && err == nil {
		return n, ff.f.injected(OpRead, ff.path, d.err)
	}
	return n, err
}

// ReadFile implements FileIO.
func (f *FS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	d, err := f.before(ctx, OpReadFile, p)
	if err != nil {
		return nil, err
	}
	b, err := f.inner.ReadFile(ctx, p)
	if err = f.after(d, OpReadFile, p, err); err != nil {
		return nil, err
	}
	return b, nil
}

// Create implements FileIO.
func (f *FS) Create(ctx context.Context, p string) (storage.Writer, error) {
	d, err := f.before(ctx, OpCreate, p)
	if err != nil {
		return nil, err
	}
	w, err := f.inner.Create(ctx, p)
	if err = f.after(d, OpCreate, p, err); err != nil {
		if w != nil {
			w.Abort()
		}
		return nil, err
	}
	return &faultyWriter{Writer: w, ctx: ctx, f: f, path: p}, nil
}

type faultyWriter struct {
	storage.Writer
	ctx  context.Context
	f    *FS
	path string
}

func (fw *faultyWriter) Write(b []byte) (int, error) {
	d, err := fw.f.before(fw.ctx, OpWrite, fw.path)
	if err != nil {
		return 0, err
	}
	n, err := fw.Writer.Write(b)
	return n, fw.f.after(d, OpWrite, fw.path, err)
}

func (fw *faultyWriter) Close() error {
	d, err := fw.f.before(fw.ctx, OpClose, fw.path)
	if err != nil {
		fw.Writer.Abort()
		return err
	}
	return fw.f.after(d, OpClose, fw.path, fw.Writer.Close())
}

// WriteFile implements FileIO.
func (f *FS) WriteFile(ctx context.Context, p string, data []byte) error {
	d, err := f.before(ctx, OpWriteFile, p)
	if err != nil {
		return err
	}
	return f.after(d, OpWriteFile, p, f.inner.WriteFile(ctx, p, data))
}

// WriteExclusive implements FileIO. ApplyThenFail makes it create the file
// and then report ErrAmbiguous.
func (f *FS) WriteExclusive(ctx context.Context, p string, data []byte) error {
	d, err := f.before(ctx, OpWriteExclusive, p)
	if err != nil {
		return err
	}
	return f.after(d, OpWriteExclusive, p, f.inner.WriteExclusive(ctx, p, data))
}

// Stat implements FileIO.
func (f *FS) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	d, err := f.before(ctx, OpStat, p)
	if err != nil {
		return storage.FileInfo{}, err
	}
	fi, err := f.inner.Stat(ctx, p)
	if err = f.after(d, OpStat, p, err); err != nil {
		return storage.FileInfo{}, err
	}
	return fi, nil
}

// List implements FileIO.
func (f *FS) List(ctx context.Context, dir string, recursive bool) ([]storage.FileInfo, error) {
	d, err := f.before(ctx, OpList, dir)
	if err != nil {
		return nil, err
	}
	out, err := f.inner.List(ctx, dir, recursive)
	if err = f.after(d, OpList, dir, err); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements FileIO.
func (f *FS) Delete(ctx context.Context, p string) error {
	d, err := f.before(ctx, OpDelete, p)
	if err != nil {
		return err
	}
	return f.after(d, OpDelete, p, f.inner.Delete(ctx, p))
}
