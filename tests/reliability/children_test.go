package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Child roles: the test binary re-executed as a maintenance process that
// loops over one operation on a table until a stop file appears.
const (
	roleCompact          = "compact"
	roleExpire           = "expire"
	roleExpirePartitions = "expire-partitions"
	roleRemoveOrphans    = "remove-orphan-files"
)

// The partition expiry of the expire-partitions role: the partition p = 0,
// 1, 2 of the concurrency table reads as the day 2024-01-10, -11, -12, and
// with the clock at 2024-01-12 and an expiration time of 36 h only p = 0
// expires, again whenever writers have added files to it.
var (
	childPartitionNow        = time.Date(2024, 1, 12, 0, 0, 0, 0, time.UTC)
	childPartitionPattern    = "2024-01-1$p"
	childPartitionExpiration = 36 * time.Hour
)

// childEnv is what a child needs, passed in its environment as JSON.
type childEnv struct {
	Warehouse string
	S3        childS3
	Database  string
	Table     string
	StopFile  string
	// TargetFileSize and MinFileNum tune compaction.
	TargetFileSize int64
	MinFileNum     int
	// KillAfter > 0 makes the expire role kill itself with SIGKILL at the
	// KillAfter-th file it deletes (its Progress events), mid-expiry, and
	// the pk-writer role after a random time up to KillAfter ms.
	KillAfter int
	// Writer and Batches are the pk-writer role's number and batch count.
	Writer, Batches int
}

// childS3 is the part of storage.S3Config a child needs.
type childS3 struct {
	Endpoint, Region, AccessKeyID, SecretAccessKey string
	ForcePathStyle                                 bool
}

func toChildS3(c storage.S3Config) childS3 {
	return childS3{Endpoint: c.Endpoint, Region: c.Region, AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, ForcePathStyle: c.ForcePathStyle}
}

func (c childS3) config() storage.S3Config {
	return storage.S3Config{Endpoint: c.Endpoint, Region: c.Region, AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, ForcePathStyle: c.ForcePathStyle}
}

const envChildConfig = "BP_RELIABILITY_CHILD_CONFIG"

// childResult is one line a child prints per run of its operation.
type childResult struct {
	Snapshots []int64 `json:",omitempty"`
	Expired   int     `json:",omitempty"`
	Removed   int     `json:",omitempty"`
	Rewritten int64   `json:",omitempty"`
	Error     string  `json:",omitempty"`
}

// startChild re-executes the test binary as role on c.
func startChild(role string, c childEnv) (*exec.Cmd, *strings.Builder, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+role, envChildConfig+"="+string(data))
	out := &strings.Builder{}
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	return cmd, out, cmd.Start()
}

// parseChildResults reads the lines a child printed.
func parseChildResults(out string) ([]childResult, error) {
	var res []childResult
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r childResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("child output line %q: %w", line, err)
		}
		res = append(res, r)
	}
	return res, nil
}

// runChild runs the role of a re-executed test binary and returns its exit
// code.
func runChild(role string) int {
	var c childEnv
	if err := json.Unmarshal([]byte(os.Getenv(envChildConfig)), &c); err != nil {
		fmt.Fprintf(os.Stderr, "child %s: config: %v\n", role, err)
		return 2
	}
	if role == rolePKWriter {
		return runPKWriter(c)
	}
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, c.Warehouse, c.S3.config())
	if err != nil {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
		return 2
	}
	var tbl *lakecore.Table
	for i := 0; ; i++ { // the writers create the table
		if tbl, err = cat.OpenTable(ctx, c.Database, c.Table); err == nil {
			break
		}
		if i > 600 {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
			return 2
		}
		time.Sleep(50 * time.Millisecond)
	}
	enc := json.NewEncoder(os.Stdout)
	for {
		stop := false
		if _, err := os.Stat(c.StopFile); err == nil {
			stop = true // one last run after the writers finished
		}
		var res childResult
		switch role {
		case roleCompact:
			rep, err := tbl.Compact(ctx, maintain.CompactOptions{
				CommitUser: "compactor", TargetFileSize: c.TargetFileSize, MinFileNum: c.MinFileNum,
			})
			if err != nil {
				res.Error = err.Error()
			}
			if rep != nil {
				res.Snapshots, res.Rewritten = rep.Snapshots, rep.Rewritten.Files
			}
		case roleExpire:
			var progress maintain.Progress
			if c.KillAfter > 0 {
				deleted := 0
				progress = func(maintain.Event) {
					if deleted++; deleted == c.KillAfter {
						_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
						select {} // until the signal lands
					}
				}
			}
			rep, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{
				RetainMin: 1, RetainMax: 3, OlderThan: time.Now(), Progress: progress,
			})
			if err != nil {
				res.Error = err.Error()
			}
			if rep != nil {
				res.Expired = rep.SnapshotsExpired
			}
		case roleExpirePartitions:
			rep, err := tbl.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{
				CommitUser: "partition-expirer", ExpirationTime: childPartitionExpiration, TimestampPattern: childPartitionPattern,
				Now: func() time.Time { return childPartitionNow }, Location: time.UTC,
			})
			if err != nil {
				res.Error = err.Error()
			}
			if rep != nil {
				res.Snapshots = rep.Snapshots
			}
		case roleRemoveOrphans:
			// The default older_than (1 day): files the writers are about
			// to commit are never candidates; the run reads every live
			// snapshot's metadata while the others change the table, and
			// finishes any expiry journal.
			rep, err := tbl.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{})
			if err != nil {
				res.Error = err.Error()
			}
			if rep != nil {
				res.Removed = len(rep.Removed)
			}
		default:
			fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
			return 2
		}
		if err := enc.Encode(res); err != nil {
			return 2
		}
		if stop {
			return 0
		}
		time.Sleep(30 * time.Millisecond)
	}
}
