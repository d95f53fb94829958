package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// snapshotReadParallelism bounds the snapshot files read at once by
// `paimon snapshots` (each is one small GET on S3).
const snapshotReadParallelism = 8

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "Show a table: schema with field ids, partition keys, options, snapshots, files and bytes per partition, consumers",
		Flags: append(tableFlags(),
			&cli.BoolFlag{Name: flagJSON, Usage: "print one JSON object instead of text"},
		),
		Action: paimonAction(runInfo),
	}
}

func snapshotsCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshots",
		Usage: "List the snapshots of a table: id, kind, commit user and identifier, time, total and delta records",
		Flags: append(tableFlags(),
			&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array (keys as in Paimon's $snapshots system table)"},
		),
		Action: paimonAction(runSnapshots),
	}
}

func filesCommand() *cli.Command {
	return &cli.Command{
		Name:  "files",
		Usage: "List the live data files of a snapshot: partition, bucket, name, rows, bytes, sequence range, level",
		Flags: append(tableFlags(),
			&cli.Int64Flag{Name: "snapshot", DefaultText: "the latest", Usage: "the snapshot id"},
			partitionFlag("only partitions matching k=v[,k2=v2] (repeatable: any of them)"),
			&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array (keys as in Paimon's $files system table)"},
		),
		Action: paimonAction(runFiles),
	}
}

// snapshotRow is one snapshot as listed; the JSON keys are the columns of
// Paimon's $snapshots system table (SnapshotsTable.java).
type snapshotRow struct {
	ID                   int64  `json:"snapshot_id"`
	SchemaID             int64  `json:"schema_id"`
	CommitUser           string `json:"commit_user"`
	CommitIdentifier     int64  `json:"commit_identifier"`
	CommitKind           string `json:"commit_kind"`
	CommitTime           string `json:"commit_time"`
	CommitTimeMillis     int64  `json:"commit_time_millis"`
	BaseManifestList     string `json:"base_manifest_list"`
	DeltaManifestList    string `json:"delta_manifest_list"`
	TotalRecordCount     *int64 `json:"total_record_count"`
	DeltaRecordCount     *int64 `json:"delta_record_count"`
	ChangelogRecordCount *int64 `json:"changelog_record_count,omitempty"`
	Watermark            *int64 `json:"watermark,omitempty"`
}

func newSnapshotRow(s *snapshot.Snapshot) snapshotRow {
	return snapshotRow{
		ID: s.ID, SchemaID: s.SchemaID, CommitUser: s.CommitUser, CommitIdentifier: s.CommitIdentifier,
		CommitKind: string(s.CommitKind), CommitTime: formatTime(s.TimeMillis), CommitTimeMillis: s.TimeMillis,
		BaseManifestList: s.BaseManifestList, DeltaManifestList: s.DeltaManifestList,
		TotalRecordCount: s.TotalRecordCount, DeltaRecordCount: s.DeltaRecordCount,
		ChangelogRecordCount: s.ChangelogRecordCount, Watermark: s.Watermark,
	}
}

func count(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// readSnapshots reads the snapshots ids concurrently; snapshots expired
// while listing are left out.
func readSnapshots(ctx context.Context, m *snapshot.Manager, ids []int64) ([]*snapshot.Snapshot, error) {
	out := make([]*snapshot.Snapshot, len(ids))
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(snapshotReadParallelism, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s, err := m.Get(ctx, ids[i])
				if err != nil && !errors.Is(err, snapshot.ErrSnapshotNotFound) {
					errs[i] = err
				}
				out[i] = s
			}
		}()
	}
sendLoop:
	for i := range ids {
		select {
		case next <- i:
		case <-ctx.Done():
			break sendLoop
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, s := range out {
		if s != nil {
			kept = append(kept, s)
		}
	}
	return kept, nil
}

func runSnapshots(s *session, c *cli.Context) error {
	ids, err := s.tbl.Snapshots().ListIDs(s.ctx)
	if err != nil {
		return err
	}
	snaps, err := readSnapshots(s.ctx, s.tbl.Snapshots(), ids)
	if err != nil {
		return err
	}
	rows := make([]snapshotRow, len(snaps))
	for i, sn := range snaps {
		rows[i] = newSnapshotRow(sn)
	}
	summary := fmt.Sprintf("%s: %d %s", s.name(), len(rows), plural(int64(len(rows)), "snapshot", "snapshots"))
	if len(rows) > 0 {
		summary += fmt.Sprintf(" (%d..%d)", rows[0].ID, rows[len(rows)-1].ID)
	}
	if c.Bool(flagJSON) {
		return s.writeJSON(rows, summary)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "ID\tKIND\tCOMMIT TIME (UTC)\tCOMMIT USER\tIDENTIFIER\tSCHEMA\tTOTAL RECORDS\tDELTA RECORDS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.CommitKind, r.CommitTime, r.CommitUser, r.CommitIdentifier,
			r.SchemaID, count(r.TotalRecordCount), count(r.DeltaRecordCount))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out, summary)
	return nil
}

// fileRow is one live data file; the JSON keys follow Paimon's $files
// system table (FilesTable.java) where it has the column.
type fileRow struct {
	Partition         string   `json:"partition"`
	Bucket            int32    `json:"bucket"`
	FilePath          string   `json:"file_path"`
	FileName          string   `json:"file_name"`
	FileFormat        string   `json:"file_format"`
	SchemaID          int64    `json:"schema_id"`
	Level             int32    `json:"level"`
	RecordCount       int64    `json:"record_count"`
	FileSizeInBytes   int64    `json:"file_size_in_bytes"`
	MinSequenceNumber int64    `json:"min_sequence_number"`
	MaxSequenceNumber int64    `json:"max_sequence_number"`
	CreationTime      string   `json:"creation_time,omitempty"`
	FileSource        string   `json:"file_source,omitempty"`
	ExtraFiles        []string `json:"extra_files,omitempty"`
}

// liveFiles returns the live files of snapshot id (0 = latest) that match
// specs, in the order of sortEntries, and the snapshot (nil when the table
// has none).
func liveFiles(s *session, id int64, specs partition.Filter) ([]fileRow, *snapshot.Snapshot, error) {
	var snap *snapshot.Snapshot
	var err error
	if id == 0 {
		snap, err = s.tbl.Snapshots().Latest(s.ctx)
	} else {
		snap, err = s.tbl.Snapshots().Get(s.ctx, id)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			return nil, nil, fmt.Errorf("snapshot %d of %s does not exist (expired or never written; see `paimon snapshots`)", id, s.name())
		}
	}
	if err != nil || snap == nil {
		return nil, nil, err
	}
	entries, err := s.tbl.Planner().LiveEntries(s.ctx, snap, nil)
	if err != nil {
		return nil, nil, err
	}
	sch := s.tbl.Schema()
	namer, err := newPartitionNamer(sch)
	if err != nil {
		return nil, nil, err
	}
	parts, err := livePartitions(namer, entries)
	if err != nil {
		return nil, nil, err
	}
	match, err := bindSpecs(specs, namer.Keys(), parts)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{}
	kept := entries[:0]
	for _, e := range entries {
		p, err := namer.Of(e.Partition)
		if err != nil {
			return nil, nil, fmt.Errorf("file %s: %w", e.File.FileName, err)
		}
		if !match.Match(p.Values) {
			continue
		}
		names[string(e.Partition)] = p.Name
		kept = append(kept, e)
	}
	sortEntries(kept, names)
	dataDir := strings.Trim(sch.Opts().DataFilePathDirectory(), "/")
	rows := make([]fileRow, len(kept))
	for i, e := range kept {
		p, _ := namer.Of(e.Partition)
		rows[i] = newFileRow(s.tbl, e, p, dataDir)
	}
	return rows, snap, nil
}

