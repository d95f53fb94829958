package paimon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// tableSink writes the messages of one table: its committer, maintenance,
// sequence numbers, schema and source positions. The output has one per
// table it writes (one, unless table or database are interpolated).
type tableSink struct {
	conf Config // the output's, with Table and CommitUser of this table
	opts options
	log  *service.Logger
	met  *outputMetrics

	tbl       *lakecore.Table
	seq       *sequenceAllocator
	committer *groupCommitter
	maint     *maintainer
	decoder   *cdcformat.Decoder // nil without cdc_format

	// state is the schema rows are written with and its converter; it is
	// replaced (under evolveMu) when schema evolution adds columns.
	state    atomic.Pointer[writeState]
	evolveMu sync.Mutex

	lastUsed atomic.Int64 // unix nanoseconds of the last batch
}

// writeState pairs a schema with the converter for its rows.
type writeState struct {
	schema *schema.TableSchema
	conv   *rowconv.Converter
	fixed  bool // fixed-bucket table: sequence numbers to keep
	// keyed marks a primary-key table; delConv converts its retracts (-U,
	// -D), which need only the primary-key columns: every other column
	// may be missing.
	keyed   bool
	delConv *rowconv.Converter
}

func newWriteState(s *schema.TableSchema, o rowconv.ConvertOptions) (*writeState, error) {
	conv, err := rowconv.NewConverter(s.Fields, o)
	if err != nil {
		return nil, err
	}
	buckets, err := s.Opts().Bucket()
	if err != nil {
		return nil, err
	}
	st := &writeState{schema: s, conv: conv, fixed: buckets > 0, keyed: len(s.PrimaryKeys) > 0}
	if st.keyed {
		fields := slices.Clone(s.Fields)
		for i, f := range fields {
			if !slices.Contains(s.PrimaryKeys, f.Name) {
				fields[i].Type = f.Type.WithNullable(true)
			}
		}
		if st.delConv, err = rowconv.NewConverter(fields, o); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// converter returns the converter of a row of kind k.
func (st *writeState) converter(k kv.RowKind) *rowconv.Converter {
	if st.keyed && k.IsRetract() {
		return st.delConv
	}
	return st.conv
}

// openSink opens (creating it when configured to, with ct) the table conf
// names, checks it against ct, finds where the commit user's identifiers
// continue and starts the committer and maintenance goroutines.
func openSink(ctx context.Context, cat *lakecore.Catalog, conf Config, ct CreateTable, opts options,
	log *service.Logger, met *outputMetrics) (*tableSink, error) {
	t := conf.Table
	tbl, err := openOrCreate(ctx, cat, t, ct, log)
	if err != nil {
		return nil, err
	}
	s := tbl.Schema()
	if ct.Inferred {
		ct.Fields = nil // nothing configured to check
	}
	if err := checkSchema(ct, s); err != nil {
		return nil, fmt.Errorf("table %s: %w", t, err)
	}
	if err := s.CheckWritable(); err != nil {
		return nil, fmt.Errorf("table %s cannot be written: %w", t, err)
	}
	if len(s.PrimaryKeys) > 0 && conf.MaxInFlight > 1 {
		return nil, fmt.Errorf("%w: table %s has primary keys %v: set max_in_flight: 1 (it is %d), so that the changes to a key are written in order",
			errMisconfigured, t, s.PrimaryKeys, conf.MaxInFlight)
	}
	st, err := newWriteState(s, conf.Convert)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t, err)
	}
	if len(s.PrimaryKeys) > 0 && !conf.Maintenance.Compaction {
		// The output writes level-0 files only; lookup changelogs and the
		// visible rows of first-row and deletion-vectors tables come from
		// the compaction that moves them up.
		if m, err := mergetree.ParseMode(s.Options); err == nil && (m.ChangelogProducer == "lookup" || m.SkipLevel0()) {
			log.Warnf("Table %s has changelog-producer %s, merge-engine %s and deletion-vectors.enabled %t: its changelog and newest rows appear only when it is compacted; "+
				"set compaction.enabled (maintenance.interval bounds the delay) or run a compaction job beside this output", t, m.ChangelogProducer, m.Name, m.DeletionVectors)
		}
	}
	latest, err := tbl.Snapshots().LatestOfUser(ctx, conf.CommitUser)
	if err != nil {
		return nil, fmt.Errorf("table %s: find the last commit of user %q: %w", t, conf.CommitUser, err)
	}
	next := int64(1)
	if latest != nil {
		next = latest.CommitIdentifier + 1
		log.Infof("Continuing commit user %q of table %s after identifier %d (snapshot %d)",
			conf.CommitUser, t, latest.CommitIdentifier, latest.ID)
	}
	k := &tableSink{conf: conf, opts: opts, log: log, met: met, tbl: tbl, seq: newSequenceAllocator(tbl)}
	if conf.CDCFormat != "" {
		if k.decoder, err = cdcformat.NewDecoder(conf.CDCFormat); err != nil {
			return nil, err
		}
	}

	var onCommit func(*snapshot.Snapshot)
	if conf.Maintenance.active() {
		k.maint = newMaintainer(tbl, conf, log, met)
		k.maint.ran = opts.maintenanceRan
		onCommit = k.maint.trigger
	}
	co := commit.OptionsFromSchema(s, conf.CommitUser)
	co.OnRetry = func(error) { met.commitRetries.Incr(1) }
	k.committer = newGroupCommitter(commit.New(tbl.FileIO(), tbl.Path(), co), tbl.Snapshots(), next,
		4*conf.MaxInFlight+16, log, met, opts.progress, onCommit)
	if conf.SourcePosition != nil {
		if k.committer.positions, err = newPositionTracker(latest); err != nil {
			return nil, fmt.Errorf("table %s: source positions of commit user %q: %w", t, conf.CommitUser, err)
		}
	}
	k.state.Store(st)
	k.lastUsed.Store(time.Now().UnixNano())
	go k.committer.run()
	if k.maint != nil {
		go k.maint.run()
	}
	return k, nil
}

