package storage_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// benchFS returns the implementations to benchmark: Local always, S3 when
// a server is available.
func benchFS(b *testing.B) map[string]func(b *testing.B) storage.FileIO {
	m := map[string]func(b *testing.B) storage.FileIO{
		"local": func(b *testing.B) storage.FileIO {
			l, err := storage.NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return l
		},
	}
	m["s3"] = func(b *testing.B) storage.FileIO {
		cfg, bucket := s3test.Server(b)
		s, err := storage.NewS3(context.Background(), bucket, "wh", cfg)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	return m
}

// BenchmarkWriteExclusive: one snapshot-sized exclusive create per op.
func BenchmarkWriteExclusive(b *testing.B) {
	for name, mk := range benchFS(b) {
		b.Run(name, func(b *testing.B) {
			fio := mk(b)
			data := payload(1, 2048)
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			i := 0
			for b.Loop() {
				if err := fio.WriteExclusive(ctx, fmt.Sprintf("snapshot/snapshot-%d", i), data); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkCreate20MiB streams a data-file-sized object (multipart on S3).
func BenchmarkCreate20MiB(b *testing.B) {
	for name, mk := range benchFS(b) {
		b.Run(name, func(b *testing.B) {
			fio := mk(b)
			ctx := context.Background()
			chunk := payload(2, 1<<20)
			b.SetBytes(20 << 20)
			for b.Loop() {
				w, err := fio.Create(ctx, "data/f.parquet")
				if err != nil {
					b.Fatal(err)
				}
				for range 20 {
					if _, err := w.Write(chunk); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSequentialReadAt scans an 8 MiB file in 8 KiB ReadAt calls, as
// a Parquet page reader does.
func BenchmarkSequentialReadAt(b *testing.B) {
	for name, mk := range benchFS(b) {
		b.Run(name, func(b *testing.B) {
			fio := mk(b)
			ctx := context.Background()
			const size = 8 << 20
			if err := fio.WriteFile(ctx, "f", payload(3, size)); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 8192)
			b.SetBytes(size)
			for b.Loop() {
				f, err := fio.Open(ctx, "f")
				if err != nil {
					b.Fatal(err)
				}
				for off := int64(0); off < size; off += int64(len(buf)) {
					if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
						b.Fatal(err)
					}
				}
				f.Close()
			}
		})
	}
}
