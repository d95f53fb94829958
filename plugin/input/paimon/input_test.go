package paimon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// TestReadBatchMetadata reads two snapshots of a partitioned table and
// checks every message: the row and all seven metadata values, with each
// message_format (json: the message's bytes are the row's JSON text, and
// it holds no structured value until something parses them).
func TestReadBatchMetadata(t *testing.T) {
	for _, format := range []string{"structured", "json"} {
		t.Run(format, func(t *testing.T) { testReadBatchMetadata(t, format) })
	}
}

func testReadBatchMetadata(t *testing.T, format string) {
	tt := newTestTable(t, []string{"dt"}, nil)
	tt.appendRows(row("2024-05-30", "eu", 1), row("2024-05-30", "us", 2))
	tt.appendRows(row("2024-05-31", "eu", 3))
	in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\nmessage_format: "+format+"\n"))
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	var msgs []got
	for len(msgs) < 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		b, ack, err := in.ReadBatch(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d of 3 messages: %v", len(msgs), err)
		}
		for _, m := range b {
			if format == "json" {
				raw, err := m.AsBytes()
				if m.HasStructured() || err != nil {
					t.Fatalf("json message holds a structured value (%v)", err)
				}
				g := decode(t, m)
				if string(raw) != g.Row {
					t.Errorf("json message bytes %s, want %s", raw, g.Row)
				}
				msgs = append(msgs, g)
				continue
			}
			msgs = append(msgs, decode(t, m))
		}
		if err := ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	files := map[int64]string{}
	for _, m := range msgs {
		if f, ok := files[m.Snapshot]; ok && f != m.File {
			t.Errorf("snapshot %d rows in files %s and %s, want one file", m.Snapshot, f, m.File)
		}
		files[m.Snapshot] = m.File
	}
	want := []got{
		{`{"dt":"2024-05-30","id":1,"msg":"m1","region":"eu"}`, 1, "APPEND", "2024-05-30T10:00:01.000Z", "dt=2024-05-30", 0, files[1], 0},
		{`{"dt":"2024-05-30","id":2,"msg":"m2","region":"us"}`, 1, "APPEND", "2024-05-30T10:00:01.000Z", "dt=2024-05-30", 0, files[1], 1},
		{`{"dt":"2024-05-31","id":3,"msg":"m3","region":"eu"}`, 2, "APPEND", "2024-05-30T10:00:02.000Z", "dt=2024-05-31", 0, files[2], 0},
	}
	for i := range want {
		if msgs[i] != want[i] {
			t.Errorf("message %d:\n got  %+v\n want %+v", i, msgs[i], want[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := in.ReadBatch(ctx); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("bounded read after the last snapshot: %v, want ErrEndOfInput", err)
	}
}

// TestReadBatchMetadataKeys: with metadata_keys, the input's messages
// carry only the keys listed (none for []), and it still reads every row,
// acknowledges and ends as with every key.
func TestReadBatchMetadataKeys(t *testing.T) {
	for _, c := range []struct {
		keys string
		want []string
	}{
		{"[ paimon_row, paimon_snapshot_id ]", []string{"paimon_row", "paimon_snapshot_id"}},
		{"[]", nil},
	} {
		tt := newTestTable(t, []string{"dt"}, nil)
		tt.appendRows(row("2024-05-30", "eu", 1), row("2024-05-30", "us", 2))
		tt.appendRows(row("2024-05-31", "eu", 3))
		in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\nmetadata_keys: "+c.keys+"\n"))
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		var rows []string
		eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
			for _, m := range b {
				var keys []string
				_ = m.MetaWalkMut(func(k string, _ any) error { keys = append(keys, k); return nil })
				slices.Sort(keys)
				if !slices.Equal(keys, c.want) {
					t.Errorf("metadata_keys %s: message has %v", c.keys, keys)
				}
				raw, err := m.AsBytes()
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, string(raw))
			}
			if err := ack(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		})
		in.Close(context.Background())
		if want := []string{`{"dt":"2024-05-30","id":1,"msg":"m1","region":"eu"}`, `{"dt":"2024-05-30","id":2,"msg":"m2","region":"us"}`,
			`{"dt":"2024-05-31","id":3,"msg":"m3","region":"eu"}`}; !slices.Equal(rows, want) {
			t.Errorf("metadata_keys %s: rows %v, want %v", c.keys, rows, want)
		}
	}
}

// TestBatchSize: batches hold at most batch_size rows and never span two
// snapshots.
func TestBatchSize(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	var rows [][]any
	for i := range int64(7) {
		rows = append(rows, row("d", "eu", i))
	}
	tt.appendRows(rows...)
	tt.appendRows(row("d", "eu", 7), row("d", "eu", 8))
	in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\nbatch_size: 3\n"))
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	var sizes []string
	eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
		snap, _ := b[0].MetaGetMut("paimon_snapshot_id")
		sizes = append(sizes, fmt.Sprintf("%d:%d", snap, len(b)))
		_ = ack(context.Background(), nil)
	})
	if fmt.Sprint(sizes) != "[1:3 1:3 1:1 2:2]" {
		t.Errorf("batches (snapshot:rows) %v, want [1:3 1:3 1:1 2:2]", sizes)
	}
}
