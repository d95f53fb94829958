//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	paimonin "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"
)

// TestTail: Go tails a table Java 1.x, Java 2.x or pypaimon creates empty
// and then commits to one step at a time, while Go reads: a lakecore
// StreamScanner and the paimon input (with a consumer) both follow the
// commits as they happen. Every row must arrive exactly once, in the
// snapshot that added it, snapshots in id order without gaps; Java's
// compactions (an empty APPEND then a COMPACT) deliver nothing.
func TestTail(t *testing.T) {
	requireOracles(t)
	for _, writer := range []string{java1, java2, py} {
		t.Run(writer, func(t *testing.T) {
			t.Parallel()
			tailOne(t, writer)
		})
	}
}

// tailEvent is one snapshot a Go tail delivered.
type tailEvent struct {
	snapshot int64
	kind     string
	rows     []string // canonical lines of the delta
}

func tailOne(t *testing.T, writer string) {
	ctx := ctxT(t)
	ref := tableRef{t.TempDir(), "interop", "tail_" + writer}
	create := specFile{
		Schema:        []specField{{"id", "BIGINT NOT NULL"}, {"region", "STRING"}, {"payload", "STRING"}, {"ts", "TIMESTAMP(6)"}},
		PartitionKeys: []string{"region"},
		Options:       map[string]string{"bucket": "2", "bucket-key": "id"},
		Commits:       []specCommit{},
	}
	oracleWrite(t, writer, ref, create)

	cat, err := lakecore.OpenCatalog(ctx, ref.warehouse, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := cat.OpenTable(ctx, ref.db, ref.table)
	if err != nil {
		t.Fatalf("Go opens the empty table %s created by %s: %v", ref, writer, err)
	}
	fields := tb.Schema().Fields

	// tail 1: lakecore's StreamScanner, polling every 10 ms
	var mu sync.Mutex
	var events []tailEvent
	tailErr := make(chan error, 1)
	tailCtx, stopTail := context.WithCancel(ctx)
	defer stopTail()
	go func() {
		sc := tb.NewStreamScan(scan.StreamOptions{Mode: scan.ModeLatestFull})
		r, err := tb.NewRead(nil)
		if err != nil {
			tailErr <- err
			return
		}
		for tailCtx.Err() == nil {
			plan, err := sc.Next(tailCtx)
			if err != nil {
				if tailCtx.Err() == nil {
					tailErr <- err
				}
				return
			}
			if plan == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			ev := tailEvent{snapshot: plan.Snapshot.ID, kind: string(plan.Snapshot.CommitKind)}
			for _, split := range plan.Splits {
				it, err := r.Open(tailCtx, split)
				if err != nil {
					tailErr <- err
					return
				}
				for {
					next, err := it.Next(tailCtx)
					rows := next.Rows
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						tailErr <- err
						return
					}
					for _, row := range rows {
						l, err := canonicalRow(fields, row)
						if err != nil {
							tailErr <- err
							return
						}
						ev.rows = append(ev.rows, l)
					}
				}
				_ = it.Close()
			}
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	}()

	// tail 2: the paimon input with a consumer, as a pipeline would run it
	type inMsg struct {
		id, snapshot int64
		payload      string
	}
	var inMu sync.Mutex
	var inMsgs []inMsg
	senv := service.NewEnvironment()
	if err := paimonin.Register(senv); err != nil {
		t.Fatal(err)
	}
	sb := senv.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: WARN"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(fmt.Sprintf("paimon:\n  warehouse: %s\n  database: %s\n  table: %s\n  consumer_id: go-tail\n  discovery_interval: 20ms\n",
		ref.warehouse, ref.db, ref.table)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddBatchConsumerFunc(func(_ context.Context, b service.MessageBatch) error {
		inMu.Lock()
		defer inMu.Unlock()
		for _, m := range b {
			v, err := m.AsStructured()
			if err != nil {
				return err
			}
			obj := v.(map[string]any)
			var x inMsg
			switch id := obj["id"].(type) {
			case int64:
				x.id = id
			case json.Number:
				x.id, _ = id.Int64()
			case float64:
				x.id = int64(id)
			}
			x.payload, _ = obj["payload"].(string)
			s, _ := m.MetaGetMut("paimon_snapshot_id")
			x.snapshot, _ = s.(int64)
			inMsgs = append(inMsgs, x)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	strm, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- strm.Run(context.Background()) }()
	defer func() {
		_ = strm.StopWithin(10 * time.Second)
	}()

	// the writer's steps; each append's rows, by the snapshot it made
	wantBySnap := map[int64][]string{}
	wantPayload := map[int64]string{} // id -> payload
	snapOfID := map[int64]int64{}
	compacts := map[int64]bool{}
	var latest int64
	id := int64(0)
	for step := 0; step < 8; step++ {
		if writer != py && (step == 3 || step == 6) {
			lines := oracleWrite(t, writer, ref, specFile{Commits: []specCommit{{Kind: "compact"}}})
			s := stepSnapshot(t, lines)
			for sid := latest + 1; sid <= s; sid++ {
				compacts[sid] = true // the empty APPEND and the COMPACT
			}
			latest = s
			continue
		}
		var rows []json.RawMessage
		var lines []string
		for j := 0; j < 4; j++ {
			region := []any{"eu", "us", nil, "a/b"}[(int(id)+step)%4]
			if writer == py && region == nil {
				// README finding 19: pypaimon 2.1.0 fails to append to the NULL
				// partition of a fixed-bucket table once another partition exists
				region = "py-null"
			}
			p := fmt.Sprintf("step %d row %d", step, j)
			r := row("id", id, "region", region, "payload", p, "ts", fmt.Sprintf("2024-05-%02dT10:00:00.%06d", step+1, id))
			rows = append(rows, r)
			wantPayload[id] = p
			id++
		}
		out := oracleWrite(t, writer, ref, specFile{Commits: []specCommit{appendStep(rows...)}})
		s := stepSnapshot(t, out)
		if s != latest+1 {
			t.Fatalf("%s's append step %d made snapshot %d, the previous was %d", writer, step, s, latest)
		}
		latest = s
		for _, r := range rows {
			obj, _ := decodeJSON(r)
			vals, err := rowFromJSON(fields, obj.(map[string]any))
			if err != nil {
				t.Fatal(err)
			}
			l, err := canonicalRow(fields, vals)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
			snapOfID[vals[0].(int64)] = s
		}
		sortCodePoints(lines)
		wantBySnap[s] = lines
	}

	// wait until both tails reached the latest snapshot
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		n := len(events)
		var lastSeen int64
		if n > 0 {
			lastSeen = events[n-1].snapshot
		}
		mu.Unlock()
		inMu.Lock()
		m := len(inMsgs)
		inMu.Unlock()
		if lastSeen >= latest && m >= int(id) {
			break
		}
		select {
		case err := <-tailErr:
			t.Fatalf("StreamScanner tailing %s: %v", ref, err)
		case err := <-runErr:
			t.Fatalf("paimon input tailing %s stopped: %v", ref, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("tails of %s did not reach snapshot %d in time: StreamScanner has %d snapshots, the input %d of %d rows", ref, latest, n, m, id)
		}
	}
	stopTail()
	time.Sleep(50 * time.Millisecond) // let the input ack its last batch

	t.Run("StreamScanner", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		for i, ev := range events {
			if ev.snapshot != int64(i+1) {
				t.Fatalf("table %s (written by %s): tail event %d is snapshot %d, want %d (snapshots in order, none skipped)", ref, writer, i, ev.snapshot, i+1)
			}
			got := slices.Clone(ev.rows)
			sortCodePoints(got)
			want := wantBySnap[ev.snapshot]
			if compacts[ev.snapshot] {
				want = nil
			}
			verdict(t, where{table: ref.String() + " (StreamScanner delta)", snapshot: ev.snapshot, writer: writer, reader: "go tail"}, nil, want, got, nil)
		}
		if int64(len(events)) != latest {
			t.Errorf("table %s: the tail saw %d snapshots, the writer made %d", ref, len(events), latest)
		}
	})
	t.Run("paimon input", func(t *testing.T) {
		inMu.Lock()
		defer inMu.Unlock()
		seen := map[int64]int{}
		var last int64
		for i, m := range inMsgs {
			seen[m.id]++
			if m.snapshot < last {
				t.Errorf("table %s: message %d (id %d) from snapshot %d after one from snapshot %d", ref, i, m.id, m.snapshot, last)
			}
			last = m.snapshot
			if m.snapshot != snapOfID[m.id] {
				t.Errorf("table %s: row id %d delivered with snapshot %d, %s committed it in snapshot %d", ref, m.id, m.snapshot, writer, snapOfID[m.id])
			}
			if m.payload != wantPayload[m.id] {
				t.Errorf("table %s: row id %d: column payload: expected %q, actual %q", ref, m.id, wantPayload[m.id], m.payload)
			}
		}
		for i := int64(0); i < id; i++ {
			if seen[i] != 1 {
				t.Errorf("table %s: row id %d delivered %d times, want exactly once", ref, i, seen[i])
			}
		}
	})
	t.Run("consumer", func(t *testing.T) {
		// the input's consumer reaches past the last snapshot once all is acknowledged
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, ok, err := tb.Consumers().Get(ctx, "go-tail")
			if err != nil {
				t.Fatal(err)
			}
			if ok && c.NextSnapshot == latest+1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("table %s: consumer go-tail is at %d (present %v), want %d", ref, c.NextSnapshot, ok, latest+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// stepSnapshot returns the snapshot of the last step line a write printed.
func stepSnapshot(t *testing.T, lines []string) int64 {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("the write printed no step")
	}
	var s struct {
		Snapshot int64 `json:"snapshot"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("step line %q: %v", lines[len(lines)-1], err)
	}
	return s.Snapshot
}
