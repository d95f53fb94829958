package command

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func databasesCommand() *cli.Command {
	return &cli.Command{
		Name:   "databases",
		Usage:  "List the databases of a warehouse (directories <name>.db) with their table counts",
		Flags:  warehouseFlags(&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array"}),
		Action: paimonAction(runDatabases),
	}
}

func tablesCommand() *cli.Command {
	return &cli.Command{
		Name:  "tables",
		Usage: "List the tables of a database: kind, latest snapshot, rows, files and size of the latest snapshot",
		Description: "Rows, files and bytes count the live data files of each table's latest snapshot, as Paimon's\n" +
			"$partitions system table does (rows of a primary-key table are counted before merging).",
		Flags: warehouseFlags(
			&cli.StringFlag{Name: flagDatabase, Aliases: []string{"d"}, Value: config.DefaultDatabase, Usage: "the database"},
			&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array"},
		),
		Action: paimonAction(runTables),
	}
}

func schemaCommand() *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "Show the current schema of a table (fields with ids, keys, options) and the history of its schema files",
		Flags: append(tableFlags(),
			&cli.BoolFlag{Name: flagJSON, Usage: "print one JSON object: the current schema and every schema version"},
		),
		Action: paimonAction(runSchema),
	}
}

type databaseRow struct {
	Database string `json:"database"`
	Tables   int    `json:"tables"`
}

func runDatabases(s *session, c *cli.Context) error {
	dbs, err := s.cat.ListDatabases(s.ctx)
	if err != nil {
		return err
	}
	rows := []databaseRow{}
	total := 0
	for _, db := range dbs {
		tables, err := s.cat.ListTables(s.ctx, db)
		if err != nil {
			return err
		}
		rows = append(rows, databaseRow{Database: db, Tables: len(tables)})
		total += len(tables)
	}
	summary := fmt.Sprintf("%s: %d %s, %d %s", s.conf.Warehouse, len(rows), plural(int64(len(rows)), "database", "databases"),
		total, plural(int64(total), "table", "tables"))
	if c.Bool(flagJSON) {
		return s.writeJSON(rows, summary)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "DATABASE\tTABLES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\n", r.Database, r.Tables)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out, summary)
	return nil
}

// tableRow is one table of `paimon tables`.
type tableRow struct {
	Table          string   `json:"table"`
	PrimaryKeys    []string `json:"primary_keys"`
	PartitionKeys  []string `json:"partition_keys"`
	Bucket         string   `json:"bucket"`
	SchemaID       int64    `json:"schema_id"`
	LatestSnapshot int64    `json:"latest_snapshot,omitempty"`
	Partitions     int      `json:"partitions"`
	Files          int64    `json:"files"`
	Rows           int64    `json:"rows"`
	Bytes          int64    `json:"bytes"`
	// Error is set when the table could not be read; the other tables are
	// still listed.
	Error string `json:"error,omitempty"`
}

