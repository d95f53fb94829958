package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// The concurrency test: four writer processes (the real binary, a generate
// input into the paimon output with max_in_flight 1, so one commit per
// generated batch) commit 50 times each into one table, on a local disk and
// on the S3 server; then the same with four maintenance processes alongside
// (the test binary re-executed, looping over Table.Compact,
// Table.ExpireSnapshots with retain-min 1, Table.ExpirePartitions dropping
// the partition p = 0 whenever it has files, and Table.RemoveOrphanFiles).
// Every row must be in the latest snapshot exactly once (with partition
// expiry alongside: at most once in p = 0, which it drops), every writer
// must have committed 50 snapshots with identifiers 1..50, and the snapshot
// ids the writers, the compactor and the partition expirer report must be
// exactly 1..latest.

const (
	concWriters = 4
	concCommits = 50
	concRows    = 20 // rows per commit
)

// concWriterConfig is one writer's pipeline.
const concWriterConfig = `
http:
  enabled: false
logger:
  level: debug
  format: logfmt
input:
  generate:
    count: %d
    batch_size: %d
    interval: ""
    mapping: |
      let s = count("seq")
      root.writer = %d
      root.seq = $s
      root.p = $s %% 3
      root.payload = "writer-%d-row-" + $s.string()
output:
  paimon:
    warehouse: %s
%s
    database: rel
    table: conc
    commit_user: writer-%d
    max_in_flight: 1
    keep_input_batches: true # each generated batch is one commit
    maintenance:
      enabled: false
    create_table:
      enabled: true
      schema:
        - { name: writer, type: INT NOT NULL }
        - { name: seq, type: BIGINT NOT NULL }
        - { name: p, type: INT }
        - { name: payload, type: STRING }
      partition_keys: [ p ]
`

// concTarget is where the table lives.
type concTarget struct {
	warehouse string
	s3        storage.S3Config
	s3yaml    string // the output's s3 block, "" for local
	fio       storage.FileIO
}

func localTarget(t *testing.T) concTarget {
	wh, fio := localWarehouse(t)
	return concTarget{warehouse: wh, fio: fio}
}

