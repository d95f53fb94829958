package pgcdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
)

// CLIOpt adds the `pg-cdc` command group to a Benthos CLI
// (service.RunCLI): the operator's view of the slot and publication a
// pg_cdc input uses.
func CLIOpt() service.CLIOptFunc { return service.CLIOptAddCommand(Command()) }

// Command is the `pg-cdc` command group: status, drop-slot and
// drop-publication on the replication slot and publication of a pg_cdc
// input. They connect with the input's session settings; dropping a slot
// takes the REPLICATION attribute (or superuser), terminating its walsender
// a superuser or a member of pg_signal_backend, dropping a publication its
// ownership.
//
// Output: results on stdout; errors are one message on stderr and exit
// code 1 (a missing slot included, so scripts can branch on it).
func Command() *cli.Command {
	return &cli.Command{
		Name:  "pg-cdc",
		Usage: "Inspect and drop the replication slot and publication of a pg_cdc input",
		Description: "Commands on the Postgres side of a pg_cdc input (docs/POSTGRES_CDC.md §6). `status` shows\n" +
			"how much WAL the slot retains and how far its consumer is behind; `drop-slot` removes a slot\n" +
			"no pipeline will use again (its WAL is freed; a pipeline started later with the same slot\n" +
			"name snapshots the tables afresh). Stop the pipeline first: a running pg_cdc input with\n" +
			"create_slot: true creates the slot again when it reconnects.",
		Subcommands: []*cli.Command{statusCommand(), dropSlotCommand(), dropPublicationCommand()},
	}
}

const (
	flagDSN         = "dsn"
	flagSlot        = "slot"
	flagPublication = "publication"
	flagJSON        = "json"
	flagForce       = "force"
)

func dsnFlag() cli.Flag {
	return &cli.StringFlag{Name: flagDSN, Required: true, EnvVars: []string{"PG_DSN"},
		Usage: "the connection string of the captured database (URL or key=value), as the input's dsn"}
}

func slotFlag() cli.Flag {
	return &cli.StringFlag{Name: flagSlot, Required: true, Usage: "the replication slot (the input's slot_name)"}
}

// connectTimeout bounds the connection attempt when the DSN sets none, so
// a wrong host fails in seconds instead of the TCP timeout.
const connectTimeout = 10 * time.Second

// slotReleaseTimeout is how long drop-slot --force waits for a terminated
// walsender to release its slot.
const slotReleaseTimeout = 10 * time.Second

// pgAction wraps a subcommand's body: a context cancelled by SIGINT and
// SIGTERM, a query connection with the input's startup parameters, and
// every failure turned into one message "pg-cdc <command>: ..." for RunCLI
// to print with exit code 1.
func pgAction(run func(ctx context.Context, c *cli.Context, conn *pgx.Conn) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		name := c.Command.Name
		if c.Args().Present() {
			return fmt.Errorf("pg-cdc %s: unexpected argument %q (every setting is a flag; see --help)", name, c.Args().First())
		}
		if slot := c.String(flagSlot); c.IsSet(flagSlot) && !slotNameRE.MatchString(slot) {
			return fmt.Errorf("pg-cdc %s: --slot %q is not a slot name ([a-z0-9_], 1 to 63 characters)", name, slot)
		}
		ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
		defer stop()
		err := func() error {
			cfg, err := queryConfig(c.String(flagDSN))
			if err != nil {
				return fmt.Errorf("--%s: %v", flagDSN, err)
			}
			if cfg.ConnectTimeout == 0 {
				cfg.ConnectTimeout = connectTimeout
			}
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return fmt.Errorf("connect: %w", err)
			}
			defer conn.Close(context.Background())
			return run(ctx, c, conn)
		}()
		if err != nil {
			return fmt.Errorf("pg-cdc %s: %w", name, err)
		}
		return nil
	}
}

// slotStatus is a row of pg_replication_slots with the server's WAL
// position folded in; pointers are NULL columns (a lost slot has no
// restart_lsn, a physical one no plugin).
type slotStatus struct {
	Name              string  `json:"name"`
	Type              string  `json:"slot_type"`
	Plugin            *string `json:"plugin"`
	Database          *string `json:"database"`
	Temporary         bool    `json:"temporary"`
	Active            bool    `json:"active"`
	ActivePID         *int32  `json:"active_pid"`
	RestartLSN        *string `json:"restart_lsn"`
	ConfirmedFlushLSN *string `json:"confirmed_flush_lsn"`
	WALStatus         *string `json:"wal_status"`
	SafeWALSize       *int64  `json:"safe_wal_size"`
	// RetainedBytes is pg_current_wal_lsn() - restart_lsn: the WAL the
	// server keeps for this slot.
	RetainedBytes *int64 `json:"retained_wal_bytes"`
	// LagBytes is pg_current_wal_lsn() - confirmed_flush_lsn: the WAL
	// written since the consumer's last confirmed position.
	LagBytes *int64 `json:"lag_bytes"`
}

