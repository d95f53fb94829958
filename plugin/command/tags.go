package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

const (
	flagTag      = "tag"
	flagSnapshot = "snapshot"
)

// tagFlag is --tag, also spelled as Paimon's actions spell it.
func tagFlag(usage string, required bool) cli.Flag {
	return &cli.StringFlag{Name: flagTag, Aliases: []string{"tag-name", "tag_name"}, Required: required, Usage: usage}
}

func tagsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tags",
		Usage: "List the tags of a table: name, snapshot, schema, commit time, records, creation time, time retained",
		Flags: append(tableFlags(),
			&cli.BoolFlag{Name: flagJSON, Usage: "print a JSON array (keys as in Paimon's $tags system table)"},
		),
		Action: paimonAction(runTags),
	}
}

func createTagCommand() *cli.Command {
	return &cli.Command{
		Name:  "create-tag",
		Usage: "Tag a snapshot, so that its files survive snapshot expiry (Paimon's create_tag)",
		Description: "Writes tag/tag-<name> as Java's TagManager does: the snapshot's JSON, plus tagCreateTime and\n" +
			"tagTimeRetained when --time-retained (or the table's tag.default-time-retained) is given. The snapshot\n" +
			"may be one that has expired if another tag still holds it. An existing tag is an error.",
		Flags: append(tableFlags(),
			tagFlag("the tag name", true),
			&cli.Int64Flag{Name: flagSnapshot, DefaultText: "the latest", Usage: "the snapshot id to tag"},
			&cli.StringFlag{Name: "time-retained", Aliases: []string{"time_retained"},
				Usage: "how long the tag is kept by tag expiry (e.g. 7d, 12h); default: the table's tag.default-time-retained"},
		),
		Action: paimonAction(runCreateTag),
	}
}

func deleteTagCommand() *cli.Command {
	return &cli.Command{
		Name:  "delete-tag",
		Usage: "Delete tags and the files only their expired snapshot used (Paimon's delete_tag)",
		Description: "--tag takes one name or several separated by commas, as Paimon's delete_tag. While the tagged\n" +
			"snapshot exists, or another tag holds it, only the tag file goes. Otherwise its data files, manifests\n" +
			"and index files that neither the previous tag nor the next tag or earliest snapshot uses are deleted\n" +
			"too (TagManager.deleteTag).",
		Flags: append(tableFlags(),
			tagFlag("the tag name, or names separated by commas", true),
			&cli.BoolFlag{Name: flagDryRun, Usage: "list the files that would be deleted without deleting anything"},
			verboseFlag(),
		),
		Action: paimonAction(runDeleteTag),
	}
}

func rollbackToCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollback-to",
		Usage: "Roll a table back to a snapshot or tag: later snapshots, changelogs and tags are deleted (Paimon's rollback_to)",
		Description: "Stop every writer of the table first: a writer that commits later from older state brings part of\n" +
			"the removed history back. As Java Paimon (1.2+), LATEST is set to the target, the later snapshots,\n" +
			"long-lived changelogs and tags are deleted; a tag whose snapshot has expired is written back as\n" +
			"snapshot-<id> and EARLIEST set to it. Data files and manifests that only the removed snapshots used\n" +
			"are left as orphans: run remove-orphan-files (its --older-than protects files of running writers).",
		Flags: append(tableFlags(),
			&cli.Int64Flag{Name: flagSnapshot, Aliases: []string{"snapshot-id", "snapshot_id"}, Usage: "the snapshot id to roll back to"},
			tagFlag("the tag to roll back to", false),
			&cli.StringFlag{Name: "version", Usage: "a snapshot id (all digits) or else a tag name, as Paimon's rollback_to action reads it"},
			&cli.BoolFlag{Name: flagDryRun, Usage: "list what would be deleted without changing anything"},
		),
		Action: paimonAction(runRollbackTo),
	}
}

// tagRow is one tag; the JSON keys are the columns of Paimon's $tags
// system table (TagsTable.java).
type tagRow struct {
	Name         string `json:"tag_name"`
	SnapshotID   int64  `json:"snapshot_id"`
	SchemaID     int64  `json:"schema_id"`
	CommitTime   string `json:"commit_time"`
	RecordCount  *int64 `json:"record_count"`
	CreateTime   string `json:"create_time,omitempty"`
	TimeRetained string `json:"time_retained,omitempty"`
	// SnapshotExpired is set when the tag's snapshot no longer exists as
	// snapshot-<id>: the tag alone keeps its files.
	SnapshotExpired bool `json:"snapshot_expired"`
}

