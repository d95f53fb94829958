package paimon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestPartitionFilterAndColumns reads a table partitioned by (dt, region)
// with a disjunctive filter and a projection: only matching partitions,
// only the named columns.
func TestPartitionFilterAndColumns(t *testing.T) {
	tt := newTestTable(t, []string{"dt", "region"}, nil)
	tt.appendRows(row("2024-05-30", "eu", 1), row("2024-05-30", "us", 2), row("2024-05-31", "eu", 3), row("2024-05-31", "us", 4))
	tt.appendRows(row("2024-06-01", "eu", 5), row("2024-05-30", "eu", 6))
	cases := []struct{ filter, want string }{
		{"{ dt: '2024-05-30' }", "1:1 1:2 2:6"},
		{"{ region: [ us ] }", "1:2 1:4"},
		{"[ { dt: '2024-05-30', region: eu }, { dt: '2024-05-31', region: us } ]", "1:1 1:4 2:6"},
		{"[ { dt: '2024-06-01' }, { region: us } ]", "1:2 1:4 2:5"},
		{"{ dt: '2024-07-01' }", ""},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\npartition_filter: "+tc.filter+"\ncolumns: [ id, region ]\n"))
			if err := in.Connect(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			msgs := readAll(t, in)
			// Partitions come in plan order; compare sorted within a snapshot.
			var ids []string
			for _, m := range msgs {
				ids = append(ids, summary(t, []got{m}))
				if !strings.HasPrefix(m.Row, `{"id":`) || strings.Contains(m.Row, "msg") || strings.Contains(m.Row, "dt") {
					t.Errorf("projected row %s, want only id and region", m.Row)
				}
			}
			slices.Sort(ids) // ids below 10: text order is snapshot, then id
			if got := strings.Join(ids, " "); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestConnectErrors: settings that do not fit the table fail Connect with
// an error naming the setting and what the table has.
func TestConnectErrors(t *testing.T) {
	tt := newTestTable(t, []string{"dt"}, nil)
	cases := []struct{ yaml, want string }{
		{"columns: [ id, nope ]\n", `columns: "nope" is not a column of the table (columns: dt, region, id, msg)`},
		{"partition_filter: { region: eu }\n", `"region" is not a partition key of the table (partition keys: dt)`},
		{"table: missing\n", "missing"},
	}
	for _, tc := range cases {
		y := tt.yaml(tc.yaml)
		if strings.HasPrefix(tc.yaml, "table:") {
			y = "warehouse: " + tt.warehouse + "\n" + tc.yaml
		}
		err := newInput(t, y).Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Connect error %v, want one containing %q", tc.yaml, err, tc.want)
		}
	}
}

// TestSchemaEvolution: columns added while the input tails appear in the
// messages of the snapshots written with them (null in older rows).
func TestSchemaEvolution(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	tt.appendRows(row("d", "eu", 1))
	in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\n"))
	g := gate(in)
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	if m := readN(t, in, 1); m[0].Row != `{"dt":"d","id":1,"msg":"m1","region":"eu"}` {
		t.Fatalf("first row %s", m[0].Row)
	}
	g.waitIdle(t)
	if _, err := tt.tbl.AddColumns(context.Background(), []types.DataField{{Name: "score", Type: types.IntType()}}); err != nil {
		t.Fatal(err)
	}
	tt.appendRows([]any{"d", "eu", int64(2), "m2", int32(7)})
	g.release <- struct{}{}
	if m := readN(t, in, 1); m[0].Row != `{"dt":"d","id":2,"msg":"m2","region":"eu","score":7}` {
		t.Fatalf("row after adding a column: %s", m[0].Row)
	}
}

// TestConsumerWriteFailure: when the consumer file cannot be written the
// ack still returns, ReadBatch answers ErrNotConnected, Connect retries the
// write and succeeds once it lands, and reading goes on.
func TestConsumerWriteFailure(t *testing.T) {
	tt := fiveSnapshots(t)
	in := newInput(t, tt.yaml("consumer_id: flaky\nscan_mode: from-snapshot\nscan_snapshot_id: 4\n"))
	in.idle = func(ctx context.Context, _ time.Duration) bool { <-ctx.Done(); return false }
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	in.consumer.wait = time.Millisecond
	// A regular file where the consumer directory belongs makes every
	// write fail.
	block := filepath.Join(tt.warehouse, "default.db", "events", "consumer")
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ack, err := in.ReadBatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := ack(context.Background(), nil); err != nil {
		t.Fatalf("ack returned %v; a failed save surfaces on ReadBatch instead", err)
	}
	// The save runs in the ack, or in the reader if it seals the plan after
	// the ack: wait for it to have failed.
	for deadline := time.Now().Add(10 * time.Second); !in.consumer.Failing(); {
		if time.Now().After(deadline) {
			t.Fatal("the consumer save did not fail")
		}
		time.Sleep(time.Millisecond)
	}
	if _, _, err := in.ReadBatch(context.Background()); err != service.ErrNotConnected {
		t.Fatalf("ReadBatch while the position cannot be saved: %v, want ErrNotConnected", err)
	}
	if err := in.Connect(context.Background()); err == nil {
		t.Fatal("Connect succeeded while the position still cannot be saved")
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	if err := in.Connect(context.Background()); err != nil {
		t.Fatalf("Connect once the directory is writable: %v", err)
	}
	if pos := tt.consumer("flaky"); pos != 5 {
		t.Fatalf("consumer after recovery: %d, want 5", pos)
	}
	if got := summary(t, readN(t, in, 2)); got != "5:50 5:51" {
		t.Fatalf("read after recovery: %s, want 5:50 5:51", got)
	}
	if pos := tt.consumer("flaky"); pos != 6 {
		t.Fatalf("consumer: %d, want 6", pos)
	}
}

// TestReadErrorResumes: a data file that fails to open in the middle of a
// split is reported by ReadBatch, and the split resumes after the rows
// already emitted: every row once, in order.
func TestReadErrorResumes(t *testing.T) {
	tt := newTestTable(t, nil, map[string]string{"bucket": "1", "bucket-key": "id"})
	tt.appendRows(row("d", "eu", 1), row("d", "eu", 2), row("d", "eu", 3))
	tt.appendRows(row("d", "eu", 4), row("d", "eu", 5))
	in := newInput(t, tt.yaml("bounded: true\nbatch_size: 2\ndiscovery_interval: 10ms\n"))
	faulty := faultfs.New(tt.tbl.FileIO(), 1, faultfs.Fault{
		Ops: faultfs.OpOpen, Path: "default.db/events/bucket-0/data-*", Nth: 2, Times: 1,
	})
	in.fileIO = func(context.Context) (storage.FileIO, error) { return faulty, nil }
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	var ids []string
	errs := 0
	for {
		b, ack, err := in.ReadBatch(context.Background())
		if errors.Is(err, service.ErrEndOfInput) {
			break
		}
		if err != nil {
			if !strings.Contains(err.Error(), "snapshot 2") || !errors.Is(err, faultfs.ErrInjected) {
				t.Fatalf("read error %v, want the injected open failure in snapshot 2's plan", err)
			}
			errs++
			continue
		}
		for _, m := range b {
			ids = append(ids, fmt.Sprint(idOf(t, decode(t, m))))
		}
		_ = ack(context.Background(), nil)
	}
	if got := strings.Join(ids, " "); got != "1 2 3 4 5" || errs != 1 {
		t.Fatalf("rows %q with %d errors, want 1 2 3 4 5 after one error", got, errs)
	}
}
