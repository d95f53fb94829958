package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// chunk is a ctid page range of one table: [from, to) pages, to < 0 for
// the open-ended last chunk (pages added after sizing hold only rows the
// snapshot does not see, but reading to the end costs nothing).
type chunk struct {
	t        *table
	index    int
	from, to int64
}

// snapshot reads every captured table on one consistent snapshot with
// snapshot_workers connections and returns once every row is acknowledged
// (§7.2 recipe A: the slot's exported snapshot; recipe B, when the slot
// existed but its snapshot never finished: a fresh REPEATABLE READ
// snapshot, exported by a transaction kept open until the workers imported
// it; initial_only: the same without any slot).
func (s *session) snapshot(ctx context.Context) error {
	c := s.in.conf
	name, lsn := s.plan.snapshotName, s.plan.snapshotLSN
	if name == "" {
		exp, err := queryConn(ctx, c.DSN)
		if err != nil {
			return fmt.Errorf("pg_cdc: snapshot: %w", err)
		}
		defer exp.Close(context.Background())
		var lsnText string
		if _, err := exp.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
			return fmt.Errorf("pg_cdc: snapshot: %w", err)
		}
		if err := exp.QueryRow(ctx, "SELECT pg_export_snapshot(), pg_current_wal_lsn()::text").Scan(&name, &lsnText); err != nil {
			return fmt.Errorf("pg_cdc: export snapshot: %w", err)
		}
		if lsn, err = pglogrepl.ParseLSN(lsnText); err != nil {
			return err
		}
	}
	// Plan the chunks from the tables' sizes.
	var chunks []chunk
	s.qmu.Lock()
	for _, n := range s.tableOrder() {
		t := s.tables[n]
		var pages int64
		err := s.qconn.QueryRow(ctx, "SELECT pg_relation_size($1::oid) / current_setting('block_size')::int", t.relID).Scan(&pages)
		if err != nil {
			s.qmu.Unlock()
			return fmt.Errorf("pg_cdc: size of %s: %w", n, err)
		}
		step := int64(c.SnapshotChunk)
		for i, from := 0, int64(0); ; i, from = i+1, from+step {
			ch := chunk{t: t, index: i, from: from, to: from + step}
			if ch.to >= pages {
				ch.to = -1
			}
			chunks = append(chunks, ch)
			if ch.to < 0 {
				break
			}
		}
	}
	s.qmu.Unlock()
	s.in.m.snapChunks.Set(int64(len(chunks)))
	s.in.m.snapChunksDone.Set(0)
	s.in.log.Infof("pg_cdc: snapshot %s at %s: %d tables in %d chunks, %d workers", name, lsn, len(s.tables), len(chunks), c.SnapshotWorkers)

	work := make(chan chunk)
	b := newBarrier()
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done int64
	var doneMu sync.Mutex
	for w := 0; w < min(c.SnapshotWorkers, len(chunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.snapshotWorker(wctx, name, lsn, work, b, func() {
				doneMu.Lock()
				done++
				s.in.m.snapChunksDone.Set(done)
				doneMu.Unlock()
			})
			if err != nil {
				errOnce.Do(func() { firstErr = err; cancel() })
			}
		}()
	}
