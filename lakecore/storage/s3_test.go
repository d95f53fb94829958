package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// reqKind names the S3 operation of a request.
func reqKind(r *http.Request) string {
	q := r.URL.Query()
	switch r.Method {
	case http.MethodPut:
		switch {
		case q.Has("partNumber"):
			return "UploadPart"
		case r.Header.Get("If-None-Match") != "":
			return "PutExclusive"
		case q.Has("x-id") && q.Get("x-id") != "PutObject":
			return q.Get("x-id")
		}
		return "PutObject"
	case http.MethodPost:
		if q.Has("uploads") {
			return "CreateMultipartUpload"
		}
		if q.Has("uploadId") {
			return "CompleteMultipartUpload"
		}
	case http.MethodDelete:
		if q.Has("uploadId") {
			return "AbortMultipartUpload"
		}
		return "DeleteObject"
	case http.MethodHead:
		return "HeadObject"
	case http.MethodGet:
		if q.Get("list-type") == "2" {
			return "ListObjectsV2"
		}
		if q.Has("uploads") {
			return "ListMultipartUploads"
		}
		return "GetObject"
	}
	return r.Method
}

// action is what a faultTransport does with one request.
type action int

const (
	pass           action = iota
	sendThenReset         // forward, then report a reset connection: applied, answer lost
	refuse                // a dial error: never sent
	stallAfterSend        // forward, then wait for the request's context to end
	status500
	status503
	status409Conflict
	status403
)

// faultTransport counts requests by kind and lets a test decide, per
// request, whether it passes, fails before or after reaching the server,
// or gets a made-up answer.
type faultTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen map[string]int
	// decide is called with the kind and its 1-based count; nil = pass.
	decide func(kind string, n int) action
	ranges []string // Range headers of GetObject requests, in order
}

func newFaultTransport() *faultTransport {
	return &faultTransport{base: http.DefaultTransport.(*http.Transport).Clone(), seen: map[string]int{}}
}

func (ft *faultTransport) count(kind string) int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.seen[kind]
}

func (ft *faultTransport) reset() {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.seen = map[string]int{}
	ft.ranges = nil
	ft.decide = nil
}

func (ft *faultTransport) setDecide(d func(kind string, n int) action) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.decide = d
}

