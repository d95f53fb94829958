package reliability

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestExpiryKilled kills snapshot expiry with SIGKILL mid-run, on a local
// disk and on the S3 server. Each round commits three snapshots, every
// other round a compaction (so that expiry deletes data files too), then
// runs an expiry process (the test binary re-executed, retain 1..3) that
// SIGKILLs itself at a random one of the files it deletes; the audit then
// checks that every listed snapshot still plans and reads. Last, one
// expiry and one orphan clean run to completion, and the table must hold
// only the files its snapshots use: what the kills left behind was found
// and deleted (lakecore/maintain/expire_journal.go).
func TestExpiryKilled(t *testing.T) {
	skipShort(t)
	t.Run("local", func(t *testing.T) { runExpiryKilled(t, localTarget(t)) })
	t.Run("s3", func(t *testing.T) { runExpiryKilled(t, s3Target(t)) })
}

func runExpiryKilled(t *testing.T, tgt concTarget) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed(t), 1))
	tbl, err := lakecore.NewCatalog(tgt.fio).CreateTable(ctx, "rel", "expkill", lakecore.TableSpec{
		Fields:        types.MustParse("ROW<id BIGINT NOT NULL, p INT>").Fields,
		PartitionKeys: []string{"p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := filepath.Join(workDir(t), "stop")
	if err := os.WriteFile(stop, nil, 0o644); err != nil { // one run per process
		t.Fatal(err)
	}
	rounds := pick(10, 60)
	var next int64
	killed, expired := 0, 0
	for r := 0; r < rounds; r++ {
		for range 3 {
			appendRows(t, tbl, next, 20)
			next += 20
		}
		if r%2 == 1 {
			if _, err := tbl.Compact(ctx, maintain.CompactOptions{CommitUser: "compactor", TargetFileSize: 1 << 20, MinFileNum: 2}); err != nil {
				t.Fatalf("round %d: compact: %v", r, err)
			}
		}
		killAfter := 1 + rng.IntN(32)
		cmd, out, err := startChild(roleExpire, childEnv{
			Warehouse: tgt.warehouse, S3: toChildS3(tgt.s3), Database: "rel", Table: "expkill", StopFile: stop, KillAfter: killAfter,
		})
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
			killed++
		case err != nil:
			t.Fatalf("round %d: expiry process: %v", r, err)
		default:
			res, err := parseChildResults(out.String())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res {
				if c.Error != "" {
					t.Fatalf("round %d: expiry: %s", r, c.Error)
				}
				expired += c.Expired
			}
		}
		a := auditTable(t, ctx, tbl, auditOptions{expired: true})
		if t.Failed() {
			t.Fatalf("round %d: the expiry killed at file %d broke the table", r, killAfter)
		}
		if len(a.latest) != int(next) {
			t.Fatalf("round %d: the latest snapshot has %d rows, want %d", r, len(a.latest), next)
		}
	}
	if killed == 0 {
		t.Errorf("no expiry of %d was killed mid-run", rounds)
	}
	if _, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMin: 1, RetainMax: 3, OlderThan: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Only journals can have left files, and both operations finish them;
	// young files are kept (the default older_than), so nothing else is
	// cleaned here.
	if _, err := tbl.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{}); err != nil {
		t.Fatal(err)
	}
	// expired: the DELETE entries of the retained snapshots name files that
	// are gone; every other class but the referenced ones fails below.
	a := auditTable(t, ctx, tbl, auditOptions{expired: true})
	for class, files := range a.classes {
		switch class {
		case classSnapshot, classHint, classSchema, classRefList, classRefManifest, classRefData:
		default:
			t.Errorf("after a complete expiry: %d files of class %q, first %s", len(files), class, files[0])
		}
	}
	if ids := len(a.snapshots); ids > 3 || ids < 1 {
		t.Errorf("%d snapshots after a complete expiry with retain 1..3", ids)
	}
	figure(t, "%d rounds: %d expiry processes SIGKILLed mid-run, %d ran to the end (%d snapshots expired); every listed snapshot read after each; files: %s",
		rounds, killed, rounds-killed, expired, strings.TrimSpace(a.summary()))
}
