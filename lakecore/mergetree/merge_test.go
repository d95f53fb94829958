package mergetree

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// sliceReader returns the records of a slice.
type sliceReader struct{ recs []*KeyValue }

func (s *sliceReader) Next(context.Context) (*KeyValue, error) {
	if len(s.recs) == 0 {
		return nil, io.EOF
	}
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r, nil
}

func (s *sliceReader) Close() error { return nil }

// rec is a record of table (k INT, v INT) with key column 0.
func rec(k, v int32, seq int64, kind kv.RowKind) *KeyValue {
	return &KeyValue{Value: []any{k, v}, Seq: seq, Kind: kind}
}

var keyOrder = &RecordOrder{KeyFields: []int{0}}

func mergeAll(t testing.TB, fn MergeFunction, runs ...[]*KeyValue) []*KeyValue {
	t.Helper()
	readers := make([]RecordReader, len(runs))
	for i, r := range runs {
		readers[i] = &sliceReader{recs: r}
	}
	m := NewSortMergeReader(keyOrder, fn, readers)
	defer m.Close()
	var out []*KeyValue
	for {
		r, err := m.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !DropDelete(r) {
			out = append(out, r)
		}
	}
}

func values(recs []*KeyValue) [][2]int32 {
	out := make([][2]int32, len(recs))
	for i, r := range recs {
		out[i] = [2]int32{r.Value[0].(int32), r.Value[1].(int32)}
	}
	return out
}