// openOrCreate opens the table, creating it first with ct when enabled.
func openOrCreate(ctx context.Context, cat *lakecore.Catalog, t config.Table, ct CreateTable, log *service.Logger) (*lakecore.Table, error) {
	tbl, err := cat.OpenTable(ctx, t.Database, t.Table)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, lakecore.ErrTableNotFound) {
		return nil, fmt.Errorf("open table %s: %w", t, err)
	}
	if !ct.Enabled {
		return nil, fmt.Errorf("table %s: %w: create it, or set create_table.enabled with a create_table.schema", t, lakecore.ErrTableNotFound)
	}
	tbl, err = cat.CreateTable(ctx, t.Database, t.Table, lakecore.TableSpec{
		Fields: ct.Fields, PartitionKeys: ct.PartitionKeys, PrimaryKeys: ct.PrimaryKeys, Options: ct.TableOptions(),
	})
	if errors.Is(err, lakecore.ErrTableExists) {
		// Another writer created it between our open and create: use theirs
		// (checkSchema then compares it with ours).
		if tbl, err = cat.OpenTable(ctx, t.Database, t.Table); err != nil {
			return nil, fmt.Errorf("open table %s created concurrently: %w", t, err)
		}
		return tbl, nil
	}
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", t, err)
	}
	log.Infof("Created table %s with %d columns, partition keys %s, primary keys %s, bucket %d",
		t, len(ct.Fields), list(ct.PartitionKeys), list(ct.PrimaryKeys), ct.Bucket)
	return tbl, nil
}

// change is one row a message carries, with its row kind; a message in
// native form carries one, a CDC envelope zero or more (an update as -U
// and +U).
type change struct {
	kind kv.RowKind
	row  []any
}

