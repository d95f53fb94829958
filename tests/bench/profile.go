package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"
)

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// profileShow selects the product's functions for the cumulative table
// (pprof -show): lakecore, the plugins and config, not this harness.
const profileShow = `benthos-paimon/(lakecore|plugin|config)/`

// profileMinDuration is how long a profile samples at least: the workload
// runs again until it has (at 100 samples a second, 200 samples or more).
const profileMinDuration = 2 * time.Second

// profileTables runs run under the CPU profiler, as often as it takes to
// fill profileMinDuration, and renders the profile with `go tool pprof
// -top`: the functions with the most time of their own, and the
// product's functions (profileShow) by cumulative time. It needs the go command on PATH,
// as `make bench` has; the profile is written to dir as name.pprof.
func profileTables(dir, name string, run func(k int) error, n int) ([]Table, error) {
	path := filepath.Join(dir, name+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start CPU profile (is -cpuprofile set?): %w", err)
	}
	var runErr error
	runs := 0
	for start := time.Now(); runErr == nil && (runs == 0 || time.Since(start) < profileMinDuration); runs++ {
		runErr = run(runs)
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		return nil, err
	}
	if runErr != nil {
		return nil, runErr
	}
	flat, err := pprofTop(path, n, "-top")
	if err != nil {
		return nil, err
	}
	cum, err := pprofTop(path, n, "-top", "-cum", "-show="+profileShow)
	if err != nil {
		return nil, err
	}
	// With -show the hidden callees' time is added to the shown
	// functions' own time, so only the cumulative column is kept there.
	for i, r := range cum {
		cum[i] = []string{r[0], r[2]}
	}
	return []Table{
		{Caption: fmt.Sprintf("CPU profile of %s (%d more %s): the %d functions with the most time of their own.", name, runs, plural(runs, "run", "runs"), n),
			Header: []string{"function", "own time %", "with callees %"}, Rows: flat},
		{Caption: fmt.Sprintf("CPU profile of %s: the product's functions (lakecore, plugins, config) by time including their callees.", name), Header: []string{"function", "with callees %"}, Rows: cum},
	}, nil
}

// pprofTop runs `go tool pprof` with args and returns, for the first n
// entries of its -top listing, the function and its flat and cumulative
// percentages.
func pprofTop(path string, n int, args ...string) ([][]string, error) {
	cmd := exec.Command("go", append(append([]string{"tool", "pprof", fmt.Sprintf("-nodecount=%d", n)}, args...), path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %s: %w: %s", strings.Join(args, " "), err, firstLine(stderr.String()))
	}
	return parsePprofTop(string(out), n)
}

// parsePprofTop reads the rows of a `pprof -top` listing: after the header
// line "flat  flat%   sum%        cum   cum%", each line is
// "<flat> <flat%> <sum%> <cum> <cum%> <function...>".
func parsePprofTop(out string, n int) ([][]string, error) {
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if !inTable {
			inTable = len(fields) >= 5 && fields[0] == "flat" && fields[1] == "flat%"
			continue
		}
		if len(fields) < 6 {
			continue
		}
		name := strings.Join(fields[5:], " ")
		rows = append(rows, []string{"`" + shortFunc(name) + "`", fields[1], fields[4]})
		if len(rows) == n {
			break
		}
	}
	if !inTable {
		return nil, fmt.Errorf("pprof -top output without its header: %q", firstLine(out))
	}
	return rows, nil
}

// shortFunc drops the import path before the package name:
// ".../plugin/input.(*messageBuilder).message" -> "input.(*messageBuilder).message".
func shortFunc(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 && !strings.Contains(name[:i], " ") {
		return name[i+1:]
	}
	return name
}
