package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	paimonout "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// demoConfig is the pipeline the demo runs; see the file for what it does.
//
//go:embed examples/demo.yaml
var demoConfig string

// demoProgressInterval is how often the demo logs snapshot ids and rows per
// second.
const demoProgressInterval = 5 * time.Second

// demoCommand is `benthos-paimon demo` (what `make run` runs): the embedded
// pipeline writing generated payment events into a local warehouse until
// Ctrl-C or --duration. It leaves the table in place for the user to read.
func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "Write a stream of generated payment events into a local Paimon table (./warehouse by default)",
		Description: "Runs the embedded examples/demo.yaml: a generate input producing about 2,000 payment events per\n" +
			"second, a mapping deriving the partition dt, and the paimon output creating and appending to\n" +
			"demo.payments in the warehouse. Logs snapshot ids and rows per second; stops on Ctrl-C or after\n" +
			"--duration and leaves the table for you to read.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "warehouse", Value: "./warehouse", Usage: "the warehouse directory (or s3://bucket/prefix)"},
			&cli.DurationFlag{Name: "duration", Usage: "stop after this long (default: run until Ctrl-C)"},
		},
		Action: func(c *cli.Context) error {
			return runDemo(c.Context, c.String("warehouse"), c.Duration("duration"))
		},
	}
}

func runDemo(ctx context.Context, warehouse string, duration time.Duration) error {
	env := service.NewEnvironment()
	if err := paimonout.Register(env, paimonout.WithProgressLog(demoProgressInterval)); err != nil {
		return err
	}
	sb := env.NewStreamBuilder()
	sb.SetEnvVarLookupFunc(func(name string) (string, bool) {
		if name == "WAREHOUSE" {
			return warehouse, true
		}
		return os.LookupEnv(name)
	})
	if err := sb.SetYAML(demoConfig); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}
	if err := sb.SetLoggerYAML("level: info\nformat: logfmt\n"); err != nil {
		return err
	}
	stream, err := sb.Build()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	where := warehouse
	if abs, err := filepath.Abs(warehouse); err == nil && !filepath.IsAbs(warehouse) && !strings.Contains(warehouse, "://") {
		where = abs
	}
	fmt.Fprintf(os.Stderr, "Writing generated payment events into table demo.payments of the warehouse %s.\n", where)
	if duration > 0 {
		fmt.Fprintf(os.Stderr, "Stopping after %v; press Ctrl-C to stop earlier.\n\n", duration)
	} else {
		fmt.Fprintf(os.Stderr, "Press Ctrl-C to stop.\n\n")
	}

	sigCtx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	runErr := make(chan error, 1)
	go func() { runErr <- stream.Run(context.Background()) }()
	var timeout <-chan time.Time
	if duration > 0 {
		t := time.NewTimer(duration)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case err := <-runErr:
		return err
	case <-sigCtx.Done():
	case <-timeout:
	}
	stopSignals() // a second Ctrl-C kills the process
	if err := stream.StopWithin(20 * time.Second); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "demo: stopping: %v\n", err)
	}
	<-runErr

	fmt.Fprintf(os.Stderr, "\nThe table stays in %s/demo.db/payments. Read it with:\n\n"+
		"  %s\n\n"+
		"or tail it while a demo runs in another terminal; any Paimon reader (Flink, Spark, pypaimon)\n"+
		"opens the same directory as warehouse %s.\n", where, demoReadCommand(os.Args[0], warehouse), where)
	return nil
}

// demoReadCommand is the command line that tails the demo's table in
// warehouse with the binary bin: examples/paimon_to_stdout.yaml reads
// ./warehouse unless WAREHOUSE says otherwise.
func demoReadCommand(bin, warehouse string) string {
	cmd := bin + " -c examples/paimon_to_stdout.yaml"
	if filepath.Clean(warehouse) == "warehouse" {
		return cmd
	}
	return "WAREHOUSE=" + shellQuote(warehouse) + " " + cmd
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters that need no quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		safe = safe && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+,=@%", r))
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
