package reliability

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// newLocalTable creates rel.<name> (id BIGINT NOT NULL, p INT, partitioned
// by p) in a new local warehouse and returns the warehouse path and table.
func newLocalTable(t *testing.T, name string, options map[string]string) (string, *lakecore.Table) {
	t.Helper()
	wh, fio := localWarehouse(t)
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "rel", name, lakecore.TableSpec{
		Fields:        types.MustParse("ROW<id BIGINT NOT NULL, p INT>").Fields,
		PartitionKeys: []string{"p"},
		Options:       options,
	})
	if err != nil {
		t.Fatal(err)
	}
	return wh, tbl
}

// appendRows commits rows with ids from..from+n-1 (partition id % 2) as one
// snapshot of user "writer" and returns its id.
func appendRows(t *testing.T, tbl *lakecore.Table, from, n int64) int64 {
	t.Helper()
	ctx := context.Background()
	w, err := tbl.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id := from; id < from+n; id++ {
		if err := w.Write(ctx, []any{id, int32(id % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := tbl.Snapshots().LatestOfUser(ctx, "writer")
	if err != nil {
		t.Fatal(err)
	}
	ident := int64(1)
	if latest != nil {
		ident = latest.CommitIdentifier + 1
	}
	s, err := tbl.NewCommitter("writer").Commit(ctx, ident, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// inputRun is a stream from the paimon input into a consumer that records
// the ids it receives; acks can be held back.
type inputRun struct {
	t      *testing.T
	stream *service.Stream
	done   chan error
	cancel context.CancelFunc
	logs   *lineLog

	mu   sync.Mutex
	ids  []int64
	snap map[int64]int64 // id -> paimon_snapshot_id
	// gate > 0 holds every message of snapshot gate or later before it is
	// acknowledged, until gate is raised or reset to 0.
	gate atomic.Int64
}

// startInput runs the paimon input with the given YAML body (indented
// under "paimon:") until the input ends or stop is called; messages of
// snapshot gate or later are held (not acknowledged) while gate > 0.
func startInput(t *testing.T, inputYAML string, gate int64) *inputRun {
	t.Helper()
	sb := service.NewStreamBuilder()
	r := &inputRun{t: t, logs: &lineLog{}, snap: map[int64]int64{}}
	r.gate.Store(gate)
	sb.SetLogger(slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err := sb.AddInputYAML("paimon:\n" + inputYAML); err != nil {
		t.Fatal(err)
	}
	err := sb.AddConsumerFunc(func(ctx context.Context, m *service.Message) error {
		v, err := m.AsStructured()
		if err != nil {
			return err
		}
		obj := v.(map[string]any)
		id, err := toInt64(obj["id"])
		if err != nil {
			return err
		}
		sid, _ := m.MetaGetMut("paimon_snapshot_id")
		s, _ := toInt64(sid)
		r.mu.Lock()
		r.ids = append(r.ids, id)
		r.snap[id] = s
		r.mu.Unlock()
		for g := r.gate.Load(); g > 0 && s >= g; g = r.gate.Load() {
			select {
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.stream, r.done = runStream(t, ctx, sb)
	return r
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case interface{ Int64() (int64, error) }:
		return x.Int64()
	case string:
		var n int64
		_, err := fmt.Sscan(x, &n)
		return n, err
	}
	return 0, fmt.Errorf("not an integer: %T %v", v, v)
}

// received returns a copy of the ids received so far.
func (r *inputRun) received() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.ids...)
}

// ended reports whether the stream has ended (and how) within d.
func (r *inputRun) ended(d time.Duration) (bool, error) {
	select {
	case err := <-r.done:
		r.done <- err
		return true, err
	case <-time.After(d):
		return false, nil
	}
}

// stop stops the stream: gracefully within d, else hard.
func (r *inputRun) stop(d time.Duration) {
	_ = r.stream.StopWithin(d)
	r.cancel()
	<-r.done
}

// kill ends the stream without waiting for acks (a crash, as far as the
// consumer position goes: unacked batches are not acked).
func (r *inputRun) kill() {
	r.cancel()
	_ = r.stream.StopWithin(100 * time.Millisecond)
	<-r.done
}

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}
