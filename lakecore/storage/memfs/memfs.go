// Package memfs is an in-memory storage.FileIO that can simulate a crash,
// for fast crash tests of commit and maintenance (as pebble's vfs.MemFS with
// its crash clone). It is test machinery: nothing in lakecore uses it.
//
// # Durability models
//
// An FS follows one of two models, chosen at [New]:
//
//   - [ObjectStore] is S3: every mutation is one request, durable the moment
//     it happens. Create streams into memory and publishes on Close (a
//     multipart upload is invisible until completed). A crash loses only what
//     had not been requested yet.
//   - [LocalDisk] is what storage.Local guarantees with fsync and
//     renameat2, and no more. A write goes to a hidden temporary file beside
//     the target (".<name>.<uuid>.tmp", visible in listings), is fsynced,
//     renamed onto the target and then the directory is fsynced; WriteFile,
//     WriteExclusive and Writer.Close therefore take three steps (create the
//     temporary file, publish it, sync the directory). Delete removes the
//     name at once but, as on a real disk without a directory fsync, the
//     removal is only durable once the directory is next synced (by a later
//     publish into the same directory). A crash brings every directory back
//     to its last synced state: published files whose directory sync did not
//     happen vanish (or their previous content returns), deletions not yet
//     synced are undone, and temporary files not synced are gone. Of the
//     states a real disk may be in after a power loss this is the one that
//     keeps the fewest unsynced changes; [FS.KeepUnsynced] makes a crash
//     keep the oldest n of them instead, as a filesystem that journals its
//     metadata in order may. Directories are implicit (they exist while a
//     file is below them) and always durable.
//
// # Crash points
//
// Every mutating step (see the models) is numbered from 1 in the order the
// FS performs it. [FS.CrashAt](n) arms a crash at step n: step n does not
// happen, the FS drops everything that is not durable and from then on every
// operation, reads included, fails with an error wrapping [ErrCrashed], as
// the process would be dead. [FS.Restart] brings it back with what survived.
// A test enumerates every crash point of an operation by running it on a
// [FS.Clone] of the same table with CrashAt(1), CrashAt(2), ... until the
// operation finishes without reaching the crash ([FS.Crashed] is false).
// [FS.Trace] names the steps taken, for messages. Concurrent callers (the
// maintenance operations delete files from several goroutines) are
// serialized step by step, so the crash falls between two steps of any of
// them.
//
// An FS is safe for concurrent use.
package memfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Model is a durability model (see the package doc).
type Model int

const (
	// ObjectStore: every mutation is durable when it happens (S3).
	ObjectStore Model = iota
	// LocalDisk: storage.Local's fsync discipline; unsynced directory
	// changes are lost in a crash.
	LocalDisk
)

func (m Model) String() string {
	if m == LocalDisk {
		return "local-disk"
	}
	return "object-store"
}

// ErrCrashed is wrapped by every operation of a crashed FS, and by the
// operation whose step was the crash point.
var ErrCrashed = errors.New("memfs: crashed")

// node is one file: data is what readers see, synced what survives a crash
// (LocalDisk; the content at the last fsync).
type node struct {
	data, synced []byte
	mod          time.Time
}

// FS is the in-memory FileIO. The zero value is not usable; call New.
type FS struct {
	model Model
	now   func() time.Time
	name  string

	mu sync.Mutex
	// files are the visible files; durable what a crash leaves (the same
	// map contents in the ObjectStore model).
	files, durable map[string]*node
	// pending are the LocalDisk directory changes not synced yet, in the
	// order they happened.
	pending      [][]change
	steps        int
	trace        []string
	crashAt      int
	crashed      bool
	keep         int
	lastUnsynced int
	lastKept     int
}

// change is one directory entry change: path now names n, or nothing when
// n is nil. A rename is two changes that happen together.
type change struct {
	path string
	n    *node
}

// Option configures an FS.
type Option func(*FS)

// WithClock sets the clock that stamps modification times (time.Now by
// default), so that tests of age-based cleanup control file ages.
func WithClock(now func() time.Time) Option { return func(f *FS) { f.now = now } }

