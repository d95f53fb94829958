package paimon

import (
	"context"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// TestSequenceRestoreDanglingLatestHint: a fixed-bucket table's batches
// restore their sequence numbers from the latest snapshot. A LATEST hint
// naming a snapshot that does not exist used to fail every batch (the
// error named the missing snapshot), and since nothing was committed
// nothing ever repaired the hint; the restore now reads the highest
// snapshot listed.
func TestSequenceRestoreDanglingLatestHint(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(local).CreateTable(ctx, "default", "t", lakecore.TableSpec{
		Fields: types.MustParse("ROW<id BIGINT>").Fields, Options: map[string]string{"bucket": "1", "bucket-key": "id"}})
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.Schema()
	w, err := write.NewTableWriter(local, tbl.Path(), s, write.OptionsFromSchema(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(0); id < 3; id++ {
		if err := w.Write(ctx, []any{id}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewCommitter("u").Commit(ctx, 1, msgs); err != nil {
		t.Fatal(err)
	}
	if err := local.WriteFile(ctx, tbl.Path()+"/snapshot/LATEST", []byte("7")); err != nil {
		t.Fatal(err)
	}
	got, err := newSequenceAllocator(tbl).restorer()(ctx, binrow.EmptyRow, 0)
	if err != nil || got != 2 {
		t.Fatalf("restored sequence number %d, %v; want 2 (rows 0..2 of snapshot 1)", got, err)
	}
}
