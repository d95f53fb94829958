package maintain_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var partNow = time.Date(2024, 1, 10, 12, 0, 0, 0, time.UTC)

func partitionOpts(o maintain.ExpirePartitionsOptions) maintain.ExpirePartitionsOptions {
	o.Now = func() time.Time { return partNow }
	o.Location = time.UTC
	return o
}

// dayTable has one row per day 2024-01-01..09 in partition dt, plus the
// partitions dt=latest and dt=NULL.
func dayTable(t *testing.T, options map[string]string) *lakeTable {
	l := newLakeTable(t, lakecore.TableSpec{
		Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.StringType()}},
		PartitionKeys: []string{"dt"},
		Options:       options,
	})
	var rows [][]any
	for d := 1; d <= 9; d++ {
		rows = append(rows, []any{int32(d), time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")})
	}
	rows = append(rows, []any{int32(100), "latest"}, []any{int32(101), nil})
	l.appendRows(rows[:5]...)
	l.appendRows(rows[5:]...)
	return l
}

func ids(rows [][]any) []int32 {
	var out []int32
	for _, r := range rows {
		out = append(out, r[0].(int32))
	}
	slices.Sort(out)
	return out
}

func TestExpirePartitions(t *testing.T) {
	l := dayTable(t, map[string]string{"partition.expiration-time": "2 d"})
	ctx := context.Background()
	before := l.latest()

	// Now 2024-01-10 12:00, 2 days: partitions before 2024-01-08 12:00 expire,
	// at most 3 per run, in value order.
	rep, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{MaxExpires: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03"}; !slices.Equal(rep.PartitionsDropped, want) {
		t.Errorf("dropped %v, want %v", rep.PartitionsDropped, want)
	}
	if rep.DroppedFiles.Files != 3 {
		t.Errorf("dropped files %+v", rep.DroppedFiles)
	}
	wantSkipped := []string{"dt=__DEFAULT_PARTITION__", "dt=latest"}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.Partition)
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", rep.Skipped, wantSkipped)
	}
	if !strings.Contains(rep.Skipped[0].Reason, "NULL") || !strings.Contains(rep.Skipped[1].Reason, `"latest" does not parse`) {
		t.Errorf("reasons: %+v", rep.Skipped)
	}
	s := l.latest()
	if len(rep.Snapshots) != 1 || rep.Snapshots[0] != s.ID || s.ID != before.ID+1 || s.CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("snapshots %v, latest %d %s", rep.Snapshots, s.ID, s.CommitKind)
	}
	if got := ids(l.readAll(0)); !slices.Equal(got, []int32{4, 5, 6, 7, 8, 9, 100, 101}) {
		t.Errorf("rows after expiry: %v", got)
	}
	// The previous snapshot still has everything.
	if got := ids(l.readAll(before.ID)); len(got) != 11 {
		t.Errorf("snapshot %d rows: %v", before.ID, got)
	}
	if !strings.Contains(rep.String(), "dropped 3 partitions (3 files") || !strings.Contains(rep.String(), "skipped dt=latest") {
		t.Errorf("report:\n%s", rep)
	}

	// Next run (table default max 100): 04..08; 09 is younger.
	rep, err = maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PartitionsDropped) != 5 || rep.PartitionsDropped[4] != "dt=2024-01-08" {
		t.Errorf("second run dropped %v", rep.PartitionsDropped)
	}
	if got := ids(l.readAll(0)); !slices.Equal(got, []int32{9, 100, 101}) {
		t.Errorf("rows: %v", got)
	}
	// The files go physically with the snapshots before the OVERWRITEs.
	if _, err := maintain.ExpireSnapshots(ctx, l.fio, l.tb.Path(), maintain.ExpireSnapshotsOptions{RetainMin: 1, OlderThan: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for d := 1; d <= 8; d++ {
		dir := filepath.Join(l.dir(), "dt="+time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), "bucket-0")
		ents, _ := os.ReadDir(dir)
		if len(ents) != 0 {
			t.Errorf("%s still holds %d files", dir, len(ents))
		}
	}
	if got := ids(l.readAll(0)); !slices.Equal(got, []int32{9, 100, 101}) {
		t.Errorf("rows after snapshot expiry: %v", got)
	}
}

func TestExpirePartitionsDryRunAndBatches(t *testing.T) {
	l := dayTable(t, map[string]string{"partition.expiration-time": "2 d", "partition.expiration-batch-size": "3"})
	ctx := context.Background()
	before := l.latest()
	rep, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{DryRun: true}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PartitionsDropped) != 8 || l.latest().ID != before.ID {
		t.Fatalf("dry run: dropped %v, latest %d", rep.PartitionsDropped, l.latest().ID)
	}
	if !strings.Contains(rep.Summary(), "would drop 8 partitions") {
		t.Errorf("summary %q", rep.Summary())
	}
	rep, err = maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	// 8 partitions in batches of 3: three OVERWRITE snapshots.
	if want := []int64{before.ID + 1, before.ID + 2, before.ID + 3}; !slices.Equal(rep.Snapshots, want) {
		t.Errorf("snapshots %v, want %v", rep.Snapshots, want)
	}
}

