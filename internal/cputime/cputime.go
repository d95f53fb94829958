// Package cputime reads the CPU time of this process, which benchmarks
// report beside wall time: on a shared machine rows per CPU-second are
// steadier than rows per second.
package cputime

import "time"

// Process returns the user and system CPU time of this process so far,
// every thread's; zero where the platform does not say (not Unix) or the
// call fails, which makes per-CPU-second figures read as infinite or zero
// rather than plausible.
func Process() time.Duration { return process() }