func (ft *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := reqKind(r)
	ft.mu.Lock()
	ft.seen[kind]++
	n := ft.seen[kind]
	if kind == "GetObject" {
		ft.ranges = append(ft.ranges, r.Header.Get("Range"))
	}
	decide := ft.decide
	ft.mu.Unlock()
	act := pass
	if decide != nil {
		act = decide(kind, n)
	}
	switch act {
	case sendThenReset, stallAfterSend:
		resp, err := ft.base.RoundTrip(r)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if act == stallAfterSend {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	case refuse:
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case status500:
		return fakeResponse(r, 500, "InternalError"), nil
	case status503:
		return fakeResponse(r, 503, "SlowDown"), nil
	case status409Conflict:
		return fakeResponse(r, 409, "ConditionalRequestConflict"), nil
	case status403:
		return fakeResponse(r, 403, "AccessDenied"), nil
	}
	return ft.base.RoundTrip(r)
}

// when returns a if cond holds, else pass.
func when(cond bool, a action) action {
	if cond {
		return a
	}
	return pass
}

func fakeResponse(r *http.Request, code int, s3code string) *http.Response {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, s3code)
	return &http.Response{
		StatusCode:    code,
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/xml"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
}

// s3Env is one S3 FileIO on a fresh bucket with a fault transport.
type s3Env struct {
	fio    *storage.S3
	ft     *faultTransport
	cfg    storage.S3Config
	bucket string
}

func newS3Env(t *testing.T, base storage.S3Config, prefix string, tweak func(*storage.S3Config)) *s3Env {
	t.Helper()
	cfg := base
	ft := newFaultTransport()
	cfg.HTTPClient = &http.Client{Transport: ft}
	if tweak != nil {
		tweak(&cfg)
	}
	bucket := s3test.NewBucket(t, base)
	fio, err := storage.NewS3(context.Background(), bucket, prefix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &s3Env{fio: fio, ft: ft, cfg: cfg, bucket: bucket}
}

func isAmbiguous(err error) bool {
	return errors.Is(err, storage.ErrAmbiguous) && !errors.Is(err, storage.ErrExist)
}

// TestS3WriteExclusiveOutcomes maps every kind of failure of the
// conditional PUT, against a real server with a transport that injects
// faults. The client is built with 5 SDK attempts to prove that
// WriteExclusive does not let the SDK retry.
func TestS3WriteExclusiveOutcomes(t *testing.T) {
	base := s3test.Endpoint(t)
	ctx := context.Background()
	type want int
	const (
		created want = iota
		ambiguousApplied
		ambiguousNotApplied
		notWritten // a plain error: neither ErrExist nor ErrAmbiguous, nothing written
	)
	tests := []struct {
		name        string
		decide      func(kind string, n int) action
		timeout     time.Duration
		want        want
		putAttempts int
	}{
		{"lost answer after the write landed", func(k string, n int) action {
			return when(k == "PutExclusive" && n == 1, sendThenReset)
		}, 0, ambiguousApplied, 1},
		{"time-out after the write landed", func(k string, n int) action {
			return when(k == "PutExclusive" && n == 1, stallAfterSend)
		}, 300 * time.Millisecond, ambiguousApplied, 1},
		{"500 (maybe applied)", func(k string, n int) action { return status500 }, 0, ambiguousNotApplied, 1},
		{"503 (maybe applied)", func(k string, n int) action { return status503 }, 0, ambiguousNotApplied, 1},
		{"connection refused twice, then through", func(k string, n int) action {
			return when(n <= 2, refuse)
		}, 0, created, 3},
		{"connection refused always", func(k string, n int) action { return refuse }, 0, notWritten, 5},
		{"409 ConditionalRequestConflict once, then through", func(k string, n int) action {
			return when(n == 1, status409Conflict)
		}, 0, created, 2},
		{"409 ConditionalRequestConflict always", func(k string, n int) action { return status409Conflict }, 0, notWritten, 5},
		{"403", func(k string, n int) action { return status403 }, 0, notWritten, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newS3Env(t, base, "wh", func(c *storage.S3Config) {
				c.RetryMaxAttempts = 5
				c.RequestTimeout = tc.timeout
			})
			env.ft.setDecide(tc.decide)
			err := env.fio.WriteExclusive(ctx, "t/snapshot/snapshot-1", []byte("mine"))
			env.ft.setDecide(nil)
			if n := env.ft.count("PutExclusive"); n != tc.putAttempts {
				t.Errorf("%d conditional PUTs sent, want %d", n, tc.putAttempts)
			}
			got, rerr := env.fio.ReadFile(ctx, "t/snapshot/snapshot-1")
			switch tc.want {
			case created:
				if err != nil || string(got) != "mine" {
					t.Fatalf("err %v, content %q; want created", err, got)
				}
			case ambiguousApplied, ambiguousNotApplied:
				if !isAmbiguous(err) {
					t.Fatalf("err %v; want ErrAmbiguous and not ErrExist", err)
				}
				if tc.want == ambiguousApplied && string(got) != "mine" {
					t.Fatalf("the write should have landed: %q, %v", got, rerr)
				}
				if tc.want == ambiguousNotApplied && !errors.Is(rerr, storage.ErrNotExist) {
					t.Fatalf("the write should not have landed: %q, %v", got, rerr)
				}
			case notWritten:
				if err == nil || errors.Is(err, storage.ErrAmbiguous) || errors.Is(err, storage.ErrExist) {
					t.Fatalf("err %v; want a plain error", err)
				}
				if !errors.Is(rerr, storage.ErrNotExist) {
					t.Fatalf("something was written: %q, %v", got, rerr)
				}
			}
			if err != nil && !strings.Contains(err.Error(), "create exclusively s3://"+env.bucket+"/wh/t/snapshot/snapshot-1") {
				t.Errorf("error %q does not name the operation and object", err)
			}
			// Whatever happened, a second attempt now decides cleanly.
			err2 := env.fio.WriteExclusive(ctx, "t/snapshot/snapshot-1", []byte("again"))
			if tc.want == created || tc.want == ambiguousApplied {
				if !errors.Is(err2, storage.ErrExist) {
					t.Fatalf("second attempt: %v, want ErrExist", err2)
				}
			} else if err2 != nil {
				t.Fatalf("second attempt: %v, want success", err2)
			}
		})
	}
}

// TestS3SDKRetryTrap documents why WriteExclusive bypasses SDK retries: a
// plain conditional PutObject with the SDK's retries, whose first attempt
// lands but loses its answer, reports 412 for the caller's own write.
func TestS3SDKRetryTrap(t *testing.T) {
	base := s3test.Endpoint(t)
	env := newS3Env(t, base, "", func(c *storage.S3Config) { c.RetryMaxAttempts = 3 })
	env.ft.setDecide(func(k string, n int) action {
		return when(k == "PutExclusive" && n == 1, sendThenReset)
	})
	_, err := env.fio.Client().PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(env.bucket), Key: aws.String("k"), Body: strings.NewReader("mine"), IfNoneMatch: aws.String("*"),
	})
	var ae interface{ ErrorCode() string }
	if !errors.As(err, &ae) || ae.ErrorCode() != "PreconditionFailed" || env.ft.count("PutExclusive") != 2 {
		t.Fatalf("SDK with retries: %v after %d attempts; expected the retried PUT to get 412", err, env.ft.count("PutExclusive"))
	}
}

