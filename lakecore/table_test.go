package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var eventFields = []types.DataField{
	{Name: "day", Type: types.StringType()},
	{Name: "id", Type: types.BigIntType().NotNull()},
	{Name: "msg", Type: types.StringType()},
}

func TestCatalogCreateOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := lakecore.OpenCatalog(ctx, "file://"+dir, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.OpenTable(ctx, "db", "events"); !errors.Is(err, lakecore.ErrTableNotFound) {
		t.Errorf("OpenTable of a missing table: %v", err)
	}
	tb, err := c.CreateTable(ctx, "db", "events", lakecore.TableSpec{Fields: eventFields, PartitionKeys: []string{"day"}, Comment: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Path() != "db.db/events" || tb.Database() != "db" || tb.Name() != "events" {
		t.Errorf("path %s, db %s, name %s", tb.Path(), tb.Database(), tb.Name())
	}
	s := tb.Schema()
	if s.ID != 0 || s.Fields[1].ID != 1 || s.Options["bucket"] != "-1" || *s.Comment != "events" {
		t.Errorf("schema %+v", s)
	}
	if _, err := c.CreateTable(ctx, "db", "events", lakecore.TableSpec{Fields: eventFields}); !errors.Is(err, lakecore.ErrTableExists) {
		t.Errorf("second CreateTable: %v", err)
	}
	if _, err := c.CreateTable(ctx, "db", "orc", lakecore.TableSpec{Fields: eventFields, Options: map[string]string{"file.format": "orc"}}); !errors.Is(err, lakecore.ErrUnsupported) {
		t.Errorf("CreateTable with ORC data files: %v", err)
	}
	if _, err := c.CreateTable(ctx, "db", "bad", lakecore.TableSpec{Fields: eventFields, PartitionKeys: []string{"nope"}}); !errors.Is(err, schema.ErrInvalidSchema) {
		t.Errorf("CreateTable with a bad partition key: %v", err)
	}
	for _, n := range []string{"", ".", "..", "a/b", "a\\b"} {
		if _, err := c.OpenTable(ctx, "db", n); !errors.Is(err, lakecore.ErrInvalidName) {
			t.Errorf("table name %q: %v", n, err)
		}
		if _, err := c.CreateTable(ctx, n, "t", lakecore.TableSpec{Fields: eventFields}); !errors.Is(err, lakecore.ErrInvalidName) {
			t.Errorf("database name %q: %v", n, err)
		}
	}

	// An empty table reads as no rows; the few-lines API opens it.
	opened, err := lakecore.Open(ctx, dir, "db", "events")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := opened.ReadAll(ctx, 0); err != nil || len(rows) != 0 {
		t.Errorf("ReadAll of an empty table: %v, %v", rows, err)
	}

	// A column added by another writer appears after Refresh.
	if _, err := tb.Schemas().AddColumns(ctx, []types.DataField{{Name: "extra", Type: types.IntType()}}); err != nil {
		t.Fatal(err)
	}
	if len(opened.Schema().Fields) != 3 {
		t.Fatal("schema changed without Refresh")
	}
	if err := opened.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(opened.Schema().FieldNames(), ","); got != "day,id,msg,extra" {
		t.Errorf("after Refresh: %s", got)
	}
}

// buildEvents creates db.t with three APPEND snapshots through scantest and
// opens it through the facade.
func buildEvents(t *testing.T) (*storage.Local, *scantest.Table, *lakecore.Table) {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bt := scantest.New(t, fio, "db.db/t", eventFields, []string{"day"}, nil)
	for i, day := range []string{"mon", "tue", "mon"} {
		var rows [][]any
		for j := range 3 {
			rows = append(rows, []any{day, int64(i*10 + j), fmt.Sprintf("m%d", i*10+j)})
		}
		bt.Append([]any{day}, rows...)
	}
	tb, err := lakecore.NewCatalog(fio).OpenTable(context.Background(), "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	return fio, bt, tb
}

func TestTableReadAndStream(t *testing.T) {
	ctx := context.Background()
	_, bt, tb := buildEvents(t)
	rows, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Splits in order of first appearance (mon, then tue), files by
	// sequence number, rows in file order.
	var ids []string
	for _, r := range rows {
		ids = append(ids, fmt.Sprint(r[1]))
	}
	if got := strings.Join(ids, ","); got != "0,1,2,20,21,22,10,11,12" {
		t.Errorf("ReadAll order %s", got)
	}
	delta, err := tb.ReadDelta(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, delta, [][]any{{"tue", int64(10), "m10"}, {"tue", int64(11), "m11"}, {"tue", int64(12), "m12"}})

	// A stream through the facade, gated per snapshot, resumes from the
	// consumer position it persisted.
	s := tb.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1})
	p, err := s.Next(ctx)
	if err != nil || p == nil || p.Snapshot.ID != 1 {
		t.Fatalf("first plan %+v, %v", p, err)
	}
	if err := tb.Consumers().Put(ctx, "c1", snapshot.Consumer{NextSnapshot: p.NextSnapshot}); err != nil {
		t.Fatal(err)
	}
	con, ok, err := tb.Consumers().Get(ctx, "c1")
	if err != nil || !ok {
		t.Fatal(err)
	}
	bt.Append([]any{"wed"}, []any{"wed", int64(99), "m99"})
	resumed := tb.NewStreamScan(scan.StreamOptions{NextSnapshot: con.NextSnapshot})
	var seen []int64
	for {
		p, err := resumed.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			break
		}
		seen = append(seen, p.Snapshot.ID)
	}
	if fmt.Sprint(seen) != "[2 3 4]" {
		t.Errorf("resumed stream read snapshots %v", seen)
	}
}

