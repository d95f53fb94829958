package command

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func alterCommand() *cli.Command {
	return &cli.Command{
		Name:  "alter",
		Usage: "Set or reset table options and add columns, as one new schema version (ALTER TABLE ... SET / RESET / ADD)",
		Description: "Follows Java's SchemaManager: once the table has snapshots, immutable options (bucket-key, merge-engine,\n" +
			"primary-key, partition, ...) cannot change, bucket cannot be reset nor changed from or to -1, and\n" +
			"deletion-vectors.enabled, ignore-delete and ignore-update-before only change as Paimon allows. The new\n" +
			"schema must pass Paimon's validation. Added columns are nullable and go at the end (or before the\n" +
			"partition columns with add-column-before-partition). Running writers pick the change up on their next\n" +
			"schema refresh.",
		Flags: append(tableFlags(),
			&cli.GenericFlag{Name: "set", Value: &repeatedFlag{}, Usage: "set an option: key=value (repeatable)"},
			&cli.GenericFlag{Name: "reset", Value: &repeatedFlag{}, Usage: "remove an option: key (repeatable)"},
			&cli.GenericFlag{Name: "add-column", Value: &repeatedFlag{},
				Usage: "add a column: 'name TYPE' such as 'score DOUBLE' or 'tags ARRAY<STRING>' (repeatable)"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "print the changes without writing a schema"},
		),
		Action: paimonAction(runAlter),
	}
}

func runAlter(s *session, c *cli.Context) error {
	var a schema.Alteration
	for _, v := range repeated(c, "set") {
		k, val, ok := strings.Cut(v, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return fmt.Errorf("--set %q is not key=value", v)
		}
		a.Set = append(a.Set, [2]string{k, val})
	}
	for _, k := range repeated(c, "reset") {
		if k = strings.TrimSpace(k); k == "" {
			return fmt.Errorf("--reset needs an option key")
		}
		a.Reset = append(a.Reset, k)
	}
	for _, v := range repeated(c, "add-column") {
		name, typ, ok := strings.Cut(strings.TrimSpace(v), " ")
		if !ok || strings.TrimSpace(typ) == "" {
			return fmt.Errorf("--add-column %q is not 'name TYPE'", v)
		}
		t, err := types.Parse(strings.TrimSpace(typ))
		if err != nil {
			return fmt.Errorf("--add-column %q: %w", v, err)
		}
		a.AddColumns = append(a.AddColumns, types.DataField{Name: name, Type: t})
	}
	if a.IsEmpty() {
		return fmt.Errorf("nothing to alter: give --set, --reset or --add-column")
	}
	before := s.tbl.Schema()
	var lines []string
	for _, kv := range a.Set {
		old, had := before.Options[kv[0]]
		switch {
		case !had:
			lines = append(lines, fmt.Sprintf("set %s = %s", kv[0], kv[1]))
		case old != kv[1]:
			lines = append(lines, fmt.Sprintf("set %s = %s (was %s)", kv[0], kv[1], old))
		default:
			lines = append(lines, fmt.Sprintf("keep %s = %s (unchanged)", kv[0], kv[1]))
		}
	}
	for _, k := range a.Reset {
		if old, had := before.Options[k]; had {
			lines = append(lines, fmt.Sprintf("reset %s (was %s)", k, old))
		} else {
			lines = append(lines, fmt.Sprintf("reset %s (not set)", k))
		}
	}
	for _, f := range a.AddColumns {
		lines = append(lines, fmt.Sprintf("add column %s %s", f.Name, f.Type))
	}
	for _, l := range lines {
		fmt.Fprintf(s.out, "  %s\n", l)
	}
	if c.Bool(flagDryRun) {
		fmt.Fprintf(s.out, "alter %s: dry run, would change schema %d (%d %s)\n", s.name(), before.ID, len(lines), plural(int64(len(lines)), "change", "changes"))
		return nil
	}
	after, err := s.tbl.Alter(s.ctx, a)
	if err != nil {
		return err
	}
	if after.ID == before.ID {
		fmt.Fprintf(s.out, "alter %s: nothing changed, schema %d stays\n", s.name(), after.ID)
		return nil
	}
	fmt.Fprintf(s.out, "alter %s: schema %d -> %d\n", s.name(), before.ID, after.ID)
	return nil
}