func TestS3ReadAhead(t *testing.T) {
	base := s3test.Endpoint(t)
	ctx := context.Background()
	env := newS3Env(t, base, "wh", nil)
	const size = 1 << 20
	data := payload(5, size)
	mustWrite(t, env.fio, "f", data)

	t.Run("sequential small reads double the window", func(t *testing.T) {
		env.ft.reset()
		f, err := env.fio.Open(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 4096)
		var got []byte
		for off := int64(0); off < size; off += 4096 {
			n, err := f.ReadAt(buf, off)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("content differs")
		}
		// 64 KiB, 128 KiB, 256 KiB, 512 KiB, then the last 64 KiB.
		want := []string{"bytes=0-65535", "bytes=65536-196607", "bytes=196608-458751", "bytes=458752-983039", "bytes=983040-1048575"}
		if strings.Join(env.ft.ranges, " ") != strings.Join(want, " ") {
			t.Fatalf("GETs %q, want %q", env.ft.ranges, want)
		}
		if env.ft.count("HeadObject") != 1 {
			t.Fatalf("%d HEADs, want 1", env.ft.count("HeadObject"))
		}
	})
	t.Run("footer reads", func(t *testing.T) {
		env.ft.reset()
		f, err := env.fio.Open(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tail := make([]byte, 8)
		footer := make([]byte, 30_000)
		if _, err := f.ReadAt(tail, size-8); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ReadAt(footer, size-8-30_000); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tail, data[size-8:]) || !bytes.Equal(footer, data[size-8-30_000:size-8]) {
			t.Fatal("content differs")
		}
		if len(env.ft.ranges) != 1 || env.ft.ranges[0] != "bytes=983040-1048575" {
			t.Fatalf("GETs %q, want one of the last 64 KiB", env.ft.ranges)
		}
	})
	t.Run("interleaved column chunks keep their windows", func(t *testing.T) {
		env.ft.reset()
		f, err := env.fio.Open(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Three "columns" read in turns, 1 KiB at a time, 64 KiB each.
		starts := []int64{0, 300_000, 700_000}
		buf := make([]byte, 1024)
		for i := int64(0); i < 64; i++ {
			for _, s := range starts {
				if _, err := f.ReadAt(buf, s+i*1024); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, data[s+i*1024:s+i*1024+1024]) {
					t.Fatal("content differs")
				}
			}
		}
		if len(env.ft.ranges) != 3 {
			t.Fatalf("GETs %q, want one per column", env.ft.ranges)
		}
	})
	t.Run("a replaced object fails instead of mixing versions", func(t *testing.T) {
		f, err := env.fio.Open(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.ReadAt(make([]byte, 10), 0); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, env.fio, "f", payload(6, size))
		_, err = f.ReadAt(make([]byte, 10), 500_000)
		if err == nil || !strings.Contains(err.Error(), "replaced since it was opened") {
			t.Fatalf("read after replace: %v", err)
		}
		mustWrite(t, env.fio, "f", data)
	})
}