// New returns an empty FS following model.
func New(model Model, opts ...Option) *FS {
	f := &FS{model: model, now: time.Now, name: "mem://" + model.String(),
		files: map[string]*node{}, durable: map[string]*node{}}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Model returns the durability model.
func (f *FS) Model() Model { return f.model }

// String implements storage.FileIO.
func (f *FS) String() string { return f.name }

func (f *FS) uri(p string) string {
	if p == "" {
		return f.name
	}
	return f.name + "/" + p
}

// CrashAt arms a crash at mutating step n counted from the last Restart
// (or New, or Clone): step n does not happen and the FS crashes. n <= 0
// disarms.
func (f *FS) CrashAt(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashAt = n
}

// Crash crashes the FS now: what is not durable is lost and every
// operation fails with ErrCrashed until Restart.
func (f *FS) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashLocked()
}

// Crashed reports whether the FS crashed (and was not restarted since).
func (f *FS) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// Restart brings a crashed FS back into service with what survived, as a
// new process would find it; it disarms any crash point and restarts the
// step count. Writers opened before the crash stay dead.
func (f *FS) Restart() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashed, f.crashAt, f.steps, f.trace, f.keep = false, 0, 0, nil, 0
}

// KeepUnsynced sets how many of the unsynced directory changes (LocalDisk:
// creations, renames and deletions in directories not synced since), oldest
// first, the next crash keeps, as a filesystem that journals its metadata in
// order may have written some of them before the power went: 0 (the
// default, and after Restart) keeps none, -1 all. A test enumerates the
// prefixes with LastCrash.
func (f *FS) KeepUnsynced(k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keep = k
}

// LastCrash returns, after a crash, how many unsynced directory changes
// there were and how many of them the crash kept.
func (f *FS) LastCrash() (unsynced, kept int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastUnsynced, f.lastKept
}

// Steps is the number of mutating steps taken since the last Restart (or
// New, or Clone), the crash point included.
func (f *FS) Steps() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps
}

// Trace names the mutating steps taken since the last Restart (or New, or
// Clone), in order, the crash point last: "delete t/snapshot/snapshot-1".
func (f *FS) Trace() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.trace)
}

// Clone returns an independent copy of the FS with the same visible and
// durable files, not crashed, with no crash point armed and a step count
// of 0. Writers open on f do not write into the clone.
func (f *FS) Clone() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := New(f.model, WithClock(f.now))
	copies := map[*node]*node{}
	cp := func(n *node) *node {
		if c, ok := copies[n]; ok {
			return c
		}
		nn := &node{data: slices.Clone(n.data), synced: slices.Clone(n.synced), mod: n.mod}
		copies[n] = nn
		return nn
	}
	for p, n := range f.files {
		c.files[p] = cp(n)
	}
	for p, n := range f.durable {
		c.durable[p] = cp(n)
	}
	for _, op := range f.pending {
		cs := make([]change, len(op))
		for i, ch := range op {
			cs[i] = change{path: ch.path}
			if ch.n != nil {
				cs[i].n = cp(ch.n)
			}
		}
		c.pending = append(c.pending, cs)
	}
	return c
}

// crashLocked drops what is not durable, except the first f.keep unsynced
// directory changes.
func (f *FS) crashLocked() {
	if f.crashed {
		return
	}
	f.crashed = true
	keep := f.keep
	if keep < 0 || keep > len(f.pending) {
		keep = len(f.pending)
	}
	for _, op := range f.pending[:keep] {
		for _, ch := range op {
			if ch.n == nil {
				delete(f.durable, ch.path)
			} else {
				f.durable[ch.path] = ch.n
			}
		}
	}
	f.lastUnsynced, f.lastKept, f.pending = len(f.pending), keep, nil
	f.files = map[string]*node{}
	for p, n := range f.durable {
		n.data = n.synced
		f.files[p] = n
	}
}

