//go:build interop

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// specFile is a write spec (README.md "Write specs"); Go runs the ones whose
// steps lakecore offers and builds its own in the same form.
type specFile struct {
	Description         string            `json:"description,omitempty"`
	Schema              []specField       `json:"schema,omitempty"`
	PartitionKeys       []string          `json:"partitionKeys,omitempty"`
	PrimaryKeys         []string          `json:"primaryKeys,omitempty"`
	Options             map[string]string `json:"options,omitempty"`
	CommitUser          string            `json:"commitUser,omitempty"`
	Filters             []string          `json:"filters,omitempty"`
	ExpectJavaSnapshots [][]any           `json:"expectJavaSnapshots,omitempty"`
	Commits             []specCommit      `json:"commits"`
}

type specField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type specCommit struct {
	Kind              string             `json:"kind"`
	Rows              []json.RawMessage  `json:"rows,omitempty"`
	Partition         map[string]*string `json:"partition,omitempty"`
	AddColumns        []specField        `json:"addColumns,omitempty"`
	RenameColumns     json.RawMessage    `json:"renameColumns,omitempty"`
	DropColumns       json.RawMessage    `json:"dropColumns,omitempty"`
	UpdateColumnTypes json.RawMessage    `json:"updateColumnTypes,omitempty"`
	SetOptions        json.RawMessage    `json:"setOptions,omitempty"`
	RemoveOptions     json.RawMessage    `json:"removeOptions,omitempty"`
	ID                string             `json:"id,omitempty"`
	NextSnapshot      int64              `json:"nextSnapshot,omitempty"`
	RetainMax         int                `json:"retainMax,omitempty"`
	RetainMin         int                `json:"retainMin,omitempty"`
}

func loadSpec(path string) (*specFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s specFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	return &s, nil
}

