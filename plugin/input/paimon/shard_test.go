package paimon

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// shardedTail is n inputs reading one table as shards 0..n-1 of n, each
// with consumer_id tail, in goroutines that ack every batch.
type shardedTail struct {
	t        *testing.T
	ins      []*Input
	progress []chan int64 // tracker positions, after each ack and each time a reader is idle
	mu       sync.Mutex
	msgs     [][]kvMsg // per shard, in arrival order
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopped  sync.Once
}

func startShards(t *testing.T, tt *testTable, n int, extra string) *shardedTail {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st := &shardedTail{t: t, cancel: cancel, msgs: make([][]kvMsg, n)}
	t.Cleanup(st.stop)
	for i := range n {
		in := newInput(t, tt.yaml(fmt.Sprintf("consumer_id: tail\ndiscovery_interval: 5ms\nbatch_size: 7\nshard: {count: %d, index: %d}\n%s", n, i, extra)))
		progress := make(chan int64, 1)
		// Report the position each time the reader has caught up (it then
		// has sealed every plan it read), then wait as the reader would.
		in.idle = func(ctx context.Context, d time.Duration) bool {
			select {
			case progress <- in.tracker.Position():
			case <-ctx.Done():
				return false
			}
			tm := time.NewTimer(d)
			defer tm.Stop()
			select {
			case <-tm.C:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		st.ins = append(st.ins, in)
		st.progress = append(st.progress, progress)
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			for {
				b, ack, err := in.ReadBatch(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					t.Errorf("shard %d: %v", i, err)
					return
				}
				st.mu.Lock()
				for _, m := range b {
					km := decodeKV(t, m)
					km.shardFrom = i
					st.msgs[i] = append(st.msgs[i], km)
				}
				st.mu.Unlock()
				if err := ack(context.Background(), nil); err != nil {
					t.Errorf("shard %d: ack: %v", i, err)
				}
				select {
				case progress <- in.tracker.Position():
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return st
}

// waitPosition waits until every shard's position is past snapshot last,
// then stops the shards.
func (st *shardedTail) waitPosition(last int64) {
	st.t.Helper()
	timeout := time.After(30 * time.Second)
	for i, p := range st.progress {
		for done := false; !done; {
			select {
			case pos := <-p:
				done = pos > last
			case <-timeout:
				st.t.Fatalf("shard %d did not get past snapshot %d", i, last)
			}
		}
	}
	st.stop()
}

// stop stops the shards' goroutines and closes the inputs, once.
func (st *shardedTail) stop() {
	st.stopped.Do(func() {
		st.cancel()
		st.wg.Wait()
		for _, in := range st.ins {
			_ = in.Close(context.Background())
		}
	})
}

// TestShardsTailTogether: three shards tail a table while a writer
// commits (appends of an unaware-bucket and a fixed-bucket table, changes
// of a primary-key table): every row is read by exactly one shard, the one
// its bucket (bucket mod 3) or its file (FNV-1a of the name mod 3) belongs
// to; each bucket's rows keep their order; and every shard's consumer,
// tail-shard-<i>-of-3, gets past the last snapshot even where that
// snapshot has nothing for it.
func TestShardsTailTogether(t *testing.T) {
	const n = 3
	for _, tc := range []struct {
		name    string
		pk      bool
		options map[string]string
		extra   string
	}{
		{"append unaware-bucket", false, nil, ""},
		{"append fixed-bucket", false, map[string]string{"bucket": "5", "bucket-key": "id"}, ""},
		{"primary-key", true, map[string]string{"bucket": "5", "changelog-producer": "input"}, ""},
		{"primary-key, latest values", true, map[string]string{"bucket": "5", "changelog-producer": "input"}, "changelog: false\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tt *testTable
			if tc.pk {
				tt = newPKTestTable(t, tc.options)
			} else {
				tt = newTestTable(t, []string{"dt"}, tc.options)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			state := map[int64]string{}
			nextID := int64(0)
			write := func(s, rows int) int64 {
				if tc.pk {
					return tt.writeChanges(randomChanges(rng, state, s, rows, 40)...).ID
				}
				var rs [][]any
				for range rows {
					rs = append(rs, []any{fmt.Sprintf("d%d", nextID%4), "eu", nextID, fmt.Sprintf("k%d", nextID)})
					nextID++
				}
				return tt.appendRows(rs...).ID
			}
			// Two snapshots before the shards start (their full read), more
			// while they tail, the last with a single row.
			write(0, 30)
			write(1, 30)
			// The shards tail in their goroutines while this one commits.
			st := startShards(t, tt, n, tc.extra)
			for s := 2; s < 12; s++ {
				write(s, 25)
			}
			last := write(12, 1)
			st.waitPosition(last)

			for i := range n {
				if got := tt.consumer(fmt.Sprintf("tail-shard-%d-of-%d", i, n)); got != last+1 {
					t.Errorf("consumer of shard %d at %d, want %d", i, got, last+1)
				}
			}
			if tt.consumer("tail") != 0 {
				t.Error("an unsuffixed consumer tail was written")
			}
			var all []kvMsg
			for i, msgs := range st.msgs {
				if len(msgs) == 0 {
					t.Errorf("shard %d read nothing", i)
				}
				all = append(all, msgs...)
				lastOf := map[string]int64{} // bucket or file -> last id / position seen
				for _, m := range msgs {
					switch {
					case tc.options == nil:
						if want := scan.FileShard(m.file, n); want != i {
							t.Fatalf("shard %d read file %s of shard %d", i, m.file, want)
						}
						if p, ok := lastOf[m.file]; ok && m.pos <= p {
							t.Errorf("shard %d: file %s row %d after row %d", i, m.file, m.pos, p)
						}
						lastOf[m.file] = m.pos
					default:
						if int(m.bucket)%n != i {
							t.Fatalf("shard %d read bucket %d", i, m.bucket)
						}
						b := fmt.Sprintf("%s/bucket-%d", m.partition, m.bucket)
						order := m.k // append rows: ids grow in write order
						if tc.pk {
							order = m.snapshot // changes: snapshots in order per bucket
						}
						if p, ok := lastOf[b]; ok && (order < p || !tc.pk && order == p) {
							t.Errorf("shard %d: %s: %d after %d", i, b, order, p)
						}
						lastOf[b] = order
					}
				}
			}
			if tc.pk {
				// Keys live in one bucket, so one shard: the union of the
				// shards' replays is the merged table.
				owner := map[int64]int{}
				union := map[int64]string{}
				for i, msgs := range st.msgs {
					for _, m := range msgs {
						if tc.extra != "" && m.kind == "-U" {
							t.Fatalf("shard %d: -U with changelog: false: %+v", i, m)
						}
						if o, ok := owner[m.k]; ok && o != i {
							t.Fatalf("key %d read by shards %d and %d", m.k, o, i)
						}
						owner[m.k] = i
					}
					maps.Copy(union, replay(t, msgs))
				}
				if want := tt.merged(last); !maps.Equal(union, want) {
					t.Errorf("replay of the shards\n %v\nwant the merged table\n %v", union, want)
				}
				return
			}
			seen := map[int64]int{}
			for _, m := range all {
				seen[m.k]++
			}
			for id := range nextID {
				if seen[id] != 1 {
					t.Errorf("row %d read %d times", id, seen[id])
				}
			}
			if len(seen) != int(nextID) {
				t.Errorf("%d distinct rows read, want %d", len(seen), nextID)
			}
		})
	}
}

// TestShardSnapshotWithoutRows: a bounded read of a one-row snapshot as 3
// shards: the owner of the row's bucket emits it, the other two emit
// nothing, and all three consumers move past the snapshot.
func TestShardSnapshotWithoutRows(t *testing.T) {
	tt := newTestTable(t, nil, map[string]string{"bucket": "3", "bucket-key": "id"})
	tt.appendRows(row("d", "eu", 0)) // one row, one bucket: two shards have nothing
	var owner int
	plan, err := tt.tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1}).Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	owner = int(plan.Splits[0].Bucket) % 3
	for i := range 3 {
		in := newInput(t, tt.yaml(fmt.Sprintf("consumer_id: c\nscan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\nshard: {count: 3, index: %d}\n", i)))
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		msgs := readAll(t, in)
		if err := in.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[i == owner]; len(msgs) != want {
			t.Errorf("shard %d: %d rows, want %d", i, len(msgs), want)
		}
		if got := tt.consumer(fmt.Sprintf("c-shard-%d-of-3", i)); got != 2 {
			t.Errorf("shard %d: consumer at %d, want 2", i, got)
		}
	}
}

// TestShardConfigErrors: a bad shard fails the config, naming the field.
func TestShardConfigErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"shard: {count: 0}\n":            "shard.count must be at least 1, not 0",
		"shard: {count: 2, index: 2}\n":  "shard.index must be from 0 to shard.count - 1 (1), not 2",
		"shard: {count: 2, index: -1}\n": "shard.index must be from 0 to shard.count - 1 (1), not -1",
	} {
		conf, err := ConfigSpec().ParseYAML("warehouse: /lake\ntable: t\n"+yaml, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseConfig(conf); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}
