package e2e

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	paimonout "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// faultyEnv returns an environment whose paimon output writes through f.
func faultyEnv(t testing.TB, f storage.FileIO) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	err := paimonout.Register(env, paimonout.WithFileIO(func(context.Context, config.Table) (storage.FileIO, error) { return f, nil }))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func isSnapshotFile(p string) bool { return strings.Contains(p, "/snapshot/snapshot-") }

// armingSnapshotWrite matches the nth snapshot write and sets armed when it
// does, so that the rules waiting for armed (snapshotReadsFail) fire only
// after it.
func armingSnapshotWrite(armed *atomic.Bool, nth int32) func(faultfs.Op, string) bool {
	n := atomic.Int32{}
	return func(_ faultfs.Op, p string) bool {
		if isSnapshotFile(p) && n.Add(1) == nth {
			armed.Store(true)
			return true
		}
		return false
	}
}

// noMaintenance keeps background maintenance from consuming the injected
// faults, so that each case exercises the commit path it is about.
const noMaintenance = `
    maintenance:
      enabled: false
    batching:
      count: 2000
      period: 200ms
`

// faultCase is a storage failure injected while a pipeline writes.
type faultCase struct {
	name string
	// faults returns the rules; armed is set by rules that must fire
	// before others may.
	faults func(armed *atomic.Bool) []faultfs.Fault
	// metric that must end up positive, and a log line that must appear
	// (the path the case takes).
	metric, log string
	// keepsFiles: the batches are nacked with an unknown outcome, so their
	// data files stay (as orphans) rather than risk a landed snapshot.
	keepsFiles bool
	slow       bool // skipped with -short
}

var faultCases = []faultCase{
	{
		name: "data file close fails",
		faults: func(*atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{{Ops: faultfs.OpClose, Match: func(_ faultfs.Op, p string) bool { return strings.Contains(p, "/bucket-") },
				Nth: 4, Times: 2}}
		},
	},
	{
		// Definite: nothing landed, the files are deleted, Benthos retries.
		name: "manifest write fails",
		faults: func(*atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{{Ops: faultfs.OpWriteExclusive, Match: func(_ faultfs.Op, p string) bool { return strings.Contains(p, "/manifest/") },
				Nth: 3, Times: 3}}
		},
		metric: "paimon_commit_failures",
	},
	{
		// The Committer retries and finds that its attempt did not land.
		name: "snapshot write fails",
		faults: func(*atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{{Ops: faultfs.OpWriteExclusive, Match: func(_ faultfs.Op, p string) bool { return isSnapshotFile(p) },
				Nth: 2, Times: 3}}
		},
		metric: "paimon_commit_retries",
	},
	{
		// The Committer looks for its attempt before retrying and finds it.
		name: "snapshot lands but reported failed",
		faults: func(*atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{{Ops: faultfs.OpWriteExclusive, Mode: faultfs.ApplyThenFail,
				Match: func(_ faultfs.Op, p string) bool { return isSnapshotFile(p) }, Nth: 3, Times: 1}}
		},
		metric: "paimon_commit_retries",
	},
	{
		// The snapshot lands but the write reports an error, and reading
		// the snapshots fails right after, so the Committer gives up with
		// an unknown outcome; the output finds the snapshot and acks.
		name: "snapshot lands but reported failed (ambiguous)",
		faults: func(armed *atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{
				{Ops: faultfs.OpWriteExclusive, Mode: faultfs.ApplyThenFail, Times: 1, Match: armingSnapshotWrite(armed, 3)},
				snapshotReadsFail(armed, 2),
			}
		},
		log: "did land; its batches are acknowledged",
	},
	{
		// The snapshot write times out before landing and the look-ups
		// fail: the output finds it did not land and commits it again.
		name: "snapshot does not land, outcome unknown (ambiguous)",
		faults: func(armed *atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{
				{Ops: faultfs.OpWriteExclusive, Err: storage.ErrAmbiguous, Times: 1, Match: armingSnapshotWrite(armed, 3)},
				snapshotReadsFail(armed, 2),
			}
		},
		log: "did not land; committing it again",
	},
	{
		// The outcome stays unknown through every look-up: the batches are
		// nacked without deleting their files, Benthos delivers them again.
		name: "outcome stays unknown",
		faults: func(armed *atomic.Bool) []faultfs.Fault {
			return []faultfs.Fault{
				{Ops: faultfs.OpWriteExclusive, Err: storage.ErrAmbiguous, Times: 1, Match: armingSnapshotWrite(armed, 3)},
				snapshotReadsFail(armed, 1+4), // the Committer's look-up and the output's four
			}
		},
		metric:     "paimon_commit_failures",
		keepsFiles: true,
		slow:       true,
	},
}