func TestS3Multipart(t *testing.T) {
	base := s3test.Endpoint(t)
	ctx := context.Background()
	env := newS3Env(t, base, "wh", nil)
	countAll := func() map[string]int {
		env.ft.mu.Lock()
		defer env.ft.mu.Unlock()
		m := map[string]int{}
		for k, v := range env.ft.seen {
			m[k] = v
		}
		return m
	}
	write := func(p string, n int) *storage.S3 {
		t.Helper()
		w, err := env.fio.Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(payload(uint64(n), n)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return env.fio
	}
	t.Run("below one part: one PutObject", func(t *testing.T) {
		env.ft.reset()
		write("small", 7<<20)
		got := countAll()
		if got["PutObject"] != 1 || got["CreateMultipartUpload"] != 0 || got["UploadPart"] != 0 {
			t.Fatalf("requests %v", got)
		}
	})
	t.Run("20 MiB: three parts", func(t *testing.T) {
		env.ft.reset()
		write("big", 20<<20)
		got := countAll()
		if got["PutObject"] != 0 || got["CreateMultipartUpload"] != 1 || got["UploadPart"] != 3 || got["CompleteMultipartUpload"] != 1 {
			t.Fatalf("requests %v", got)
		}
		if b := mustRead(t, env.fio, "big"); !bytes.Equal(b, payload(20<<20, 20<<20)) {
			t.Fatal("content differs")
		}
	})
	t.Run("exactly two parts", func(t *testing.T) {
		env.ft.reset()
		write("two", 16<<20)
		got := countAll()
		if got["UploadPart"] != 2 || got["CompleteMultipartUpload"] != 1 {
			t.Fatalf("requests %v", got)
		}
		if b := mustRead(t, env.fio, "two"); !bytes.Equal(b, payload(16<<20, 16<<20)) {
			t.Fatal("content differs")
		}
	})
	listUploads := func() int {
		out, err := env.fio.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(env.bucket)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	t.Run("abort leaves no upload", func(t *testing.T) {
		env.ft.reset()
		w, err := env.fio.Create(ctx, "aborted")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(payload(1, 9<<20)); err != nil {
			t.Fatal(err)
		}
		if n := listUploads(); n != 1 {
			t.Fatalf("%d uploads in progress, want 1", n)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if n := listUploads(); n != 0 || env.ft.count("AbortMultipartUpload") != 1 {
			t.Fatalf("%d uploads left, %d aborts", n, env.ft.count("AbortMultipartUpload"))
		}
		if _, err := env.fio.Stat(ctx, "aborted"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("aborted file visible: %v", err)
		}
	})
	t.Run("failed part: Close fails and aborts", func(t *testing.T) {
		env.ft.reset()
		env.ft.setDecide(func(k string, n int) action {
			return when(k == "UploadPart" && n == 2, status403)
		})
		w, err := env.fio.Create(ctx, "failed")
		if err != nil {
			t.Fatal(err)
		}
		_, werr := w.Write(payload(2, 17<<20))
		cerr := w.Close()
		if werr == nil && cerr == nil {
			t.Fatal("no error from Write or Close")
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		env.ft.setDecide(nil)
		if n := listUploads(); n != 0 {
			t.Fatalf("%d uploads left", n)
		}
		if _, err := env.fio.Stat(ctx, "failed"); !errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("failed file visible: %v", err)
		}
	})
	t.Run("lost answer to Complete", func(t *testing.T) {
		// The first Complete lands but its answer is lost; the SDK's retry
		// gets NoSuchUpload; the writer recognises its object by ETag.
		env.ft.reset()
		env.ft.setDecide(func(k string, n int) action {
			return when(k == "CompleteMultipartUpload" && n == 1, sendThenReset)
		})
		w, err := env.fio.Create(ctx, "lost")
		if err != nil {
			t.Fatal(err)
		}
		data := payload(3, 9<<20)
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v (Complete sent %d times)", err, env.ft.count("CompleteMultipartUpload"))
		}
		if env.ft.count("CompleteMultipartUpload") != 2 {
			t.Fatalf("Complete sent %d times, want 2", env.ft.count("CompleteMultipartUpload"))
		}
		if b := mustRead(t, env.fio, "lost"); !bytes.Equal(b, data) {
			t.Fatal("content differs")
		}
	})
}

func TestS3LayoutAndErrors(t *testing.T) {
	base := s3test.Endpoint(t)
	ctx := context.Background()
	env := newS3Env(t, base, "/wh/lake/", nil)
	if env.fio.String() != "s3://"+env.bucket+"/wh/lake" || env.fio.Prefix() != "wh/lake" {
		t.Fatalf("String %s, Prefix %s", env.fio, env.fio.Prefix())
	}
	mustWrite(t, env.fio, "db.db/t/schema/schema-0", []byte("{}"))
	raw := env.fio.Client()
	out, err := raw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(env.bucket)})
	if err != nil || len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "wh/lake/db.db/t/schema/schema-0" {
		t.Fatalf("keys %v, %v", out.Contents, err)
	}
	// A directory marker (made by other tools) is not a file.
	if _, err := raw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(env.bucket), Key: aws.String("wh/lake/db.db/marker/"), Body: strings.NewReader("")}); err != nil {
		t.Fatal(err)
	}
	got, err := env.fio.List(ctx, "db.db", true)
	if err != nil || len(got) != 1 || got[0].Path != "db.db/t/schema/schema-0" {
		t.Fatalf("List = %+v, %v", got, err)
	}

	_, err = env.fio.Stat(ctx, "db.db/missing")
	if !errors.Is(err, storage.ErrNotExist) || !strings.HasPrefix(err.Error(), "stat s3://"+env.bucket+"/wh/lake/db.db/missing: ") {
		t.Fatalf("Stat missing: %v", err)
	}
	_, err = env.fio.ReadFile(ctx, "db.db/missing")
	if !errors.Is(err, storage.ErrNotExist) || !strings.HasPrefix(err.Error(), "read s3://"+env.bucket+"/wh/lake/db.db/missing: ") {
		t.Fatalf("ReadFile missing: %v", err)
	}

	t.Run("missing bucket is not a missing file", func(t *testing.T) {
		cfg := base
		fio, err := storage.NewS3(ctx, "bp-no-such-bucket-x1", "", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fio.ReadFile(ctx, "f"); err == nil || errors.Is(err, storage.ErrNotExist) {
			t.Fatalf("ReadFile: %v, want an error other than ErrNotExist", err)
		}
		if _, err := fio.List(ctx, "", true); err == nil {
			t.Fatal("List of a missing bucket succeeded")
		}
		if err := fio.WriteExclusive(ctx, "f", nil); err == nil || errors.Is(err, storage.ErrAmbiguous) || errors.Is(err, storage.ErrExist) {
			t.Fatalf("WriteExclusive: %v, want a plain error", err)
		}
	})
	t.Run("bad credentials", func(t *testing.T) {
		cfg := base
		cfg.SecretAccessKey = "wrong"
		fio, err := storage.NewS3(ctx, env.bucket, "wh/lake", cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fio.ReadFile(ctx, "db.db/t/schema/schema-0")
		if err == nil || errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "403") {
			t.Fatalf("ReadFile: %v, want 403", err)
		}
		if err := fio.WriteExclusive(ctx, "x", nil); err == nil || errors.Is(err, storage.ErrAmbiguous) || errors.Is(err, storage.ErrExist) {
			t.Fatalf("WriteExclusive: %v, want a plain error", err)
		}
	})
	t.Run("Open by URI", func(t *testing.T) {
		for _, scheme := range []string{"s3", "s3a"} {
			fio, err := storage.Open(ctx, scheme+"://"+env.bucket+"/wh/lake", base)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := fio.ReadFile(ctx, "db.db/t/schema/schema-0"); err != nil || string(b) != "{}" {
				t.Fatalf("%s: %q, %v", scheme, b, err)
			}
		}
	})
}

func TestS3Config(t *testing.T) {
	ctx := context.Background()
	bad := []storage.S3Config{
		{PartSize: 1 << 20},
		{Endpoint: "127.0.0.1:7070"},
		{Endpoint: "ftp://x"},
		{AccessKeyID: "k"},
		{ListPageSize: -1},
	}
	for _, c := range bad {
		if _, err := storage.NewS3(ctx, "b", "", c); err == nil {
			t.Errorf("NewS3 accepted %+v", c)
		}
	}
	for _, b := range []string{"", "a/b"} {
		if _, err := storage.NewS3(ctx, b, "", storage.S3Config{Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}); err == nil {
			t.Errorf("NewS3 accepted bucket %q", b)
		}
	}
	if _, err := storage.NewS3(ctx, "b", "a//b", storage.S3Config{Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("NewS3 with prefix a//b: %v", err)
	}
	s, err := storage.NewS3(ctx, "b", "", storage.S3Config{Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1025)
	if err := s.WriteFile(ctx, long, nil); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("key of 1025 bytes: %v", err)
	}
}
