package write

import (
	"context"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestLookupCacheAccounting: the writer's lookup caches stay within
// lookup.cache-max-memory-size (but for the file in use) and lookupUsed is
// always the sum of what the buckets hold, through compactions, evictions
// and buckets leaving the writer.
func TestLookupCacheAccounting(t *testing.T) {
	ctx := context.Background()
	for _, budget := range []string{"4kb", "256mb"} {
		t.Run(budget, func(t *testing.T) {
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s := &schema.TableSchema{
				Fields:      []types.DataField{{ID: 0, Name: "k", Type: types.BigIntType().NotNull()}, {ID: 1, Name: "v", Type: types.StringType()}},
				PrimaryKeys: []string{"k"}, HighestFieldID: 1,
				Options: map[string]string{"bucket": "4", "changelog-producer": "lookup", "lookup.cache-max-memory-size": budget},
			}
			if err := schema.NewManager(fio, "t").Commit(ctx, s); err != nil {
				t.Fatal(err)
			}
			committer := commit.New(fio, "t", commit.Options{PrimaryKey: true})
			// No restorer: a bucket that comes back starts without levels,
			// which does not matter for the accounting.
			w, err := NewKeyValueWriter(fio, "t", s, OptionsFromSchema(s), nil)
			if err != nil {
				t.Fatal(err)
			}
			for id := int64(1); id <= 12; id++ {
				for k := range int64(60) {
					if id%4 == 0 && k%4 != 0 {
						continue // some buckets idle: they leave the writer
					}
					if err := w.Write(ctx, kv.Insert, []any{k, "v" + string(rune('a'+id))}); err != nil {
						t.Fatal(err)
					}
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := committer.Commit(ctx, id, msgs); err != nil {
					t.Fatal(err)
				}
				var sum, largest int64
				for _, b := range w.order {
					if b.lookup == nil {
						continue
					}
					for _, c := range b.lookup.records {
						sum += c.bytes
						largest = max(largest, c.bytes)
					}
				}
				if sum != w.lookupUsed {
					t.Fatalf("commit %d: lookupUsed %d, the caches hold %d", id, w.lookupUsed, sum)
				}
				if sum > w.lookupBudget && sum > largest {
					t.Fatalf("commit %d: caches hold %d bytes in several files, budget %d", id, sum, w.lookupBudget)
				}
			}
			if budget == "256mb" && w.lookupUsed == 0 {
				t.Errorf("nothing cached with a large budget: the test does not exercise the cache")
			}
		})
	}
}