// TestOutputStorageFaults injects storage failures while a pipeline writes
// and checks that Benthos' retries end with every row present exactly once,
// every snapshot of the writer has its own increasing identifier, and no
// data file is left unreferenced.
func TestOutputStorageFaults(t *testing.T) {
	const n = 20_000
	for _, fc := range faultCases {
		t.Run(fc.name, func(t *testing.T) {
			if fc.slow && testing.Short() {
				t.Skip("slow (waits out the look-ups of an unknown commit outcome); run without -short")
			}
			wh := t.TempDir()
			local, err := storage.NewLocal(wh)
			if err != nil {
				t.Fatal(err)
			}
			var armed atomic.Bool
			f := faultfs.New(local, 7, fc.faults(&armed)...)
			sb := faultyEnv(t, f).NewStreamBuilder()
			met := withMetrics(t, sb)
			logs := captureLogs(sb, slog.LevelInfo)
			if err := sb.AddInputYAML(eventsInput(n)); err != nil {
				t.Fatal(err)
			}
			if err := sb.AddOutputYAML(eventsOutput(wh, noMaintenance)); err != nil {
				t.Fatal(err)
			}
			runStream(t, sb, 2*time.Minute)

			fired := f.Injected()
			if len(fired) == 0 {
				t.Fatal("no fault fired")
			}
			rules := map[int]bool{}
			for _, in := range fired {
				rules[in.Rule] = true
			}
			if len(rules) != len(fc.faults(new(atomic.Bool))) {
				t.Errorf("only rules %v fired: %v", rules, fired)
			}
			if fc.metric != "" {
				if got := met.get(t, fc.metric); got <= 0 {
					t.Errorf("%s = %v after faults %v", fc.metric, got, fired)
				}
			}
			if fc.log != "" && !logs.contains(fc.log) {
				t.Errorf("no log line %q after faults %v; logs:\n%s", fc.log, fired, logs)
			}
			tbl, rows := readTable(t, wh, "default", "events")
			checkEvents(t, tbl, rows, n)
			checkIdentifiers(t, tbl)
			if orphans := orphanDataFiles(t, wh, tbl); fc.keepsFiles != (len(orphans) > 0) {
				t.Errorf("%d data files are not in the table: %v", len(orphans), orphans)
			}
		})
	}
}

// snapshotReadsFail fails the next times reads of snapshot files and
// listings of the snapshot directory once armed (the LATEST hint, whose
// read failures mean "no hint", is left alone).
func snapshotReadsFail(armed *atomic.Bool, times int) faultfs.Fault {
	return faultfs.Fault{Ops: faultfs.OpReadFile | faultfs.OpList | faultfs.OpStat | faultfs.OpOpen, Times: times,
		Match: func(_ faultfs.Op, p string) bool {
			return armed.Load() && (isSnapshotFile(p) || strings.HasSuffix(p, "/snapshot"))
		}}
}

// checkIdentifiers asserts that the snapshots of the table's writer have
// strictly increasing commit identifiers.
func checkIdentifiers(t *testing.T, tbl *lakecore.Table) {
	t.Helper()
	ctx := context.Background()
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, id := range ids {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := last[s.CommitUser]; ok && s.CommitIdentifier <= prev {
			t.Errorf("snapshot %d of user %s has identifier %d after %d", id, s.CommitUser, s.CommitIdentifier, prev)
		}
		last[s.CommitUser] = s.CommitIdentifier
	}
}

// orphanDataFiles returns the Parquet files under the table that are not
// live files of its latest snapshot.
func orphanDataFiles(t *testing.T, wh string, tbl *lakecore.Table) []string {
	t.Helper()
	names := map[string]bool{}
	for _, e := range liveEntries(t, tbl) {
		names[e.File.FileName] = true
	}
	var orphans []string
	err := filepath.WalkDir(filepath.Join(wh, filepath.FromSlash(tbl.Path())), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !names[d.Name()] {
			orphans = append(orphans, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return orphans
}