func runTags(s *session, c *cli.Context) error {
	tags, err := s.tbl.Tags().List(s.ctx)
	if err != nil {
		return err
	}
	rows := []tagRow{}
	for _, t := range tags {
		sn := t.Snapshot
		r := tagRow{Name: t.Name, SnapshotID: sn.ID, SchemaID: sn.SchemaID, CommitTime: formatTime(sn.TimeMillis),
			RecordCount: sn.TotalRecordCount, CreateTime: localDateTime(t.CreateTime), TimeRetained: durationSeconds(t.TimeRetained)}
		exists, err := s.tbl.Snapshots().Exists(s.ctx, sn.ID)
		if err != nil {
			return err
		}
		r.SnapshotExpired = !exists
		rows = append(rows, r)
	}
	summary := fmt.Sprintf("%s: %d %s", s.name(), len(rows), plural(int64(len(rows)), "tag", "tags"))
	if c.Bool(flagJSON) {
		return s.writeJSON(rows, summary)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "TAG\tSNAPSHOT\tSCHEMA\tCOMMIT TIME (UTC)\tRECORDS\tCREATED\tTIME RETAINED")
	for _, r := range rows {
		snap := fmt.Sprint(r.SnapshotID)
		if r.SnapshotExpired {
			snap += " (expired)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Name, snap, r.SchemaID, r.CommitTime, count(r.RecordCount),
			orDash(r.CreateTime), orDash(r.TimeRetained))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(s.out, summary)
	return nil
}

func orDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// localDateTime renders Jackson's LocalDateTime array ([y,M,d,H,m,s,ns])
// as "2024-05-30T12:00:00.123" (no zone: Java's local wall clock); ""
// when absent or not such an array.
func localDateTime(raw json.RawMessage) string {
	var p []int
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || len(p) < 5 {
		return ""
	}
	for len(p) < 7 {
		p = append(p, 0)
	}
	t := time.Date(p[0], time.Month(p[1]), p[2], p[3], p[4], p[5], p[6], time.UTC)
	return t.Format("2006-01-02T15:04:05.000")
}

// durationSeconds renders Jackson's Duration (seconds with a fraction) as
// a Go duration ("168h0m0s"); "" when absent.
func durationSeconds(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	secs, frac, _ := strings.Cut(string(raw), ".")
	s, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return string(raw)
	}
	d := time.Duration(s) * time.Second
	if frac != "" {
		frac = (frac + "000000000")[:9]
		ns, _ := strconv.ParseInt(frac, 10, 64)
		d += time.Duration(ns)
	}
	return d.String()
}

func runCreateTag(s *session, c *cli.Context) error {
	name := c.String(flagTag)
	if c.IsSet(flagSnapshot) && c.Int64(flagSnapshot) < 1 {
		return fmt.Errorf("--%s must be a snapshot id (at least 1), not %d", flagSnapshot, c.Int64(flagSnapshot))
	}
	var retained *time.Duration
	if v := c.String("time-retained"); v != "" {
		d, err := parseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("--time-retained %q is not a positive duration such as 7d or 12h", v)
		}
		retained = &d
	}
	snap, err := s.tbl.CreateTag(s.ctx, name, c.Int64(flagSnapshot), retained)
	if errors.Is(err, snapshot.ErrTagExists) {
		return fmt.Errorf("tag %q already exists (delete it first with delete-tag)", name)
	}
	if err != nil {
		return err
	}
	tag, err := s.tbl.Tags().Get(s.ctx, name)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("create-tag %s: created tag %s of snapshot %d (%s, %s records)", s.name(), name, snap.ID,
		snap.CommitKind, count(snap.TotalRecordCount))
	if d := durationSeconds(tag.TimeRetained); d != "" {
		msg += ", time retained " + d
	}
	fmt.Fprintln(s.out, msg)
	return nil
}