func readSlotStatus(ctx context.Context, conn *pgx.Conn, name string) (*slotStatus, error) {
	s := &slotStatus{}
	err := conn.QueryRow(ctx, `SELECT slot_name::text, slot_type, plugin::text, database::text, temporary, active, active_pid,
			restart_lsn::text, confirmed_flush_lsn::text, wal_status, safe_wal_size,
			(pg_current_wal_lsn() - restart_lsn)::bigint, (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&s.Name, &s.Type, &s.Plugin, &s.Database, &s.Temporary,
		&s.Active, &s.ActivePID, &s.RestartLSN, &s.ConfirmedFlushLSN, &s.WALStatus, &s.SafeWALSize, &s.RetainedBytes, &s.LagBytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read slot %s: %w", name, err)
	}
	return s, nil
}

// serverStatus is what of the server decides a slot's fate.
type serverStatus struct {
	Version            string `json:"version"`
	Database           string `json:"database"`
	WALLevel           string `json:"wal_level"`
	MaxSlotWALKeepSize string `json:"max_slot_wal_keep_size"`
	CurrentWALLSN      string `json:"current_wal_lsn"`
}

// publicationStatus is a row of pg_publication and its tables.
type publicationStatus struct {
	Name                    string   `json:"name"`
	AllTables               bool     `json:"all_tables"`
	Publishes               []string `json:"publishes"`
	PublishViaPartitionRoot bool     `json:"publish_via_partition_root"`
	Tables                  []string `json:"tables"`
}

func readPublication(ctx context.Context, conn *pgx.Conn, name string) (*publicationStatus, error) {
	p := &publicationStatus{Name: name}
	var ins, upd, del, trunc bool
	err := conn.QueryRow(ctx, `SELECT puballtables, pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot
		FROM pg_publication WHERE pubname = $1`, name).Scan(&p.AllTables, &ins, &upd, &del, &trunc, &p.PublishViaPartitionRoot)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read publication %s: %w", name, err)
	}
	p.Publishes = []string{}
	for _, op := range []struct {
		on   bool
		name string
	}{{ins, "insert"}, {upd, "update"}, {del, "delete"}, {trunc, "truncate"}} {
		if op.on {
			p.Publishes = append(p.Publishes, op.name)
		}
	}
	rows, err := conn.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1`, name)
	if err != nil {
		return nil, fmt.Errorf("read the tables of publication %s: %w", name, err)
	}
	if p.Tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("read the tables of publication %s: %w", name, err)
	}
	return p, nil
}

// status is the report of `pg-cdc status`, also its --json form.
type status struct {
	Server      serverStatus       `json:"server"`
	Slot        *slotStatus        `json:"slot"`
	Publication *publicationStatus `json:"publication"`
	// SnapshotPending: the slot's snapshot marker (<slot>_snapshot) exists,
	// so the next start of the input reads the tables again.
	SnapshotPending bool `json:"snapshot_pending"`
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "Show a pg_cdc slot (activity, positions, retained WAL), its publication and the server's WAL settings",
		Description: "Exit code 1 when the slot does not exist, or the publication named by --publication does\n" +
			"not (without --publication the slot's name is looked up, as the input's default).",
		Flags: []cli.Flag{
			dsnFlag(), slotFlag(),
			&cli.StringFlag{Name: flagPublication, Usage: "the publication (the input's publication); default: the slot's name"},
			&cli.BoolFlag{Name: flagJSON, Usage: "print the status as one JSON object"},
		},
		Action: pgAction(runStatus),
	}
}