func TestSortMergeDeduplicate(t *testing.T) {
	l0 := []*KeyValue{rec(1, 10, 5, kv.UpdateAfter), rec(3, 0, 6, kv.Delete)}
	l5 := []*KeyValue{rec(1, 1, 0, kv.Insert), rec(2, 2, 1, kv.Insert), rec(3, 3, 2, kv.Insert), rec(4, 4, 3, kv.Insert)}
	got := values(mergeAll(t, &Deduplicate{}, l0, l5))
	want := [][2]int32{{1, 10}, {2, 2}, {4, 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// ignore-delete keeps key 3's insert.
	got = values(mergeAll(t, &Deduplicate{IgnoreDelete: true}, l0, l5))
	want = [][2]int32{{1, 10}, {2, 2}, {3, 3}, {4, 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("ignore-delete: got %v, want %v", got, want)
	}
}

func TestSortMergeFirstRow(t *testing.T) {
	a := []*KeyValue{rec(1, 10, 5, kv.Insert)}
	b := []*KeyValue{rec(1, 1, 0, kv.Insert), rec(2, 2, 1, kv.Insert)}
	got := values(mergeAll(t, &FirstRow{}, a, b))
	if want := [][2]int32{{1, 1}, {2, 2}}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	readers := []RecordReader{&sliceReader{recs: []*KeyValue{rec(1, 0, 9, kv.Delete)}}, &sliceReader{recs: b}}
	m := NewSortMergeReader(keyOrder, &FirstRow{}, readers)
	if _, err := m.Next(context.Background()); !errors.Is(err, ErrRetractNotAccepted) {
		t.Fatalf("a delete for first-row: %v", err)
	}
}

func TestSortMergeSequenceField(t *testing.T) {
	// sequence.field v: the larger v wins whatever the sequence number.
	order := &RecordOrder{KeyFields: []int{0}, Sequence: kv.Comparator{Fields: []int{1}}}
	readers := []RecordReader{
		&sliceReader{recs: []*KeyValue{rec(1, 5, 9, kv.Insert)}},
		&sliceReader{recs: []*KeyValue{rec(1, 7, 1, kv.Insert)}},
	}
	m := NewSortMergeReader(order, &Deduplicate{}, readers)
	r, err := m.Next(context.Background())
	if err != nil || r.Value[1] != int32(7) {
		t.Fatalf("got %v, %v; want v 7", r, err)
	}
	order.Sequence.Descending = true
	readers = []RecordReader{
		&sliceReader{recs: []*KeyValue{rec(1, 5, 9, kv.Insert)}},
		&sliceReader{recs: []*KeyValue{rec(1, 7, 1, kv.Insert)}},
	}
	m = NewSortMergeReader(order, &Deduplicate{}, readers)
	if r, err = m.Next(context.Background()); err != nil || r.Value[1] != int32(5) {
		t.Fatalf("descending: got %v, %v; want v 5", r, err)
	}
}

func TestPartialUpdate(t *testing.T) {
	// (k, a, b): non-null fields update; a lone -D is kept as it is and dropped.
	mk := func(k int32, a, b any, seq int64, kind kv.RowKind) *KeyValue {
		return &KeyValue{Value: []any{k, a, b}, Seq: seq, Kind: kind}
	}
	p := func() *PartialUpdate { return &PartialUpdate{Nullable: []bool{false, true, true}} }
	readers := []RecordReader{
		&sliceReader{recs: []*KeyValue{mk(1, nil, int32(20), 3, kv.Insert)}},
		&sliceReader{recs: []*KeyValue{mk(1, int32(1), int32(2), 1, kv.Insert), mk(2, int32(5), nil, 2, kv.Insert)}},
	}
	m := NewSortMergeReader(keyOrder, p(), readers)
	r, err := m.Next(context.Background())
	if err != nil || !slices.Equal(r.Value, []any{int32(1), int32(1), int32(20)}) || r.Kind != kv.Insert || r.Seq != 3 {
		t.Fatalf("key 1: %+v, %v", r, err)
	}
	if r, err = m.Next(context.Background()); err != nil || !slices.Equal(r.Value, []any{int32(2), int32(5), nil}) {
		t.Fatalf("key 2: %+v, %v", r, err)
	}
	// A delete without a delete option fails; remove-record-on-delete deletes.
	del := func() []RecordReader {
		return []RecordReader{
			&sliceReader{recs: []*KeyValue{mk(1, nil, nil, 3, kv.Delete)}},
			&sliceReader{recs: []*KeyValue{mk(1, int32(1), int32(2), 1, kv.Insert)}},
		}
	}
	if _, err := NewSortMergeReader(keyOrder, p(), del()).Next(context.Background()); !errors.Is(err, ErrRetractNotAccepted) {
		t.Fatalf("delete: %v", err)
	}
	pd := p()
	pd.RemoveRecordOnDelete = true
	if r, err := NewSortMergeReader(keyOrder, pd, del()).Next(context.Background()); err != nil || r.Kind != kv.Delete {
		t.Fatalf("remove-record-on-delete: %+v, %v", r, err)
	}
	// Sequence group: b is protected by sequence column a; an older a does
	// not overwrite b.
	g := &SequenceGroup{Order: kv.Comparator{Fields: []int{1}}}
	pg := p()
	pg.Groups = map[int]*SequenceGroup{1: g, 2: g}
	readers = []RecordReader{
		&sliceReader{recs: []*KeyValue{mk(1, int32(1), int32(99), 5, kv.Insert)}},
		&sliceReader{recs: []*KeyValue{mk(1, int32(3), int32(30), 1, kv.Insert)}},
	}
	if r, err := NewSortMergeReader(keyOrder, pg, readers).Next(context.Background()); err != nil || !slices.Equal(r.Value, []any{int32(1), int32(3), int32(30)}) {
		t.Fatalf("sequence group: %+v, %v", r, err)
	}
}

func TestIntervalPartition(t *testing.T) {
	// The example of MergeTreeSplitGenerator's comment.
	f := func(i int, lo, hi int32) File { return File{MinKey: []any{lo}, MaxKey: []any{hi}, Index: i} }
	secs := IntervalPartition([]File{f(0, 1, 2), f(1, 3, 4), f(2, 5, 180), f(3, 5, 190), f(4, 200, 600), f(5, 210, 700)})
	if len(secs) != 4 {
		t.Fatalf("%d sections, want 4: %v", len(secs), secs)
	}
	runs := func(s []SortedRun) [][]int {
		var out [][]int
		for _, r := range s {
			var idx []int
			for _, f := range r {
				idx = append(idx, f.Index)
			}
			out = append(out, idx)
		}
		return out
	}
	for i, want := range [][][]int{{{0}}, {{1}}, {{2}, {3}}, {{4}, {5}}} {
		if got := runs(secs[i]); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("section %d: runs %v, want %v", i, got, want)
		}
	}
	// Within a section a file joins the run whose last max key is below its
	// min key: [1,3] and [4,5] chain, [2,8] opens a second run.
	secs = IntervalPartition([]File{f(0, 1, 3), f(1, 2, 8), f(2, 4, 5), f(3, 9, 12)})
	if len(secs) != 2 || !slices.EqualFunc(runs(secs[0]), [][]int{{0, 2}, {1}}, slices.Equal) || !slices.EqualFunc(runs(secs[1]), [][]int{{3}}, slices.Equal) {
		t.Errorf("chained runs: %v", secs)
	}
}

// FuzzSortMergeDeduplicate merges random sorted runs and compares the
// result with a map model: per key the record with the highest sequence
// number, dropped when it is a retract.
func FuzzSortMergeDeduplicate(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(20))
	f.Add(uint64(7), uint8(6), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, nRuns, nRecs uint8) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		runs := make([]map[int32]*KeyValue, int(nRuns%8)+1)
		for i := range runs {
			runs[i] = map[int32]*KeyValue{}
		}
		type last struct {
			seq  int64
			kind kv.RowKind
			v    int32
		}
		model := map[int32]last{}
		for seq := int64(0); seq < int64(nRecs); seq++ {
			k := int32(rng.IntN(40))
			run := rng.IntN(len(runs))
			if _, dup := runs[run][k]; dup { // one record per key per run
				continue
			}
			kind := kv.RowKind(rng.IntN(4))
			v := rng.Int32()
			runs[run][k] = rec(k, v, seq, kind)
			if m, ok := model[k]; !ok || m.seq < seq {
				model[k] = last{seq, kind, v}
			}
		}
		sorted := make([][]*KeyValue, len(runs))
		for i, r := range runs {
			for _, x := range r {
				sorted[i] = append(sorted[i], x)
			}
			slices.SortFunc(sorted[i], func(a, b *KeyValue) int { return keyOrder.CompareKeys(a.Value, b.Value) })
		}
		got := values(mergeAll(t, &Deduplicate{}, sorted...))
		var want [][2]int32
		for k, m := range model {
			if m.kind.IsAdd() {
				want = append(want, [2]int32{k, m.v})
			}
		}
		slices.SortFunc(want, func(a, b [2]int32) int { return int(a[0]) - int(b[0]) })
		if !slices.Equal(got, want) {
			t.Fatalf("merge %v\nmodel %v", got, want)
		}
	})
}

