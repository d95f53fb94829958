// Command benthos-paimon is a Benthos binary with the Apache Paimon input
// and output plugins, a `demo` subcommand that writes a sample table, and
// the `paimon` commands that inspect and maintain tables (plugin/command).
package main

import (
	"context"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/plugin/command"              // the paimon commands
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"       // registers the paimon input
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/pgcdc"        // registers the pg_cdc input
	_ "github.com/benthos-paimon/benthos-paimon/plugin/metrics/prometheus" // registers the prometheus metrics exporter
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"      // registers the paimon output
)

func main() {
	service.RunCLI(context.Background(),
		service.CLIOptSetBinaryName("benthos-paimon"),
		service.CLIOptSetProductName("benthos-paimon"),
		service.CLIOptAddCommand(demoCommand()),
		command.CLIOpt(),
	)
}
