package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

func TestSplitURI(t *testing.T) {
	tests := []struct {
		uri                  string
		scheme, bucket, path string
		err                  error // nil = ok; errAny = some error
	}{
		{uri: "/lake", path: "/lake"},
		{uri: "lake/wh", path: "lake/wh"},
		{uri: "a:b", path: "a:b"},
		{uri: "C:/x", path: "C:/x"},
		{uri: "dir/x:y", path: "dir/x:y"},
		{uri: "file:///lake", scheme: "file", path: "/lake"},
		{uri: "file:/lake", scheme: "file", path: "/lake"},
		{uri: "file://localhost/lake", scheme: "file", path: "/lake"},
		{uri: "FILE:///lake", scheme: "file", path: "/lake"},
		{uri: "file:///my%20lake", scheme: "file", path: "/my%20lake"},
		{uri: "s3://bucket/a/b", scheme: "s3", bucket: "bucket", path: "a/b"},
		{uri: "s3://bucket/a/b/", scheme: "s3", bucket: "bucket", path: "a/b"},
		{uri: "s3://bucket", scheme: "s3", bucket: "bucket"},
		{uri: "s3://bucket/", scheme: "s3", bucket: "bucket"},
		{uri: "s3a://bucket/wh", scheme: "s3a", bucket: "bucket", path: "wh"},
		{uri: "s3n://bucket/wh", scheme: "s3n", bucket: "bucket", path: "wh"},
		{uri: "s3://bucket/dt=1/x y", scheme: "s3", bucket: "bucket", path: "dt=1/x y"},
		{uri: "", err: errAny},
		{uri: "hdfs://nn/x", err: storage.ErrUnsupportedScheme},
		{uri: "oss://b/x", err: storage.ErrUnsupportedScheme},
		{uri: "s3:bucket/x", err: errAny},
		{uri: "s3:///x", err: errAny},
		{uri: "file://remote/x", err: errAny},
		{uri: "file:relative", err: errAny},
	}
	for _, tc := range tests {
		scheme, bucket, p, err := storage.SplitURI(tc.uri)
		switch {
		case tc.err == nil && err != nil:
			t.Errorf("SplitURI(%q): %v", tc.uri, err)
		case tc.err == errAny && err == nil, tc.err != nil && tc.err != errAny && !errors.Is(err, tc.err):
			t.Errorf("SplitURI(%q) = %q %q %q, %v; want error %v", tc.uri, scheme, bucket, p, err, tc.err)
		case tc.err == nil && (scheme != tc.scheme || bucket != tc.bucket || p != tc.path):
			t.Errorf("SplitURI(%q) = %q %q %q, want %q %q %q", tc.uri, scheme, bucket, p, tc.scheme, tc.bucket, tc.path)
		}
	}
}

var errAny = errors.New("any error")

func TestOpenLocal(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "wh")
	for _, uri := range []string{dir, "file://" + dir, "file:" + dir} {
		fio, err := storage.Open(ctx, uri, storage.S3Config{})
		if err != nil {
			t.Fatal(err)
		}
		l, ok := fio.(*storage.Local)
		if !ok || l.Root() != dir {
			t.Fatalf("Open(%q) = %T %v", uri, fio, fio)
		}
	}
	if _, err := storage.Open(ctx, "gs://b/x", storage.S3Config{}); !errors.Is(err, storage.ErrUnsupportedScheme) {
		t.Fatalf("gs: %v", err)
	}
	fio, err := storage.Open(ctx, "s3a://bucket/wh/", storage.S3Config{Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := fio.(*storage.S3); !ok || s.String() != "s3://bucket/wh" {
		t.Fatalf("Open s3a = %T %v", fio, fio)
	}
}

func TestValidatePath(t *testing.T) {
	good := []string{"a", "a/b", "db.db/t/dt=2024-01-01/x y/%20/ü", "..a", "a..", ".hidden", `a\b`, "a/.b/c"}
	bad := []string{"", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "../a", "a\x00b", "\xff"}
	for _, p := range good {
		if err := storage.ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q): %v", p, err)
		}
	}
	for _, p := range bad {
		if err := storage.ValidatePath(p); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("ValidatePath(%q): %v, want ErrInvalidPath", p, err)
		}
	}
}

func FuzzSplitURI(f *testing.F) {
	for _, s := range []string{"/lake", "file:///x", "file:/x", "s3://b/p", "s3a://b", "hdfs://x", "a:b", "s3:///", "file://h/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		scheme, bucket, p, err := storage.SplitURI(uri)
		if err != nil {
			return
		}
		switch scheme {
		case "s3", "s3a", "s3n":
			if bucket == "" {
				t.Fatalf("%q: s3 without bucket", uri)
			}
		case "file":
			if bucket != "" || p == "" || p[0] != '/' {
				t.Fatalf("%q: file URI gave %q %q", uri, bucket, p)
			}
		case "":
			if p != uri {
				t.Fatalf("%q: plain path changed to %q", uri, p)
			}
		default:
			t.Fatalf("%q: unexpected scheme %q", uri, scheme)
		}
	})
}

func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"a/b", "a//b", "../x", "db.db/t/dt=1/f", "", "/", "a/."} {
		f.Add(s)
	}
	ctx := context.Background()
	l, err := storage.NewLocal(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if storage.ValidatePath(p) != nil {
			return
		}
		// A valid path stays inside the root: Stat either finds nothing or
		// fails for a reason other than the path.
		if _, err := l.Stat(ctx, p); errors.Is(err, storage.ErrInvalidPath) {
			t.Fatalf("%q: valid path rejected by Local: %v", p, err)
		}
	})
}
