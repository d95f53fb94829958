package command

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

const (
	flagConsumer     = "consumer"
	flagNextSnapshot = "next-snapshot"
)

func consumerFlag() cli.Flag {
	return &cli.StringFlag{Name: flagConsumer, Aliases: []string{"consumer-id", "consumer_id"}, Required: true, Usage: "the consumer id"}
}

func consumersCommand() *cli.Command {
	return &cli.Command{
		Name:  "consumers",
		Usage: "List the consumers of a table: id, next snapshot, last update, whether the reader fell behind expiry",
		Description: "A consumer (consumer/consumer-<id>, written by streaming readers with consumer-id) keeps snapshot\n" +
			"expiry from deleting the snapshots from its next snapshot on.",
		Flags: append(tableFlags(),
			&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array"},
		),
		Action: paimonAction(runConsumers),
	}
}

func resetConsumerCommand() *cli.Command {
	return &cli.Command{
		Name:  "reset-consumer",
		Usage: "Set the next snapshot of a consumer, or delete it without --next-snapshot (Paimon's reset_consumer)",
		Description: "The next snapshot must exist, as Java's reset_consumer checks. Stop the reader first: a running\n" +
			"reader overwrites the consumer at its next checkpoint.",
		Flags: append(tableFlags(),
			consumerFlag(),
			&cli.Int64Flag{Name: flagNextSnapshot, Aliases: []string{"next_snapshot", "next-snapshot-id", "next_snapshot_id"},
				Usage: "the snapshot the consumer reads next; left out, the consumer is deleted (as Paimon's reset_consumer)"},
		),
		Action: paimonAction(runResetConsumer),
	}
}

func deleteConsumerCommand() *cli.Command {
	return &cli.Command{
		Name:   "delete-consumer",
		Usage:  "Delete a consumer, so that it no longer holds back snapshot expiry",
		Flags:  append(tableFlags(), consumerFlag()),
		Action: paimonAction(runDeleteConsumer),
	}
}

func runConsumers(s *session, c *cli.Context) error {
	r, err := gatherInfo(s)
	if err != nil {
		return err
	}
	summary := fmt.Sprintf("%s: %d %s", s.name(), len(r.Consumers), plural(int64(len(r.Consumers)), "consumer", "consumers"))
	if c.Bool(flagJSON) {
		return s.writeJSON(r.Consumers, summary)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "CONSUMER\tNEXT SNAPSHOT\tUPDATED (UTC)\tSTATE")
	for _, con := range r.Consumers {
		state := "ok"
		if con.Expired {
			state = fmt.Sprintf("behind expiry (earliest snapshot is %d)", r.Snapshots.Earliest)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", con.ID, con.NextSnapshot, con.Updated, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out, summary)
	return nil
}

func runResetConsumer(s *session, c *cli.Context) error {
	id := c.String(flagConsumer)
	if err := snapshot.CheckConsumerID(id); err != nil {
		return err
	}
	if !c.IsSet(flagNextSnapshot) {
		return deleteConsumer(s, id, "reset-consumer")
	}
	next := c.Int64(flagNextSnapshot)
	// ResetConsumerProcedure reads the snapshot first: it must exist.
	if _, err := s.tbl.Snapshots().Get(s.ctx, next); errors.Is(err, snapshot.ErrSnapshotNotFound) {
		return fmt.Errorf("snapshot %d does not exist (expired or never written; see `paimon snapshots`)", next)
	} else if err != nil {
		return err
	}
	old, had, err := s.tbl.Consumers().Get(s.ctx, id)
	if err != nil {
		return err
	}
	if err := s.tbl.Consumers().Put(s.ctx, id, snapshot.Consumer{NextSnapshot: next}); err != nil {
		return err
	}
	if had {
		fmt.Fprintf(s.out, "reset-consumer %s: consumer %s reset from next snapshot %d to %d\n", s.name(), id, old.NextSnapshot, next)
	} else {
		fmt.Fprintf(s.out, "reset-consumer %s: consumer %s created at next snapshot %d\n", s.name(), id, next)
	}
	return nil
}

func runDeleteConsumer(s *session, c *cli.Context) error {
	return deleteConsumer(s, c.String(flagConsumer), "delete-consumer")
}

func deleteConsumer(s *session, id, cmd string) error {
	old, had, err := s.tbl.Consumers().Get(s.ctx, id)
	if err != nil {
		return err
	}
	if !had {
		return fmt.Errorf("consumer %q does not exist (see `paimon consumers`)", id)
	}
	if err := s.tbl.Consumers().Delete(s.ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "%s %s: deleted consumer %s (it was at next snapshot %d)\n", cmd, s.name(), id, old.NextSnapshot)
	return nil
}