func newFileRow(tbl *lakecore.Table, e manifest.Entry, p *binrow.Partition, dataDir string) fileRow {
	f := e.File
	r := fileRow{
		Partition: p.Name, Bucket: e.Bucket, FileName: f.FileName, SchemaID: f.SchemaID, Level: f.Level,
		RecordCount: f.RowCount, FileSizeInBytes: f.FileSize, MinSequenceNumber: f.MinSequenceNumber,
		MaxSequenceNumber: f.MaxSequenceNumber, ExtraFiles: f.ExtraFiles,
	}
	if f.ExternalPath != nil && *f.ExternalPath != "" {
		r.FilePath = *f.ExternalPath
	} else {
		r.FilePath = path.Join(tbl.Path(), dataDir, p.Dir, fmt.Sprintf("bucket-%d", e.Bucket), f.FileName)
	}
	if i := strings.LastIndexByte(f.FileName, '.'); i >= 0 {
		r.FileFormat = f.FileName[i+1:]
	}
	if f.CreationTimeMillis != nil {
		// Java stores the writer's local wall clock (LocalDateTime) as if
		// it were UTC (DataFileMeta.creationTime), so it has no zone.
		r.CreationTime = time.UnixMilli(*f.CreationTimeMillis).UTC().Format("2006-01-02T15:04:05.000")
	}
	if f.FileSource != nil {
		switch *f.FileSource {
		case 0:
			r.FileSource = "APPEND"
		case 1:
			r.FileSource = "COMPACT"
		}
	}
	return r
}