// specNames returns the testdata/specs files, sorted, without extension.
func specNames(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(env.here, "testdata", "specs", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no specs in testdata/specs: %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	sort.Strings(names)
	return names
}

func specPath(name string) string { return filepath.Join(env.here, "testdata", "specs", name+".json") }

// errNotForGo marks a spec step lakecore does not offer.
var errNotForGo = errors.New("not offered by lakecore")

// goStepsUnsupported returns why Go cannot run a spec ("" if it can):
// lakecore's only schema change is AddColumns.
func goStepsUnsupported(s *specFile) string {
	for _, c := range s.Commits {
		if c.Kind == "alter" && (c.RenameColumns != nil || c.DropColumns != nil || c.UpdateColumnTypes != nil ||
			c.SetOptions != nil || c.RemoveOptions != nil) {
			return "lakecore's schema evolution is AddColumns only (no rename, drop, type change or option change)"
		}
	}
	if len(s.PrimaryKeys) > 0 {
		return "lakecore writes append tables only"
	}
	return ""
}

// snapState is what Go expects a snapshot to hold.
type snapState struct {
	id     int64
	kind   string
	fields []types.DataField // the fields rows are in (the writer's schema)
	rows   [][]any
}

// goTable is a table Go wrote from a spec, with the expected contents of
// every snapshot it made.
type goTable struct {
	name  string
	ref   tableRef
	spec  *specFile
	tb    *lakecore.Table
	user  string
	ident int64

	writer    *write.TableWriter
	committer *commit.Committer
	fields    []types.DataField // current schema's fields
	rows      [][]any           // current contents, in fields
	states    map[int64]*snapState
	lastID    int64
}

// runGoSpec creates the table of s in warehouse wh (database "interop") and
// runs its steps with lakecore.
func runGoSpec(t *testing.T, wh, name string, s *specFile) *goTable {
	t.Helper()
	ctx := ctxT(t)
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	var fields []types.DataField
	for _, f := range s.Schema {
		typ, err := types.Parse(f.Type)
		if err != nil {
			t.Fatalf("spec %s: column %s: %v", name, f.Name, err)
		}
		fields = append(fields, types.DataField{Name: f.Name, Type: typ})
	}
	tb, err := cat.CreateTable(ctx, "interop", name, lakecore.TableSpec{Fields: fields, PartitionKeys: s.PartitionKeys, Options: s.Options})
	if err != nil {
		t.Fatalf("Go creates %s: %v", name, err)
	}
	g := &goTable{
		name: name, ref: tableRef{wh, "interop", name}, spec: s, tb: tb,
		user: "interop-go", states: map[int64]*snapState{}, fields: tb.Schema().Fields,
	}
	g.committer = tb.NewCommitter(g.user)
	for i, c := range s.Commits {
		if err := g.step(ctx, c); err != nil {
			t.Fatalf("Go runs %s step %d (%s): %v", name, i, c.Kind, err)
		}
	}
	return g
}

func (g *goTable) step(ctx context.Context, c specCommit) error {
	switch c.Kind {
	case "append", "overwrite":
		rows, err := g.parseRows(c.Rows)
		if err != nil {
			return err
		}
		if c.Kind == "append" {
			return g.appendRows(ctx, rows)
		}
		return g.overwrite(ctx, c.Partition, rows)
	case "alter":
		if c.RenameColumns != nil || c.DropColumns != nil || c.UpdateColumnTypes != nil || c.SetOptions != nil || c.RemoveOptions != nil {
			return fmt.Errorf("%w: only addColumns", errNotForGo)
		}
		var add []types.DataField
		for _, f := range c.AddColumns {
			typ, err := types.Parse(f.Type)
			if err != nil {
				return err
			}
			add = append(add, types.DataField{Name: f.Name, Type: typ})
		}
		return g.addColumns(ctx, add)
	case "compact":
		return g.compact(ctx)
	case "consumer":
		return g.tb.Consumers().Put(ctx, c.ID, snapshot.Consumer{NextSnapshot: c.NextSnapshot})
	case "expire":
		retainMin := c.RetainMin
		if retainMin == 0 {
			retainMin = 1
		}
		return g.expire(ctx, c.RetainMax, retainMin)
	}
	return fmt.Errorf("unknown step kind %q", c.Kind)
}

func (g *goTable) parseRows(raw []json.RawMessage) ([][]any, error) {
	rows := make([][]any, len(raw))
	for i, r := range raw {
		v, err := decodeJSON(r)
		if err != nil {
			return nil, err
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("row %d is not an object", i)
		}
		if rows[i], err = rowFromJSON(g.fields, obj); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return rows, nil
}

// prepare writes rows with the table's writer and returns the messages.
func (g *goTable) prepare(ctx context.Context, rows [][]any) ([]commit.Message, error) {
	if g.writer == nil {
		w, err := g.tb.NewWriter(ctx)
		if err != nil {
			return nil, err
		}
		g.writer = w
	}
	for _, r := range rows {
		if err := g.writer.Write(ctx, r); err != nil {
			return nil, err
		}
	}
	return g.writer.Prepare(ctx)
}

func (g *goTable) appendRows(ctx context.Context, rows [][]any) error {
	msgs, err := g.prepare(ctx, rows)
	if err != nil {
		return err
	}
	g.ident++
	if _, err := g.committer.Commit(ctx, g.ident, msgs); err != nil {
		return err
	}
	g.rows = append(g.rows, rows...)
	return g.record(ctx)
}

// overwrite is the spec's overwrite: a partition map naming every key
// replaces that partition; a partial or empty one (dynamic-partition-
// overwrite, Paimon's default) replaces the partitions receiving rows; an
// unpartitioned table is replaced whole.
func (g *goTable) overwrite(ctx context.Context, spec map[string]*string, rows [][]any) error {
	msgs, err := g.prepare(ctx, rows)
	if err != nil {
		return err
	}
	keys := g.tb.Schema().PartitionFields()
	var parts [][]byte
	switch {
	case len(keys) == 0:
		parts = nil
	case len(spec) == len(keys):
		vals := make([]any, len(keys))
		for i, k := range keys {
			s, ok := spec[k.Name]
			if !ok {
				return fmt.Errorf("overwrite partition %v does not name key %s", spec, k.Name)
			}
			if s != nil {
				if vals[i], err = parseCanonicalScalar(k.Type, *s); err != nil {
					return err
				}
			}
		}
		p, err := binrow.Serialize(partTypes(keys), vals)
		if err != nil {
			return err
		}
		parts = [][]byte{p}
	default:
		if v, _ := g.tb.Schema().Opts().Get("dynamic-partition-overwrite"); strings.EqualFold(v, "false") {
			return fmt.Errorf("%w: static overwrite with a partial partition", errNotForGo)
		}
		parts = commit.PartitionsOf(msgs)
		if parts == nil {
			parts = [][]byte{}
		}
	}
	g.ident++
	if _, err := g.committer.Overwrite(ctx, g.ident, parts, msgs); err != nil {
		return err
	}
	if parts == nil {
		g.rows = nil
	} else {
		drop := map[string]bool{}
		for _, p := range parts {
			drop[string(p)] = true
		}
		var kept [][]any
		for _, r := range g.rows {
			p, err := g.partitionOf(r)
			if err != nil {
				return err
			}
			if !drop[string(p)] {
				kept = append(kept, r)
			}
		}
		g.rows = kept
	}
	g.rows = append(g.rows, rows...)
	return g.record(ctx)
}

func partTypes(keys []types.DataField) []types.DataType {
	ts := make([]types.DataType, len(keys))
	for i, k := range keys {
		ts[i] = k.Type
	}
	return ts
}

func (g *goTable) partitionOf(row []any) ([]byte, error) {
	keys := g.tb.Schema().PartitionFields()
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i] = row[types.FieldByName(g.fields, k.Name)]
	}
	return binrow.Serialize(partTypes(keys), vals)
}

