// Command benthos-paimon is a Benthos binary with the Apache Paimon input
// and output plugins and table maintenance commands.
package main

import (
	"context"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
)

func main() {
	service.RunCLI(context.Background(),
		service.CLIOptSetBinaryName("benthos-paimon"),
		service.CLIOptSetProductName("benthos-paimon"),
	)
}