func s3Target(t *testing.T) concTarget {
	cfg, bucket := s3test.Server(t)
	wh := "s3://" + bucket + "/warehouse"
	fio, err := storage.Open(context.Background(), wh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return concTarget{warehouse: wh, s3: cfg, s3yaml: s3YAML(cfg), fio: fio}
}

// s3YAML is the output's (or input's) s3 block for cfg.
func s3YAML(cfg storage.S3Config) string {
	return fmt.Sprintf(`    s3:
      endpoint: %s
      region: %s
      force_path_style: true
      credentials:
        id: %s
        secret: %s`, cfg.Endpoint, cfg.Region, cfg.AccessKeyID, cfg.SecretAccessKey)
}

func TestConcurrentProcesses(t *testing.T) {
	skipShort(t)
	bin := binarytest.Path(t)
	t.Run("local", func(t *testing.T) { runConcurrent(t, bin, localTarget(t), false) })
	t.Run("local-with-maintenance", func(t *testing.T) { runConcurrent(t, bin, localTarget(t), true) })
	t.Run("s3", func(t *testing.T) {
		runConcurrent(t, bin, s3Target(t), false)
	})
	t.Run("s3-with-maintenance", func(t *testing.T) {
		runConcurrent(t, bin, s3Target(t), true)
	})
}

var committedLine = regexp.MustCompile(`Committed snapshot (\d+) \(identifier (\d+)\)`)

func runConcurrent(t *testing.T, bin string, tgt concTarget, maintained bool) {
	ctx := context.Background()
	dir := workDir(t)
	start := time.Now()
	stopFile := filepath.Join(dir, "stop")
	type child struct {
		role string
		cmd  *exec.Cmd
		out  *strings.Builder
	}
	var children []child
	if maintained {
		for _, role := range []string{roleCompact, roleExpire, roleExpirePartitions, roleRemoveOrphans} {
			cmd, out, err := startChild(role, childEnv{
				Warehouse: tgt.warehouse, S3: toChildS3(tgt.s3), Database: "rel", Table: "conc", StopFile: stopFile,
				TargetFileSize: 16 << 10, MinFileNum: 3,
			})
			if err != nil {
				t.Fatal(err)
			}
			children = append(children, child{role, cmd, out})
		}
	}

	logs := make([]string, concWriters)
	var wg sync.WaitGroup
	errs := make([]error, concWriters)
	for w := 0; w < concWriters; w++ {
		cfgPath := filepath.Join(dir, fmt.Sprintf("writer-%d.yaml", w))
		cfg := fmt.Sprintf(concWriterConfig, concCommits*concRows, concRows, w, w, tgt.warehouse, tgt.s3yaml, w)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		logs[w] = filepath.Join(dir, fmt.Sprintf("writer-%d.log", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Create(logs[w])
			if err != nil {
				errs[w] = err
				return
			}
			defer f.Close()
			cmd := exec.Command(bin, "-c", cfgPath)
			cmd.Stdout, cmd.Stderr = f, f
			if errs[w] = cmd.Start(); errs[w] != nil {
				return
			}
			timer := time.AfterFunc(4*time.Minute, func() { _ = cmd.Process.Signal(syscall.SIGQUIT) })
			defer timer.Stop()
			errs[w] = cmd.Wait()
		}()
	}
	wg.Wait()
	writersDone := time.Since(start)
	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var compacted, expired, rewritten, drops, orphans int
	var compactSnaps []int64
	var childErrs []string
	runs := map[string]int{}
	for _, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("%s process: %v", c.role, err)
		}
		res, err := parseChildResults(c.out.String())
		if err != nil {
			t.Fatal(err)
		}
		runs[c.role] = len(res)
		for _, r := range res {
			if r.Error != "" {
				childErrs = append(childErrs, c.role+": "+r.Error)
			}
			compactSnaps = append(compactSnaps, r.Snapshots...)
			switch {
			case len(r.Snapshots) > 0 && c.role == roleCompact:
				compacted++
			case len(r.Snapshots) > 0:
				drops++
			}
			expired += r.Expired
			rewritten += int(r.Rewritten)
			orphans += r.Removed
		}
	}
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v\n%s", w, err, tail(logs[w]))
		}
	}

	// Each writer committed concCommits snapshots, identifiers 1..50.
	owner := map[int64]string{}
	for w, l := range logs {
		var ids []int64
		for _, m := range committedLine.FindAllStringSubmatch(string(readFile(l)), -1) {
			snap, _ := strconv.ParseInt(m[1], 10, 64)
			ident, _ := strconv.ParseInt(m[2], 10, 64)
			ids = append(ids, ident)
			if prev, dup := owner[snap]; dup {
				t.Errorf("snapshot %d committed by writer %d and %s", snap, w, prev)
			}
			owner[snap] = fmt.Sprintf("writer %d", w)
		}
		if len(ids) != concCommits {
			t.Errorf("writer %d logged %d commits, want %d", w, len(ids), concCommits)
		}
		// Identifiers increase; a failed commit (its batch is delivered
		// again) leaves a gap.
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Errorf("writer %d: commit %d has identifier %d after %d", w, i+1, ids[i], ids[i-1])
				break
			}
		}
	}
	for _, s := range compactSnaps {
		if prev, dup := owner[s]; dup {
			t.Errorf("snapshot %d reported by a maintenance process and by %s", s, prev)
		}
		owner[s] = "maintenance"
	}

	tbl := openTable(t, ctx, tgt.fio, "rel", "conc")
	a := auditTable(t, ctx, tbl, auditOptions{expired: maintained, readEvery: pick(20, 200)})
	latest := a.snapshots[len(a.snapshots)-1].ID
	if int64(len(owner)) != latest {
		var missing []int64
		for id := int64(1); id <= latest; id++ {
			if _, ok := owner[id]; !ok {
				missing = append(missing, id)
			}
		}
		t.Errorf("snapshots 1..%d, but %d are accounted for; missing %v", latest, len(owner), missing)
	}
	if !maintained && latest != concWriters*concCommits {
		t.Errorf("latest snapshot %d, want %d", latest, concWriters*concCommits)
	}
	// Snapshots still there agree with what the writers logged.
	for _, s := range a.snapshots {
		who := owner[s.ID]
		if want := strings.Replace(who, "writer ", "writer-", 1); who != "maintenance" && s.CommitUser != want {
			t.Errorf("snapshot %d has commit user %s, the logs say %s", s.ID, s.CommitUser, who)
		}
	}
	// Exact rows.
	seen := map[[2]int64]int{}
	for _, r := range a.latest {
		seen[[2]int64{int64(r[0].(int32)), r[1].(int64)}]++
	}
	lost, dups, dropped := 0, 0, 0
	for w := 0; w < concWriters; w++ {
		for s := 1; s <= concCommits*concRows; s++ {
			switch n := seen[[2]int64{int64(w), int64(s)}]; {
			case n == 0 && maintained && s%3 == 0:
				dropped++ // p = 0, which partition expiry drops
			case n == 0:
				lost++
			case n > 1:
				dups += n - 1
			}
		}
	}
	stats := map[string]int{}
	for _, l := range logs {
		for k, v := range logStats([]string{l}) {
			stats[k] += v
		}
	}
	if lost > 0 || dups > 0 || len(a.latest)+dropped != concWriters*concCommits*concRows {
		t.Errorf("%d rows, want %d: %d lost, %d duplicated, %d dropped with p = 0", len(a.latest), concWriters*concCommits*concRows, lost, dups, dropped)
	}
	if !maintained && stats["Failed to commit"] > 0 {
		t.Errorf("%d commits failed with nothing but the writers on the table", stats["Failed to commit"])
	}
	sort.Strings(childErrs)
	figure(t, "%d writers x %d commits of %d rows in %v: latest snapshot %d, %d rows, lost %d, duplicated %d; writer logs %v",
		concWriters, concCommits, concRows, writersDone.Round(time.Second), latest, len(a.latest), lost, dups, stats)
	if maintained {
		figure(t, "alongside: %d compactions (%d files rewritten), %d snapshots expired, %d partition drops (%d rows of p = 0 gone), %d orphan files removed, %d maintenance errors %v; runs per process %v",
			compacted, rewritten, expired, drops, dropped, orphans, len(childErrs), firstN(childErrs, 3), runs)
	}
	figure(t, "table files: %s", a.summary())
	if t.Failed() || stats["level=error"] > 0 {
		for w, l := range logs {
			for _, line := range firstN(grepLines(l, "level=error"), 3) {
				t.Logf("writer %d: %s", w, line)
			}
		}
	}
}

// grepLines returns the lines of the file at p that contain s.
func grepLines(p, s string) []string {
	var out []string
	for _, line := range strings.Split(string(readFile(p)), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func firstN(s []string, n int) []string { return s[:min(n, len(s))] }
