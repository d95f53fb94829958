package paimon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

func TestParseOffset(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{in: "0", want: "0"},
		{in: " 1042 ", want: "1042"},
		{in: "007", want: "7"},
		{in: "000", want: "0"},
		{in: "23876224.3", want: "23876224.3"},
		{in: "18446744073709551616.1", want: "18446744073709551616.1"}, // beyond uint64
		{in: "", bad: true},
		{in: "-1", bad: true},
		{in: "1.", bad: true},
		{in: ".1", bad: true},
		{in: "1..2", bad: true},
		{in: "0x10", bad: true},
		{in: "16/B374D848", bad: true},
	} {
		got, err := parseOffset(c.in)
		if c.bad {
			if !errors.Is(err, errInvalidOffset) {
				t.Errorf("parseOffset(%q) = %v, %v; want errInvalidOffset", c.in, got, err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("parseOffset(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestOffsetCompare(t *testing.T) {
	// Each offset is below every later one.
	order := []string{"0", "0.5", "1", "1.0", "1.2", "1.10", "2", "9", "10", "10.0.1", "99", "100", "18446744073709551616"}
	for i, a := range order {
		for j, b := range order {
			oa, _ := parseOffset(a)
			ob, _ := parseOffset(b)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := oa.compare(ob); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	if a, b := mustOffset(t, "007"), mustOffset(t, "7"); a.compare(b) != 0 {
		t.Error("007 and 7 differ")
	}
}

func mustOffset(t testing.TB, s string) sourceOffset {
	t.Helper()
	o, err := parseOffset(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func offsets(t testing.TB, stream string, texts ...string) map[string][]sourceOffset {
	m := map[string][]sourceOffset{}
	for _, s := range texts {
		m[stream] = append(m[stream], mustOffset(t, s))
	}
	return m
}

// TestPositionTracker walks the rule: a stream records its highest
// committed offset only while none of its messages is outstanding.
func TestPositionTracker(t *testing.T) {
	last := &snapshot.Snapshot{ID: 4, Properties: map[string]string{positionsProperty: `{"a":"10","b":"3.7"}`}}
	tr, err := newPositionTracker(last)
	if err != nil {
		t.Fatal(err)
	}
	covered := func(stream, off string) bool { return tr.covered(stream, mustOffset(t, off)) }
	commit := func(b *batchPositions) string {
		props, apply := tr.properties([]*batchPositions{b})
		apply()
		return props[positionsProperty]
	}
	if !covered("a", "10") || !covered("a", "3") || covered("a", "11") || !covered("b", "3.7") || covered("b", "3.8") || covered("c", "0") {
		t.Fatal("positions read from the snapshot")
	}
	// Properties do not change anything until applied.
	if props, _ := tr.properties([]*batchPositions{{written: offsets(t, "a", "11")}}); props[positionsProperty] != `{"a":"11","b":"3.7"}` {
		t.Fatalf("preview %v", props)
	}
	if covered("a", "11") {
		t.Fatal("a preview moved the position")
	}
	if got := commit(&batchPositions{written: offsets(t, "a", "11", "12")}); got != `{"a":"12","b":"3.7"}` {
		t.Fatalf("after 11, 12: %s", got)
	}
	// 14 fails: a stays at 13 while 15 is committed, 14 is not covered.
	tr.fail(offsets(t, "a", "14"))
	if got := commit(&batchPositions{written: offsets(t, "a", "13", "15")}); got != `{"a":"12","b":"3.7"}` {
		t.Fatalf("with 14 outstanding: %s", got)
	}
	if !covered("a", "13") || !covered("a", "15") || covered("a", "14") {
		t.Fatal("in memory, 13 and 15 are committed and 14 is not")
	}
	// A new stream moves on its own.
	if got := commit(&batchPositions{written: offsets(t, "c", "1")}); got != `{"a":"12","b":"3.7","c":"1"}` {
		t.Fatalf("new stream: %s", got)
	}
	// 14 delivered again and committed: a records 15.
	if got := commit(&batchPositions{written: offsets(t, "a", "14")}); got != `{"a":"15","b":"3.7","c":"1"}` {
		t.Fatalf("after 14 again: %s", got)
	}
	// A restart from that snapshot covers exactly what was recorded.
	tr2, err := newPositionTracker(&snapshot.Snapshot{Properties: map[string]string{positionsProperty: `{"a":"15","b":"3.7","c":"1"}`}})
	if err != nil || !tr2.covered("a", mustOffset(t, "15")) || tr2.covered("a", mustOffset(t, "16")) {
		t.Fatalf("restart: %v", err)
	}
	for _, bad := range []string{`[1]`, `{"a":"x"}`, `{"a":1}`} {
		if _, err := newPositionTracker(&snapshot.Snapshot{ID: 9, Properties: map[string]string{positionsProperty: bad}}); err == nil {
			t.Errorf("property %s accepted", bad)
		}
	}
}

// TestPositionTrackerOverflow: beyond maxOutstanding failures a stream's
// position freezes (duplicates after a crash, never a loss).
func TestPositionTrackerOverflow(t *testing.T) {
	tr, _ := newPositionTracker(nil)
	_, apply := tr.properties([]*batchPositions{{written: offsets(t, "a", "1")}})
	apply()
	many := make([]string, maxOutstanding+1)
	for i := range many {
		many[i] = fmt.Sprint(i + 2)
	}
	tr.fail(offsets(t, "a", many...))
	props, apply := tr.properties([]*batchPositions{{written: offsets(t, "a", many...)}})
	apply()
	if props[positionsProperty] != `{"a":"1"}` {
		t.Fatalf("overflowed stream recorded %s", props[positionsProperty])
	}
	if tr.covered("a", mustOffset(t, "2")) || !tr.covered("a", mustOffset(t, "1")) {
		t.Fatal("an overflowed stream covers what it recorded only")
	}
}

// posMessage is a message {"id": id, "v": v} at offset off of stream s.
func posMessage(id int64, v any, stream, off string) *service.Message {
	m := service.NewMessage(nil)
	m.SetStructured(map[string]any{"id": id, "v": v})
	m.MetaSetMut("stream", stream)
	m.MetaSetMut("offset", off)
	return m
}

// TestOutputSourcePosition runs the output's WriteBatch through replays,
// a failing message and a restart, and checks the table holds every
// message once and the snapshot the recorded positions.
func TestOutputSourcePosition(t *testing.T) {
	for _, pk := range []bool{false, true} {
		t.Run(fmt.Sprintf("primary_key=%v", pk), func(t *testing.T) {
			wh := t.TempDir()
			keys := ""
			if pk {
				keys = "primary_keys: [ id ]\n  bucket: 2"
			}
			yaml := fmt.Sprintf(`
warehouse: %s
table: t
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT NOT NULL }
    - { name: v, type: BIGINT }
  %s
source_position:
  stream: ${! @stream }
  offset: ${! @offset }
maintenance: { enabled: false, table_metrics: false }
`, wh, keys)
			ctx := context.Background()
			open := func() *paimonOutput {
				conf, err := ConfigSpec().ParseYAML(yaml, nil)
				if err != nil {
					t.Fatal(err)
				}
				c, err := ParseConfig(conf)
				if err != nil {
					t.Fatal(err)
				}
				if c.MaxInFlight != 1 {
					t.Fatalf("max_in_flight %d with source_position", c.MaxInFlight)
				}
				o := newOutput(c, service.MockResources(), options{})
				if err := o.Connect(ctx); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = o.Close(ctx) })
				return o
			}
			write := func(o *paimonOutput, msgs ...*service.Message) error {
				return o.WriteBatch(ctx, service.MessageBatch(msgs))
			}
			recorded := func(o *paimonOutput) string {
				s, err := o.staticSink().tbl.Snapshots().LatestOfUser(ctx, o.conf.CommitUser)
				if err != nil || s == nil {
					t.Fatalf("latest snapshot: %v %v", s, err)
				}
				return s.Properties[positionsProperty]
			}
			o := open()
			if err := write(o, posMessage(1, 1, "s", "1"), posMessage(2, 2, "s", "2"), posMessage(3, 3, "s", "3")); err != nil {
				t.Fatal(err)
			}
			if got := recorded(o); got != `{"s":"3"}` {
				t.Fatalf("after 1-3: %s", got)
			}
			// 2 and 3 again (skipped), 4 new, 5 cannot become a row.
			err := write(o, posMessage(2, 2, "s", "2"), posMessage(3, 3, "s", "3"), posMessage(4, 4, "s", "4"), posMessage(5, "five", "s", "5"))
			var bErr *service.BatchError
			if !errors.As(err, &bErr) || bErr.IndexedErrors() != 1 {
				t.Fatalf("batch with a bad message: %v", err)
			}
			if got := recorded(o); got != `{"s":"3"}` {
				t.Fatalf("with 5 outstanding the position stays: %s", got)
			}
			if err := write(o, posMessage(6, 6, "t", "00"), posMessage(7, 6, "s", "6")); err != nil {
				t.Fatal(err)
			}
			if got := recorded(o); got != `{"s":"3","t":"0"}` {
				t.Fatalf("after 6: %s", got)
			}
			// 5 delivered again, fixed.
			if err := write(o, posMessage(5, 5, "s", "5")); err != nil {
				t.Fatal(err)
			}
			if got := recorded(o); got != `{"s":"6","t":"0"}` {
				t.Fatalf("after 5 again: %s", got)
			}
			// A bad offset fails that message alone.
			err = write(o, posMessage(8, 8, "s", "seven"), posMessage(9, 9, "", ""))
			if !errors.As(err, &bErr) || bErr.IndexedErrors() != 1 {
				t.Fatalf("bad offset: %v", err)
			}
			if err := o.Close(ctx); err != nil {
				t.Fatal(err)
			}

			// Restart: the source replays from 4.
			o = open()
			if err := write(o, posMessage(4, 4, "s", "4"), posMessage(5, 5, "s", "5"), posMessage(7, 6, "s", "6"),
				posMessage(6, 6, "t", "0"), posMessage(10, 10, "s", "7")); err != nil {
				t.Fatal(err)
			}
			if got := recorded(o); got != `{"s":"7","t":"0"}` {
				t.Fatalf("after the replay: %s", got)
			}
			tbl, err := lakecore.NewCatalog(o.staticSink().tbl.FileIO()).OpenTable(ctx, "default", "t")
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range rows {
				ids = append(ids, r[0].(int64))
			}
			slices.Sort(ids)
			if fmt.Sprint(ids) != "[1 2 3 4 5 6 7 9 10]" {
				t.Fatalf("ids in the table %v, want each of 1-7, 9, 10 once", ids)
			}
		})
	}
}

// FuzzParseOffset: any text either fails with errInvalidOffset or parses
// to an offset whose canonical text parses to an equal offset.
func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"0", "007", "23876224.3", "1..2", "-1", " 5 ", "18446744073709551616.0.1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOffset(s)
		if err != nil {
			if !errors.Is(err, errInvalidOffset) {
				t.Fatalf("parseOffset(%q): %v does not wrap errInvalidOffset", s, err)
			}
			return
		}
		again, err := parseOffset(o.String())
		if err != nil || again.compare(o) != 0 || o.compare(again) != 0 || again.String() != o.String() {
			t.Fatalf("parseOffset(%q) = %q, which parses to %q, %v", s, o, again, err)
		}
	})
}
