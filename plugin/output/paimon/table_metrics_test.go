package paimon

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
)

// gaugeRecorder keeps the last value set on each series, keyed
// "name" or "name{label}".
type gaugeRecorder struct {
	mu   sync.Mutex
	vals map[string]int64
}

type recordedGauge struct {
	r    *gaugeRecorder
	name string
}

func (g recordedGauge) Set(v int64, labels ...string) {
	g.r.mu.Lock()
	defer g.r.mu.Unlock()
	key := g.name
	if len(labels) > 0 {
		key += "{" + strings.Join(labels, ",") + "}"
	}
	g.r.vals[key] = v
}

func (r *gaugeRecorder) snapshot() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.vals)
}

// newRecordedTableMetrics returns table metrics whose gauges record into
// the returned recorder.
func newRecordedTableMetrics(limit int) (*tableMetrics, *gaugeRecorder) {
	r := &gaugeRecorder{vals: map[string]int64{}}
	g := func(name string) gauge { return recordedGauge{r, name} }
	return &tableMetrics{
		files: g("files"), bytes: g("bytes"), rows: g("rows"), partitions: g("partitions"), maxFiles: g("max"), sortedRuns: g("runs"),
		partFiles: g("pfiles"), partBytes: g("pbytes"), limit: limit, tracked: map[string]bool{},
	}, r
}

func stat(name string, files int64) lakecore.PartitionStats {
	return lakecore.PartitionStats{Partition: &binrow.Partition{Name: name}, Buckets: 1, Files: files, Rows: 10 * files, Bytes: 100 * files}
}

// TestTableMetricsTracking: table totals always; per-partition series for
// at most limit partitions, the ones with the most files first; a
// partition that disappears is set to 0 and frees its place.
func TestTableMetricsTracking(t *testing.T) {
	tm, rec := newRecordedTableMetrics(2)
	tm.publish([]lakecore.PartitionStats{stat("dt=a", 1), stat("dt=b", 5), stat("dt=c", 5), stat("dt=d", 2)}, true)
	want := map[string]int64{
		"files": 13, "bytes": 1300, "rows": 130, "partitions": 4, "max": 5, "runs": 0,
		// b and c have the most files; d and a have no series.
		"pfiles{dt=b}": 5, "pbytes{dt=b}": 500, "pfiles{dt=c}": 5, "pbytes{dt=c}": 500,
	}
	assertGauges(t, "first run", rec.snapshot(), want)

	// c is dropped: 0, and its place goes to a, which now has more files
	// than d; b keeps its place.
	tm.publish([]lakecore.PartitionStats{stat("dt=a", 9), stat("dt=b", 6), stat("dt=d", 2)}, true)
	want = map[string]int64{
		"files": 17, "bytes": 1700, "rows": 170, "partitions": 3, "max": 9, "runs": 0,
		"pfiles{dt=b}": 6, "pbytes{dt=b}": 600, "pfiles{dt=c}": 0, "pbytes{dt=c}": 0, "pfiles{dt=a}": 9, "pbytes{dt=a}": 900,
	}
	assertGauges(t, "after dropping dt=c", rec.snapshot(), want)

	// Places are kept: d overtakes b but gets no series while b exists.
	tm.publish([]lakecore.PartitionStats{stat("dt=a", 9), stat("dt=b", 1), stat("dt=d", 8)}, true)
	want["files"], want["bytes"], want["rows"] = 18, 1800, 180
	want["pfiles{dt=b}"], want["pbytes{dt=b}"] = 1, 100
	assertGauges(t, "d overtaking b", rec.snapshot(), want)

	// An empty table (everything expired).
	tm.publish(nil, true)
	want = map[string]int64{
		"files": 0, "bytes": 0, "rows": 0, "partitions": 0, "max": 0, "runs": 0,
		"pfiles{dt=b}": 0, "pbytes{dt=b}": 0, "pfiles{dt=c}": 0, "pbytes{dt=c}": 0, "pfiles{dt=a}": 0, "pbytes{dt=a}": 0,
	}
	assertGauges(t, "empty", rec.snapshot(), want)
	if len(tm.tracked) != 0 {
		t.Errorf("still tracking %v", tm.tracked)
	}
}

func TestTableMetricsLimitsAndUnpartitioned(t *testing.T) {
	tm, rec := newRecordedTableMetrics(0)
	tm.publish([]lakecore.PartitionStats{stat("dt=a", 1), stat("dt=b", 2)}, true)
	assertGauges(t, "limit 0", rec.snapshot(), map[string]int64{"files": 3, "bytes": 300, "rows": 30, "partitions": 2, "max": 2, "runs": 0})

	tm, rec = newRecordedTableMetrics(10)
	tm.publish([]lakecore.PartitionStats{stat("", 4)}, false)
	assertGauges(t, "unpartitioned", rec.snapshot(), map[string]int64{"files": 4, "bytes": 400, "rows": 40, "partitions": 1, "max": 4, "runs": 0})
}

// TestMaintenanceTableMetrics: a run publishes what the latest snapshot
// holds, after its own expiry.
func TestMaintenanceTableMetrics(t *testing.T) {
	m := newMaintTable(t, map[string]string{"partition.expiration-time": "7 d"})
	m.commit("2020-01-01", "2999-01-01")
	m.commit("2999-01-01")
	mt := m.maintainer(Maintenance{Enabled: true})
	tm, rec := newRecordedTableMetrics(10)
	mt.met.table = tm
	mt.runOnce(context.Background())

	stats, err := m.tbl.PartitionStats(context.Background(), m.latest())
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Partition.Name != "dt=2999-01-01" || stats[0].Files != 2 || stats[0].Rows != 2 {
		t.Fatalf("stats after partition expiry: %+v", stats)
	}
	s := stats[0]
	assertGauges(t, "after a run", rec.snapshot(), map[string]int64{
		"files": 2, "bytes": s.Bytes, "rows": 2, "partitions": 1, "max": 2, "runs": 0,
		"pfiles{dt=2999-01-01}": 2, "pbytes{dt=2999-01-01}": s.Bytes,
	})
}

func assertGauges(t *testing.T, when string, got, want map[string]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		keys := slices.Sorted(maps.Keys(got))
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%d", k, got[k])
		}
		t.Errorf("%s: gauges%s\nwant %v", when, b.String(), want)
	}
}
