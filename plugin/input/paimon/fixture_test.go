package paimon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// fixture1Rows are the rows of fixture 1 (README "Expected rows at snapshot
// 4") as the input renders them.
var fixture1Rows = []string{
	`{"f1":10,"f2":1,"f3":"1973-05-19","f4":"2033-05-18T03:33:20.000000000","f5":"123456789987654321.45678","f6":"YWRk"}`,
	`{"f1":10,"f2":1,"f3":"2024-07-05","f4":"2033-05-18T03:33:20.000001001","f5":"12.30000","f6":"Y2F0"}`,
	`{"f1":10,"f2":1,"f3":"1970-01-01","f4":"2008-12-28T00:00:00.000123456","f5":null,"f6":"ZGFk"}`,
	`{"f1":10,"f2":1,"f3":"1970-04-11","f4":"2008-12-28T00:00:00.000123450","f5":"-123.45000","f6":"ZWF0"}`,
	`{"f1":10,"f2":1,"f3":null,"f4":"1899-01-01T00:59:20.001001001","f5":"0.00000","f6":"ZmF0"}`,
	`{"f1":10,"f2":1,"f3":"2024-10-10","f4":"2024-10-10T10:10:10.100100100","f5":"1728551410100.10010","f6":null}`,
	`{"f1":20,"f2":1,"f3":"1966-08-16","f4":"1899-01-01T00:59:20.001001001","f5":"-123456789987654321.45678","f6":"YmFk"}`,
	`{"f1":20,"f2":0,"f3":"1969-09-23","f4":null,"f5":"0.00000","f6":"Z2V0"}`,
}

// TestJavaFixtureTail tails the Java-written fixture 1 (fixed bucket,
// partitioned, snapshots APPEND, APPEND, APPEND, COMPACT): latest-full
// reads the 8 live rows of snapshot 4, the f1=10 bucket in sequence order;
// from-snapshot 1 reads the three appends' deltas (3, 4 and 1 rows) and
// skips the COMPACT snapshot, whose position it still consumes.
func TestJavaFixtureTail(t *testing.T) {
	wh := fixturetest.CopyWarehouse(t, "cpp-java11-append-fixed-bucket-complex-types")
	base := fmt.Sprintf("warehouse: %s\ntable: append_complex_data\nbounded: true\n", wh)

	t.Run("latest-full", func(t *testing.T) {
		in := newInput(t, base)
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer in.Close(context.Background())
		msgs := readAll(t, in)
		var rows []string
		for _, m := range msgs {
			rows = append(rows, m.Row)
			if m.Snapshot != 4 || m.Kind != "COMPACT" {
				t.Errorf("row %s: snapshot %d %s, want 4 COMPACT", m.Row, m.Snapshot, m.Kind)
			}
			if want := fmt.Sprintf("f1=%s", m.Row[6:8]); m.Partition != want {
				t.Errorf("row %s: partition %q, want %q", m.Row, m.Partition, want)
			}
		}
		// The f1=10 bucket is one compacted file: its rows in file order.
		var bucket10 []string
		for _, m := range msgs {
			if m.Partition == "f1=10" {
				bucket10 = append(bucket10, m.Row)
				if m.Pos != int64(len(bucket10)-1) {
					t.Errorf("row %s at file position %d, want %d", m.Row, m.Pos, len(bucket10)-1)
				}
			}
		}
		if !slices.Equal(bucket10, fixture1Rows[:6]) {
			t.Errorf("f1=10 rows:\n%v\nwant\n%v", bucket10, fixture1Rows[:6])
		}
		slices.Sort(rows)
		want := slices.Clone(fixture1Rows)
		slices.Sort(want)
		if !slices.Equal(rows, want) {
			t.Errorf("rows:\n%v\nwant\n%v", rows, want)
		}
	})

	t.Run("from-snapshot 1", func(t *testing.T) {
		in := newInput(t, base+"scan_mode: from-snapshot\nscan_snapshot_id: 1\nconsumer_id: fixture\n")
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		msgs := readAll(t, in)
		if err := in.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		per := map[int64]int{}
		var rows []string
		last := int64(0)
		for _, m := range msgs {
			per[m.Snapshot]++
			rows = append(rows, m.Row)
			if m.Snapshot < last || m.Kind != "APPEND" {
				t.Errorf("row %s of snapshot %d (%s) after snapshot %d", m.Row, m.Snapshot, m.Kind, last)
			}
			last = m.Snapshot
		}
		if fmt.Sprint(per) != "map[1:3 2:4 3:1]" {
			t.Errorf("rows per snapshot %v, want map[1:3 2:4 3:1]", per)
		}
		slices.Sort(rows)
		want := slices.Clone(fixture1Rows)
		slices.Sort(want)
		if !slices.Equal(rows, want) {
			t.Errorf("rows:\n%v\nwant\n%v", rows, want)
		}
		in2 := newInput(t, base+"consumer_id: fixture\n")
		if err := in2.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer in2.Close(context.Background())
		data, err := os.ReadFile(filepath.Join(wh, "default.db", "append_complex_data", "consumer", "consumer-fixture"))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "{\n  \"nextSnapshot\" : 5\n}" {
			t.Errorf("consumer file %q, want Java's {\"nextSnapshot\" : 5}", data)
		}
		if rest := readAll(t, in2); len(rest) != 0 {
			t.Errorf("restart read %d rows, want none", len(rest))
		}
	})
}
