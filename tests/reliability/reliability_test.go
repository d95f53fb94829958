package reliability

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

var longFlag = flag.Bool("long", false, "run the long mode of the reliability suite (also BP_RELIABILITY_LONG=1)")

// envChild names the role of a re-executed test binary (see TestMain).
const envChild = "BP_RELIABILITY_CHILD"

// long reports whether the long mode was asked for.
func long() bool { return *longFlag || os.Getenv("BP_RELIABILITY_LONG") == "1" }

// pick returns short or, in the long mode, long.
func pick[T any](short, longer T) T {
	if long() {
		return longer
	}
	return short
}

// skipShort skips t under -short: every test here runs processes, servers
// or hundreds of commits.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("reliability suite: skipped with -short")
	}
}

// TestMain runs a child role when the test binary is re-executed as one
// (maintenance processes of the concurrency test), else the tests; then it
// removes the binary binarytest.Path built.
func TestMain(m *testing.M) {
	if role := os.Getenv(envChild); role != "" {
		os.Exit(runChild(role))
	}
	flag.Parse()
	code := m.Run()
	binarytest.Remove()
	os.Exit(code)
}

// workDir returns a directory for t's files: t.TempDir(), or with
// BP_RELIABILITY_KEEP=<dir> a directory under it that is kept for
// inspection.
func workDir(t testing.TB) string {
	t.Helper()
	keep := os.Getenv("BP_RELIABILITY_KEEP")
	if keep == "" {
		return t.TempDir()
	}
	d, err := os.MkdirTemp(keep, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("keeping %s", d)
	return d
}

// localWarehouse creates a warehouse directory under workDir(t) and
// returns it with its storage.
func localWarehouse(t testing.TB) (string, *storage.Local) {
	t.Helper()
	wh := filepath.Join(workDir(t), "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		t.Fatal(err)
	}
	fio, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	return wh, fio
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitPort waits until something accepts connections on 127.0.0.1:port,
// or the process behind done exits, or timeout passes.
func waitPort(port int, done <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("the process exited before listening on %s", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens on %s after %v", addr, timeout)
}

// runStream builds sb and runs the stream under ctx in a goroutine; the
// returned channel (buffered) receives what Run returns.
func runStream(t testing.TB, ctx context.Context, sb *service.StreamBuilder) (*service.Stream, chan error) {
	t.Helper()
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()
	return stream, done
}

// seed returns the random seed of a test: BP_RELIABILITY_SEED when set,
// else the clock; it is logged so that a failing run can be repeated.
func seed(t testing.TB) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("BP_RELIABILITY_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("BP_RELIABILITY_SEED: %v", err)
		}
		s = n
	}
	t.Logf("seed %d (BP_RELIABILITY_SEED=%d repeats it)", s, s)
	return s
}

// figure logs one measured figure in a form easy to grep out of -v runs
// for docs/RELIABILITY.md.
func figure(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Logf("FIGURE %s: "+format, append([]any{t.Name()}, args...)...)
}

// roundProcess is the binary started for one round of a crash test.
type roundProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has ended
	waitErr error         // what Wait returned; read after exited
	port    int
}

// startRound writes cfg (a format with the port as its first verb) as
// dir/round-<n>.yaml, starts bin on it with its output in
// dir/round-<n>.log, and waits until it listens on the port, failing t if
// it does not.
func startRound(t testing.TB, bin, dir string, n int, cfg func(port int) string) *roundProcess {
	t.Helper()
	port := freePort(t)
	cfgPath := filepath.Join(dir, fmt.Sprintf("round-%d.yaml", n))
	if err := os.WriteFile(cfgPath, []byte(cfg(port)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &roundProcess{logPath: filepath.Join(dir, fmt.Sprintf("round-%d.log", n)), exited: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "-c", cfgPath)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	go func() { p.waitErr = p.cmd.Wait(); logFile.Close(); close(p.exited) }()
	if err := waitPort(port, p.exited, 60*time.Second); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("round %d: %v\n%s", n, err, tail(p.logPath))
	}
	p.port = port
	return p
}
