package bench

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// s3Server is the S3 server of one report: BP_S3_ENDPOINT, or a versitygw
// from .ci/bin on a loopback port, started through lakecore's s3test (the
// same server the S3 tests use) and stopped at the end of the report.
type s3Server struct {
	cfg storage.S3Config
	tb  *harnessTB
}

func startS3(e *Env) (s *s3Server, err error) {
	dir, err := os.MkdirTemp(e.root, "s3-")
	if err != nil {
		return nil, err
	}
	tb := &harnessTB{name: "bench", dir: dir}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(tbStop); !ok {
				panic(p)
			}
			tb.runCleanups()
			s, err = nil, fmt.Errorf("no S3 server: %s", strings.Join(tb.msgs, "; "))
		}
	}()
	cfg := s3test.Endpoint(tb)
	e.Logf("   S3 server at %s", cfg.Endpoint)
	return &s3Server{cfg: cfg, tb: tb}, nil
}

func (s *s3Server) newBucket(name string) (bucket string, err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(tbStop); !ok {
				panic(p)
			}
			err = fmt.Errorf("create bucket: %s", strings.Join(s.tb.msgs, "; "))
		}
	}()
	s.tb.mu.Lock()
	s.tb.name = name
	s.tb.mu.Unlock()
	return s3test.NewBucket(s.tb, s.cfg), nil
}

func (s *s3Server) stop() { s.tb.runCleanups() }

// warehouse is the s3:// URI of a warehouse in bucket.
func (s *s3Server) warehouse(bucket string) string { return "s3://" + bucket + "/lake" }

// harnessTB is the part of testing.TB that s3test uses, for a program that
// is not a test: Fatal and Skip stop the caller by panicking with tbStop,
// which startS3 and newBucket recover into errors. Any other method of
// testing.TB would panic on the nil embedded interface; s3test does not
// call them.
type harnessTB struct {
	testing.TB
	mu       sync.Mutex
	name     string
	dir      string
	msgs     []string
	cleanups []func()
	n        int
}

type tbStop struct{}

func (t *harnessTB) Helper() {}

func (t *harnessTB) Name() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.name
}

func (t *harnessTB) Failed() bool { return false }

func (t *harnessTB) Logf(format string, args ...any) {}

func (t *harnessTB) Fatal(args ...any) { t.stop(fmt.Sprint(args...)) }

func (t *harnessTB) Fatalf(format string, args ...any) { t.stop(fmt.Sprintf(format, args...)) }

func (t *harnessTB) Skip(args ...any) { t.stop(fmt.Sprint(args...)) }

// Skipf ends the set-up with the reason, as Skip (testenv.Require skips
// so when the S3 server is not installed).
func (t *harnessTB) Skipf(format string, args ...any) { t.stop(fmt.Sprintf(format, args...)) }

func (t *harnessTB) stop(msg string) {
	t.mu.Lock()
	t.msgs = append(t.msgs, msg)
	t.mu.Unlock()
	panic(tbStop{})
}

func (t *harnessTB) TempDir() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	d := fmt.Sprintf("%s/%03d", t.dir, t.n)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.msgs = append(t.msgs, err.Error())
		panic(tbStop{})
	}
	return d
}

func (t *harnessTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *harnessTB) runCleanups() {
	t.mu.Lock()
	c := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}