// write writes batch, all of whose messages belong to this table, and
// waits until the committer has committed it in a snapshot. msgErrs[i] is
// the error of a message that failed alone (nil: committed, or committed
// before and skipped); err fails every message of the batch.
func (k *tableSink) write(ctx context.Context, batch service.MessageBatch) (msgErrs []error, err error) {
	k.lastUsed.Store(time.Now().UnixNano())
	offsets, skip, posErrs := k.sourceOffsets(batch)
	values, valueErrs := k.decode(batch, skip)
	if posErrs == nil {
		posErrs = make([]error, len(batch))
	}
	cut := k.truncation(k.state.Load().keyed, values, valueErrs, posErrs)
	st, changes, msgErrs, err := k.convert(ctx, batch, values)
	if err != nil {
		return nil, err
	}
	for i, e := range posErrs {
		if e != nil {
			msgErrs[i], changes[i] = e, nil
		}
	}
	for i, e := range valueErrs {
		// An append table ignores the operation metadata; a row_kind given
		// for it, or a CDC envelope, must say insert.
		if e != nil && msgErrs[i] == nil && (st.keyed || k.conf.RowKind != nil || k.conf.CDCFormat != "") {
			msgErrs[i], changes[i] = e, nil
		}
	}
	if !st.keyed {
		for i, cs := range changes {
			for _, c := range cs {
				if c.kind.IsRetract() && msgErrs[i] == nil && (k.conf.RowKind != nil || k.conf.CDCFormat != "") {
					msgErrs[i], changes[i] = fmt.Errorf("row kind %s: table %s has no primary key, so it takes inserts only", c.kind, k.conf.Table), nil
					break
				}
			}
		}
	}
	if k.conf.UnchangedColumns != nil {
		if err := k.fillUnchanged(ctx, st, values, changes, msgErrs, cut >= 0); err != nil {
			return nil, err
		}
	}
	fail := func(i int, err error) {
		if msgErrs[i] == nil {
			msgErrs[i] = err
		}
	}

	var req *commitRequest
	var files []string
	if st.keyed {
		req, files, err = k.writeKeyValue(ctx, st, changes, msgErrs, fail)
	} else {
		req, files, err = k.writeAppend(ctx, st, changes, msgErrs, fail)
	}
	failed := 0
	for _, e := range msgErrs {
		if e != nil {
			failed++
		}
	}
	if failed > 0 {
		k.met.rowsRejected.Incr(int64(failed))
	}
	var positions *batchPositions
	tracker := k.committer.positions
	if offsets != nil {
		positions = splitPositions(offsets, skip, msgErrs)
		// Failed messages come again: their streams' positions wait.
		tracker.fail(positions.failed)
	}
	// failBatch: nothing of the batch is committed, so its written
	// messages come again too.
	failBatch := func(err error) ([]error, error) {
		if positions != nil {
			tracker.fail(positions.written)
		}
		return nil, err
	}
	if err != nil {
		return failBatch(err)
	}
	if cut >= 0 {
		// The snapshot deletes every row of the table and adds those written
		// after the truncate, atomically, as the source's transaction did.
		if req == nil {
			req = &commitRequest{}
		}
		req.truncate = true
	}
	if req != nil { // nil: every message failed, was committed before, or an empty batch; nothing to commit
		req.positions = positions
		res := k.committer.submit(ctx, req)
		if res.err != nil {
			if res.definite {
				deleteFiles(context.WithoutCancel(ctx), k.tbl.FileIO(), files)
			}
			return failBatch(res.err)
		}
	}
	return msgErrs, nil
}

// convert turns the decoded values of the batch into rows of one schema.
// msgErrs[i] is set for each message that cannot be converted (changes[i]
// is nil then). With schema_evolution, new top-level fields add columns
// first and the batch is converted again for the new schema. A returned
// error (storage failing while adding columns) fails the whole batch.
func (k *tableSink) convert(ctx context.Context, batch service.MessageBatch, values []messageValues) (*writeState, [][]change, []error, error) {
	st := k.state.Load()
	changes := make([][]change, len(batch))
	msgErrs := make([]error, len(batch))
	slots := make([]change, len(batch))
	var slab boxes.Slab
	var newCols []rowconv.NewColumn
	var evolving []int
	for i := range batch {
		cs, added, err := values[i].convert(st, batch[i], slots[i:i+1:i+1], &slab)
		switch {
		case err != nil:
			msgErrs[i] = err
		case len(added) > 0:
			newCols = append(newCols, added...)
			evolving = append(evolving, i)
		default:
			changes[i] = cs
		}
	}
	if len(evolving) == 0 {
		return st, changes, msgErrs, nil
	}
	next, err := k.evolve(ctx, st, newCols)
	if err != nil {
		if !errors.Is(err, schema.ErrInvalidSchema) {
			return nil, nil, nil, err
		}
		for _, i := range evolving {
			msgErrs[i] = err
		}
		return st, changes, msgErrs, nil
	}
	// Rows must match the schema of the batch's writer: convert again.
	for i := range batch {
		if msgErrs[i] != nil {
			continue
		}
		cs, added, err := values[i].convert(next, batch[i], slots[i:i+1:i+1], &slab)
		switch {
		case err != nil:
			msgErrs[i], changes[i] = err, nil
		case len(added) > 0:
			msgErrs[i] = &rowconv.ConvertError{Path: added[0].Name,
				Msg: "not a column of the table, and adding it as " + added[0].Type.String() + " did not take effect",
				Err: rowconv.ErrUnknownField}
			changes[i] = nil
		default:
			changes[i] = cs
		}
	}
	return next, changes, msgErrs, nil
}

