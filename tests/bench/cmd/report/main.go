// Command report runs the benchmark harness of tests/bench and prints the
// markdown report; with -out it also writes it to a file
// (docs/BENCHMARKS.md in `make bench`).
//
//	go run ./tests/bench/cmd/report -out docs/BENCHMARKS.md
//	go run ./tests/bench/cmd/report -quick -only write,tail
//	go run ./tests/bench/cmd/report -only tail -cpuprofile tail.pprof && go tool pprof -top tail.pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/tests/bench"
)

func main() {
	bench.MaybeRunChild()
	quick := flag.Bool("quick", false, "smoke-run sizes (seconds per section), not representative figures")
	runs := flag.Int("runs", 0, "runs per figure (default 5, 3 with -quick)")
	only := flag.String("only", "", "comma-separated sections to run: "+strings.Join(sectionNames(), ","))
	out := flag.String("out", "", "also write the report to this file")
	dir := flag.String("dir", "", "scratch directory (default: a temporary one, removed at the end)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (use with -only) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	c := bench.Config{Quick: *quick, Runs: *runs, Dir: *dir, Log: os.Stderr, Command: strings.Join(os.Args[1:], " ")}
	c.Command = "report " + c.Command
	if *only != "" {
		c.Only = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := bench.Run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		if r == nil {
			os.Exit(1)
		}
	}
	md := r.Markdown()
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "report: wrote", *out)
	}
	if err != nil {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func sectionNames() []string {
	var n []string
	for _, m := range bench.Measurements() {
		n = append(n, m.Name)
	}
	return n
}