func (g *goTable) addColumns(ctx context.Context, add []types.DataField) error {
	s, err := g.tb.AddColumns(ctx, add)
	if err != nil {
		return err
	}
	g.rows = project(g.fields, g.rows, s.Fields)
	g.fields = s.Fields
	g.writer = nil // a writer keeps its schema
	return nil
}

func (g *goTable) compact(ctx context.Context) error {
	if _, err := g.tb.Compact(ctx, maintain.CompactOptions{Full: true}); err != nil {
		return err
	}
	return g.record(ctx)
}

func (g *goTable) expire(ctx context.Context, retainMax, retainMin int) error {
	if _, err := g.tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{
		// no time-based expiry: exactly retainMax stay (unless a consumer
		// needs more), as the oracles' expire (snapshotTimeRetain = max)
		RetainMax: retainMax, RetainMin: retainMin, OlderThan: time.UnixMilli(1),
	}); err != nil {
		return err
	}
	return g.forgetExpired(ctx)
}

// forgetExpired drops the states of snapshots no longer on disk.
func (g *goTable) forgetExpired(ctx context.Context) error {
	ids, err := g.tb.Snapshots().ListIDs(ctx)
	if err != nil {
		return err
	}
	for id := range g.states {
		if !slices.Contains(ids, id) {
			delete(g.states, id)
		}
	}
	return nil
}

// record notes the snapshots committed since the last call: each holds the
// current rows.
func (g *goTable) record(ctx context.Context) error {
	latest, ok, err := g.tb.Snapshots().LatestID(ctx)
	if err != nil || !ok {
		return fmt.Errorf("latest snapshot: %v", err)
	}
	for id := g.lastID + 1; id <= latest; id++ {
		s, err := g.tb.Snapshots().Get(ctx, id)
		if err != nil {
			return err
		}
		g.states[id] = &snapState{id: id, kind: string(s.CommitKind), fields: g.fields, rows: slices.Clone(g.rows)}
	}
	g.lastID = latest
	return nil
}

