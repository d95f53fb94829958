package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// The crash test with a replaying source (source_position).
//
// The source is a set of streams, like the partitions of a Kafka topic:
// each stream is one sender that POSTs consecutive offsets, one request at
// a time, and moves on only after its request is answered 200; after a
// kill it sends again from its first unacknowledged offset, as a Kafka
// consumer restarts from its committed offset. Every message is a pure
// function of (stream, offset), so a resend carries the same change. The
// binary is killed with SIGKILL at random moments and right after a
// snapshot appears (a commit that landed before its acknowledgement).
//
// With source_position the output records each stream's offset in the
// snapshot that holds its rows, so the audit expects every (stream,
// offset) in an append table exactly once, and in a primary-key table the
// model of all changes; no snapshot may show a key going back in time
// (an older change applied again after a newer one).

// replaySpec is one table shape of the replay test.
type replaySpec struct {
	name   string
	table  string
	create string // create_table lines beyond the schema
	// output is output fields beyond source_position (maintenance,
	// compaction).
	output string
	keyed  bool
	// changelog: the table's changelog, streamed from snapshot 1 after a
	// final compaction, must replay to the merged table.
	changelog bool
	// positions turns source_position on; without it the test counts the
	// duplicates (the figure the option removes) and asserts no loss.
	positions bool
	rounds    int
}

func TestCrashReplayingSource(t *testing.T) {
	skipShort(t)
	bin := binarytest.Path(t)
	for _, spec := range []replaySpec{
		{name: "append", table: "replay_append", create: "bucket: -1", positions: true, rounds: pick(12, 60)},
		{name: "append-without-positions", table: "replay_plain", create: "bucket: -1", rounds: pick(6, 30)},
		{name: "primary-key", table: "replay_pk", keyed: true, positions: true, rounds: pick(12, 60),
			create: "primary_keys: [ k ]\n      bucket: 2\n      options: { changelog-producer: input }"},
		// Dynamic buckets and a lookup changelog, compacted by the output's
		// maintenance every 50 ms, so kills land in bucket assignment and in
		// lookup compactions too: no key may end in two buckets (it would be
		// read twice), and the lookup changelog must replay to the table.
		{name: "primary-key-dynamic-bucket-lookup", table: "replay_pk_lookup", keyed: true, changelog: true, positions: true, rounds: pick(12, 60),
			create: "primary_keys: [ k ]\n      bucket: -1\n      options: { changelog-producer: lookup, dynamic-bucket.target-row-num: '30' }",
			output: replayCompaction},
		// Deletion vectors (merge-on-write): the maintenance compaction marks
		// replaced rows in each file's vector, so kills also land between a
		// compaction's files and its DELETION_VECTORS index file.
		{name: "primary-key-deletion-vectors", table: "replay_pk_dv", keyed: true, changelog: true, positions: true, rounds: pick(12, 60),
			create: "primary_keys: [ k ]\n      bucket: 2\n      options: { deletion-vectors.enabled: true, changelog-producer: lookup }",
			output: replayCompaction},
	} {
		t.Run(spec.name, func(t *testing.T) { runReplayTest(t, bin, spec) })
	}
}

// replayConfig is the pipeline under test: port, warehouse, table, the
// create_table lines, the source_position block.
const replayConfig = httpSourceConfig + `output:
  paimon:
    warehouse: %s
    database: rel
    table: %s
    row_kind: ${! this.op }
    create_table:
      enabled: true
      schema:
        - { name: k, type: BIGINT NOT NULL }
        - { name: stream, type: INT NOT NULL }
        - { name: off, type: BIGINT NOT NULL }
        - { name: op, type: STRING }
      %s
    batching:
      count: 50
      period: 10ms
%s
`

// replayCompaction compacts the table from the output's maintenance.
const replayCompaction = `    maintenance: { enabled: true, interval: 50ms, table_metrics: false }
    compaction: { enabled: true }`

const replayPositions = `    source_position:
      stream: s${! this.stream }
      offset: ${! this.off }`

// replayStreams is the number of streams (senders).
const replayStreams = 4

// replayChange is the change at offset off of stream s: keys are the
// stream's own (so one stream orders each key's changes), every ninth
// change a delete.
func replayChange(s int, off int64) (key int64, op string) {
	key = int64(s)*1000 + (off*7)%40
	op = "+U"
	if off%9 == 0 {
		op = "-D"
	}
	return key, op
}

