package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// TestOutputFixedBucketSequences writes a fixed-bucket table with four
// batches in flight and checks that the sequence numbers of the files of
// each (partition, bucket) never overlap (the output encodes the batches of
// a fixed-bucket table one at a time and continues each bucket's numbers),
// and that every row is in the bucket its key hashes to (readable back).
func TestOutputFixedBucketSequences(t *testing.T) {
	const n = 30_000
	wh := t.TempDir()
	sb := eventsStream(t, n, eventsOutput(wh, `
      bucket: 4
      bucket_key: [ user ]
    max_in_flight: 4
    batching:
      count: 1000
      period: 200ms
`))
	runStream(t, sb, 2*time.Minute)

	tbl, rows := readTable(t, wh, "default", "events")
	checkEvents(t, tbl, rows, n)
	live := liveEntries(t, tbl)
	type span struct{ min, max int64 }
	byBucket := map[string][]span{}
	for _, e := range live {
		if e.TotalBuckets != 4 || e.Bucket < 0 || e.Bucket > 3 {
			t.Fatalf("file in bucket %d of %d", e.Bucket, e.TotalBuckets)
		}
		k := fmt.Sprintf("%x/%d", e.Partition, e.Bucket)
		byBucket[k] = append(byBucket[k], span{e.File.MinSequenceNumber, e.File.MaxSequenceNumber})
	}
	total := int64(0)
	for k, spans := range byBucket {
		sort.Slice(spans, func(i, j int) bool { return spans[i].min < spans[j].min })
		for i, s := range spans {
			total += s.max - s.min + 1
			if i > 0 && s.min <= spans[i-1].max {
				t.Errorf("bucket %s: sequence numbers %d..%d overlap %d..%d", k, s.min, s.max, spans[i-1].min, spans[i-1].max)
			}
		}
	}
	if total != n {
		t.Errorf("files cover %d sequence numbers, want %d (one per row)", total, n)
	}
	if len(byBucket) < 4 {
		t.Errorf("only %d (partition, bucket)s written", len(byBucket))
	}
}
