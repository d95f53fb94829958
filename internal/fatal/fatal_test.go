package fatal_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
)

func TestStopWithoutHandler(t *testing.T) {
	res := service.MockResources()
	if fatal.Installed(res) || fatal.Stop(res, errors.New("x")) {
		t.Fatal("a handler without Install")
	}
}

// TestFirstKeepsTheFirstErrorAndStopsOnce: concurrent reports keep the
// first error and call stop once.
func TestFirstKeepsTheFirstErrorAndStopsOnce(t *testing.T) {
	res := service.MockResources()
	stops := 0
	var mu sync.Mutex
	first := fatal.NewFirst(func() { mu.Lock(); stops++; mu.Unlock() })
	fatal.Install(res, first.Handle)
	if !fatal.Installed(res) {
		t.Fatal("not installed")
	}
	one := errors.New("one")
	if !fatal.Stop(res, one) {
		t.Fatal("Stop found no handler")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); fatal.Stop(res, errors.New("later")) }()
	}
	wg.Wait()
	if first.Err() != one || stops != 1 {
		t.Fatalf("Err %v, %d stops; want %v and 1", first.Err(), stops, one)
	}
}

// TestReport: Report logs the error once with the suffix and hands the
// same text to the handler; without a handler it logs nothing.
func TestReport(t *testing.T) {
	var logs bytes.Buffer
	logger := service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(&logs, nil)))
	cause := errors.New("table not found")
	if fatal.Report(service.MockResources(service.MockResourcesOptUseLogger(logger)), cause) || logs.Len() != 0 {
		t.Fatalf("without a handler: reported, or logged %q", logs.String())
	}
	res := service.MockResources(service.MockResourcesOptUseLogger(logger))
	var got []error
	fatal.Install(res, func(err error) { got = append(got, err) })
	if !fatal.Report(res, cause) {
		t.Fatal("Report found no handler")
	}
	const want = "table not found (retrying cannot fix this)"
	if len(got) != 1 || got[0].Error() != want || !errors.Is(got[0], cause) {
		t.Errorf("handler got %v, want %q wrapping the cause", got, want)
	}
	if n := strings.Count(logs.String(), want); n != 1 || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("logged %d times:\n%s", n, logs.String())
	}
}