// replayStream is one sender's state, kept across rounds.
type replayStream struct {
	acked int64 // offsets below are acknowledged
}

type replayRun struct {
	t       *testing.T
	bin, wh string
	dir     string
	spec    replaySpec
	rng     *rand.Rand
	streams [replayStreams]replayStream
	sent    atomic.Int64
	kills   int
}

func runReplayTest(t *testing.T, bin string, spec replaySpec) {
	r := &replayRun{t: t, bin: bin, dir: workDir(t), spec: spec, rng: rand.New(rand.NewPCG(seed(t), 9))}
	r.wh = filepath.Join(r.dir, "warehouse")
	for round := 1; round <= spec.rounds; round++ {
		r.round(round, false)
	}
	r.round(spec.rounds+1, true)
	r.check()
}

// round starts the binary, lets every stream send until the kill (or, in
// the final round, up to the final offset) and stops it.
func (r *replayRun) round(n int, final bool) {
	t := r.t
	pos := ""
	if r.spec.positions {
		pos = replayPositions
	}
	p := startRound(t, r.bin, r.dir, n, func(port int) string {
		return fmt.Sprintf(replayConfig, port, r.wh, r.spec.table, r.spec.create, pos+"\n"+r.spec.output)
	})
	cmd, exited, logPath, port := p.cmd, p.exited, p.logPath, p.port
	var mu sync.Mutex
	killed := false
	isKilled := func() bool { mu.Lock(); defer mu.Unlock(); return killed }
	client := &http.Client{Timeout: 90 * time.Second}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d/post", port)
	// The final round ends every stream at the same offset.
	var end int64
	for i := range r.streams {
		end = max(end, r.streams[i].acked)
	}
	end += 100
	var wg sync.WaitGroup
	for s := range r.streams {
		srng := rand.New(rand.NewPCG(r.rng.Uint64(), uint64(s)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &r.streams[s]
			for !isKilled() {
				n := int64(1 + srng.IntN(30))
				if final {
					if st.acked >= end {
						return
					}
					n = min(n, end-st.acked)
				}
				if !r.send(client, url, s, st.acked, n) {
					if final && !isKilled() {
						t.Errorf("final round: stream %d at offset %d was not acknowledged", s, st.acked)
						return
					}
					continue // cut off by the kill: the next round sends it again
				}
				st.acked += n
			}
		}()
	}
	if final {
		wg.Wait()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("final round: the binary did not stop on SIGTERM\n%s", tail(logPath))
		}
		return
	}
	if r.rng.IntN(2) == 0 {
		time.Sleep(time.Duration(100+r.rng.IntN(1200)) * time.Millisecond)
	} else {
		watchDir(filepath.Join(r.wh, "rel.db", r.spec.table, "snapshot"), r.rng.IntN(8), 10*time.Second, exited)
	}
	mu.Lock()
	killed = true
	mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	r.kills++
	<-exited
	wg.Wait()
	if bytes.Contains(readFile(logPath), []byte("panic:")) {
		t.Errorf("round %d: the binary panicked\n%s", n, tail(logPath))
	}
}

