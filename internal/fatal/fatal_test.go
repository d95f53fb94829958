package fatal_test

import (
	"errors"
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
