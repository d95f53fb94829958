package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/google/uuid"
)

// Local is a FileIO on a local directory.
//
// Durability: every published file (Create, WriteFile, WriteExclusive) is
// fsynced before it becomes visible, and its directory is fsynced after, as
// is the parent of every directory it creates; a publish that returned nil
// survives a power loss. Temporary files are named as Java names them,
// ".<name>.<uuid>.tmp" beside the target (apache/paimon:
// paimon-common/src/main/java/org/apache/paimon/fs/Path.java,
// createTempPath), so Paimon's orphan-file cleanup recognises the ones a
// crash leaves behind; they show up in listings while a write is in flight.
type Local struct {
	root string
	// noRenameat2 latches once renameat2(RENAME_NOREPLACE) was refused
	// (old kernel, seccomp, a filesystem without the flag); WriteExclusive
	// then uses link(2), which is exclusive on every POSIX filesystem.
	noRenameat2 atomic.Bool
}

// NewLocal returns a FileIO rooted at dir, creating dir if needed.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local storage %s: %w", dir, err)
	}
	l := &Local{root: abs}
	if err := mkdirAllSync(abs); err != nil {
		return nil, fmt.Errorf("local storage %s: %w", l, err)
	}
	return l, nil
}

// Root returns the absolute directory of the storage.
func (l *Local) Root() string { return l.root }

// String returns the root as a file:// URI.
func (l *Local) String() string { return "file://" + l.root }

// uri names p for error messages.
func (l *Local) uri(p string) string {
	if p == "" {
		return l.String()
	}
	return "file://" + strings.TrimSuffix(l.root, "/") + "/" + p
}

