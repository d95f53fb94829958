package pgcdc

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/spillfile"
)

// spoolSet holds the changes of the streamed transactions that have not
// committed yet (pgoutput protocol 2, §streaming in docs/POSTGRES_CDC.md),
// one spool per top-level xid, until their Stream Commit replays them or
// their Stream Abort drops them.
//
// Memory is bounded: when the spools hold more than limit bytes in memory,
// the one holding most writes its records to a spill file
// (lakecore/spillfile: length-prefixed, CRC-32C checked blocks, lz4) in a
// directory of the input's own (dir). Spill files live only as long as
// their transaction in this session: the slot streams a transaction again
// whole after a restart, so nothing in them is needed after a crash.
//
// A spoolSet belongs to one stream goroutine and is not safe for
// concurrent use.
type spoolSet struct {
	dir    func() (*lookupfile.Dir, error) // the input's spill directory, opened on first use
	codec  *spillfile.Codec
	limit  int64
	mem    int64 // bytes in memory over all spools
	spools map[uint32]*spool
	// spilled counts the bytes of records written to spill files.
	spilled int64
}

// spool is one streamed transaction's records in arrival order: the first
// fileRecords in its spill file, the rest in memory.
//
// A record is a pgoutput message of the stream in protocol 1 form (the xid
// that follows the message type in a stream taken out), so the stream
// decoder replays it as a message of an ordinary transaction.
type spool struct {
	xid         uint32
	path        string
	file        *spillfile.Writer
	fileRecords int64
	arena       []byte // the records in memory, back to back
	ends        []int  // end offset in arena of each record in memory
	n           int64  // records appended
	// first is the index of the first record of each (sub)transaction
	// xid: a Stream Abort of a subtransaction drops its records from
	// there on.
	first map[uint32]int64
	// dropped are ranges [from, to) of record indexes that rolled back
	// subtransactions own.
	dropped []recordRange
}

type recordRange struct{ from, to int64 }

func newSpoolSet(dir func() (*lookupfile.Dir, error), limit int64) (*spoolSet, error) {
	codec, err := spillfile.NewCodec("lz4", 0)
	if err != nil {
		return nil, err
	}
	return &spoolSet{dir: dir, codec: codec, limit: limit, spools: map[uint32]*spool{}}, nil
}

// open reports whether any streamed transaction is in progress.
func (ss *spoolSet) open() bool { return len(ss.spools) > 0 }

// start begins a stream segment of xid; first (the segment's flag) starts
// the transaction afresh, dropping what an earlier segment left.
func (ss *spoolSet) start(xid uint32, first bool) {
	if sp, ok := ss.spools[xid]; ok && first {
		ss.discard(sp)
	}
	if _, ok := ss.spools[xid]; !ok {
		ss.spools[xid] = &spool{xid: xid, first: map[uint32]int64{}}
	}
}

// add appends msg, an in-stream pgoutput message of top-level transaction
// xid ([type][xid of the (sub)transaction][body]), as a protocol 1 message.
func (ss *spoolSet) add(xid uint32, msg []byte) error {
	sp, ok := ss.spools[xid]
	if !ok {
		return fmt.Errorf("pg_cdc: streamed change of transaction %d outside its stream", xid)
	}
	if len(msg) < 5 {
		return fmt.Errorf("pg_cdc: streamed message %q of transaction %d: %d bytes, too short for its xid", msg[:min(len(msg), 1)], xid, len(msg))
	}
	sub := binary.BigEndian.Uint32(msg[1:5])
	if _, ok := sp.first[sub]; !ok {
		sp.first[sub] = sp.n
	}
	before := len(sp.arena)
	sp.arena = append(sp.arena, msg[0])
	sp.arena = append(sp.arena, msg[5:]...)
	sp.ends = append(sp.ends, len(sp.arena))
	sp.n++
	ss.mem += int64(len(sp.arena) - before)
	if ss.mem > ss.limit {
		return ss.spillLargest()
	}
	return nil
}

// spillLargest writes the records in memory of the spool holding most of
// them to its spill file.
func (ss *spoolSet) spillLargest() error {
	var big *spool
	for _, sp := range ss.spools {
		if big == nil || len(sp.arena) > len(big.arena) {
			big = sp
		}
	}
	if big == nil || len(big.ends) == 0 {
		return nil
	}
	if big.file == nil {
		d, err := ss.dir()
		if err != nil {
			return fmt.Errorf("pg_cdc: spill streamed transaction %d: %w", big.xid, err)
		}
		big.path = d.NewPath("xid-" + strconv.FormatUint(uint64(big.xid), 10) + ".spool")
		if big.file, err = spillfile.Create(big.path, ss.codec); err != nil {
			return fmt.Errorf("pg_cdc: spill streamed transaction %d: %w", big.xid, err)
		}
	}
	start := 0
	for _, end := range big.ends {
		if err := big.file.Add(big.arena[start:end]); err != nil {
			return fmt.Errorf("pg_cdc: spill streamed transaction %d: %w", big.xid, err)
		}
		start = end
	}
	big.fileRecords += int64(len(big.ends))
	ss.mem -= int64(len(big.arena))
	ss.spilled += int64(len(big.arena))
	big.arena, big.ends = big.arena[:0], big.ends[:0]
	return nil
}

