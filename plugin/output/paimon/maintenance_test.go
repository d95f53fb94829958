package paimon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// maintTable is a table (id BIGINT, dt STRING) partitioned by dt on a
// local disk, with a maintainer as the output builds it.
type maintTable struct {
	t     *testing.T
	root  string
	tbl   *lakecore.Table
	ident int64
	logs  *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newMaintTable(t *testing.T, options map[string]string) *maintTable {
	t.Helper()
	root := t.TempDir()
	fio, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "default", "t", lakecore.TableSpec{
		Fields: types.MustParse("ROW<id BIGINT, dt STRING>").Fields, PartitionKeys: []string{"dt"}, Options: options,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &maintTable{t: t, root: root, tbl: tbl, logs: &syncBuffer{}}
}

// maintainer returns a maintainer of the table for conf (commit user "w").
func (m *maintTable) maintainer(conf Maintenance) *maintainer {
	log := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(m.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return newMaintainer(m.tbl, Config{CommitUser: "w", Maintenance: conf}, log, newOutputMetrics(nil, Maintenance{}))
}

// commit appends one row to each partition as one APPEND snapshot of user
// "w" (one file per partition).
func (m *maintTable) commit(dts ...string) {
	m.t.Helper()
	ctx := context.Background()
	w, err := m.tbl.NewWriter(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	for _, dt := range dts {
		m.ident++
		if err := w.Write(ctx, []any{m.ident, dt}); err != nil {
			m.t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.tbl.NewCommitter("w").Commit(ctx, m.ident, msgs); err != nil {
		m.t.Fatal(err)
	}
}

func (m *maintTable) snapshotIDs() []int64 {
	m.t.Helper()
	ids, err := m.tbl.Snapshots().ListIDs(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	return ids
}

func (m *maintTable) latest() *snapshot.Snapshot {
	m.t.Helper()
	s, err := m.tbl.Snapshots().Latest(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	return s
}

// partitions returns the dt values of the live rows, sorted and distinct.
func (m *maintTable) partitions() []string {
	m.t.Helper()
	rows, err := m.tbl.ReadAll(context.Background(), 0)
	if err != nil {
		m.t.Fatal(err)
	}
	var dts []string
	for _, r := range rows {
		dts = append(dts, r[1].(string))
	}
	sort.Strings(dts)
	return slices.Compact(dts)
}

// putConsumer writes consumer id at next, last modified at mod.
func (m *maintTable) putConsumer(id string, next int64, mod time.Time) {
	m.t.Helper()
	if err := m.tbl.Consumers().Put(context.Background(), id, snapshot.Consumer{NextSnapshot: next}); err != nil {
		m.t.Fatal(err)
	}
	p := filepath.Join(m.root, filepath.FromSlash(m.tbl.Consumers().Path(id)))
	if err := os.Chtimes(p, mod, mod); err != nil {
		m.t.Fatal(err)
	}
}

func (m *maintTable) consumerIDs() []string {
	m.t.Helper()
	cs, err := m.tbl.Consumers().List(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	var ids []string
	for id := range cs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

var retainTwo = map[string]string{"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"}

func withOptions(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestMaintenanceSnapshotExpiry: a run expires snapshots as the table's
// snapshot.num-retained.* ask; write-only tables are left alone, as are
// tables of an output with maintenance disabled.
func TestMaintenanceSnapshotExpiry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options map[string]string
		conf    Maintenance
		want    []int64
	}{
		{"expires", retainTwo, Maintenance{Enabled: true}, []int64{4, 5}},
		{"write-only", withOptions(retainTwo, "write-only", "true"), Maintenance{Enabled: true}, []int64{1, 2, 3, 4, 5}},
		{"write.compaction-skip", withOptions(retainTwo, "write.compaction-skip", "true"), Maintenance{Enabled: true}, []int64{1, 2, 3, 4, 5}},
		{"disabled", retainTwo, Maintenance{Enabled: false}, []int64{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMaintTable(t, tc.options)
			for range 5 {
				m.commit("2024-01-01")
			}
			m.maintainer(tc.conf).runOnce(context.Background())
			if got := m.snapshotIDs(); !slices.Equal(got, tc.want) {
				t.Fatalf("snapshots %v, want %v", got, tc.want)
			}
			if n := len(m.partitions()); n != 1 {
				t.Fatalf("%d partitions readable", n)
			}
		})
	}
}

// TestMaintenanceConsumerExpiry: consumers not updated for
// consumer.expiration-time are removed before snapshot expiry, so an
// abandoned reader no longer pins snapshots, while a live one still does;
// write-only tables get consumer expiry too (Java keeps it for them).
func TestMaintenanceConsumerExpiry(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name      string
		options   map[string]string
		snapshots []int64
	}{
		// Retention wants [4, 5]; the live consumer at 3 keeps 3.
		{"expiry", withOptions(retainTwo, "consumer.expiration-time", "1 h"), []int64{3, 4, 5}},
		{"write-only", withOptions(retainTwo, "consumer.expiration-time", "1 h", "write-only", "true"), []int64{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMaintTable(t, tc.options)
			for range 5 {
				m.commit("2024-01-01")
			}
			m.putConsumer("abandoned", 1, now.Add(-2*time.Hour))
			m.putConsumer("live", 3, now.Add(-10*time.Minute))
			mt := m.maintainer(Maintenance{Enabled: true})
			mt.now = func() time.Time { return now }
			mt.runOnce(context.Background())
			if got := m.consumerIDs(); !slices.Equal(got, []string{"live"}) {
				t.Fatalf("consumers %v, want [live]", got)
			}
			if got := m.snapshotIDs(); !slices.Equal(got, tc.snapshots) {
				t.Fatalf("snapshots %v, want %v", got, tc.snapshots)
			}
			if !strings.Contains(m.logs.String(), "Automatic consumer expiry of table default.db/t: removed consumers abandoned, not updated for 1h0m0s") {
				t.Fatalf("logs:\n%s", m.logs)
			}
		})
	}

	// Without consumer.expiration-time the abandoned consumer pins
	// everything from snapshot 1.
	m := newMaintTable(t, retainTwo)
	for range 5 {
		m.commit("2024-01-01")
	}
	m.putConsumer("abandoned", 1, now.Add(-48*time.Hour))
	m.maintainer(Maintenance{Enabled: true}).runOnce(context.Background())
	if got := m.snapshotIDs(); !slices.Equal(got, []int64{1, 2, 3, 4, 5}) || !slices.Equal(m.consumerIDs(), []string{"abandoned"}) {
		t.Fatalf("snapshots %v, consumers %v", got, m.consumerIDs())
	}
}

// TestMaintenancePartitionExpiry: partitions older than
// partition.expiration-time are dropped in an OVERWRITE snapshot of the
// maintenance user, at most once per partition.expiration-check-interval.
func TestMaintenancePartitionExpiry(t *testing.T) {
	m := newMaintTable(t, map[string]string{
		"partition.expiration-time": "7 d", "partition.expiration-check-interval": "1 h",
	})
	clock := time.Now()
	today := clock.Format("2006-01-02")
	m.commit("2020-01-01", today)
	mt := m.maintainer(Maintenance{Enabled: true})
	mt.now = func() time.Time { return clock }

	mt.runOnce(context.Background())
	s := m.latest()
	if s.ID != 2 || s.CommitKind != snapshot.CommitOverwrite || s.CommitUser != "w-maintenance" {
		t.Fatalf("latest snapshot %d %s by %s, want 2 OVERWRITE by w-maintenance", s.ID, s.CommitKind, s.CommitUser)
	}
	if got := m.partitions(); !slices.Equal(got, []string{today}) {
		t.Fatalf("partitions %v, want [%s]", got, today)
	}
	// The log names what left the table.
	if want := "dropped 1 partition (1 file ("; !strings.Contains(m.logs.String(), want) ||
		!regexp.MustCompile(`; dropped dt=2020-01-01 \(1 file \([^)]+\)\, 1 row\)`).MatchString(m.logs.String()) {
		t.Errorf("the INFO line does not name the dropped partition, its files and rows:\n%s", m.logs.String())
	}

	// Within the check interval a new old partition stays.
	m.commit("2020-01-02")
	clock = clock.Add(30 * time.Minute)
	mt.runOnce(context.Background())
	if got := m.partitions(); !slices.Equal(got, []string{"2020-01-02", today}) || m.latest().ID != 3 {
		t.Fatalf("partitions %v (snapshot %d) after a run within the interval", got, m.latest().ID)
	}

	clock = clock.Add(31 * time.Minute)
	mt.runOnce(context.Background())
	if got := m.partitions(); !slices.Equal(got, []string{today}) || m.latest().CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("partitions %v (latest %s) after the interval", got, m.latest().CommitKind)
	}
}

// TestMaintenanceCompaction: compaction runs only when the output enables
// it, commits as the maintenance user, and never on write-only tables.
func TestMaintenanceCompaction(t *testing.T) {
	opts := map[string]string{"compaction.min.file-num": "3"}
	for _, tc := range []struct {
		name    string
		options map[string]string
		conf    Maintenance
		files   int
	}{
		{"off by default", opts, Maintenance{Enabled: true}, 4},
		{"enabled", opts, Maintenance{Enabled: true, Compaction: true}, 1},
		{"write-only", withOptions(opts, "write-only", "true"), Maintenance{Compaction: true}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMaintTable(t, tc.options)
			for range 4 {
				m.commit("2024-01-01")
			}
			m.maintainer(tc.conf).runOnce(context.Background())
			live, err := m.tbl.Planner().LiveEntries(context.Background(), m.latest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(live) != tc.files {
				t.Fatalf("%d live files, want %d", len(live), tc.files)
			}
			if tc.files == 1 {
				if s := m.latest(); s.CommitKind != snapshot.CommitCompact || s.CommitUser != "w-maintenance" {
					t.Fatalf("latest snapshot %s by %s", s.CommitKind, s.CommitUser)
				}
			}
			rows, err := m.tbl.ReadAll(context.Background(), 0)
			if err != nil || len(rows) != 4 {
				t.Fatalf("%d rows, %v", len(rows), err)
			}
		})
	}

}

// TestMaintenanceBackground: triggers never block the committer, runs
// happen on the maintainer's goroutine, and close stops it.
func TestMaintenanceBackground(t *testing.T) {
	m := newMaintTable(t, retainTwo)
	for range 5 {
		m.commit("2024-01-01")
	}
	mt := m.maintainer(Maintenance{Enabled: true, Interval: time.Hour})
	ran := make(chan struct{}, 16)
	mt.ran = func() { ran <- struct{}{} }
	go mt.run()
	defer mt.close()

	// A burst of commits' triggers returns at once and coalesces.
	start := time.Now()
	for range 1000 {
		mt.trigger(nil)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("1000 triggers took %v", d)
	}
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("no maintenance run after a trigger")
	}
	if got := m.snapshotIDs(); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("snapshots %v after the background run, want [4 5]", got)
	}
	// The next run waits for the interval (an hour): close must not.
	mt.trigger(nil)
	done := make(chan struct{})
	go func() { mt.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("close did not stop a maintainer waiting for its interval")
	}
	if n := len(ran); n != 0 {
		t.Fatalf("%d more runs inside the interval", n)
	}
}

// TestMaintenancePrimaryKeyExpiry: the output's maintenance expires the
// snapshots of a primary-key table too (changelog files with them), and
// the merged rows stay.
func TestMaintenancePrimaryKeyExpiry(t *testing.T) {
	o := openKVOutput(t, `  bucket: 2
  options: { changelog-producer: input, snapshot.num-retained.min: "1", snapshot.num-retained.max: "2" }`,
		"maintenance: { enabled: true, table_metrics: false }")
	ctx := context.Background()
	for i := range 5 {
		m := opMessage("update", fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i%3, i))
		if err := o.WriteBatch(ctx, service.MessageBatch{m}); err != nil {
			t.Fatal(err)
		}
	}
	k := o.staticSink()
	k.maint.runOnce(ctx)
	ids, err := k.tbl.Snapshots().ListIDs(ctx)
	if err != nil || !slices.Equal(ids, []int64{4, 5}) {
		t.Fatalf("snapshots %v %v, want [4 5]", ids, err)
	}
	rows, err := k.tbl.ReadAll(ctx, 0)
	if err != nil || fmt.Sprint(rows) != "[[0 v3] [1 v4] [2 v2]]" {
		t.Fatalf("rows %v %v", rows, err)
	}
}

// TestMaintenanceLookupCacheAcrossRuns: the output's maintenance compacts
// a lookup-changelog table, whose upper levels do not fit
// lookup.cache-max-memory-size, after every batch with one lookup cache
// for all its runs: over five runs each data file is opened by lookups at
// most once (beyond the opens of the compactions whose input it is),
// although most upper-level files are looked up by every run. The cache's
// local files live under the system temp directory until the output
// closes.
func TestMaintenanceLookupCacheAcrossRuns(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the cache makes its directory (os.TempDir)
	warehouse := t.TempDir()
	local, err := storage.NewLocal(warehouse)
	if err != nil {
		t.Fatal(err)
	}
	fio := faultfs.New(local, 1) // no faults: it counts the opens of each file
	ran := make(chan struct{}, 8)
	o := newOutput(mustParse(t, fmt.Sprintf(`
warehouse: %s
table: t
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT }
    - { name: v, type: STRING }
  primary_keys: [ id ]
  bucket: 1
  options: { changelog-producer: lookup, lookup.cache-max-memory-size: 1kb, target-file-size: 16kb }
maintenance: { enabled: true, table_metrics: false, interval: 1ms }
compaction: { enabled: true }
`, warehouse)), service.MockResources(), options{
		openFileIO:     func(context.Context, config.Table) (storage.FileIO, error) { return fio, nil },
		maintenanceRan: func() { ran <- struct{}{} },
	})
	ctx := context.Background()
	if err := o.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close(ctx) })
	k := o.staticSink()
	levels := func(id int64) map[string]int32 {
		snap, err := k.tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := k.tbl.Planner().LiveEntries(ctx, snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int32{}
		for _, e := range entries {
			out[e.File.FileName] = e.File.Level
		}
		return out
	}
	inputs, distinct, lookedUp := map[string]int{}, map[string]bool{}, 0
	var cache *write.LookupCache
	// Each batch is one commit, which triggers one maintenance run: a
	// compaction of the batch's level-0 file, looking its keys up in the
	// upper levels the earlier runs made.
	for round := range 5 {
		n, id := 40, func(i int) int { return (i*53 + round*7) % 2000 }
		if round == 0 {
			n, id = 2000, func(i int) int { return i }
		}
		batch := make(service.MessageBatch, n)
		for i := range batch {
			batch[i] = opMessage("update", fmt.Sprintf(`{"id":%d,"v":"value %d of round %d"}`, id(i), id(i)*7919%10007, round))
		}
		prev, err := k.tbl.Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		written := int64(1)
		if prev != nil {
			written = prev.ID + 1
		}
		if err := o.WriteBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		<-ran
		latest, err := k.tbl.Snapshots().Latest(ctx)
		if err != nil || latest.ID != written+1 || latest.CommitKind != snapshot.CommitCompact {
			t.Fatalf("round %d: latest snapshot %+v %v, want the COMPACT snapshot %d", round, latest, err, written+1)
		}
		before, after := levels(written), levels(latest.ID)
		for name, level := range before {
			if l, ok := after[name]; !ok || l != level {
				inputs[name]++ // read by the compaction as its input
			}
			if level > 0 {
				distinct[name] = true
				lookedUp++
			}
		}
		k.maint.lookupsMu.Lock()
		c := k.maint.lookups
		k.maint.lookupsMu.Unlock()
		if cache == nil {
			cache = c
		} else if c != cache {
			t.Fatalf("round %d: the maintenance made a new lookup cache", round)
		}
	}
	reads, reread := fio.ExtraOpens("data-", inputs)
	t.Logf("5 runs looked up in %d upper-level files (%d distinct); lookups opened %d data files, %d more than once; cache %+v",
		lookedUp, len(distinct), reads, reread, cache.Stats())
	if lookedUp <= len(distinct) || reads == 0 {
		t.Fatalf("no upper-level file lived through two runs, or no lookup read one: the test does not show the cache's reuse")
	}
	if reread > 0 {
		t.Errorf("%d data files opened more than once by lookups", reread)
	}
	if st := cache.Stats(); st.DiskBytes == 0 {
		t.Errorf("cache %+v: no local lookup file", st)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "paimon-lookup-*"))
	if len(dirs) != 1 {
		t.Fatalf("local lookup directories %v, want the cache's", dirs)
	}
	if err := o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "paimon-lookup-*")); len(dirs) != 0 {
		t.Fatalf("local lookup directories %v after Close", dirs)
	}
}
