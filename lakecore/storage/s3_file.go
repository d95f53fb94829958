package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// maxWindows is how many read-ahead windows one open file keeps: a Parquet
// reader interleaves the column chunks of a row group, so a single window
// would thrash.
const maxWindows = 4

// s3File reads an object with ranged GETs. A read that misses the cached
// windows fetches at least the read-ahead size; a miss that continues
// exactly where a window ends doubles that window (up to MaxReadAhead), so
// sequential small reads become few large GETs. A new window that would
// run past the end of the object extends backwards instead, so the footer
// of a Parquet file arrives with its 8-byte tail. Reads of MaxReadAhead or
// more go straight into the caller's buffer.
type s3File struct {
	ctx  context.Context
	s    *S3
	path string
	size int64
	etag *string

	mu      sync.Mutex
	windows []*window
	tick    uint64
	closed  bool
}

type window struct {
	off  int64
	data []byte
	used uint64
}

func (w *window) end() int64 { return w.off + int64(len(w.data)) }

func newS3File(ctx context.Context, s *S3, p string, size int64, etag *string) *s3File {
	return &s3File{ctx: ctx, s: s, path: p, size: size, etag: etag}
}

func (f *s3File) Size() int64 { return f.size }

func (f *s3File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.windows = nil
	return nil
}

// ReadAt implements io.ReaderAt; it is safe for concurrent use.
func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", f.s.uri(f.path), off)
	}
	if off >= f.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := int(min(int64(len(p)), f.size-off))
	n := 0
	for n < want {
		cur := off + int64(n)
		c, size, sequential, err := f.fromCache(p[n:want], cur)
		if err != nil {
			return n, err
		}
		if c > 0 {
			n += c
			continue
		}
		rest := int64(want - n)
		if rest >= MaxReadAhead {
			if err := f.fetch(p[n:want], cur); err != nil {
				return n, err
			}
			n = want
			break
		}
		size = max(size, rest)
		start, end := cur, min(f.size, cur+size)
		if !sequential && end-start < size {
			start = max(0, end-size)
		}
		buf := make([]byte, end-start)
		if err := f.fetch(buf, start); err != nil {
			return n, err
		}
		f.store(&window{off: start, data: buf})
	}
	if want < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fromCache copies what a window holds at off into p. On a miss it returns
// the size of the window to fetch, doubled if off continues a window
// (sequential).
func (f *s3File) fromCache(p []byte, off int64) (n int, size int64, sequential bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, 0, false, fmt.Errorf("read %s: %w", f.s.uri(f.path), errors.New("file already closed"))
	}
	f.tick++
	size = f.s.cfg.ReadAhead
	for _, w := range f.windows {
		if off >= w.off && off < w.end() {
			w.used = f.tick
			return copy(p, w.data[off-w.off:]), 0, false, nil
		}
		if off == w.end() {
			size = max(size, min(2*int64(len(w.data)), MaxReadAhead))
			sequential = true
		}
	}
	return 0, size, sequential, nil
}

// store caches w, replacing a window it continues or else the least
// recently used one.
func (f *s3File) store(w *window) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.tick++
	w.used = f.tick
	for i, old := range f.windows {
		if old.end() == w.off || (old.off >= w.off && old.end() <= w.end()) {
			f.windows[i] = w
			return
		}
	}
	if len(f.windows) < maxWindows {
		f.windows = append(f.windows, w)
		return
	}
	lru := 0
	for i, old := range f.windows {
		if old.used < f.windows[lru].used {
			lru = i
		}
	}
	f.windows[lru] = w
}

// fetch fills p with the bytes at off by one ranged GET, pinned to the
// ETag the file was opened with.
func (f *s3File) fetch(p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	ctx, cancel := f.s.callCtx(f.ctx)
	defer cancel()
	rng := fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1)
	out, err := f.s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket:  &f.s.bucket,
		Key:     aws.String(f.s.key(f.path)),
		Range:   aws.String(rng),
		IfMatch: f.etag,
	})
	if err != nil {
		if httpStatus(err) == 412 {
			return fmt.Errorf("read %s (%s): object replaced since it was opened: %w", f.s.uri(f.path), rng, err)
		}
		return f.s.fail(fmt.Sprintf("read (%s)", rng), f.path, err)
	}
	defer out.Body.Close()
	if n := aws.ToInt64(out.ContentLength); out.ContentLength != nil && n != int64(len(p)) {
		return fmt.Errorf("read %s (%s): server sent %d bytes", f.s.uri(f.path), rng, n)
	}
	if _, err := io.ReadFull(out.Body, p); err != nil {
		return fmt.Errorf("read %s (%s): %w", f.s.uri(f.path), rng, err)
	}
	return nil
}
