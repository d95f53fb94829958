package lakecore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Table is an opened append table. It caches the latest schema seen
// (Schema, Refresh); everything else is read from storage on each call.
// It is safe for concurrent use.
type Table struct {
	fio       storage.FileIO
	db, name  string
	path      string
	schemas   *schema.Manager
	snapshots *snapshot.Manager
	consumers *snapshot.ConsumerManager
	planner   *scan.Planner
	// buffers serve the data files of every writer made with WriteOptions.
	buffers *datafile.WriteBuffers

	mu     sync.RWMutex
	schema *schema.TableSchema
}

func newTable(fio storage.FileIO, db, name, p string, s *schema.TableSchema) *Table {
	return &Table{
		fio: fio, db: db, name: name, path: p,
		schemas:   schema.NewManager(fio, p),
		snapshots: snapshot.NewManager(fio, p),
		consumers: snapshot.NewConsumerManager(fio, p),
		planner:   scan.NewPlanner(fio, p),
		buffers:   datafile.NewWriteBuffers(),
		schema:    s,
	}
}

// Database returns the table's database name.
func (t *Table) Database() string { return t.db }

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// Path returns the table's directory relative to the warehouse root
// ("<db>.db/<name>").
func (t *Table) Path() string { return t.path }

// FileIO returns the warehouse's storage.
func (t *Table) FileIO() storage.FileIO { return t.fio }

// Schema returns the latest schema loaded (at open or by Refresh). Treat it
// as read-only.
func (t *Table) Schema() *schema.TableSchema {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.schema
}

// Refresh reloads the latest schema, picking up columns added by other
// writers. A schema that turned the table into one lakecore cannot serve
// is refused as OpenTable refuses it, and the old schema is kept.
func (t *Table) Refresh(ctx context.Context) error {
	s, err := t.schemas.Latest(ctx)
	if err != nil {
		return fmt.Errorf("refresh table %s.%s: %w", t.db, t.name, err)
	}
	if err := checkOpenable(s); err != nil {
		return fmt.Errorf("refresh table %s.%s: %w", t.db, t.name, err)
	}
	t.mu.Lock()
	if t.schema == nil || s.ID >= t.schema.ID {
		t.schema = s
	}
	t.mu.Unlock()
	return nil
}

// Snapshots returns the table's snapshot manager.
func (t *Table) Snapshots() *snapshot.Manager { return t.snapshots }

// Schemas returns the table's schema manager.
func (t *Table) Schemas() *schema.Manager { return t.schemas }

// Consumers returns the manager of the table's consumer positions
// (<table>/consumer/consumer-<id>).
func (t *Table) Consumers() *snapshot.ConsumerManager { return t.consumers }

// Tags returns the manager of the table's tags.
func (t *Table) Tags() *snapshot.TagManager { return snapshot.NewTagManager(t.fio, t.path) }

// Planner returns the table's planner.
func (t *Table) Planner() *scan.Planner { return t.planner }

// NewRead returns a reader of the table's splits as the current schema
// (Schema), with the named columns in that order (nil = all).
func (t *Table) NewRead(projection []string) (*read.TableRead, error) {
	return read.NewTableRead(t.fio, t.path, t.Schema(), projection)
}

// NewStreamScan returns a streaming scanner of the table (see
// scan.StreamScanner); nothing is read until its first Next.
func (t *Table) NewStreamScan(o scan.StreamOptions) *scan.StreamScanner {
	return scan.NewStreamScannerWith(t.planner, t.snapshots, o)
}

// snapshotOrLatest returns snapshot id, or the latest for id 0 (nil, nil if
// the table has no snapshot).
func (t *Table) snapshotOrLatest(ctx context.Context, id int64) (*snapshot.Snapshot, error) {
	if id == 0 {
		return t.snapshots.Latest(ctx)
	}
	return t.snapshots.Get(ctx, id)
}

// ReadAll returns every row of snapshot id (0 = the latest; a table
// without snapshots gives no rows), as the current schema: the live files'
// rows, split after split in plan order, files in sequence order, rows in
// file order. It holds all rows in memory; for large tables plan and read
// split by split instead. A missing snapshot wraps ErrSnapshotNotFound.
func (t *Table) ReadAll(ctx context.Context, id int64) ([][]any, error) {
	snap, err := t.snapshotOrLatest(ctx, id)
	if err != nil || snap == nil {
		return nil, err
	}
	plan, err := t.planner.Full(ctx, snap, nil)
	if err != nil {
		return nil, err
	}
	return t.readPlan(ctx, plan)
}

// ReadDelta returns the rows of the files snapshot id (0 = the latest)
// added, as the current schema, in the order of ReadAll. For an APPEND
// snapshot these are the rows it appended; for a COMPACT snapshot the
// rewritten rows, which were already live.
func (t *Table) ReadDelta(ctx context.Context, id int64) ([][]any, error) {
	snap, err := t.snapshotOrLatest(ctx, id)
	if err != nil || snap == nil {
		return nil, err
	}
	plan, err := t.planner.Delta(ctx, snap, nil)
	if err != nil {
		return nil, err
	}
	return t.readPlan(ctx, plan)
}

func (t *Table) readPlan(ctx context.Context, plan *scan.Plan) ([][]any, error) {
	// The row counts come from metadata; do not trust them for more than a
	// capacity hint.
	out := make([][]any, 0, min(max(plan.RowCount(), 0), 1<<20))
	err := t.ReadPlan(ctx, plan, func(rows [][]any) error {
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPlan reads the rows of plan's splits as the current schema, split
// after split in plan order, files in sequence order, rows in file order,
// and calls fn with each batch as the reader yields it; the rows are fn's
// to keep. An error of fn stops the read and is returned as it is.
func (t *Table) ReadPlan(ctx context.Context, plan *scan.Plan, fn func(rows [][]any) error) error {
	return t.readSplits(ctx, plan.Snapshot.ID, plan.Splits, func(b read.Batch) error { return fn(b.Rows) })
}

// ReadChanges reads the rows of a streaming plan as the current schema
// with the row kind of each, split after split, and calls fn with each
// batch; the rows are fn's to keep. The rows of append tables and of a
// primary-key table's first full plan are merged values, kinds +I (or +U
// where Java's merge yields an update); follow-up plans of primary-key
// tables give each delta or changelog record with its own kind, without
// merging, as Java's streaming source emits them. An error of fn stops the
// read and is returned as it is.
func (t *Table) ReadChanges(ctx context.Context, plan *scan.StreamPlan, fn func(kinds []kv.RowKind, rows [][]any) error) error {
	return t.readSplits(ctx, plan.Snapshot.ID, plan.Splits, func(b read.Batch) error {
		kinds := b.Kinds
		if kinds == nil {
			kinds = make([]kv.RowKind, len(b.Rows)) // all kv.Insert
		}
		return fn(kinds, b.Rows)
	})
}

// readSplits reads splits of snapshot id with the current schema and
// calls fn with each batch.
func (t *Table) readSplits(ctx context.Context, id int64, splits []scan.Split, fn func(read.Batch) error) error {
	r, err := t.NewRead(nil)
	if err != nil {
		return err
	}
	for _, split := range splits {
		it, err := r.Open(ctx, split)
		if err != nil {
			return err
		}
		for {
			b, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = it.Close()
				return fmt.Errorf("read snapshot %d of %s.%s: %w", id, t.db, t.name, err)
			}
			if err := fn(b); err != nil {
				_ = it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return nil
}