// abs checks the context and the path and returns the absolute file name.
func (l *Local) abs(ctx context.Context, op, p string) (string, error) {
	if err := ValidatePath(p); err != nil {
		return "", fmt.Errorf("%s %s: %w", op, l.uri(p), err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s %s: %w", op, l.uri(p), err)
	}
	return filepath.Join(l.root, filepath.FromSlash(p)), nil
}

// wrap names the operation and the file; the os package's own path (an
// absolute name) is dropped in favour of the URI.
func (l *Local) wrap(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &se):
		err = se.Err
	}
	return fmt.Errorf("%s %s: %w", op, l.uri(p), err)
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// Open implements FileIO.
func (l *Local) Open(ctx context.Context, p string) (File, error) {
	a, err := l.abs(ctx, "open", p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(a)
	if err != nil {
		return nil, l.wrap("open", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, l.wrap("open", p, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, l.wrap("open", p, syscall.EISDIR)
	}
	return localFile{File: f, size: st.Size()}, nil
}

// ReadFile implements FileIO.
func (l *Local) ReadFile(ctx context.Context, p string) ([]byte, error) {
	a, err := l.abs(ctx, "read", p)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(a)
	if err != nil {
		return nil, l.wrap("read", p, err)
	}
	return b, nil
}

type writerState int

const (
	writerOpen writerState = iota
	writerClosed
	writerAborted
	writerFailed
)

type localWriter struct {
	ctx     context.Context
	l       *Local
	path    string
	target  string
	tmp     *os.File
	written int64
	state   writerState
}

func (w *localWriter) Write(b []byte) (int, error) {
	if w.state != writerOpen {
		return 0, w.l.wrap("write", w.path, ErrClosed)
	}
	n, err := w.tmp.Write(b)
	w.written += int64(n)
	if err != nil {
		return n, w.l.wrap("write", w.path, err)
	}
	return n, nil
}

func (w *localWriter) Written() int64 { return w.written }

func (w *localWriter) Close() error {
	if w.state != writerOpen {
		return w.l.wrap("close", w.path, ErrClosed)
	}
	w.state = writerFailed
	name := w.tmp.Name()
	if err := w.ctx.Err(); err != nil {
		w.tmp.Close()
		os.Remove(name)
		return w.l.wrap("close", w.path, err)
	}
	if err := w.tmp.Sync(); err != nil {
		w.tmp.Close()
		os.Remove(name)
		return w.l.wrap("sync", w.path, err)
	}
	if err := w.tmp.Close(); err != nil {
		os.Remove(name)
		return w.l.wrap("close", w.path, err)
	}
	if err := os.Rename(name, w.target); err != nil {
		os.Remove(name)
		return w.l.wrap("rename", w.path, err)
	}
	w.state = writerClosed
	if err := syncDir(filepath.Dir(w.target)); err != nil {
		return w.l.wrap("sync directory of", w.path, err)
	}
	return nil
}

func (w *localWriter) Abort() error {
	if w.state != writerOpen {
		return nil
	}
	w.state = writerAborted
	w.tmp.Close()
	if err := os.Remove(w.tmp.Name()); err != nil {
		return w.l.wrap("abort", w.path, err)
	}
	return nil
}

// tempFor creates a new hidden temporary file beside target, named as Java
// names them (Path.createTempPath): ".<name>.<uuid>.tmp".
func (l *Local) tempFor(p, target string) (*os.File, error) {
	dir := filepath.Dir(target)
	if err := mkdirAllSync(dir); err != nil {
		return nil, l.wrap("create directory for", p, err)
	}
	name := filepath.Join(dir, tempName(filepath.Base(target)))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, l.wrap("create", p, err)
	}
	return f, nil
}

// tempName is Java's temporary name for a file called base.
func tempName(base string) string {
	return "." + base + "." + uuid.NewString() + ".tmp"
}

// Create implements FileIO.
func (l *Local) Create(ctx context.Context, p string) (Writer, error) {
	a, err := l.abs(ctx, "create", p)
	if err != nil {
		return nil, err
	}
	tmp, err := l.tempFor(p, a)
	if err != nil {
		return nil, err
	}
	return &localWriter{ctx: ctx, l: l, path: p, target: a, tmp: tmp}, nil
}

// WriteFile implements FileIO.
func (l *Local) WriteFile(ctx context.Context, p string, data []byte) error {
	w, err := l.Create(ctx, p)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// WriteExclusive implements FileIO. The complete, fsynced temporary file is
// moved to the target with renameat2(RENAME_NOREPLACE), or hard-linked to it
// with link(2) where renameat2 is refused; both fail with EEXIST if anything
// is there, so a concurrent writer of this or any other process (Java
// included) is never overwritten and no reader sees a partial file. If the
// directory fsync after the publish fails, the file is visible but perhaps
// not durable, and the error wraps ErrAmbiguous.
func (l *Local) WriteExclusive(ctx context.Context, p string, data []byte) error {
	a, err := l.abs(ctx, "create exclusively", p)
	if err != nil {
		return err
	}
	tmp, err := l.tempFor(p, a)
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // gone already after renameat2; after link(2) the extra name
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return l.wrap("write", p, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return l.wrap("sync", p, err)
	}
	if err := tmp.Close(); err != nil {
		return l.wrap("close", p, err)
	}
	if err := l.publishExclusive(name, a); err != nil {
		return l.wrap("create exclusively", p, err)
	}
	if err := syncDir(filepath.Dir(a)); err != nil {
		return fmt.Errorf("create exclusively %s: created, but %w: sync directory: %w", l.uri(p), ErrAmbiguous, err)
	}
	return nil
}

// publishExclusive gives the complete file tmp the name target unless target
// exists.
func (l *Local) publishExclusive(tmp, target string) error {
	if !l.noRenameat2.Load() {
		err := renameNoReplace(tmp, target)
		if !errors.Is(err, errRenameNoReplaceUnsupported) {
			return err
		}
		l.noRenameat2.Store(true)
	}
	return os.Link(tmp, target)
}

// errRenameNoReplaceUnsupported is returned by renameNoReplace when the
// kernel or filesystem refuses the call; link(2) is used instead.
var errRenameNoReplaceUnsupported = errors.New("renameat2(RENAME_NOREPLACE) not supported")

// syncDir makes new directory entries in dir durable. Filesystems that do
// not support fsync on directories (EINVAL, ENOTSUP) are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}

// mkdirAllSync is os.MkdirAll that also fsyncs the parent of every directory
// it creates, so that a file published inside survives a power loss.
func mkdirAllSync(dir string) error {
	st, err := os.Stat(dir)
	if err == nil {
		if st.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSync(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		// A concurrent writer may have created it.
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return nil
		}
		return err
	}
	return syncDir(parent)
}

// Stat implements FileIO. A directory is reported with IsDir and size 0.
func (l *Local) Stat(ctx context.Context, p string) (FileInfo, error) {
	a, err := l.abs(ctx, "stat", p)
	if err != nil {
		return FileInfo{}, err
	}
	st, err := os.Stat(a)
	if err != nil {
		return FileInfo{}, l.wrap("stat", p, err)
	}
	return infoOf(p, st), nil
}

func infoOf(p string, st fs.FileInfo) FileInfo {
	if st.IsDir() {
		return FileInfo{Path: p, ModTime: st.ModTime(), IsDir: true}
	}
	return FileInfo{Path: p, Size: st.Size(), ModTime: st.ModTime()}
}

// List implements FileIO. A path that is a file lists as empty, as on S3.
func (l *Local) List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error) {
	d, err := validateDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.uri(dir), err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", l.uri(d), err)
	}
	a := filepath.Join(l.root, filepath.FromSlash(d))
	if !recursive {
		ents, err := os.ReadDir(a)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		if err != nil {
			return nil, l.wrap("list", d, err)
		}
		out := make([]FileInfo, 0, len(ents))
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				continue // removed while listing
			}
			out = append(out, infoOf(joinPath(d, e.Name()), info))
		}
		return out, nil // ReadDir sorts by name, hence by path
	}
	if st, err := os.Stat(a); err != nil || !st.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, l.wrap("list", d, err)
	}
	var out []FileInfo
	err = filepath.WalkDir(a, func(fp string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while listing
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(a, fp)
		if err != nil {
			return err
		}
		out = append(out, infoOf(joinPath(d, filepath.ToSlash(rel)), info))
		return nil
	})
	if err != nil {
		return nil, l.wrap("list", d, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Delete implements FileIO. An empty directory is removed too; a non-empty
// one is an error.
func (l *Local) Delete(ctx context.Context, p string) error {
	a, err := l.abs(ctx, "delete", p)
	if err != nil {
		return err
	}
	err = os.Remove(a)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return l.wrap("delete", p, err)
}