// send POSTs offsets [from, from+n) of stream s and reports whether the
// batch was acknowledged.
func (r *replayRun) send(client *http.Client, url string, s int, from, n int64) bool {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for off := from; off < from+n; off++ {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", "application/json")
		w, err := mw.CreatePart(h)
		if err != nil {
			r.t.Error(err)
			return false
		}
		k, op := replayChange(s, off)
		if !r.spec.keyed {
			op = "+I"
		}
		fmt.Fprintf(w, `{"k":%d,"stream":%d,"off":%d,"op":"%s"}`, k, s, off, op)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, url, &body)
	if err != nil {
		r.t.Error(err)
		return false
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r.sent.Add(n)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// check audits the table against the model of every stream's changes.
func (r *replayRun) check() {
	t := r.t
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, r.wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.OpenTable(ctx, "rel", r.spec.table)
	if err != nil {
		t.Fatal(err)
	}
	if r.spec.output != "" {
		// What the output's maintenance left in level 0: a deletion-vectors
		// table's batch reads skip level 0 (as Java's do) until a compaction
		// moves it up, and a lookup table's changelog is written by it.
		if _, err := tbl.Compact(ctx, maintain.CompactOptions{}); err != nil {
			t.Fatalf("final compaction: %v", err)
		}
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := range r.streams {
		total += r.streams[i].acked
	}
	if !r.spec.keyed {
		seen := map[[2]int64]int{}
		for _, row := range rows {
			seen[[2]int64{int64(row[1].(int32)), row[2].(int64)}]++
		}
		dups, lost := 0, 0
		for s := range r.streams {
			for off := range r.streams[s].acked {
				switch c := seen[[2]int64{int64(s), off}]; {
				case c == 0:
					lost++
				case c > 1:
					dups += c - 1
				}
			}
		}
		figure(t, "%d rounds, %d kills, %d messages sent, %d acknowledged, %d rows: %d lost, %d duplicates (source_position %v)",
			r.spec.rounds, r.kills, r.sent.Load(), total, len(rows), lost, dups, r.spec.positions)
		if lost > 0 {
			t.Errorf("%d acknowledged messages are not in the table", lost)
		}
		if r.spec.positions && (dups > 0 || int64(len(rows)) != total) {
			t.Errorf("with source_position: %d duplicates, %d rows for %d messages", dups, len(rows), total)
		}
		return
	}
	// The model: every stream's changes in offset order.
	want := map[int64]int64{} // key -> offset of its latest upsert
	for s := range r.streams {
		for off := range r.streams[s].acked {
			k, op := replayChange(s, off)
			if op == "-D" {
				delete(want, k)
			} else {
				want[k] = off
			}
		}
	}
	got := map[int64]int64{}
	for _, row := range rows {
		k := row[0].(int64)
		if _, twice := got[k]; twice {
			t.Errorf("key %d is read twice: it is in two buckets", k)
		}
		got[k] = row[2].(int64)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged table (key: offset) %v\nwant %v", got, want)
	}
	// No snapshot shows a key going back in time.
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	latest := map[int64]int64{}
	compacts := 0
	for _, id := range ids {
		sn, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sn.CommitKind == snapshot.CommitCompact {
			compacts++
		}
		rows, err := tbl.ReadAll(ctx, id)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		for _, row := range rows {
			k, off := row[0].(int64), row[2].(int64)
			if prev, ok := latest[k]; ok && off < prev {
				t.Errorf("snapshot %d: key %d went back from offset %d to %d", id, k, prev, off)
			}
			latest[k] = off
		}
	}
	figure(t, "%d rounds, %d kills, %d changes sent, %d acknowledged, %d snapshots read (%d COMPACT): merged table equals the model, no key went back in time",
		r.spec.rounds, r.kills, r.sent.Load(), total, len(ids), compacts)
	if r.spec.output != "" && compacts == 0 {
		t.Errorf("no COMPACT snapshot: the output's maintenance never compacted, so no kill could land in a compaction")
	}
	if r.spec.changelog {
		r.checkChangelog(tbl, want)
	}
}

// checkChangelog replays the changelog from snapshot 1 (after check's
// final compaction) onto an empty map: it must give the model.
func (r *replayRun) checkChangelog(tbl *lakecore.Table, want map[int64]int64) {
	t := r.t
	ctx := context.Background()
	got := map[int64]int64{}
	changes := 0
	ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	for {
		plan, err := ss.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		err = tbl.ReadChanges(ctx, plan, func(kinds []kv.RowKind, rows [][]any) error {
			for i, row := range rows {
				changes++
				k := row[0].(int64)
				switch kinds[i] {
				case kv.Insert, kv.UpdateAfter: // after a -U the key is absent again
					if prev, ok := got[k]; ok {
						return fmt.Errorf("snapshot %d: %s of key %d at offset %d, but the changelog already holds it at %d",
							plan.Snapshot.ID, kinds[i], k, row[2].(int64), prev)
					}
					got[k] = row[2].(int64)
				case kv.Delete, kv.UpdateBefore:
					if prev, ok := got[k]; !ok || prev != row[2].(int64) {
						return fmt.Errorf("snapshot %d: %s of key %d at offset %d, but the changelog holds %d (present %v)",
							plan.Snapshot.ID, kinds[i], k, row[2].(int64), prev, ok)
					}
					delete(got, k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("changelog: %v", err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changelog replayed (key: offset) %v\nwant %v", got, want)
	}
	figure(t, "the lookup changelog (%d changes) replays to the model", changes)
}