// liveIDs returns the ids of the snapshots Go expects on disk, ascending.
func (g *goTable) liveIDs() []int64 {
	var ids []int64
	for id := range g.states {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// project maps rows of fields `from` onto fields `to` by field id (NULL for
// a field rows do not have).
func project(from []types.DataField, rows [][]any, to []types.DataField) [][]any {
	idx := make([]int, len(to))
	for i, f := range to {
		idx[i] = -1
		for j, h := range from {
			if h.ID == f.ID {
				idx[i] = j
			}
		}
	}
	out := make([][]any, len(rows))
	for r, row := range rows {
		nr := make([]any, len(to))
		for i, j := range idx {
			if j >= 0 {
				nr[i] = row[j]
			}
		}
		out[r] = nr
	}
	return out
}

// goReadSnapshot reads snapshot id (0 = latest) of a table with lakecore:
// as the snapshot's own schema for an id (what the oracles' --snapshot
// does), as the table's latest schema through ReadAll for the latest.
func goReadSnapshot(ctx context.Context, tb *lakecore.Table, id int64) ([]types.DataField, [][]any, error) {
	if id == 0 {
		if err := tb.Refresh(ctx); err != nil {
			return nil, nil, err
		}
		rows, err := tb.ReadAll(ctx, 0)
		return tb.Schema().Fields, rows, err
	}
	snap, err := tb.Snapshots().Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	sch, err := tb.Schemas().Get(ctx, snap.SchemaID)
	if err != nil {
		return nil, nil, err
	}
	plan, err := tb.Planner().Full(ctx, snap, nil)
	if err != nil {
		return nil, nil, err
	}
	r, err := read.NewTableRead(tb.FileIO(), tb.Path(), sch, nil)
	if err != nil {
		return nil, nil, err
	}
	var rows [][]any
	for _, split := range plan.Splits {
		got, err := readSplit(ctx, r, split)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, got...)
	}
	return sch.Fields, rows, nil
}

// readSplit returns every row of one split.
func readSplit(ctx context.Context, r *read.TableRead, split scan.Split) ([][]any, error) {
	it, err := r.Open(ctx, split)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for {
		next, err := it.Next(ctx)
		batch := next.Rows
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = it.Close()
			return nil, err
		}
		rows = append(rows, batch...)
	}
	return rows, it.Close()
}

// keyFilters returns an equality filter per distinct value (and IS NULL)
// of the partition keys and the bucket key of a table: a row missing from
// such a read means a wrong partition or bucket.
func keyFilters(fields []types.DataField, rows [][]any, partitionKeys []string, opts map[string]string) []string {
	var cols []string
	cols = append(cols, partitionKeys...)
	var out []string
	if b := opts["bucket"]; b != "" && b != "-1" {
		if k := opts["bucket-key"]; k != "" && !strings.Contains(k, ",") {
			cols = append(cols, k)
		} else if k != "" {
			// a composite bucket key: Java prunes buckets with equality on
			// all its columns
			keys := strings.Split(k, ",")
			seen := map[string]bool{}
			for _, r := range rows {
				var conds []string
				for _, c := range keys {
					i := types.FieldByName(fields, strings.TrimSpace(c))
					if i < 0 || r[i] == nil {
						conds = nil
						break
					}
					lit, ok := filterLiteral(fields[i].Type, r[i])
					if !ok {
						conds = nil
						break
					}
					conds = append(conds, "`"+fields[i].Name+"` = "+lit)
				}
				if f := strings.Join(conds, " AND "); f != "" && !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	for _, c := range cols {
		i := types.FieldByName(fields, c)
		if i < 0 {
			continue
		}
		seen := map[string]bool{}
		for _, r := range rows {
			var f string
			if r[i] == nil {
				f = "`" + c + "` IS NULL"
			} else {
				lit, ok := filterLiteral(fields[i].Type, r[i])
				if !ok {
					continue
				}
				f = "`" + c + "` = " + lit
			}
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// filterLiteral writes a value as a --filter literal.
func filterLiteral(t types.DataType, v any) (string, bool) {
	var b strings.Builder
	if err := canonicalValue(&b, t, v); err != nil {
		return "", false
	}
	s := b.String()
	switch t.Kind {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return s, true
	case types.KindFloat, types.KindDouble:
		// a number literal; -0.0 and the non-finite values have none (the
		// oracles read numbers as BigDecimal)
		if strings.HasPrefix(s, `"`) || s == "-0.0" {
			return "", false
		}
		return s, true
	case types.KindBoolean:
		return strings.ToUpper(s), true
	case types.KindChar, types.KindVarChar, types.KindDate, types.KindTimestamp, types.KindLocalZonedTimestamp, types.KindDecimal:
		str, ok := v.(string)
		if !ok {
			var x string
			if err := json.Unmarshal([]byte(s), &x); err != nil {
				return "", false
			}
			str = x
		}
		return "'" + strings.ReplaceAll(str, "'", "''") + "'", true
	}
	return "", false
}