// abort handles a Stream Abort: subxid == xid drops the transaction;
// otherwise the records of subtransaction subxid and of everything after
// its first record (its own subtransactions: a savepoint rolled back ends
// every savepoint inside it, and the server sends the abort before any
// later change) are dropped. A subtransaction without records streamed
// (the server discarded them itself) leaves the spool as it is, as
// Postgres' own subscriber does (src/backend/replication/logical/worker.c,
// stream abort of a subtransaction). A Relation message dropped so is sent
// again before the transaction's next change of that table: pgoutput
// forgets which schemas it sent in a streamed transaction at each of its
// Stream Aborts (src/backend/replication/pgoutput/pgoutput.c,
// pgoutput_stream_abort → cleanup_rel_sync_cache).
func (ss *spoolSet) abort(xid, subxid uint32) {
	sp, ok := ss.spools[xid]
	if !ok {
		return
	}
	if subxid == xid {
		ss.discard(sp)
		return
	}
	from, ok := sp.first[subxid]
	if !ok {
		return
	}
	if from < sp.n {
		sp.dropped = append(sp.dropped, recordRange{from, sp.n})
	}
	for x, f := range sp.first {
		if f >= from {
			delete(sp.first, x)
		}
	}
}

// take removes xid's spool from the set for its replay; nil when the
// transaction streamed nothing.
func (ss *spoolSet) take(xid uint32) *spool {
	sp, ok := ss.spools[xid]
	if !ok {
		return nil
	}
	delete(ss.spools, xid)
	ss.mem -= int64(len(sp.arena))
	return sp
}

// discard drops a spool and its file.
func (ss *spoolSet) discard(sp *spool) {
	delete(ss.spools, sp.xid)
	ss.mem -= int64(len(sp.arena))
	sp.remove()
}

// close drops every spool and their files.
func (ss *spoolSet) close() {
	for _, sp := range ss.spools {
		ss.discard(sp)
	}
	ss.codec.Close()
}

// bytes is the size of the records held, in memory and in files (the
// files' size without their open block).
func (ss *spoolSet) bytes() int64 {
	n := ss.mem
	for _, sp := range ss.spools {
		if sp.file != nil {
			n += sp.file.Size()
		}
	}
	return n
}

// remove deletes the spool's file.
func (sp *spool) remove() {
	if sp.file != nil {
		sp.file.Abort()
		sp.file = nil
	}
	if sp.path != "" {
		_ = os.Remove(sp.path)
	}
	sp.arena, sp.ends = nil, nil
}

// replay calls f with every record in order, but for those of rolled back
// subtransactions, and removes the spool's
// file. A record is valid only during its call. A corrupt spill file is
// an error wrapping spillfile.ErrCorrupt.
func (sp *spool) replay(codec *spillfile.Codec, f func(rec []byte) error) (err error) {
	defer sp.remove()
	dropped := mergeRanges(sp.dropped)
	var i int64
	visit := func(rec []byte) error {
		if len(rec) == 0 { // every record has its message type
			return fmt.Errorf("pg_cdc: streamed transaction %d: %w: empty record %d", sp.xid, spillfile.ErrCorrupt, i)
		}
		for len(dropped) > 0 && dropped[0].to <= i {
			dropped = dropped[1:]
		}
		skip := len(dropped) > 0 && dropped[0].from <= i
		i++
		if skip {
			return nil
		}
		return f(rec)
	}
	if sp.file != nil {
		w := sp.file
		sp.file = nil
		if err := w.Close(); err != nil {
			return fmt.Errorf("pg_cdc: streamed transaction %d: %w", sp.xid, err)
		}
	}
	if sp.path != "" {
		r, err := spillfile.Open(sp.path, codec)
		if err != nil {
			return fmt.Errorf("pg_cdc: streamed transaction %d: %w", sp.xid, err)
		}
		defer r.Close()
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("pg_cdc: streamed transaction %d: %w", sp.xid, err)
			}
			if err := visit(rec); err != nil {
				return err
			}
		}
		if i != sp.fileRecords {
			return fmt.Errorf("pg_cdc: streamed transaction %d: %w: %d records in %s, %d written", sp.xid, spillfile.ErrCorrupt, i, sp.path, sp.fileRecords)
		}
	}
	start := 0
	for _, end := range sp.ends {
		if err := visit(sp.arena[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// mergeRanges sorts ranges and merges those that overlap or touch.
func mergeRanges(rs []recordRange) []recordRange {
	if len(rs) == 0 {
		return nil
	}
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b recordRange) int { return cmp.Compare(a.from, b.from) })
	m := out[:1]
	for _, r := range out[1:] {
		if last := &m[len(m)-1]; r.from <= last.to {
			last.to = max(last.to, r.to)
			continue
		}
		m = append(m, r)
	}
	return m
}