// TestCorruptTables: damaged metadata or data gives an error naming the
// file, never a panic or a silently shorter result.
func TestCorruptTables(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, fio *storage.Local, bt *scantest.Table) (named string)
		is     error
	}{
		{"truncated snapshot JSON", func(t *testing.T, fio *storage.Local, bt *scantest.Table) string {
			p := "db.db/t/snapshot/snapshot-3"
			cut(t, fio, p, 0.5)
			return p
		}, snapshot.ErrInvalidSnapshot},
		{"LATEST hint pointing at nothing", func(t *testing.T, fio *storage.Local, bt *scantest.Table) string {
			if err := fio.WriteFile(ctx, "db.db/t/snapshot/LATEST", []byte("7")); err != nil {
				t.Fatal(err)
			}
			return "snapshot-7"
		}, lakecore.ErrSnapshotNotFound},
		{"manifest cut short", func(t *testing.T, fio *storage.Local, bt *scantest.Table) string {
			s, err := bt.Snapshots().Get(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			metas, err := manifest.ReadFileMetas(ctx, fio, bt.Path, s.DeltaManifestList)
			if err != nil {
				t.Fatal(err)
			}
			cut(t, fio, path.Join(bt.Path, "manifest", metas[0].FileName), 0.7)
			return metas[0].FileName
		}, scan.ErrCorruptTable},
		{"parquet file cut short", func(t *testing.T, fio *storage.Local, bt *scantest.Table) string {
			files, err := filepath.Glob(filepath.Join(fio.Root(), "db.db/t/day=tue/bucket-0/*.parquet"))
			if err != nil || len(files) != 1 {
				t.Fatalf("data files %v %v", files, err)
			}
			rel, _ := filepath.Rel(fio.Root(), files[0])
			cut(t, fio, filepath.ToSlash(rel), 0.5)
			return filepath.Base(files[0])
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fio, bt, tb := buildEvents(t)
			named := c.damage(t, fio, bt)
			rows, err := tb.ReadAll(ctx, 0)
			if err == nil {
				t.Fatalf("read %d rows without an error", len(rows))
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v, want %v", err, c.is)
			}
			if !strings.Contains(err.Error(), named) {
				t.Errorf("error does not name %s: %v", named, err)
			}
		})
	}
}

func cut(t *testing.T, fio storage.FileIO, p string, keep float64) {
	t.Helper()
	data, err := fio.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := fio.WriteFile(context.Background(), p, data[:int(float64(len(data))*keep)]); err != nil {
		t.Fatal(err)
	}
}
