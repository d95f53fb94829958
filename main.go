// Command benthos-paimon is a Benthos binary with the Apache Paimon input
// and output plugins, the pg_cdc input, a `demo` subcommand that writes a
// sample table, the `paimon` commands that inspect and maintain tables
// (plugin/command) and the `pg-cdc` commands on a pg_cdc input's slot.
package main

import (
	"context"
	"fmt"
	"os"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/version"            // build stamps (-ldflags -X)
	"github.com/benthos-paimon/benthos-paimon/plugin/command"              // the paimon commands
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"       // registers the paimon input
	"github.com/benthos-paimon/benthos-paimon/plugin/input/pgcdc"          // registers the pg_cdc input; the pg-cdc commands
	_ "github.com/benthos-paimon/benthos-paimon/plugin/metrics/prometheus" // registers the prometheus metrics exporter
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"      // registers the paimon output
)

// documentationURL is what the CLI help points at: this project's docs,
// not Benthos' site. Benthos also appends its own paths to it (e.g.
// /guides/bloblang/about in `blobl --help`), which do not exist here.
const documentationURL = "https://github.com/benthos-paimon/benthos-paimon/tree/main/docs"

func main() {
	os.Exit(run())
}

// run runs the CLI and returns the exit code: 1 when a component stopped
// the stream with an error retrying cannot fix (internal/fatal), which it
// prints last.
func run() int {
	stop := newStopper()
	opts := append([]service.CLIOptFunc{
		service.CLIOptSetBinaryName("benthos-paimon"),
		service.CLIOptSetProductName("benthos-paimon"),
		service.CLIOptSetVersion(version.String(), version.Date),
		service.CLIOptSetDocumentationURL(documentationURL),
		service.CLIOptAddCommand(demoCommand()),
		service.CLIOptAddCommand(docsCommand()),
		command.CLIOpt(),
		pgcdc.CLIOpt(),
	}, stop.options()...)
	code, err := service.RunCLIToCode(context.Background(), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
	}
	if ferr := stop.finish(); ferr != nil {
		fmt.Fprintf(os.Stderr, "benthos-paimon: the stream stopped: %v\n", ferr)
		if code == 0 {
			code = 1
		}
	}
	return code
}