func runFiles(s *session, c *cli.Context) error {
	specs, err := partitionSpecs(s, c)
	if err != nil {
		return err
	}
	rows, snap, err := liveFiles(s, c.Int64("snapshot"), specs)
	if err != nil {
		return err
	}
	var n, bytes int64
	parts := map[string]bool{}
	for _, r := range rows {
		n += r.RecordCount
		bytes += r.FileSizeInBytes
		parts[r.Partition] = true
	}
	var summary string
	if snap == nil {
		summary = fmt.Sprintf("%s: no snapshot, no files", s.name())
	} else {
		summary = fmt.Sprintf("%s: %d %s, %d %s, %s in %d %s (snapshot %d)", s.name(), len(rows), plural(int64(len(rows)), "file", "files"),
			n, plural(n, "row", "rows"), formatBytes(bytes), len(parts), plural(int64(len(parts)), "partition", "partitions"), snap.ID)
	}
	if c.Bool(flagJSON) {
		if rows == nil {
			rows = []fileRow{}
		}
		return s.writeJSON(rows, summary)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "PARTITION\tBUCKET\tFILE\tROWS\tBYTES\tSEQUENCE\tLEVEL")
	for _, r := range rows {
		part := r.Partition
		if part == "" {
			part = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d-%d\t%d\n", part, r.Bucket, r.FileName, r.RecordCount, r.FileSizeInBytes,
			r.MinSequenceNumber, r.MaxSequenceNumber, r.Level)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out, summary)
	return nil
}

// infoReport is what `paimon info` shows.
type infoReport struct {
	Table          string            `json:"table"`
	Warehouse      string            `json:"warehouse"`
	Path           string            `json:"path"`
	SchemaID       int64             `json:"schema_id"`
	Fields         []infoField       `json:"fields"`
	HighestFieldID int               `json:"highest_field_id"`
	PartitionKeys  []string          `json:"partition_keys"`
	Options        map[string]string `json:"options"`
	Comment        *string           `json:"comment,omitempty"`
	Snapshots      infoSnapshots     `json:"snapshots"`
	Latest         *snapshotRow      `json:"latest_snapshot,omitempty"`
	Partitions     []infoPartition   `json:"partitions"`
	Total          infoPartition     `json:"total"`
	Consumers      []infoConsumer    `json:"consumers"`
	Tags           []infoTag         `json:"tags"`
}

type infoField struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type infoSnapshots struct {
	Count    int   `json:"count"`
	Earliest int64 `json:"earliest,omitempty"`
	Latest   int64 `json:"latest,omitempty"`
}

type infoPartition struct {
	Partition string `json:"partition"`
	Buckets   int    `json:"buckets"`
	Files     int64  `json:"files"`
	Rows      int64  `json:"rows"`
	Bytes     int64  `json:"bytes"`
}

