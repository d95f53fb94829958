package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
	paimonout "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// s3Block is the output's s3 field for the test server.
func s3Block(cfg storage.S3Config) string {
	return fmt.Sprintf(`
    s3:
      endpoint: %s
      region: %s
      force_path_style: true
      credentials:
        id: %s
        secret: %s
`, cfg.Endpoint, cfg.Region, cfg.AccessKeyID, cfg.SecretAccessKey)
}

// TestOutputS3WithFaults runs the events pipeline against the S3 test
// server with a manifest write failing (definite: nacked and retried) and a
// snapshot that lands while its write reports an error and the look-ups
// fail (resolved by commit user and identifier), and finds every row
// exactly once.
func TestOutputS3WithFaults(t *testing.T) {
	const n = 20_000
	cfg, bucket := s3test.Server(t)
	wh := "s3://" + bucket + "/warehouse"
	var armed atomic.Bool
	faults := []faultfs.Fault{
		{Ops: faultfs.OpWriteExclusive, Nth: 2, Times: 1,
			Match: func(_ faultfs.Op, p string) bool { return strings.Contains(p, "/manifest/") }},
		{Ops: faultfs.OpWriteExclusive, Mode: faultfs.ApplyThenFail, Times: 1, Match: armingSnapshotWrite(&armed, 4)},
		snapshotReadsFail(&armed, 2),
	}
	var faulty *faultfs.FS
	open := func(ctx context.Context, t config.Table) (storage.FileIO, error) {
		fio, err := storage.Open(ctx, t.Warehouse, t.S3)
		if err != nil {
			return nil, err
		}
		faulty = faultfs.New(fio, 11, faults...)
		return faulty, nil
	}
	env := service.NewEnvironment()
	if err := paimonout.Register(env, paimonout.WithFileIO(open)); err != nil {
		t.Fatal(err)
	}
	sb := env.NewStreamBuilder()
	met := withMetrics(t, sb)
	logs := captureLogs(sb, slog.LevelInfo)
	if err := sb.AddInputYAML(eventsInput(n)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(eventsOutput(wh, s3Block(cfg)+noMaintenance)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runStream(t, sb, 3*time.Minute)
	t.Logf("%d rows to S3 in %v", n, time.Since(start).Round(time.Millisecond))

	if got := len(faulty.Injected()); got != 1+1+2 {
		t.Errorf("%d faults fired, want 4: %v", got, faulty.Injected())
	}
	if got := met.get(t, "paimon_commit_failures"); got < 1 {
		t.Errorf("paimon_commit_failures = %v", got)
	}
	if !logs.contains("did land; its batches are acknowledged") {
		t.Errorf("the ambiguous commit was not resolved as landed; logs:\n%s", logs)
	}

	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, wh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.OpenTable(ctx, "default", "events")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, tbl, rows, n)
	checkIdentifiers(t, tbl)
}
