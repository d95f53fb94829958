// Command benthos-paimon is a Benthos binary with the Apache Paimon input
// and output plugins, the pg_cdc input, a `demo` subcommand that writes a
// sample table, the `paimon` commands that inspect and maintain tables
// (plugin/command) and the `pg-cdc` commands on a pg_cdc input's slot.
package main

import (
	"context"

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
	service.RunCLI(context.Background(),
		service.CLIOptSetBinaryName("benthos-paimon"),
		service.CLIOptSetProductName("benthos-paimon"),
		service.CLIOptSetVersion(version.String(), version.Date),
		service.CLIOptSetDocumentationURL(documentationURL),
		service.CLIOptAddCommand(demoCommand()),
		service.CLIOptAddCommand(docsCommand()),
		command.CLIOpt(),
		pgcdc.CLIOpt(),
	)
}