// step takes mutating step desc; it returns an error wrapping ErrCrashed
// when the FS is down or this step is the crash point, in which case the
// caller must not mutate anything. It is called with f.mu held.
func (f *FS) step(desc string) error {
	if f.crashed {
		return ErrCrashed
	}
	f.steps++
	f.trace = append(f.trace, desc)
	if f.crashAt > 0 && f.steps == f.crashAt {
		f.crashLocked()
		return fmt.Errorf("%w at step %d (%s)", ErrCrashed, f.steps, desc)
	}
	return nil
}

// alive checks a read-only operation: ctx, the path and the FS.
func (f *FS) alive(ctx context.Context, op, p string) error {
	if err := storage.ValidatePath(p); err != nil {
		return fmt.Errorf("%s %s: %w", op, f.uri(p), err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, f.uri(p), err)
	}
	if f.crashed {
		return fmt.Errorf("%s %s: %w", op, f.uri(p), ErrCrashed)
	}
	return nil
}

// applyLocked makes the changes visible: durable at once in the
// ObjectStore model, pending until their directory is synced in the
// LocalDisk model.
func (f *FS) applyLocked(cs ...change) {
	for _, ch := range cs {
		if ch.n == nil {
			delete(f.files, ch.path)
		} else {
			f.files[ch.path] = ch.n
		}
		if f.model == ObjectStore {
			if ch.n == nil {
				delete(f.durable, ch.path)
			} else {
				f.durable[ch.path] = ch.n
			}
		}
	}
	if f.model == LocalDisk {
		f.pending = append(f.pending, cs)
	}
}

// syncDirLocked makes the current entries of dir durable, removals
// included (LocalDisk's directory fsync), and drops them from the
// unsynced changes.
func (f *FS) syncDirLocked(dir string) {
	kept := f.pending[:0]
	for _, op := range f.pending {
		op = slices.DeleteFunc(op, func(ch change) bool { return path.Dir(ch.path) == dir })
		if len(op) > 0 {
			kept = append(kept, op)
		}
	}
	f.pending = kept
	for p := range f.durable {
		if path.Dir(p) == dir && f.files[p] == nil {
			delete(f.durable, p)
		}
	}
	for p, n := range f.files {
		if path.Dir(p) == dir {
			f.durable[p] = n
		}
	}
}

// isDirLocked reports whether some file lies below p.
func (f *FS) isDirLocked(p string) bool {
	prefix := p + "/"
	for q := range f.files {
		if strings.HasPrefix(q, prefix) {
			return true
		}
	}
	return false
}

// publishLocked makes data visible at p as one step (the PUT, or the
// rename of the synced temporary file tmp), then in the LocalDisk model
// syncs the directory as another. exclusive fails with ErrExist when p
// exists. After a crash at the second step the file was visible but is
// lost, as Local's Close documents.
func (f *FS) publishLocked(op, p, tmp string, data []byte, exclusive bool) error {
	if exclusive && f.files[p] != nil {
		if f.model == LocalDisk {
			if err := f.step("remove temporary " + tmp); err != nil {
				return fmt.Errorf("%s %s: %w", op, f.uri(p), err)
			}
			f.applyLocked(change{path: tmp})
		}
		return fmt.Errorf("%s %s: %w", op, f.uri(p), storage.ErrExist)
	}
	desc := "put " + p
	if f.model == LocalDisk {
		desc = "rename " + tmp + " to " + p
	}
	if exclusive {
		desc += " (exclusive)"
	}
	if err := f.step(desc); err != nil {
		return fmt.Errorf("%s %s: %w", op, f.uri(p), err)
	}
	n := &node{data: data, synced: data, mod: f.now()}
	if f.model == ObjectStore {
		f.applyLocked(change{path: p, n: n})
		return nil
	}
	f.applyLocked(change{path: p, n: n}, change{path: tmp})
	if err := f.step("sync directory " + path.Dir(p)); err != nil {
		if exclusive {
			return fmt.Errorf("%s %s: created, but %w: sync directory: %w", op, f.uri(p), storage.ErrAmbiguous, err)
		}
		return fmt.Errorf("sync directory of %s: %w", f.uri(p), err)
	}
	f.syncDirLocked(path.Dir(p))
	return nil
}