func runStatus(ctx context.Context, c *cli.Context, conn *pgx.Conn) error {
	slot := c.String(flagSlot)
	pub := c.String(flagPublication)
	if pub == "" {
		pub = slot
	}
	var st status
	err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_database(), current_setting('wal_level'),
		current_setting('max_slot_wal_keep_size'), pg_current_wal_lsn()::text`).Scan(
		&st.Server.Version, &st.Server.Database, &st.Server.WALLevel, &st.Server.MaxSlotWALKeepSize, &st.Server.CurrentWALLSN)
	if err != nil {
		return fmt.Errorf("read server settings: %w", err)
	}
	if st.Slot, err = readSlotStatus(ctx, conn, slot); err != nil {
		return err
	}
	if st.Publication, err = readPublication(ctx, conn, pub); err != nil {
		return err
	}
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = $1)", markerName(slot)).Scan(&st.SnapshotPending); err != nil {
		return fmt.Errorf("read the snapshot marker of %s: %w", slot, err)
	}
	if c.Bool(flagJSON) {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			return err
		}
	} else {
		printStatus(c.App.Writer, st, slot, pub)
	}
	switch {
	case st.Slot == nil:
		return fmt.Errorf("slot %s does not exist in database %s%s", slot, st.Server.Database, otherSlots(ctx, conn))
	case st.Publication == nil && c.IsSet(flagPublication):
		return fmt.Errorf("publication %s does not exist in database %s", pub, st.Server.Database)
	}
	return nil
}

// otherSlots names the database's logical slots, for the error of a
// mistyped slot name.
func otherSlots(ctx context.Context, conn *pgx.Conn) string {
	rows, err := conn.Query(ctx, "SELECT slot_name::text FROM pg_replication_slots WHERE database = current_database() AND slot_type = 'logical' ORDER BY 1")
	if err != nil {
		return ""
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return ""
	}
	if len(names) == 0 {
		return " (it has no logical slots)"
	}
	return " (its logical slots: " + strings.Join(names, ", ") + ")"
}

func printStatus(w io.Writer, st status, slot, pub string) {
	s := st.Server
	keep := s.MaxSlotWALKeepSize
	if keep == "-1" {
		keep += " (no cap: a stopped pipeline's slot retains WAL until the disk is full)"
	}
	fmt.Fprintf(w, "server: PostgreSQL %s, database %s, wal_level %s, max_slot_wal_keep_size %s, current WAL %s\n",
		s.Version, s.Database, s.WALLevel, keep, s.CurrentWALLSN)
	if sl := st.Slot; sl == nil {
		fmt.Fprintf(w, "slot %s: does not exist\n", slot)
	} else {
		fmt.Fprintf(w, "slot %s: %s, plugin %s, database %s%s\n", sl.Name, sl.Type, orNull(sl.Plugin), orNull(sl.Database), map[bool]string{true: ", temporary"}[sl.Temporary])
		active := "false"
		if sl.Active {
			active = "true"
			if sl.ActivePID != nil {
				active += fmt.Sprintf(" (pid %d)", *sl.ActivePID)
			}
		}
		safe := "unlimited (max_slot_wal_keep_size -1)"
		if sl.SafeWALSize != nil {
			safe = byteCount(sl.SafeWALSize)
		}
		for _, kv := range [][2]string{
			{"active", active},
			{"restart_lsn", orNull(sl.RestartLSN)},
			{"confirmed_flush_lsn", orNull(sl.ConfirmedFlushLSN)},
			{"wal_status", orNull(sl.WALStatus)},
			{"safe_wal_size", safe},
			{"retained WAL", byteCount(sl.RetainedBytes)},
			{"lag", byteCount(sl.LagBytes)},
		} {
			fmt.Fprintf(w, "  %-20s %s\n", kv[0], kv[1])
		}
		if sl.WALStatus != nil && *sl.WALStatus == "lost" {
			fmt.Fprintf(w, "  the slot is invalidated (over max_slot_wal_keep_size) and cannot be used again: drop it; the next start snapshots afresh\n")
		}
	}
	if st.SnapshotPending {
		fmt.Fprintf(w, "snapshot: pending (the marker slot %s exists: the next start reads the tables again)\n", markerName(slot))
	}
	if p := st.Publication; p == nil {
		fmt.Fprintf(w, "publication %s: does not exist\n", pub)
	} else {
		tables := tableCount(len(p.Tables))
		if p.AllTables {
			tables = "FOR ALL TABLES, " + tables
		}
		fmt.Fprintf(w, "publication %s: publishes %s, publish_via_partition_root %t, %s\n", p.Name, strings.Join(p.Publishes, ", "), p.PublishViaPartitionRoot, tables)
		for _, t := range p.Tables {
			fmt.Fprintf(w, "  %s\n", t)
		}
	}
}

func tableCount(n int) string {
	if n == 1 {
		return "1 table"
	}
	return fmt.Sprintf("%d tables", n)
}

func orNull(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// byteCount renders n as "12345 bytes (12.1 KiB)", or NULL.
func byteCount(n *int64) string {
	if n == nil {
		return "NULL"
	}
	if *n < 1024 && *n > -1024 {
		return fmt.Sprintf("%d bytes", *n)
	}
	v, unit := float64(*n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 && v > -1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", *n, v, unit)
}

func dropSlotCommand() *cli.Command {
	return &cli.Command{
		Name:  "drop-slot",
		Usage: "Drop a pg_cdc replication slot (and its snapshot marker), freeing the WAL it retains",
		Description: "Refuses a slot in use by a walsender (active) unless --force, which terminates that\n" +
			"backend first (pg_terminate_backend(active_pid)), as the documented SQL would. The slot's\n" +
			"snapshot marker (<slot>_snapshot, present while a snapshot is unfinished) is dropped with it.\n" +
			"The next start of a pipeline with this slot name creates the slot and snapshots the tables again.",
		Flags: []cli.Flag{
			dsnFlag(), slotFlag(),
			&cli.BoolFlag{Name: flagForce, Usage: "terminate the walsender holding an active slot, then drop it"},
		},
		Action: pgAction(runDropSlot),
	}
}

func runDropSlot(ctx context.Context, c *cli.Context, conn *pgx.Conn) error {
	name := c.String(flagSlot)
	st, err := readSlotStatus(ctx, conn, name)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("slot %s does not exist%s; nothing dropped", name, otherSlots(ctx, conn))
	}
	if st.Active {
		pid := "unknown pid"
		if st.ActivePID != nil {
			pid = fmt.Sprintf("pid %d", *st.ActivePID)
		}
		if !c.Bool(flagForce) {
			return fmt.Errorf("slot %s is active (in use by %s): stop its pipeline first, or give --force to terminate that backend; nothing dropped", name, pid)
		}
		if err := terminateAndDrop(ctx, conn, name); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "terminated %s, the walsender of slot %s\n", pid, name)
	} else if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", name); err != nil {
		return fmt.Errorf("drop slot %s: %w", name, err)
	}
	fmt.Fprintf(c.App.Writer, "dropped slot %s (%s, plugin %s, confirmed_flush_lsn %s, retained WAL %s)\n",
		name, st.Type, orNull(st.Plugin), orNull(st.ConfirmedFlushLSN), byteCount(st.RetainedBytes))
	var marker bool
	if err := conn.QueryRow(ctx, "SELECT count(pg_drop_replication_slot(slot_name)) > 0 FROM pg_replication_slots WHERE slot_name = $1",
		markerName(name)).Scan(&marker); err != nil {
		return fmt.Errorf("drop the snapshot marker %s: %w", markerName(name), err)
	}
	if marker {
		fmt.Fprintf(c.App.Writer, "dropped slot %s (the snapshot marker of %s)\n", markerName(name), name)
	}
	return nil
}

// terminateAndDrop terminates the backend holding slot and drops it. A
// terminated walsender releases its slot as it exits, a moment later, and
// the consumer may reconnect meanwhile; so it terminates whoever holds the
// slot and retries until the drop succeeds or slotReleaseTimeout passes.
// A temporary slot goes with its session: gone is dropped.
func terminateAndDrop(ctx context.Context, conn *pgx.Conn, name string) error {
	deadline := time.Now().Add(slotReleaseTimeout)
	for {
		var terminated *bool
		err := conn.QueryRow(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL",
			name).Scan(&terminated)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("terminate the walsender of slot %s: %w", name, err)
		}
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = $1)", name).Scan(&exists); err != nil {
			return fmt.Errorf("read slot %s: %w", name, err)
		}
		if !exists {
			return nil
		}
		if _, err = conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", name); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drop slot %s after terminating its walsender: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond): // the walsender is exiting
		}
	}
}

func dropPublicationCommand() *cli.Command {
	return &cli.Command{
		Name:  "drop-publication",
		Usage: "Drop a pg_cdc publication (the tables and their data are untouched)",
		Description: "Needs ownership of the publication. A pipeline still streaming through it fails at its next\n" +
			"change; a pipeline started later with create_publication: true creates it again.",
		Flags: []cli.Flag{
			dsnFlag(),
			&cli.StringFlag{Name: flagPublication, Required: true, Usage: "the publication (the input's publication)"},
		},
		Action: pgAction(func(ctx context.Context, c *cli.Context, conn *pgx.Conn) error {
			name := c.String(flagPublication)
			p, err := readPublication(ctx, conn, name)
			if err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("publication %s does not exist; nothing dropped", name)
			}
			if _, err := conn.Exec(ctx, "DROP PUBLICATION "+pgx.Identifier{name}.Sanitize()); err != nil {
				return fmt.Errorf("drop publication %s: %w", name, err)
			}
			fmt.Fprintf(c.App.Writer, "dropped publication %s (%s: %s)\n", name, tableCount(len(p.Tables)), strings.Join(p.Tables, ", "))
			return nil
		}),
	}
}