feed:
	for _, ch := range chunks {
		select {
		case work <- ch:
		case <-wctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.Seal()
	select {
	case <-b.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) tableOrder() []TableName {
	var out []TableName
	for _, n := range s.in.conf.Tables {
		if _, ok := s.tables[n]; ok {
			out = append(out, n)
		}
	}
	if len(out) == len(s.tables) {
		return out
	}
	out = out[:0]
	for n := range s.tables {
		out = append(out, n)
	}
	return sortNames(out)
}

func sortNames(ns []TableName) []TableName {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].String() < ns[j-1].String(); j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
	return ns
}

// snapshotWorker imports the snapshot and reads chunks until work closes.
func (s *session) snapshotWorker(ctx context.Context, name string, lsn pglogrepl.LSN, work <-chan chunk, b *barrier, chunkDone func()) error {
	c := s.in.conf
	conn, err := queryConn(ctx, c.DSN)
	if err != nil {
		return fmt.Errorf("pg_cdc: snapshot worker: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("pg_cdc: snapshot worker: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(name)); err != nil {
		return fmt.Errorf("pg_cdc: snapshot worker: import snapshot %s: %w", name, err)
	}
	lsnText := lsn.String()
	for ch := range work {
		if err := s.readChunk(ctx, conn, ch, lsnText, b); err != nil {
			return err
		}
		chunkDone()
	}
	return nil
}

func (s *session) readChunk(ctx context.Context, conn *pgx.Conn, ch chunk, lsnText string, b *barrier) error {
	t := ch.t
	cols := make([]string, len(t.columns))
	for i, col := range t.columns {
		cols[i] = quoteIdent(col.name)
	}
	where := fmt.Sprintf("ctid >= '(%d,0)'::tid", ch.from)
	if ch.to >= 0 {
		where += fmt.Sprintf(" AND ctid < '(%d,0)'::tid", ch.to)
	}
	sql := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), t.name.quoted(), where)
	// Text results: the same output functions, with the same session
	// settings, as the walsender uses, so both paths parse one form.
	rr := conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil)
	chunkName := fmt.Sprintf("%s/%d", t.name, ch.index)
	batchSize := s.in.conf.SnapshotBatchSize
	batch := make(service.MessageBatch, 0, batchSize)
	var seq int64
	// Each row copies tmpl: its metadata map is cloned once, at its final
	// size, on the lsn_seq write.
	tmpl := service.NewMessage(nil)
	setTableMeta(tmpl, t, "read")
	tmpl.MetaSetMut("lsn", lsnText)
	tmpl.MetaSetMut("lsn_seq", nil)
	tmpl.MetaSetMut("snapshot_chunk", chunkName)
	// Empty, not absent: `${! @lsn_position }` of a missing key is
	// "null", which the paimon output's source_position rejects; an empty
	// offset writes the row without a position check.
	tmpl.MetaSetMut("lsn_position", "")
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		b.Add()
		r := readResult{batch: batch, acks: []func(){b.Ack}}
		select {
		case s.out <- r:
		case <-ctx.Done():
			b.Ack()
			return ctx.Err()
		}
		s.in.m.rows.Incr(int64(len(batch)), "read")
		batch = make(service.MessageBatch, 0, batchSize)
		return nil
	}
	for rr.NextRow() {
		vals := rr.Values()
		row := make(map[string]any, len(vals))
		for i, v := range vals {
			if v == nil {
				row[t.columns[i].name] = nil
				continue
			}
			x, err := parseValue(&t.columns[i].typ, string(v))
			if err != nil {
				rr.Close()
				return fmt.Errorf("pg_cdc: snapshot of %s column %s: %w", t.name, t.columns[i].name, err)
			}
			row[t.columns[i].name] = x
		}
		seq++
		m := tmpl.Copy()
		m.SetStructuredMut(row)
		m.MetaSetMut("lsn_seq", seq)
		batch = append(batch, m)
		if len(batch) >= batchSize {
			if err := flush(); err != nil {
				rr.Close()
				return err
			}
		}
	}
	if _, err := rr.Close(); err != nil {
		return fmt.Errorf("pg_cdc: snapshot of %s chunk %d: %w", t.name, ch.index, err)
	}
	return flush()
}

// setTableMeta sets the metadata every message of t carries.
func setTableMeta(m *service.Message, t *table, op string) {
	m.MetaSetMut("table", t.name.Name)
	m.MetaSetMut("pg_schema", t.name.Schema)
	m.MetaSetMut("operation", op)
	m.MetaSetMut("pk", t.pkText)
	m.MetaSetMut("replica_identity", t.identity)
	m.MetaSetMut("schema", t.common)
	m.MetaSetMut("paimon_types", t.paimon)
}