func runDeleteTag(s *session, c *cli.Context) error {
	var names []string
	for _, n := range strings.Split(c.String(flagTag), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("--%s names no tag", flagTag)
	}
	// Check every name first, so that a typo deletes nothing.
	for _, n := range names {
		if _, err := s.tbl.Tags().Get(s.ctx, n); errors.Is(err, snapshot.ErrTagNotFound) {
			return fmt.Errorf("tag %q does not exist (see `paimon tags`)", n)
		} else if err != nil {
			return err
		}
	}
	for _, n := range names {
		rep, err := s.tbl.DeleteTag(s.ctx, n, maintain.DeleteTagOptions{DryRun: c.Bool(flagDryRun), Progress: newProgress(s), Logger: s.logger()})
		if rep != nil {
			printReportDetails(s.out, rep)
			if c.Bool(flagVerbose) && !rep.DryRun {
				for _, f := range rep.Removed {
					fmt.Fprintf(s.out, "  removed %s\n", f)
				}
			}
			fmt.Fprintf(s.out, "%s (tag %s)\n", rep.Summary(), n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func runRollbackTo(s *session, c *cli.Context) error {
	var to snapshot.RollbackTarget
	given := 0
	if c.IsSet(flagSnapshot) {
		given++
		to.SnapshotID = c.Int64(flagSnapshot)
		if to.SnapshotID < 1 {
			return fmt.Errorf("--%s must be a snapshot id (at least 1), not %d", flagSnapshot, to.SnapshotID)
		}
	}
	if c.IsSet(flagTag) {
		given++
		to.Tag = c.String(flagTag)
		if err := snapshot.CheckTagName(to.Tag); err != nil {
			return err
		}
	}
	if v := c.String("version"); c.IsSet("version") {
		given++
		// RollbackToAction: all digits is a snapshot id, else a tag.
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && strings.Trim(v, "0123456789") == "" && id > 0 {
			to.SnapshotID = id
		} else {
			to.Tag = v
		}
	}
	if given != 1 {
		return fmt.Errorf("give exactly one of --%s, --%s and --version", flagSnapshot, flagTag)
	}
	dry := c.Bool(flagDryRun)
	res, err := s.tbl.RollbackTo(s.ctx, to, dry)
	switch {
	case errors.Is(err, snapshot.ErrTagNotFound):
		return fmt.Errorf("tag %q does not exist (see `paimon tags`)", to.Tag)
	case errors.Is(err, snapshot.ErrSnapshotNotFound) && to.Tag == "":
		return fmt.Errorf("snapshot %d does not exist (expired or never written) and no tag holds it (see `paimon snapshots`, `paimon tags`)", to.SnapshotID)
	}
	if res == nil {
		return err
	}
	verb, would := "deleted", ""
	if dry {
		verb, would = "would delete", "would "
	}
	for _, id := range res.Snapshots {
		fmt.Fprintf(s.out, "  %s snapshot %d\n", verb, id)
	}
	for _, id := range res.Changelogs {
		fmt.Fprintf(s.out, "  %s changelog %d\n", verb, id)
	}
	for _, t := range res.Tags {
		fmt.Fprintf(s.out, "  %s tag %s\n", verb, t)
	}
	if res.Restored {
		fmt.Fprintf(s.out, "  %srestore snapshot %d from tag %s\n", would, res.Target, res.ViaTag)
	}
	target := fmt.Sprintf("snapshot %d", res.Target)
	if res.ViaTag != "" {
		target += " (tag " + res.ViaTag + ")"
	}
	head := "rolled back"
	if dry {
		head = "dry run, would roll back"
	}
	fmt.Fprintf(s.out, "rollback-to %s: %s from snapshot %d to %s, %s %d %s, %d %s, %d %s\n", s.name(), head, res.Previous, target, verb,
		len(res.Snapshots), plural(int64(len(res.Snapshots)), "snapshot", "snapshots"),
		len(res.Changelogs), plural(int64(len(res.Changelogs)), "changelog", "changelogs"),
		len(res.Tags), plural(int64(len(res.Tags)), "tag", "tags"))
	if err == nil && !dry && len(res.Snapshots) > 0 {
		fmt.Fprintf(s.errOut, "note: the data files only the deleted snapshots used are now orphans; `paimon remove-orphan-files` deletes them\n")
	}
	if err == nil {
		warnConsumersAhead(s, res.Target)
	}
	return err
}

// warnConsumersAhead warns about consumers whose next snapshot is past
// target+1: Java's rollback leaves them alone, and their readers would
// skip the snapshots that new commits write with those ids again.
func warnConsumersAhead(s *session, target int64) {
	consumers, err := s.tbl.Consumers().List(s.ctx)
	if err != nil {
		fmt.Fprintf(s.errOut, "warning: cannot check the consumers: %v\n", err)
		return
	}
	ids := make([]string, 0, len(consumers))
	for id := range consumers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if next := consumers[id].NextSnapshot; next > target+1 {
			fmt.Fprintf(s.errOut, "warning: consumer %s reads next snapshot %d; its reader would skip snapshots %d..%d when they are written again "+
				"(reset it: paimon reset-consumer --consumer %s --next-snapshot %d, once snapshot %d exists, or delete it)\n",
				id, next, target+1, next-1, id, target+1, target+1)
		}
	}
}
