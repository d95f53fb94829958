package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// inCheckOrder checks what the input delivered: each row at most once
// (exactly once when exact), tagged with the snapshot that committed it,
// snapshots in id order, and within one (partition, bucket) ids in write
// order.
func inCheckOrder(t *testing.T, it *inTable, msgs []inMsg, exact bool) {
	t.Helper()
	seen := map[int64]int{}
	lastSnap := int64(0)
	lastInBucket := map[string]int64{}
	for _, m := range msgs {
		seen[m.id]++
		if want := it.snapshotOf(m.id); m.snapshot != want {
			t.Errorf("row %d tagged snapshot %d, committed by %d", m.id, m.snapshot, want)
		}
		if m.snapshot < lastSnap {
			t.Errorf("row %d of snapshot %d after a row of snapshot %d", m.id, m.snapshot, lastSnap)
		}
		lastSnap = m.snapshot
		key := fmt.Sprintf("%s/%d", m.partition, m.bucket)
		if prev, ok := lastInBucket[key]; ok && m.id <= prev {
			t.Errorf("bucket %s: row %d after row %d", key, m.id, prev)
		}
		lastInBucket[key] = m.id
	}
	if !exact {
		return
	}
	for id := int64(0); id < int64(it.total()); id++ {
		if seen[id] != 1 {
			t.Errorf("row %d delivered %d times, want once", id, seen[id])
		}
	}
	if len(seen) != it.total() {
		t.Errorf("%d distinct rows delivered, %d written", len(seen), it.total())
	}
}

// tailWhileCommitting tails it with the input fields extra while commit
// writes snapshots, waits for every row committed, stops the stream and
// checks what arrived with inCheckOrder (exact).
func tailWhileCommitting(t *testing.T, it *inTable, extra string, commit func(context.Context)) {
	t.Helper()
	col := newInCollector()
	stop, runErr := inStream(t, nil, it.inputYAML(extra),
		func(_ context.Context, b service.MessageBatch) error { col.add(t, b); return nil })
	commit(context.Background())
	col.expect(it.total())
	col.wait(t, 60*time.Second)
	if err := stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runErr; err != nil {
		t.Fatalf("run: %v", err)
	}
	inCheckOrder(t, it, col.snapshot(), true)
}

// TestInputTailsContinuousWriter: a writer commits 60 snapshots of 1-25
// rows while the input tails the table from its creation: every row arrives
// exactly once, tagged with its snapshot, snapshots in order, rows of a
// bucket in write order.
func TestInputTailsContinuousWriter(t *testing.T) {
	it := newInTable(t, t.TempDir(), inNoS3)
	rng := rand.New(rand.NewPCG(1, 2))
	tailWhileCommitting(t, it, "  discovery_interval: 20ms\n  batch_size: 7\n  consumer_id: tail\n", func(ctx context.Context) {
		for range 60 {
			if _, err := it.commit(ctx, 1+rng.IntN(25)); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(4) == 0 {
				time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // let the reader catch up sometimes
			}
		}
	})
	if pos := it.consumer("tail"); pos != 61 {
		t.Errorf("consumer after every row was acked: %d, want 61", pos)
	}
}

// TestInputRestartResumes: the first run tails while a writer commits; it
// acks everything before snapshot 12 and the first batch of snapshot 12,
// then rejects every batch (replayed forever) until it is stopped, like a
// crashed pipeline. The second run with the same consumer_id resumes at
// snapshot 12: nothing is lost, and the only rows delivered twice are the
// ones of snapshot 12's acked first batch.
func TestInputRestartResumes(t *testing.T) {
	it := newInTable(t, t.TempDir(), inNoS3)
	ctx := context.Background()
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := range 30 {
			if _, err := it.commit(ctx, 12); err != nil {
				t.Error(err)
				return
			}
			if i%5 == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	const crashAt = 12
	conf := it.inputYAML("  discovery_interval: 20ms\n  batch_size: 5\n  consumer_id: restart\n")

	var mu sync.Mutex
	var first []inMsg
	crashed := make(chan struct{})
	var crashOnce sync.Once
	batchesOf12 := 0
	stop, runErr := inStream(t, nil, conf, func(_ context.Context, b service.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		m := inDecode(t, b[0])
		if m.snapshot == crashAt {
			batchesOf12++
		}
		if m.snapshot > crashAt || (m.snapshot == crashAt && batchesOf12 > 1) {
			crashOnce.Do(func() { close(crashed) })
			return errors.New("downstream is down")
		}
		for _, msg := range b {
			first = append(first, inDecode(t, msg))
		}
		return nil
	})
	select {
	case <-crashed:
	case <-time.After(60 * time.Second):
		t.Fatal("the first run never reached snapshot 12")
	}
	_ = stop(time.Second) // pending acks never resolve: a hard stop, like a crash
	<-runErr
	if pos := it.consumer("restart"); pos != crashAt {
		t.Fatalf("consumer after the first run: %d, want %d (snapshot 12 was not fully acked)", pos, crashAt)
	}
	writer.Wait()

	col := newInCollector()
	stop, runErr = inStream(t, nil, conf+"  bounded: true\n", func(_ context.Context, b service.MessageBatch) error {
		col.add(t, b)
		return nil
	})
	if err := <-runErr; err != nil {
		t.Fatalf("second run: %v", err)
	}
	_ = stop
	second := col.snapshot()
	if len(second) == 0 || second[0].snapshot != crashAt {
		t.Fatalf("second run starts at snapshot %v, want %d", second[:min(1, len(second))], crashAt)
	}
	inCheckOrder(t, it, first, false)
	inCheckOrder(t, it, second, false)
	count := map[int64]int{}
	for _, m := range append(append([]inMsg(nil), first...), second...) {
		count[m.id]++
	}
	var dup []int64
	for id := int64(0); id < int64(it.total()); id++ {
		switch count[id] {
		case 1:
		case 2:
			dup = append(dup, id)
		default:
			t.Errorf("row %d delivered %d times", id, count[id])
		}
	}
	sort.Slice(dup, func(i, j int) bool { return dup[i] < dup[j] })
	var firstBatchOf12 []int64
	for _, m := range first {
		if m.snapshot == crashAt {
			firstBatchOf12 = append(firstBatchOf12, m.id)
		}
	}
	sort.Slice(firstBatchOf12, func(i, j int) bool { return firstBatchOf12[i] < firstBatchOf12[j] })
	if len(firstBatchOf12) != 5 || fmt.Sprint(dup) != fmt.Sprint(firstBatchOf12) {
		t.Errorf("duplicates %v, want exactly the 5 rows of snapshot 12's acked batch %v", dup, firstBatchOf12)
	}
	if pos := it.consumer("restart"); pos != 31 {
		t.Errorf("consumer after the second run: %d, want 31", pos)
	}
}

// TestInputTailsS3: the same as TestInputTailsContinuousWriter on the S3
// test server, with 15 snapshots and the consumer kept in the bucket.
func TestInputTailsS3(t *testing.T) {
	cfg, bucket := s3test.Server(t)
	it := newInTable(t, "s3://"+bucket+"/wh", cfg)
	tailWhileCommitting(t, it, "  discovery_interval: 50ms\n  batch_size: 4\n  consumer_id: s3tail\n", func(ctx context.Context) {
		for i := range 15 {
			if _, err := it.commit(ctx, 1+i%7); err != nil {
				t.Fatal(err)
			}
		}
	})
	if pos := it.consumer("s3tail"); pos != 16 {
		t.Errorf("consumer: %d, want 16", pos)
	}
}