func TestExpirePartitionsFormatterAndPattern(t *testing.T) {
	// dt INT values like 20240101 with yyyyMMdd; hr from a second key.
	l := newLakeTable(t, lakecore.TableSpec{
		Fields: []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.IntType()},
			{Name: "hr", Type: types.StringType()}},
		PartitionKeys: []string{"dt", "hr"},
		Options: map[string]string{"partition.expiration-time": "1 h", "partition.timestamp-formatter": "yyyyMMdd HH",
			"partition.timestamp-pattern": "$dt $hr"},
	})
	l.appendRows(
		[]any{int32(1), int32(20240110), "10"}, // 10:00 < 11:00: expired
		[]any{int32(2), int32(20240110), "11"}, // 11:00: not before 11:00
		[]any{int32(3), int32(20240110), "12"},
		[]any{int32(4), int32(20240109), "23"},
		[]any{int32(5), int32(20240110), "9"}, // HH needs two digits
	)
	rep, err := maintain.ExpirePartitions(context.Background(), l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dt=20240109/hr=23", "dt=20240110/hr=10"}; !slices.Equal(rep.PartitionsDropped, want) {
		t.Errorf("dropped %v, want %v", rep.PartitionsDropped, want)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Partition != "dt=20240110/hr=9" {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	if got := ids(l.readAll(0)); !slices.Equal(got, []int32{2, 3, 5}) {
		t.Errorf("rows: %v", got)
	}
	// Overrides of the procedure: a 30 min expiration drops hr=11 as well.
	rep, err = maintain.ExpirePartitions(context.Background(), l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{ExpirationTime: 30 * time.Minute}))
	if err != nil || !slices.Equal(rep.PartitionsDropped, []string{"dt=20240110/hr=11"}) {
		t.Errorf("override: %v %v", err, rep.PartitionsDropped)
	}
}

func TestExpirePartitionsErrors(t *testing.T) {
	ctx := context.Background()
	l := dayTable(t, nil)
	if _, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{})); !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Errorf("no expiration time: %v", err)
	}
	if _, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{ExpirationTime: time.Hour, ExpireStrategy: "update-time"})); !errors.Is(err, maintain.ErrUnsupported) {
		t.Errorf("update-time: %v", err)
	}
	if _, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{ExpirationTime: time.Hour, TimestampFormatter: "yyyy-ww"})); !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Errorf("bad formatter: %v", err)
	}
	u := newLakeTable(t, lakecore.TableSpec{Fields: []types.DataField{{Name: "id", Type: types.IntType()}}})
	if _, err := maintain.ExpirePartitions(ctx, u.fio, u.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{ExpirationTime: time.Hour})); !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Errorf("unpartitioned: %v", err)
	}
}

func TestPartitionExpiryDue(t *testing.T) {
	last := partNow
	for _, c := range []struct {
		opts map[string]string
		at   time.Duration
		want bool
	}{
		{nil, 2 * time.Hour, false},
		{map[string]string{"partition.expiration-time": "1 d"}, 30 * time.Minute, false},
		{map[string]string{"partition.expiration-time": "1 d"}, 61 * time.Minute, true},
		{map[string]string{"partition.expiration-time": "1 d", "partition.expiration-check-interval": "10 min"}, 11 * time.Minute, true},
		{map[string]string{"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0 s"}, 0, true},
	} {
		got, err := maintain.PartitionExpiryDue(schema.Options(c.opts), last, last.Add(c.at))
		if err != nil || got != c.want {
			t.Errorf("%v at +%s: %v, %v; want %v", c.opts, c.at, got, err, c.want)
		}
	}
}

func TestExpireSnapshotsCleansEmptyDirectories(t *testing.T) {
	for _, clean := range []bool{false, true} {
		opts := map[string]string{"partition.expiration-time": "2 d"}
		if clean {
			opts["snapshot.clean-empty-directories"] = "true"
		}
		l := dayTable(t, opts)
		ctx := context.Background()
		if _, err := maintain.ExpirePartitions(ctx, l.fio, l.tb.Path(), partitionOpts(maintain.ExpirePartitionsOptions{})); err != nil {
			t.Fatal(err)
		}
		if _, err := maintain.ExpireSnapshots(ctx, l.fio, l.tb.Path(), maintain.ExpireSnapshotsOptions{RetainMin: 1, OlderThan: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(filepath.Join(l.dir(), "dt=2024-01-01"))
		if gone := errors.Is(err, os.ErrNotExist); gone != clean {
			t.Errorf("clean-empty-directories %v: partition directory gone %v (%v)", clean, gone, err)
		}
		if _, err := os.Stat(filepath.Join(l.dir(), "dt=2024-01-09", "bucket-0")); err != nil {
			t.Errorf("live partition directory: %v", err)
		}
	}
}