// evolve adds the new columns to the table, one evolution at a time in this
// process; other writers agree through the schema files (AddColumns
// accepts a concurrent identical change). The table's latest schema is
// read first, so columns another writer added meanwhile are taken as they
// are rather than added again with a possibly different type.
func (k *tableSink) evolve(ctx context.Context, seen *writeState, cols []rowconv.NewColumn) (*writeState, error) {
	k.evolveMu.Lock()
	defer k.evolveMu.Unlock()
	cur := k.state.Load()
	if err := k.tbl.Refresh(ctx); err != nil {
		return nil, err
	}
	s := k.tbl.Schema()
	var add []types.DataField
	seenName := map[string]bool{}
	for _, col := range cols {
		if seenName[col.Name] || types.FieldByName(s.Fields, col.Name) >= 0 {
			continue
		}
		seenName[col.Name] = true
		add = append(add, types.DataField{Name: col.Name, Type: col.Type})
	}
	if len(add) > 0 {
		var err error
		if s, err = k.tbl.AddColumns(ctx, add); err != nil {
			return nil, err
		}
		names := make([]string, len(add))
		for i, f := range add {
			names[i] = f.Name + " " + f.Type.String()
		}
		k.log.Infof("Schema evolution: added columns %v to table %s (schema-%d)", names, k.conf.Table, s.ID)
	}
	if cur.schema.ID >= s.ID {
		return cur, nil // nothing new, or a concurrent batch got further
	}
	if err := s.CheckWritable(); err != nil {
		return nil, fmt.Errorf("table %s changed to schema-%d, which cannot be written: %w", k.conf.Table, s.ID, err)
	}
	next, err := newWriteState(s, k.conf.Convert)
	if err != nil {
		return nil, err
	}
	k.state.Store(next)
	if seen.schema.ID != s.ID && len(add) == 0 {
		k.log.Infof("Table %s has a new schema-%d with columns added by another writer", k.conf.Table, s.ID)
	}
	return next, nil
}

// writeAppend writes the converted rows with a TableWriter of their own
// and prepares them for the commit (writeRows).
func (k *tableSink) writeAppend(ctx context.Context, st *writeState, changes [][]change, msgErrs []error,
	fail func(int, error)) (*commitRequest, []string, error) {
	fio := &recordingFileIO{FileIO: k.tbl.FileIO()}
	var restore write.SequenceRestorer // only fixed-bucket tables number their rows
	if st.fixed {
		k.seq.writeMu.Lock()
		defer k.seq.writeMu.Unlock()
		restore = k.seq.restorer()
	}
	w, err := write.NewTableWriter(fio, k.tbl.Path(), st.schema, k.tbl.WriteOptions(st.schema), restore)
	if err != nil {
		return nil, nil, fmt.Errorf("write to table %s: %w", k.conf.Table, err)
	}
	msgs, err := k.writeRows(ctx, w, func(c change) error { return w.Write(ctx, c.row) }, fio, changes, msgErrs, fail)
	if msgs == nil || err != nil {
		return nil, nil, err
	}
	if st.fixed {
		k.seq.record(msgs)
	}
	return newCommitRequest(msgs), fio.created(), nil
}

// writeKeyValue is writeAppend for a primary-key table: the changes with
// their row kinds through a KeyValueWriter of the batch's own. Batches
// are encoded one at a time and number their changes after everything
// this process handed out (sequenceAllocator); compaction is left to the
// maintenance goroutine (maintenance.compaction), since batches committed
// together must not compact the same files.
func (k *tableSink) writeKeyValue(ctx context.Context, st *writeState, changes [][]change, msgErrs []error,
	fail func(int, error)) (*commitRequest, []string, error) {
	fio := &recordingFileIO{FileIO: k.tbl.FileIO()}
	k.seq.writeMu.Lock()
	defer k.seq.writeMu.Unlock()
	// No file restorer: without compaction the writer needs no levels, and
	// the sequence floor already knows the committed numbers (read once per
	// snapshot, not once per batch).
	w, err := write.NewKeyValueWriter(fio, k.tbl.Path(), st.schema, k.tbl.WriteOptions(st.schema), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("write to table %s: %w", k.conf.Table, err)
	}
	w.DisableCompaction()
	w.SetSequenceFloor(k.seq.keyValueRestorer())
	msgs, err := k.writeRows(ctx, w, func(c change) error { return w.Write(ctx, c.kind, c.row) }, fio, changes, msgErrs, fail)
	if msgs == nil || err != nil {
		return nil, nil, err
	}
	k.seq.record(msgs)
	return newCommitRequest(msgs), fio.created(), nil
}

