package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessAdvances: spinning for 50 ms of wall time adds CPU time, and
// the reading never goes back.
func TestProcessAdvances(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no getrusage here: Process reads 0")
	}
	before := Process()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after := Process()
	if after <= before || after-before > time.Minute {
		t.Fatalf("CPU time %v then %v after a 50 ms spin (%d loops)", before, after, x)
	}
}
