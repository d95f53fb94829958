package commit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// Environment of the helper process that TestConcurrentProcesses starts
// (the test binary run again).
const (
	envHelper    = "BP_COMMIT_HELPER"      // user name of the helper's commits
	envWarehouse = "BP_COMMIT_WAREHOUSE"   // local directory, or s3://bucket/prefix
	envCommits   = "BP_COMMIT_COUNT"       // commits to make
	envEndpoint  = "BP_COMMIT_S3_ENDPOINT" // S3 endpoint for an s3:// warehouse
)

// commitsPerWriter is 50 as the acceptance asks; -short makes it 10.
func commitsPerWriter() int {
	if testing.Short() {
		return 10
	}
	return 50
}

// commitLoop makes n commits as user, each one file of one row.
func commitLoop(ctx context.Context, fio storage.FileIO, user string, n int) error {
	c := commit.New(fio, tablePath, fastRetries(user))
	for i := 1; i <= n; i++ {
		m := msg(int32(i%3), file(fmt.Sprintf("%s-%03d", user, i), 1))
		if _, err := c.Commit(ctx, int64(i), []commit.Message{m}); err != nil {
			return fmt.Errorf("%s commit %d: %w", user, i, err)
		}
	}
	return nil
}

func runGoroutines(t *testing.T, fio storage.FileIO, writers, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- commitLoop(context.Background(), fio, fmt.Sprintf("g%d", w), n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{}
	for w := range writers {
		want[fmt.Sprintf("g%d", w)] = n
	}
	checkChain(t, fio, want, int64(writers*n))
	if got := live(t, fio); len(got) != writers*n {
		t.Fatalf("%d live files, want %d", len(got), writers*n)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	runGoroutines(t, fio, 8, commitsPerWriter())
}

func TestConcurrentGoroutinesS3(t *testing.T) {
	fio := s3Table(t)
	runGoroutines(t, fio, 8, commitsPerWriter())
}

// s3Table creates the table in a fresh bucket of the test S3 server.
func s3Table(t *testing.T) *storage.S3 {
	t.Helper()
	cfg, bucket := s3test.Server(t)
	fio, err := storage.NewS3(context.Background(), bucket, "wh", cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, fio, nil)
	return fio
}

// TestCommitHelperProcess is the body of the processes that
// TestConcurrentProcesses starts; run directly it does nothing.
func TestCommitHelperProcess(t *testing.T) {
	user := os.Getenv(envHelper)
	if user == "" {
		t.Skip("helper process of TestConcurrentProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv(envCommits))
	wh := os.Getenv(envWarehouse)
	var fio storage.FileIO
	var err error
	if ep := os.Getenv(envEndpoint); ep != "" {
		fio, err = storage.Open(context.Background(), wh, storage.S3Config{Endpoint: ep, Region: s3test.DefaultRegion,
			ForcePathStyle: true, AccessKeyID: s3test.DefaultAccessKey, SecretAccessKey: s3test.DefaultSecretKey})
	} else {
		fio, err = storage.NewLocal(wh)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := commitLoop(context.Background(), fio, user, n); err != nil {
		t.Fatal(err)
	}
}

func runProcesses(t *testing.T, fio storage.FileIO, warehouse, endpoint string, procs, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCommitHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), envHelper+"=proc"+strconv.Itoa(p), envWarehouse+"="+warehouse,
			envCommits+"="+strconv.Itoa(n), envEndpoint+"="+endpoint)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := map[string]int{}
	for p := range procs {
		want["proc"+strconv.Itoa(p)] = n
	}
	checkChain(t, fio, want, int64(procs*n))
	if got := live(t, fio); len(got) != procs*n {
		t.Fatalf("%d live files, want %d", len(got), procs*n)
	}
}

func TestConcurrentProcesses(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	runProcesses(t, fio, fio.Root(), "", 4, commitsPerWriter())
}

func TestConcurrentProcessesS3(t *testing.T) {
	cfg, bucket := s3test.Server(t)
	fio, err := storage.NewS3(context.Background(), bucket, "wh", cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, fio, nil)
	runProcesses(t, fio, "s3://"+bucket+"/wh", cfg.Endpoint, 4, commitsPerWriter())
}

// barrierFIO holds back the writes of one path until n of them arrived,
// so that they race.
type barrierFIO struct {
	storage.FileIO
	path    string
	release chan struct{}
	n       int
	mu      sync.Mutex
	count   int
}

func (b *barrierFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if p == b.path {
		b.mu.Lock()
		b.count++
		if b.count == b.n {
			close(b.release)
		}
		b.mu.Unlock()
		select {
		case <-b.release:
		case <-time.After(30 * time.Second):
		}
	}
	return b.FileIO.WriteExclusive(ctx, p, data)
}

// TestRaceForSnapshotIDS3 lets two committers build snapshot 1 at the same
// time (both writes of snapshot-1 are held back until both arrived): the
// conditional PUT lets exactly one win, the other retries and lands as
// snapshot 2.
func TestRaceForSnapshotIDS3(t *testing.T) {
	s3 := s3Table(t)
	fio := &barrierFIO{FileIO: s3, path: tablePath + "/snapshot/snapshot-1", release: make(chan struct{}), n: 2}
	var wg sync.WaitGroup
	ids := make([]int64, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := commit.New(fio, tablePath, commit.Options{CommitUser: fmt.Sprintf("racer%d", i)})
			s, err := c.Commit(context.Background(), 1, []commit.Message{msg(1, file(fmt.Sprintf("r%d", i), 1))})
			errs[i] = err
			if s != nil {
				ids[i] = s.ID
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fio.count != 2 {
		t.Fatalf("%d writes of snapshot-1, want 2 racing", fio.count)
	}
	if !(ids[0] == 1 && ids[1] == 2 || ids[0] == 2 && ids[1] == 1) {
		t.Fatalf("snapshot ids %v, want one 1 and one 2", ids)
	}
	checkChain(t, s3, map[string]int{"racer0": 1, "racer1": 1}, 2)
}