type infoConsumer struct {
	ID           string `json:"id"`
	NextSnapshot int64  `json:"next_snapshot"`
	Updated      string `json:"updated"`
	// Expired is set when the consumer's next snapshot no longer exists:
	// its reader fell behind snapshot expiry.
	Expired bool `json:"expired"`
}

type infoTag struct {
	Name       string `json:"name"`
	SnapshotID int64  `json:"snapshot_id"`
}

// infoFields lists fields with their ids, nested ROW fields as
// "parent.child" after their parent.
func infoFields(fields []types.DataField, prefix string, out []infoField) []infoField {
	for _, f := range fields {
		out = append(out, infoField{ID: f.ID, Name: prefix + f.Name, Type: f.Type.String()})
		if f.Type.Kind == types.KindRow {
			out = infoFields(f.Type.Fields, prefix+f.Name+".", out)
		}
	}
	return out
}

func gatherInfo(s *session) (*infoReport, error) {
	sch := s.tbl.Schema()
	r := &infoReport{
		Table: s.name(), Warehouse: s.conf.Warehouse, Path: s.tbl.Path(), SchemaID: sch.ID,
		Fields: infoFields(sch.Fields, "", nil), HighestFieldID: sch.HighestFieldID,
		PartitionKeys: sch.PartitionKeys, Options: sch.Options, Comment: sch.Comment,
		Partitions: []infoPartition{}, Consumers: []infoConsumer{}, Tags: []infoTag{},
	}
	if r.PartitionKeys == nil {
		r.PartitionKeys = []string{}
	}
	if r.Options == nil {
		r.Options = map[string]string{}
	}
	ids, err := s.tbl.Snapshots().ListIDs(s.ctx)
	if err != nil {
		return nil, err
	}
	r.Snapshots.Count = len(ids)
	if len(ids) > 0 {
		r.Snapshots.Earliest, r.Snapshots.Latest = ids[0], ids[len(ids)-1]
	}
	snap, err := s.tbl.Snapshots().Latest(s.ctx)
	if err != nil {
		return nil, err
	}
	if snap != nil {
		row := newSnapshotRow(snap)
		r.Latest = &row
		stats, err := s.tbl.PartitionStats(s.ctx, snap)
		if err != nil {
			return nil, err
		}
		for _, p := range stats {
			r.Partitions = append(r.Partitions, infoPartition{Partition: p.Partition.Name, Buckets: p.Buckets, Files: p.Files, Rows: p.Rows, Bytes: p.Bytes})
			r.Total.Buckets += p.Buckets
			r.Total.Files += p.Files
			r.Total.Rows += p.Rows
			r.Total.Bytes += p.Bytes
		}
	}
	r.Total.Partition = "total"

	consumers, err := s.tbl.Consumers().ListInfo(s.ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range consumers {
		r.Consumers = append(r.Consumers, infoConsumer{
			ID: c.ID, NextSnapshot: c.Consumer.NextSnapshot, Updated: formatTime(c.ModTime.UnixMilli()),
			Expired: len(ids) > 0 && c.Consumer.NextSnapshot < r.Snapshots.Earliest,
		})
	}
	tags, err := s.tbl.Tags().List(s.ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		it := infoTag{Name: t.Name}
		if t.Snapshot != nil {
			it.SnapshotID = t.Snapshot.ID
		}
		r.Tags = append(r.Tags, it)
	}
	return r, nil
}

func (r *infoReport) summary() string {
	return fmt.Sprintf("%s: %d %s, %d %s, %d %s (%s) in %d %s", r.Table,
		len(r.Fields), plural(int64(len(r.Fields)), "field", "fields"),
		r.Snapshots.Count, plural(int64(r.Snapshots.Count), "snapshot", "snapshots"),
		r.Total.Files, plural(r.Total.Files, "file", "files"), formatBytes(r.Total.Bytes),
		len(r.Partitions), plural(int64(len(r.Partitions)), "partition", "partitions"))
}

func runInfo(s *session, c *cli.Context) error {
	r, err := gatherInfo(s)
	if err != nil {
		return err
	}
	if c.Bool(flagJSON) {
		return s.writeJSON(r, r.summary())
	}
	w := s.out
	fmt.Fprintf(w, "Table:           %s\n", r.Table)
	fmt.Fprintf(w, "Location:        %s\n", strings.TrimSuffix(r.Warehouse, "/")+"/"+r.Path)
	fmt.Fprintf(w, "Schema:          %d (highest field id %d)\n", r.SchemaID, r.HighestFieldID)
	if r.Comment != nil {
		fmt.Fprintf(w, "Comment:         %s\n", *r.Comment)
	}
	fmt.Fprintln(w, "Fields:")
	tw := newIndentedTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE")
	for _, f := range r.Fields {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", f.ID, f.Name, f.Type)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.PartitionKeys) == 0 {
		fmt.Fprintln(w, "Partition keys:  none (unpartitioned)")
	} else {
		fmt.Fprintf(w, "Partition keys:  %s\n", strings.Join(r.PartitionKeys, ", "))
	}
	fmt.Fprintln(w, "Options:")
	keys := make([]string, 0, len(r.Options))
	for k := range r.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s = %s\n", k, r.Options[k])
	}
	if r.Snapshots.Count == 0 {
		fmt.Fprintln(w, "Snapshots:       none")
	} else {
		fmt.Fprintf(w, "Snapshots:       %d (earliest %d, latest %d)\n", r.Snapshots.Count, r.Snapshots.Earliest, r.Snapshots.Latest)
	}
	if l := r.Latest; l != nil {
		fmt.Fprintf(w, "Latest snapshot: %d %s at %s, commit user %s, identifier %d, %s total records\n",
			l.ID, l.CommitKind, l.CommitTime, l.CommitUser, l.CommitIdentifier, count(l.TotalRecordCount))
		fmt.Fprintf(w, "Files of snapshot %d:\n", l.ID)
		tw := newIndentedTable(w)
		fmt.Fprintln(tw, "PARTITION\tBUCKETS\tFILES\tROWS\tBYTES\tSIZE")
		for _, p := range append(r.Partitions, r.Total) {
			name := p.Partition
			if name == "" {
				name = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", name, p.Buckets, p.Files, p.Rows, p.Bytes, formatBytes(p.Bytes))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Consumers) == 0 {
		fmt.Fprintln(w, "Consumers:       none")
	} else {
		fmt.Fprintln(w, "Consumers:")
		tw := newIndentedTable(w)
		fmt.Fprintln(tw, "ID\tNEXT SNAPSHOT\tUPDATED (UTC)\tSTATE")
		for _, c := range r.Consumers {
			state := "ok"
			if c.Expired {
				state = fmt.Sprintf("behind expiry (earliest snapshot is %d)", r.Snapshots.Earliest)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", c.ID, c.NextSnapshot, c.Updated, state)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Tags) == 0 {
		fmt.Fprintln(w, "Tags:            none")
	} else {
		parts := make([]string, len(r.Tags))
		for i, t := range r.Tags {
			parts[i] = fmt.Sprintf("%s (snapshot %d)", t.Name, t.SnapshotID)
		}
		fmt.Fprintf(w, "Tags:            %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, r.summary())
	return nil
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// newIndentedTable is a table indented by two spaces under a heading.
func newIndentedTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&indentWriter{w: w, lineStart: true}, 0, 0, 2, ' ', 0)
}

// indentWriter prefixes every line with two spaces (tabwriter writes lines
// cell by cell, so it tracks where lines start).
type indentWriter struct {
	w         io.Writer
	lineStart bool
}

func (i *indentWriter) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if i.lineStart {
			b.WriteString("  ")
		}
		b.WriteRune(c)
		i.lineStart = c == '\n'
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeJSON prints v as indented JSON on stdout and the summary line on
// stderr, so that stdout stays one JSON document.
func (s *session) writeJSON(v any, summary string) error {
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	fmt.Fprintln(s.errOut, summary)
	return nil
}