// TestRecordMerger: runs holding several records of a key each come out
// as one sequence sorted by key and then sequence number, every record
// once, Peek showing what Next returns.
func TestRecordMerger(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var all []*KeyValue
	runs := make([][]*KeyValue, 5)
	for seq := range int64(300) {
		r := rec(int32(rng.IntN(20)), int32(seq), seq, kv.Insert)
		all = append(all, r)
		i := rng.IntN(len(runs))
		runs[i] = append(runs[i], r)
	}
	readers := make([]RecordReader, len(runs))
	for i, run := range runs {
		slices.SortFunc(run, keyOrder.Compare)
		readers[i] = &sliceReader{recs: run}
	}
	slices.SortFunc(all, keyOrder.Compare)
	m := NewRecordMerger(keyOrder, readers)
	defer m.Close()
	ctx := context.Background()
	for i := 0; ; i++ {
		p, perr := m.Peek(ctx)
		r, err := m.Next(ctx)
		if p != r || (perr == nil) != (err == nil) {
			t.Fatalf("record %d: Peek gave %v (%v), Next %v (%v)", i, p, perr, r, err)
		}
		if errors.Is(err, io.EOF) {
			if i != len(all) {
				t.Fatalf("%d records, want %d", i, len(all))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if r != all[i] {
			t.Fatalf("record %d: got key %v seq %d, want key %v seq %d", i, r.Value[0], r.Seq, all[i].Value[0], all[i].Seq)
		}
	}
}