// createTempLocked creates the hidden temporary file of p (LocalDisk), as
// Local names it.
func (f *FS) createTempLocked(op, p string) (string, error) {
	tmp := path.Join(path.Dir(p), "."+path.Base(p)+"."+uuid.NewString()+".tmp")
	if err := f.step("create temporary " + tmp); err != nil {
		return "", fmt.Errorf("%s %s: %w", op, f.uri(p), err)
	}
	f.applyLocked(change{path: tmp, n: &node{mod: f.now()}})
	return tmp, nil
}

type memFile struct {
	f    *FS
	path string
	data []byte
}

func (m *memFile) ReadAt(b []byte, off int64) (int, error) {
	m.f.mu.Lock()
	crashed := m.f.crashed
	m.f.mu.Unlock()
	if crashed {
		return 0, fmt.Errorf("read %s: %w", m.f.uri(m.path), ErrCrashed)
	}
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", m.f.uri(m.path), off)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(b, m.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) Close() error { return nil }
func (m *memFile) Size() int64  { return int64(len(m.data)) }

// Open implements storage.FileIO. The File reads the content at the time
// of the call.
func (f *FS) Open(ctx context.Context, p string) (storage.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, "open", p); err != nil {
		return nil, err
	}
	n := f.files[p]
	if n == nil {
		if f.model == LocalDisk && f.isDirLocked(p) {
			return nil, fmt.Errorf("open %s: %w", f.uri(p), syscall.EISDIR)
		}
		return nil, fmt.Errorf("open %s: %w", f.uri(p), storage.ErrNotExist)
	}
	return &memFile{f: f, path: p, data: n.data}, nil
}

// ReadFile implements storage.FileIO.
func (f *FS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, "read", p); err != nil {
		return nil, err
	}
	n := f.files[p]
	if n == nil {
		return nil, fmt.Errorf("read %s: %w", f.uri(p), storage.ErrNotExist)
	}
	return slices.Clone(n.data), nil
}

// memWriter buffers the file; in the LocalDisk model its temporary file
// exists (and grows) meanwhile.
type memWriter struct {
	ctx  context.Context
	f    *FS
	path string
	tmp  string // LocalDisk
	buf  bytes.Buffer
	// done: Close or Abort was called; published: Close succeeded.
	done, published bool
}

func (w *memWriter) Write(b []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	if w.done {
		return 0, fmt.Errorf("write %s: %w", w.f.uri(w.path), storage.ErrClosed)
	}
	if w.f.crashed {
		return 0, fmt.Errorf("write %s: %w", w.f.uri(w.path), ErrCrashed)
	}
	w.buf.Write(b)
	if n := w.f.files[w.tmp]; w.tmp != "" && n != nil {
		n.data = append(n.data, b...)
	}
	return len(b), nil
}

func (w *memWriter) Written() int64 { return int64(w.buf.Len()) }

func (w *memWriter) Close() error {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	if w.done {
		return fmt.Errorf("close %s: %w", w.f.uri(w.path), storage.ErrClosed)
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		w.dropTempLocked()
		return fmt.Errorf("close %s: %w", w.f.uri(w.path), err)
	}
	if w.f.crashed {
		return fmt.Errorf("close %s: %w", w.f.uri(w.path), ErrCrashed)
	}
	if err := w.f.publishLocked("close", w.path, w.tmp, slices.Clone(w.buf.Bytes()), false); err != nil {
		return err
	}
	w.published = true
	return nil
}

func (w *memWriter) Abort() error {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	if !w.published {
		w.done = true
		w.dropTempLocked()
	}
	return nil
}

// dropTempLocked removes the temporary file of a writer that will not
// publish (not a crash point: the removal of a file nobody references).
func (w *memWriter) dropTempLocked() {
	if w.tmp != "" && !w.f.crashed {
		w.f.applyLocked(change{path: w.tmp})
	}
}

