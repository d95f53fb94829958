package paimon

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// TestMessageBuilderMatchesRowconv: the input's fast message builder gives
// exactly what rowconv.NewRowMessage gives (structured value and metadata,
// Go types included) for rows of every type, special values and nulls,
// also after the slab its values are boxed from has moved on to new arrays
// and garbage collections ran.
func TestMessageBuilderMatchesRowconv(t *testing.T) {
	fields := types.MustParse("ROW<b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10, 2), " +
		"s STRING, c CHAR(3), by BYTES, dt DATE, tm TIME(3), ts TIMESTAMP(6), ltz TIMESTAMP(3) WITH LOCAL TIME ZONE, " +
		"arr ARRAY<STRING>, m MAP<STRING, BIGINT>, r ROW<x BIGINT, y STRING>>").Fields
	dec := types.Decimal{Unscaled: big.NewInt(-1230), Scale: 2}
	ts := types.Timestamp{Millis: 1717070400123, NanoOfMilli: 456000}
	rows := [][]any{
		{true, int8(-1), int16(300), int32(-7), int64(math.MaxInt64), float32(0.1), 0.25, dec, "héllo", "ab ", []byte("x"),
			types.Date(19873), types.Time(45296789), ts, ts, []any{"a", nil}, types.Map{Keys: []any{"k"}, Values: []any{int64(1)}}, []any{int64(2), "y"}},
		{false, nil, nil, nil, int64(-1), float32(math.Inf(1)), math.NaN(), nil, "", nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{nil, nil, nil, nil, nil, nil, math.Inf(-1), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	meta := rowconv.RowMeta{SnapshotID: 42, CommitKind: "APPEND", CommitTimeMillis: 1717070400123, Partition: "dt=2024-05-30",
		Bucket: 3, File: "data-x-0.parquet"}
	b := newMessageBuilder(fields, false)
	mv := newMetaValues(meta, false, AllMetadataKeys)
	var scratch rowScratch
	var wants, gots []*service.Message
	for i := range 1000 { // several slab arrays
		row := rows[i%len(rows)]
		meta.Row = int64(100 + i*1000)
		want, err := rowconv.NewRowMessage(fields, row, meta)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.message(row, mv, meta.Row, noKind, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		wants, gots = append(wants, want), append(gots, got)
	}
	runtime.GC()
	for i, want := range wants {
		got := gots[i]
		ws, _ := want.AsStructured()
		gs, _ := got.AsStructured()
		if !reflect.DeepEqual(gs, ws) {
			t.Errorf("row %d:\n got  %#v\n want %#v", i, gs, ws)
		}
		wm, gm := map[string]any{}, map[string]any{}
		_ = want.MetaWalkMut(func(k string, v any) error { wm[k] = v; return nil })
		_ = got.MetaWalkMut(func(k string, v any) error { gm[k] = v; return nil })
		if !reflect.DeepEqual(gm, wm) {
			t.Errorf("row %d metadata:\n got  %#v\n want %#v", i, gm, wm)
		}
	}
	if _, err := b.message(rows[0][:3], mv, 0, noKind, &scratch); err == nil {
		t.Error("a short row was rendered")
	}
	if _, err := b.message(append([]any{"not a bool"}, rows[1][1:]...), mv, 0, noKind, &scratch); err == nil {
		t.Error("a string in a BOOLEAN column was rendered")
	}
}

// TestAppendTimestamp checks the fast timestamp text against
// rowconv.FormatTimestamp on edge and random instants, every precision,
// with and without Z; outside 0000-9999 it defers to rowconv.
func TestAppendTimestamp(t *testing.T) {
	ms := []int64{0, -1, 1, 86399999, -86400000, -86400001, 951782400000 /* 2000-02-29 */, 253402300799999, /* 9999-12-31T23:59:59.999 */
		-62167219200000 /* 0000-01-01 */, -62167219200001, 253402300800000, 1717070400123, -2208988800000, math.MaxInt64 / 2, math.MinInt64 / 2}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		ms = append(ms, rng.Int64N(2*253402300800000)-253402300800000/2*3)
	}
	for _, m := range ms {
		for _, nom := range []int32{0, 1, 999999, int32(rng.IntN(1000000))} {
			ts := types.Timestamp{Millis: m, NanoOfMilli: nom}
			for p := 0; p <= 9; p++ {
				for _, z := range []bool{false, true} {
					text, ok := appendTimestamp(nil, ts, p, z)
					got := string(text)
					want := rowconv.FormatTimestamp(ts, p, z)
					inRange := m >= -62167219200000 && m < 253402300800000
					if ok != inRange || ok && got != want {
						t.Fatalf("%d ms + %d ns, p %d, zulu %v: %q (ok %v), rowconv %q", m, nom, p, z, got, ok, want)
					}
				}
			}
		}
	}
}

// TestRowKindTemplates: the messages of a primary-key table's rows, made
// from the per-kind templates, carry exactly the metadata set one by one
// (rowconv.RowMeta.Apply, then the row kind and operation) for every row
// kind and an invalid one, in both message formats; and each message's
// metadata is its own: changing one changes no other message and no
// template.
func TestRowKindTemplates(t *testing.T) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, v STRING>").Fields
	meta := rowconv.RowMeta{SnapshotID: 7, CommitKind: "APPEND", CommitTimeMillis: 1717070400123, Partition: "dt=x", Bucket: 2, File: "data-k-0.parquet"}
	mv := newMetaValues(meta, true, AllMetadataKeys)
	metaOf := func(m *service.Message) map[string]any {
		out := map[string]any{}
		_ = m.MetaWalkMut(func(k string, v any) error { out[k] = v; return nil })
		return out
	}
	for _, asJSON := range []bool{false, true} {
		b := newMessageBuilder(fields, asJSON)
		var scratch rowScratch
		var msgs []*service.Message
		for i, kind := range []kv.RowKind{kv.Insert, kv.UpdateBefore, kv.UpdateAfter, kv.Delete, 7} {
			row := []any{int64(i), "v"}
			meta.Row = int64(1000 + i)
			want, err := rowconv.NewRowMessage(fields, row, meta)
			if err != nil {
				t.Fatal(err)
			}
			mv.setRowKind(want, kind)
			got, err := b.message(row, mv, meta.Row, kind, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			if gm, wm := metaOf(got), metaOf(want); !reflect.DeepEqual(gm, wm) {
				t.Errorf("json %v, kind %d:\n got  %#v\n want %#v", asJSON, kind, gm, wm)
			}
			ws, _ := want.AsBytes()
			gs, _ := got.AsBytes()
			if string(gs) != string(ws) {
				t.Errorf("json %v, kind %d: content %s, want %s", asJSON, kind, gs, ws)
			}
			msgs = append(msgs, got)
		}
		msgs[0].MetaSetMut(rowconv.MetaPartition, "changed")
		msgs[0].MetaDelete(rowconv.MetaFile)
		for i, m := range msgs[1:] {
			if p, _ := m.MetaGetMut(rowconv.MetaPartition); p != "dt=x" {
				t.Errorf("json %v: message %d's partition became %v when another's changed", asJSON, i+1, p)
			}
		}
		for k, tm := range mv.byKind {
			if p, _ := tm.MetaGetMut(rowconv.MetaPartition); p != "dt=x" {
				t.Errorf("template of kind %d: partition became %v", k, p)
			}
			if f, ok := tm.MetaGetMut(rowconv.MetaFile); !ok || f != meta.File {
				t.Errorf("template of kind %d: file %v %v", k, f, ok)
			}
		}
	}
}

// TestMetadataKeys: with metadata_keys set to a subset (each key alone,
// none, all, and random subsets), a message carries exactly the metadata
// of that subset, with the values it has when every key is set, on append
// and primary-key rows of every kind, in both message formats; its content
// does not change.
func TestMetadataKeys(t *testing.T) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, v STRING>").Fields
	meta := rowconv.RowMeta{SnapshotID: 7, CommitKind: "APPEND", CommitTimeMillis: 1717070400123, Partition: "dt=x", Bucket: 2, File: "data-k-0.parquet"}
	sets := []MetadataKeys{0, AllMetadataKeys}
	for i := range metadataKeyNames {
		sets = append(sets, 1<<i, AllMetadataKeys&^(1<<i))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 40 {
		sets = append(sets, MetadataKeys(rng.Uint32())&AllMetadataKeys)
	}
	metaOf := func(m *service.Message) map[string]any {
		out := map[string]any{}
		_ = m.MetaWalkMut(func(k string, v any) error { out[k] = v; return nil })
		return out
	}
	kinds := []kv.RowKind{noKind, kv.Insert, kv.UpdateBefore, kv.UpdateAfter, kv.Delete}
	for _, asJSON := range []bool{false, true} {
		b := newMessageBuilder(fields, asJSON)
		var scratch rowScratch
		for _, keyed := range []bool{false, true} {
			all := newMetaValues(meta, keyed, AllMetadataKeys)
			for _, set := range sets {
				names, err := ParseMetadataKeys(set.Names())
				if err != nil || names != set {
					t.Fatalf("%v: parsed back as %v, %v", set.Names(), names.Names(), err)
				}
				mv := newMetaValues(meta, keyed, set)
				for i, kind := range kinds {
					if keyed == (kind == noKind) {
						continue
					}
					row := []any{int64(i), "v"}
					want, err := b.message(row, all, 1000+int64(i), kind, &scratch)
					if err != nil {
						t.Fatal(err)
					}
					got, err := b.message(row, mv, 1000+int64(i), kind, &scratch)
					if err != nil {
						t.Fatal(err)
					}
					wm := metaOf(want)
					for k := range wm {
						if !slices.Contains(set.Names(), k) {
							delete(wm, k)
						}
					}
					if gm := metaOf(got); !reflect.DeepEqual(gm, wm) {
						t.Errorf("json %v, keys %v, kind %d:\n got  %#v\n want %#v", asJSON, set.Names(), kind, gm, wm)
					}
					wb, _ := want.AsBytes()
					gb, _ := got.AsBytes()
					if string(gb) != string(wb) {
						t.Errorf("json %v, keys %v, kind %d: content %s, want %s", asJSON, set.Names(), kind, gb, wb)
					}
				}
			}
		}
	}
}
