package write

import (
	"context"
	"fmt"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// TestKeyValueWriteBufferSharedByBuckets: write-buffer-size bounds the
// buffered changes of all buckets together, and when they reach it the
// fullest bucket other than the one being written is flushed or spilled
// (Java's MemoryPoolFactory.preemptMemory), or that one itself when the
// others hold nothing.
func TestKeyValueWriteBufferSharedByBuckets(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		buckets    int
		bufferSize string
		spillable  bool
	}{{1, "16kb", false}, {4, "16kb", false}, {4, "64kb", false}, {4, "16kb", true}} {
		t.Run(fmt.Sprintf("bucket=%d write-buffer-size=%s spillable=%v", c.buckets, c.bufferSize, c.spillable), func(t *testing.T) {
			w := newBufferTestWriter(t, map[string]string{"bucket": fmt.Sprint(c.buckets), "write-buffer-size": c.bufferSize,
				"write-buffer-spillable": fmt.Sprint(c.spillable)}, t.TempDir())
			var flushes, preempted int
			type state struct{ bytes, seq int64 }
			for i := range 3000 {
				before := map[*kvBucket]state{}
				for _, b := range w.order {
					before[b] = state{b.bufBytes, b.seq}
				}
				if err := w.Write(ctx, kv.Insert, []any{int64(i), fmt.Sprintf("value-%d", i), int32(i)}); err != nil {
					t.Fatal(err)
				}
				var sum int64
				var written, flushed *kvBucket
				for _, b := range w.order {
					sum += b.bufBytes
					old, ok := before[b]
					if !ok || b.seq > old.seq {
						written = b
						if ok && b.bufBytes == 0 {
							flushed = b
						}
					} else if b.bufBytes == 0 && old.bytes > 0 {
						flushed = b
					}
				}
				if sum != w.buffered || w.buffered >= w.bufferSize {
					t.Fatalf("write %d: buckets hold %d, the writer counts %d, budget %d", i, sum, w.buffered, w.bufferSize)
				}
				if flushed == nil {
					continue
				}
				flushes++
				// The victim held the most among the others before the write,
				// or it is the bucket written when the others held nothing.
				var most int64
				for b, st := range before {
					if b != written {
						most = max(most, st.bytes)
					}
				}
				switch {
				case most == 0 && flushed != written:
					t.Fatalf("write %d: the other buckets were empty, yet not the bucket written was flushed", i)
				case most > 0 && (flushed == written || before[flushed].bytes != most):
					t.Fatalf("write %d: flushed a bucket holding %d bytes, the fullest other held %d", i, before[flushed].bytes, most)
				case most > 0:
					preempted++
				}
			}
			if flushes == 0 || (c.buckets > 1) != (preempted > 0) {
				t.Errorf("%d flushes, %d of another bucket than the one written", flushes, preempted)
			}
			t.Logf("%d flushes, %d preempting another bucket", flushes, preempted)
		})
	}
}