// preparer is what writeRows needs of a TableWriter or KeyValueWriter.
type preparer interface {
	Prepare(ctx context.Context) ([]commit.Message, error)
	Abort(ctx context.Context) error
}

// writeRows writes every change of the messages without an error through
// writeRow and prepares w's files for the commit. A row the writer refuses
// (write.ErrInvalidRow: a partition value that cannot be a directory name,
// ...) fails its message through fail; the message's earlier changes stay
// written, as a writer cannot take them back (its retry writes them again,
// which the merge makes harmless for primary-key tables). It returns nil
// messages when nothing was written; on an error everything is discarded.
func (k *tableSink) writeRows(ctx context.Context, w preparer, writeRow func(change) error, fio *recordingFileIO,
	changes [][]change, msgErrs []error, fail func(int, error)) ([]commit.Message, error) {
	written := 0
	for i, cs := range changes {
		if msgErrs[i] != nil {
			continue
		}
		for _, c := range cs {
			if err := writeRow(c); err != nil {
				if errors.Is(err, write.ErrInvalidRow) {
					fail(i, err)
					break
				}
				discard(ctx, w, fio)
				return nil, fmt.Errorf("write to table %s: %w", k.conf.Table, err)
			}
			written++
		}
	}
	if written == 0 {
		discard(ctx, w, fio)
		return nil, nil
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		discard(ctx, w, fio)
		return nil, fmt.Errorf("write to table %s: %w", k.conf.Table, err)
	}
	return msgs, nil
}

// newCommitRequest is the committer's request for msgs, with the rows,
// files and bytes they add.
func newCommitRequest(msgs []commit.Message) *commitRequest {
	req := &commitRequest{msgs: msgs}
	for _, m := range msgs {
		for _, f := range m.NewFiles {
			req.rows += f.RowCount
			req.bytes += f.FileSize
			req.files++
		}
	}
	return req
}

// messageOffset is a message's place in its source (source_position).
type messageOffset struct {
	stream string
	offset sourceOffset // nil: the message has no position
}

// sourceOffsets reads every message's source position. skip[i] is set
// for a message committed before (it is acknowledged without being
// written), errs[i] for one whose position cannot be read. All three are
// nil without source_position.
func (k *tableSink) sourceOffsets(batch service.MessageBatch) ([]messageOffset, []bool, []error) {
	sp, tracker := k.conf.SourcePosition, k.committer.positions
	if sp == nil || tracker == nil {
		return nil, nil, nil
	}
	offsets := make([]messageOffset, len(batch))
	skip := make([]bool, len(batch))
	errs := make([]error, len(batch))
	skipped := 0
	offsetsOf, streamsOf := sp.Offset.over(batch), sp.Stream.over(batch)
	for i := range batch {
		text, err := offsetsOf.TryString(i)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.offset: %w", err)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		off, err := parseOffset(text)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.offset: %w", err)
			continue
		}
		stream, err := streamsOf.TryString(i)
		if err != nil {
			errs[i] = fmt.Errorf("source_position.stream: %w", err)
			continue
		}
		offsets[i] = messageOffset{stream: stream, offset: off}
		if tracker.covered(stream, off) {
			skip[i] = true
			skipped++
		}
	}
	if skipped > 0 {
		k.met.messagesReplayed.Incr(int64(skipped))
		k.log.Debugf("%d of %d messages for table %s were committed before (source_position) and are acknowledged without being written",
			skipped, len(batch), k.conf.Table)
	}
	return offsets, skip, errs
}

// splitPositions sorts the positions of a batch's messages into those its
// commit writes and those that failed.
func splitPositions(offsets []messageOffset, skip []bool, msgErrs []error) *batchPositions {
	bp := &batchPositions{}
	for i, m := range offsets {
		switch {
		case m.offset == nil || skip[i]:
		case msgErrs[i] != nil:
			bp.add(&bp.failed, m.stream, m.offset)
		default:
			bp.add(&bp.written, m.stream, m.offset)
		}
	}
	return bp
}

// close commits what is queued, or fails it when ctx ends first, and
// stops the committer and maintenance goroutines, waiting for both.
func (k *tableSink) close(ctx context.Context) error {
	err := k.committer.close(ctx)
	if k.maint != nil {
		k.maint.close()
	}
	return err
}
