package main

import (
	"fmt"
	"os"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/internal/docgen"
)

// componentDocsDir is where `make docs` writes the component pages,
// relative to the repository root.
const componentDocsDir = "docs/components"

// docsCommand is `benthos-paimon docs` (what `make docs` runs): the
// Markdown reference of every component this binary registers beyond
// Benthos' own, generated from the specs of the running binary, so a
// component main.go imports gets its page without anything else to edit.
func docsCommand() *cli.Command {
	return &cli.Command{
		Name:  "docs",
		Usage: "Write the Markdown reference of this binary's own components (paimon, prometheus, ...)",
		Description: "Renders one page per component that benthos-paimon adds to Benthos' core ones, in Redpanda\n" +
			"Connect's layout, from the components' config specs, plus an index (README.md). --check\n" +
			"writes nothing and exits 1 when the directory is stale.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: componentDocsDir, Usage: "the directory of the pages"},
			&cli.BoolFlag{Name: "check", Usage: "only report pages that differ from the specs"},
		},
		Action: func(c *cli.Context) error {
			files, err := componentDocs()
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if !c.Bool("check") {
				if err := docgen.Write(dir, files); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "wrote %d pages to %s\n", len(files), dir)
				return nil
			}
			stale, err := docgen.Stale(dir, files)
			if err != nil {
				return err
			}
			for _, s := range stale {
				fmt.Fprintln(os.Stderr, s)
			}
			if len(stale) > 0 {
				return cli.Exit(fmt.Sprintf("%s is stale: run `make docs`", dir), 1)
			}
			return nil
		},
	}
}

// componentDocs renders the pages of the components this binary
// registers (the global environment main's imports fill).
func componentDocs() (map[string][]byte, error) {
	comps, err := docgen.Collect(service.GlobalEnvironment())
	if err != nil {
		return nil, err
	}
	return docgen.Files(comps), nil
}
