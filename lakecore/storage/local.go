package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// Local is a FileIO on a local directory.
type Local struct {
	root string
}

// NewLocal returns a FileIO rooted at dir, creating dir if needed.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local storage %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("local storage %s: %w", abs, err)
	}
	return &Local{root: abs}, nil
}

// Root returns the absolute directory of the storage.
func (l *Local) Root() string { return l.root }

// String returns the root as a file:// URI.
func (l *Local) String() string { return "file://" + l.root }

func (l *Local) abs(p string) (string, error) {
	clean := path.Clean("/" + p)
	if clean != "/"+strings.TrimSuffix(p, "/") && p != "" {
		return "", fmt.Errorf("invalid path %q", p)
	}
	return filepath.Join(l.root, filepath.FromSlash(clean)), nil
}

func (l *Local) wrap(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = ErrNotExist
	} else if errors.Is(err, fs.ErrExist) {
		err = ErrExist
	}
	return fmt.Errorf("%s %s/%s: %w", op, l, p, err)
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// Open implements FileIO.
func (l *Local) Open(_ context.Context, p string) (File, error) {
	a, err := l.abs(p)
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
		return nil, l.wrap("stat", p, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s/%s: is a directory", l, p)
	}
	return localFile{File: f, size: st.Size()}, nil
}

// ReadFile implements FileIO.
func (l *Local) ReadFile(_ context.Context, p string) ([]byte, error) {
	a, err := l.abs(p)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(a)
	return b, l.wrap("read", p, err)
}

type localWriter struct {
	l        *Local
	path     string
	target   string
	tmp      *os.File
	written  int64
	finished bool
}

func (w *localWriter) Write(b []byte) (int, error) {
	n, err := w.tmp.Write(b)
	w.written += int64(n)
	if err != nil {
		return n, w.l.wrap("write", w.path, err)
	}
	return n, nil
}

func (w *localWriter) Written() int64 { return w.written }

func (w *localWriter) Close() error {
	if w.finished {
		return fmt.Errorf("close %s/%s: already closed", w.l, w.path)
	}
	w.finished = true
	name := w.tmp.Name()
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
	return nil
}

func (w *localWriter) Abort() error {
	if w.finished {
		return nil
	}
	w.finished = true
	w.tmp.Close()
	return w.l.wrap("abort", w.path, os.Remove(w.tmp.Name()))
}

// tempFor returns a new hidden temporary file beside target, named as Java
// names them (Path.createTempPath): ".<name>.<uuid>.tmp".
func (l *Local) tempFor(p, target string) (*os.File, error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, l.wrap("mkdir", p, err)
	}
	name := filepath.Join(dir, "."+filepath.Base(target)+"."+uuid.NewString()+".tmp")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, l.wrap("create", p, err)
	}
	return f, nil
}

// Create implements FileIO.
func (l *Local) Create(_ context.Context, p string) (Writer, error) {
	a, err := l.abs(p)
	if err != nil {
		return nil, err
	}
	tmp, err := l.tempFor(p, a)
	if err != nil {
		return nil, err
	}
	return &localWriter{l: l, path: p, target: a, tmp: tmp}, nil
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

// WriteExclusive implements FileIO with link(2): the complete temporary file
// is hard-linked to the target, which fails with EEXIST if anything is
// there, so a concurrent writer (of this or any other process) can never be
// overwritten and no reader sees a partial file.
func (l *Local) WriteExclusive(_ context.Context, p string, data []byte) error {
	a, err := l.abs(p)
	if err != nil {
		return err
	}
	tmp, err := l.tempFor(p, a)
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
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
	if err := os.Link(name, a); err != nil {
		return l.wrap("create exclusively", p, err)
	}
	syncDir(filepath.Dir(a))
	return nil
}

// syncDir makes a new directory entry durable; failures are ignored since
// some filesystems do not support fsync on directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Stat implements FileIO.
func (l *Local) Stat(_ context.Context, p string) (FileInfo, error) {
	a, err := l.abs(p)
	if err != nil {
		return FileInfo{}, err
	}
	st, err := os.Stat(a)
	if err != nil {
		return FileInfo{}, l.wrap("stat", p, err)
	}
	return FileInfo{Path: p, Size: st.Size(), ModTime: st.ModTime(), IsDir: st.IsDir()}, nil
}

// List implements FileIO.
func (l *Local) List(_ context.Context, dir string, recursive bool) ([]FileInfo, error) {
	a, err := l.abs(dir)
	if err != nil {
		return nil, err
	}
	dir = strings.TrimSuffix(dir, "/")
	join := func(rel string) string {
		if dir == "" {
			return rel
		}
		return dir + "/" + rel
	}
	var out []FileInfo
	if !recursive {
		ents, err := os.ReadDir(a)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, l.wrap("list", dir, err)
		}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				continue // removed while listing
			}
			out = append(out, FileInfo{Path: join(e.Name()), Size: info.Size(), ModTime: info.ModTime(), IsDir: e.IsDir()})
		}
		return out, nil
	}
	err = filepath.WalkDir(a, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(a, fp)
		out = append(out, FileInfo{Path: join(filepath.ToSlash(rel)), Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, l.wrap("list", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Delete implements FileIO.
func (l *Local) Delete(_ context.Context, p string) error {
	a, err := l.abs(p)
	if err != nil {
		return err
	}
	err = os.Remove(a)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return l.wrap("delete", p, err)
}