// Create implements storage.FileIO. In the LocalDisk model the temporary
// file is created now (one step); Close publishes (see the package doc).
func (f *FS) Create(ctx context.Context, p string) (storage.Writer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, "create", p); err != nil {
		return nil, err
	}
	w := &memWriter{ctx: ctx, f: f, path: p}
	if f.model == LocalDisk {
		tmp, err := f.createTempLocked("create", p)
		if err != nil {
			return nil, err
		}
		w.tmp = tmp
	}
	return w, nil
}

// WriteFile implements storage.FileIO.
func (f *FS) WriteFile(ctx context.Context, p string, data []byte) error {
	return f.write(ctx, "write", p, data, false)
}

// WriteExclusive implements storage.FileIO: ErrExist when p exists. A
// crash at the directory sync of the LocalDisk model returns an error
// wrapping ErrAmbiguous (besides ErrCrashed), as Local does when that
// fsync fails.
func (f *FS) WriteExclusive(ctx context.Context, p string, data []byte) error {
	return f.write(ctx, "create exclusively", p, data, true)
}

func (f *FS) write(ctx context.Context, op, p string, data []byte, exclusive bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, op, p); err != nil {
		return err
	}
	tmp := ""
	if f.model == LocalDisk {
		var err error
		if tmp, err = f.createTempLocked(op, p); err != nil {
			return err
		}
	}
	return f.publishLocked(op, p, tmp, slices.Clone(data), exclusive)
}

// Stat implements storage.FileIO. In the LocalDisk model a directory (a
// prefix of some file) is reported with IsDir; in the ObjectStore model it
// is missing, as on S3.
func (f *FS) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, "stat", p); err != nil {
		return storage.FileInfo{}, err
	}
	if n := f.files[p]; n != nil {
		return storage.FileInfo{Path: p, Size: int64(len(n.data)), ModTime: n.mod}, nil
	}
	if f.model == LocalDisk && f.isDirLocked(p) {
		return storage.FileInfo{Path: p, IsDir: true, ModTime: f.now()}, nil
	}
	return storage.FileInfo{}, fmt.Errorf("stat %s: %w", f.uri(p), storage.ErrNotExist)
}

// List implements storage.FileIO.
func (f *FS) List(ctx context.Context, dir string, recursive bool) ([]storage.FileInfo, error) {
	d := strings.TrimSuffix(dir, "/")
	if d != "" || dir != "" {
		if err := storage.ValidatePath(d); err != nil {
			return nil, fmt.Errorf("list %s: %w", f.uri(dir), err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", f.uri(d), err)
	}
	if f.crashed {
		return nil, fmt.Errorf("list %s: %w", f.uri(d), ErrCrashed)
	}
	prefix := ""
	if d != "" {
		prefix = d + "/"
	}
	var out []storage.FileInfo
	dirs := map[string]bool{}
	for p, n := range f.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 && !recursive {
			sub := prefix + rest[:i]
			if !dirs[sub] {
				dirs[sub] = true
				out = append(out, storage.FileInfo{Path: sub, IsDir: true, ModTime: f.now()})
			}
			continue
		}
		out = append(out, storage.FileInfo{Path: p, Size: int64(len(n.data)), ModTime: n.mod})
	}
	slices.SortFunc(out, func(a, b storage.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Delete implements storage.FileIO; it is one step even when nothing is
// there. A directory with files below it is not deleted (ENOTEMPTY, as
// Local refuses a non-empty directory); an empty one does not exist.
func (f *FS) Delete(ctx context.Context, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.alive(ctx, "delete", p); err != nil {
		return err
	}
	if f.files[p] == nil && f.isDirLocked(p) {
		return fmt.Errorf("delete %s: %w", f.uri(p), syscall.ENOTEMPTY)
	}
	if err := f.step("delete " + p); err != nil {
		return fmt.Errorf("delete %s: %w", f.uri(p), err)
	}
	f.applyLocked(change{path: p})
	return nil
}

var _ storage.FileIO = (*FS)(nil)