func runTables(s *session, c *cli.Context) error {
	db := s.conf.Database
	names, err := s.cat.ListTables(s.ctx, db)
	if err != nil {
		return err
	}
	rows := []tableRow{}
	var files, nrows, bytes int64
	failed := 0
	for _, name := range names {
		r := tableRow{Table: name}
		if err := fillTableRow(s, db, name, &r); err != nil {
			if s.ctx.Err() != nil {
				return err
			}
			r.Error = err.Error()
			failed++
		}
		files, nrows, bytes = files+r.Files, nrows+r.Rows, bytes+r.Bytes
		rows = append(rows, r)
	}
	summary := fmt.Sprintf("%s: %d %s, %d %s, %d %s, %s", db, len(rows), plural(int64(len(rows)), "table", "tables"),
		nrows, plural(nrows, "row", "rows"), files, plural(files, "file", "files"), formatBytes(bytes))
	if failed > 0 {
		summary += fmt.Sprintf(", %d unreadable", failed)
	}
	if c.Bool(flagJSON) {
		if err := s.writeJSON(rows, summary); err != nil {
			return err
		}
	} else {
		tw := newTable(s.out)
		fmt.Fprintln(tw, "TABLE\tKIND\tPARTITION KEYS\tBUCKET\tSCHEMA\tSNAPSHOT\tPARTITIONS\tFILES\tROWS\tSIZE")
		for _, r := range rows {
			if r.Error != "" {
				fmt.Fprintf(tw, "%s\terror: %s\n", r.Table, r.Error)
				continue
			}
			kind := "append"
			if len(r.PrimaryKeys) > 0 {
				kind = "primary key (" + strings.Join(r.PrimaryKeys, ", ") + ")"
			}
			parts, snap := "-", "-"
			if len(r.PartitionKeys) > 0 {
				parts = strings.Join(r.PartitionKeys, ", ")
			}
			if r.LatestSnapshot > 0 {
				snap = fmt.Sprint(r.LatestSnapshot)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\n", r.Table, kind, parts, r.Bucket, r.SchemaID, snap,
				r.Partitions, r.Files, r.Rows, formatBytes(r.Bytes))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(s.out, summary)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d tables of %s could not be read", failed, len(rows), db)
	}
	return nil
}

func fillTableRow(s *session, db, name string, r *tableRow) error {
	tbl, err := s.cat.OpenTable(s.ctx, db, name)
	if err != nil {
		return err
	}
	sch := tbl.Schema()
	r.PrimaryKeys, r.PartitionKeys, r.SchemaID = nonNil(sch.PrimaryKeys), nonNil(sch.PartitionKeys), sch.ID
	r.Bucket, _ = sch.Opts().Get("bucket")
	snap, err := tbl.Snapshots().Latest(s.ctx)
	if err != nil || snap == nil {
		return err
	}
	r.LatestSnapshot = snap.ID
	stats, err := tbl.PartitionStats(s.ctx, snap)
	if err != nil {
		return err
	}
	r.Partitions = len(stats)
	for _, p := range stats {
		r.Files += p.Files
		r.Rows += p.Rows
		r.Bytes += p.Bytes
	}
	return nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// schemaVersion is one schema file of `paimon schema`.
type schemaVersion struct {
	ID            int64             `json:"id"`
	Time          string            `json:"time,omitempty"`
	Fields        []infoField       `json:"fields"`
	PartitionKeys []string          `json:"partition_keys"`
	PrimaryKeys   []string          `json:"primary_keys"`
	Options       map[string]string `json:"options"`
	Comment       *string           `json:"comment,omitempty"`
	// Changes describe what changed from the previous schema file.
	Changes []string `json:"changes"`
}

func newSchemaVersion(sch *schema.TableSchema) schemaVersion {
	v := schemaVersion{
		ID: sch.ID, Fields: infoFields(sch.Fields, "", nil), PartitionKeys: nonNil(sch.PartitionKeys),
		PrimaryKeys: nonNil(sch.PrimaryKeys), Options: sch.Options, Comment: sch.Comment, Changes: []string{},
	}
	if v.Options == nil {
		v.Options = map[string]string{}
	}
	if sch.TimeMillis > 0 {
		v.Time = formatTime(sch.TimeMillis)
	}
	return v
}

// schemaChanges describes the change from prev to cur by field id (a
// renamed field keeps its id) and option key.
func schemaChanges(prev, cur *schema.TableSchema) []string {
	var out []string
	byID := func(fs []types.DataField) map[int]types.DataField {
		m := map[int]types.DataField{}
		for _, f := range fs {
			m[f.ID] = f
		}
		return m
	}
	before, after := byID(prev.Fields), byID(cur.Fields)
	var drops, renames, adds, changes []string
	for _, f := range prev.Fields {
		if _, ok := after[f.ID]; !ok {
			drops = append(drops, fmt.Sprintf("drop column %s (id %d)", f.Name, f.ID))
		}
	}
	for _, f := range cur.Fields {
		old, ok := before[f.ID]
		if !ok {
			adds = append(adds, fmt.Sprintf("add column %s %s (id %d)", f.Name, f.Type, f.ID))
			continue
		}
		if old.Name != f.Name {
			renames = append(renames, fmt.Sprintf("rename column %s to %s (id %d)", old.Name, f.Name, f.ID))
		}
		if old.Type.String() != f.Type.String() {
			changes = append(changes, fmt.Sprintf("column %s: %s -> %s", f.Name, old.Type, f.Type))
		}
		if !equalPtr(old.Description, f.Description) {
			changes = append(changes, fmt.Sprintf("column %s: comment changed", f.Name))
		}
	}
	out = append(append(append(append(out, drops...), renames...), adds...), changes...)
	if idsOrder := func(fs []types.DataField) []int {
		ids := make([]int, 0, len(fs))
		for _, f := range fs {
			if _, ok := before[f.ID]; ok {
				if _, ok := after[f.ID]; ok {
					ids = append(ids, f.ID)
				}
			}
		}
		return ids
	}; !slices.Equal(idsOrder(prev.Fields), idsOrder(cur.Fields)) {
		out = append(out, "reorder columns")
	}
	keys := slices.Sorted(maps.Keys(cur.Options))
	for _, k := range keys {
		if old, ok := prev.Options[k]; !ok || old != cur.Options[k] {
			out = append(out, fmt.Sprintf("set %s = %s", k, cur.Options[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(prev.Options)) {
		if _, ok := cur.Options[k]; !ok {
			out = append(out, fmt.Sprintf("reset %s", k))
		}
	}
	if !equalPtr(prev.Comment, cur.Comment) {
		out = append(out, "table comment changed")
	}
	return out
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

type schemaReport struct {
	Table    string          `json:"table"`
	Current  schemaVersion   `json:"current"`
	Versions []schemaVersion `json:"versions"`
}

func runSchema(s *session, c *cli.Context) error {
	all, err := s.tbl.Schemas().List(s.ctx)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return errors.New("the table has no schema file")
	}
	r := schemaReport{Table: s.name()}
	for i, sch := range all {
		v := newSchemaVersion(sch)
		if i == 0 {
			v.Changes = append(v.Changes, "create table")
		} else {
			v.Changes = append(v.Changes, schemaChanges(all[i-1], sch)...)
		}
		r.Versions = append(r.Versions, v)
	}
	r.Current = r.Versions[len(r.Versions)-1]
	cur := all[len(all)-1]
	summary := fmt.Sprintf("%s: schema %d, %d %s, %d schema %s", s.name(), cur.ID, len(cur.Fields),
		plural(int64(len(cur.Fields)), "field", "fields"), len(all), plural(int64(len(all)), "version", "versions"))
	if c.Bool(flagJSON) {
		return s.writeJSON(r, summary)
	}
	w := s.out
	fmt.Fprintf(w, "Table:           %s\n", r.Table)
	fmt.Fprintf(w, "Schema:          %d (highest field id %d)\n", cur.ID, cur.HighestFieldID)
	if cur.Comment != nil {
		fmt.Fprintf(w, "Comment:         %s\n", *cur.Comment)
	}
	fmt.Fprintln(w, "Fields:")
	tw := newIndentedTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE")
	for _, f := range r.Current.Fields {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", f.ID, f.Name, f.Type)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	keys := func(k []string) string {
		if len(k) == 0 {
			return "none"
		}
		return strings.Join(k, ", ")
	}
	fmt.Fprintf(w, "Partition keys:  %s\n", keys(cur.PartitionKeys))
	fmt.Fprintf(w, "Primary keys:    %s\n", keys(cur.PrimaryKeys))
	fmt.Fprintln(w, "Options:")
	opts := make([]string, 0, len(cur.Options))
	for k := range cur.Options {
		opts = append(opts, k)
	}
	sort.Strings(opts)
	for _, k := range opts {
		fmt.Fprintf(w, "  %s = %s\n", k, cur.Options[k])
	}
	fmt.Fprintln(w, "History:")
	tw = newIndentedTable(w)
	fmt.Fprintln(tw, "ID\tTIME (UTC)\tFIELDS\tCHANGES")
	for i, v := range r.Versions {
		t := v.Time
		if t == "" {
			t = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", v.ID, t, len(all[i].Fields), strings.Join(v.Changes, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, summary)
	return nil
}
