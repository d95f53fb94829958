// Package command is the `paimon` command group of benthos-paimon: table
// maintenance named after Paimon's actions (compact, expire-snapshots,
// expire-partitions, remove-orphan-files, create-tag, delete-tag,
// rollback-to, reset-consumer, alter; Paimon's own names such as
// expire_snapshots are aliases) and inspection (databases, tables, info,
// schema, snapshots, files, tags, consumers), taking the warehouse and S3
// settings the paimon input and output take. A Benthos build gets the commands with
// one option, as it gets the plugins with one import each:
//
//	service.RunCLI(ctx, command.CLIOpt())
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// CLIOpt adds the `paimon` command group to a Benthos CLI
// (service.RunCLI).
func CLIOpt() service.CLIOptFunc { return service.CLIOptAddCommand(Paimon()) }

// Paimon is the `paimon` command group: table maintenance named
// after Paimon's actions (compact, expire-snapshots, expire-partitions,
// remove-orphan-files, tags, rollback, consumers) and inspection
// (databases, tables, info, schema, snapshots, files, tags, consumers).
// Every subcommand takes the warehouse and S3 settings the paimon input
// and output take, validated by the same code (config.Table.Validate).
//
// Output: results on stdout, progress and warnings on stderr; every
// command ends with a summary line. Errors are one message on stderr and
// exit code 1.
func Paimon() *cli.Command {
	return &cli.Command{
		Name:  "paimon",
		Usage: "Inspect and maintain Paimon tables (compact, expire, remove orphan files, tags, rollback, consumers)",
		Description: "Commands on a Paimon warehouse (a local path, file:// or s3://bucket/prefix) and its tables,\n" +
			"named after Apache Paimon's actions (Paimon's underscore names, such as expire_snapshots, work too). They follow Paimon's rules, so a table maintained here and\n" +
			"read or written by Java Paimon (or the other way round) stays correct. Run\n" +
			"`benthos-paimon paimon <command> --help` for the flags of each.",
		Subcommands: withActionAliases([]*cli.Command{
			databasesCommand(),
			tablesCommand(),
			infoCommand(),
			schemaCommand(),
			alterCommand(),
			snapshotsCommand(),
			filesCommand(),
			compactCommand(),
			expireSnapshotsCommand(),
			expirePartitionsCommand(),
			removeOrphanFilesCommand(),
			tagsCommand(),
			createTagCommand(),
			deleteTagCommand(),
			rollbackToCommand(),
			consumersCommand(),
			resetConsumerCommand(),
			deleteConsumerCommand(),
		}),
	}
}

// withActionAliases gives every command whose name has a hyphen the name
// of Paimon's action or procedure as an alias (expire-snapshots ->
// expire_snapshots, rollback-to -> rollback_to), so that an operator can
// type what the Paimon docs say.
func withActionAliases(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		if alias := strings.ReplaceAll(c.Name, "-", "_"); alias != c.Name {
			c.Aliases = append(c.Aliases, alias)
		}
	}
	return cmds
}

// Flag names shared by every subcommand.
const (
	flagWarehouse        = "warehouse"
	flagDatabase         = "database"
	flagTable            = "table"
	flagS3Endpoint       = "s3-endpoint"
	flagS3Region         = "s3-region"
	flagS3ForcePathStyle = "s3-force-path-style"
	flagS3AccessKeyID    = "s3-access-key-id"
	flagS3SecretKey      = "s3-secret-access-key"
	flagS3SessionToken   = "s3-session-token"
	flagJSON             = "json"
	flagDryRun           = "dry-run"
	flagPartition        = "partition"
	flagOlderThan        = "older-than"
	flagVerbose          = "verbose"
)

// tableFlags are the flags that say which table and how to reach it; they
// map one to one onto config.Table, the warehouse/database/table/s3
// fields of the paimon input and output.
func tableFlags() []cli.Flag {
	return append([]cli.Flag{
		warehouseFlag(),
		&cli.StringFlag{Name: flagDatabase, Aliases: []string{"d"}, Value: config.DefaultDatabase, Usage: "the database of the table"},
		&cli.StringFlag{Name: flagTable, Aliases: []string{"t"}, Required: true, Usage: "the table name"},
	}, s3Flags()...)
}

// warehouseFlags are the flags of the commands on a whole warehouse
// (databases, tables): no --table.
func warehouseFlags(extra ...cli.Flag) []cli.Flag {
	return append(append([]cli.Flag{warehouseFlag()}, extra...), s3Flags()...)
}

func warehouseFlag() cli.Flag {
	return &cli.StringFlag{Name: flagWarehouse, Aliases: []string{"w"}, Required: true,
		Usage: "the warehouse: a local path, file:///path or s3://bucket/prefix (s3a:// accepted)"}
}

func s3Flags() []cli.Flag {
	const s3 = "S3 (for s3:// warehouses)"
	return []cli.Flag{
		&cli.StringFlag{Name: flagS3Endpoint, Category: s3, Usage: "a custom S3 endpoint URL (MinIO, Ceph, versitygw, R2); empty for AWS"},
		&cli.StringFlag{Name: flagS3Region, Category: s3, Usage: "the region; empty takes AWS_REGION or the shared config, else us-east-1"},
		&cli.BoolFlag{Name: flagS3ForcePathStyle, Category: s3, Usage: "address buckets as <endpoint>/<bucket> (most S3-compatible servers need it)"},
		&cli.StringFlag{Name: flagS3AccessKeyID, Category: s3,
			Usage: "static credentials; empty uses the AWS default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, AWS_PROFILE, web identity, instance role)"},
		&cli.StringFlag{Name: flagS3SecretKey, Category: s3, Usage: "the secret key of --s3-access-key-id"},
		&cli.StringFlag{Name: flagS3SessionToken, Category: s3, Usage: "the session token of temporary static credentials"},
	}
}

// tableConfig reads the table flags into the config the plugins use and
// validates it with the plugins' rules. A command on the whole warehouse
// (no --table flag) validates the rest with a stand-in table name.
func tableConfig(c *cli.Context) (config.Table, error) {
	t := config.Table{
		Warehouse: c.String(flagWarehouse),
		Database:  c.String(flagDatabase),
		Table:     c.String(flagTable),
		S3: storage.S3Config{
			Endpoint:        c.String(flagS3Endpoint),
			Region:          c.String(flagS3Region),
			ForcePathStyle:  c.Bool(flagS3ForcePathStyle),
			AccessKeyID:     c.String(flagS3AccessKeyID),
			SecretAccessKey: c.String(flagS3SecretKey),
			SessionToken:    c.String(flagS3SessionToken),
		},
	}
	v := t
	if !hasFlag(c, flagTable) {
		v.Table = "_"
		if v.Database == "" {
			v.Database = config.DefaultDatabase
		}
	}
	if err := v.Validate(); err != nil {
		// The messages name the plugin fields (s3.credentials.secret); say
		// it with flag names.
		msg := strings.TrimPrefix(err.Error(), config.ErrInvalid.Error()+": ")
		r := strings.NewReplacer("s3.credentials.secret", "--"+flagS3SecretKey, "s3.credentials.id", "--"+flagS3AccessKeyID,
			"s3.endpoint", "--"+flagS3Endpoint, "and token", "and --"+flagS3SessionToken)
		return t, errors.New(r.Replace(msg))
	}
	return t, nil
}

// hasFlag reports whether the running command defines flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// session is what a subcommand runs with: the catalog, the opened table
// (nil for commands on the whole warehouse), its config, where output
// goes and a context cancelled by Ctrl-C.
type session struct {
	ctx    context.Context
	conf   config.Table
	cat    *lakecore.Catalog
	tbl    *lakecore.Table
	out    io.Writer // results
	errOut io.Writer // progress, warnings
}

// paimonAction wraps a subcommand's body: it opens the table, cancels the
// context on SIGINT/SIGTERM (the operations are safe to interrupt: they
// follow the commit protocol), and turns every failure into one message
// "paimon <command>: ..." for RunCLI to print with exit code 1.
func paimonAction(run func(s *session, c *cli.Context) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		name := c.Command.Name
		if c.Args().Present() {
			return fmt.Errorf("paimon %s: unexpected argument %q (every setting is a flag; see --help)", name, c.Args().First())
		}
		ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
		defer stop()
		s, err := openSession(ctx, c)
		if err == nil {
			err = run(s, c)
		}
		if err != nil {
			if ctx.Err() != nil && c.Context.Err() == nil {
				err = fmt.Errorf("interrupted; the table is consistent (an unfinished run leaves at most orphan files): %w", err)
			}
			return fmt.Errorf("paimon %s: %w", name, err)
		}
		return nil
	}
}

func openSession(ctx context.Context, c *cli.Context) (*session, error) {
	conf, err := tableConfig(c)
	if err != nil {
		return nil, err
	}
	if !conf.IsS3() {
		// storage.Open creates a missing local warehouse; a command must
		// not turn a typo into an empty directory.
		_, _, p, _ := storage.SplitURI(conf.Warehouse)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("warehouse %s is not a directory", conf.Warehouse)
		}
	}
	cat, err := lakecore.OpenCatalog(ctx, conf.Warehouse, conf.S3)
	if err != nil {
		return nil, err
	}
	if !hasFlag(c, flagTable) {
		return &session{ctx: ctx, conf: conf, cat: cat, out: c.App.Writer, errOut: c.App.ErrWriter}, nil
	}
	tbl, err := cat.OpenTable(ctx, conf.Database, conf.Table)
	switch {
	case errors.Is(err, lakecore.ErrTableNotFound):
		return nil, fmt.Errorf("table %s.%s does not exist in warehouse %s (no schema file under %s/schema)",
			conf.Database, conf.Table, conf.Warehouse, conf.Path())
	case err != nil:
		return nil, err
	}
	return &session{ctx: ctx, conf: conf, cat: cat, tbl: tbl, out: c.App.Writer, errOut: c.App.ErrWriter}, nil
}

// name is "db.table" for messages.
func (s *session) name() string { return s.conf.Database + "." + s.conf.Table }

// logger writes the maintain package's warnings to stderr as
// "warning: <message> key=value".
func (s *session) logger() *slog.Logger {
	return slog.New(&stderrHandler{w: s.errOut})
}

type stderrHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h *stderrHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *stderrHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(strings.ToLower(r.Level.String()))
	b.WriteString(": ")
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *stderrHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &stderrHandler{w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *stderrHandler) WithGroup(string) slog.Handler { return h }

// progressInterval is the least time between two progress lines of one
// phase; the first and the last event of every phase are always shown.
const progressInterval = time.Second

// progressPrinter turns maintain.Events into throttled lines on stderr:
// "compact default.t: rewrite 3/10".
type progressPrinter struct {
	w     io.Writer
	table string
	every time.Duration

	mu    sync.Mutex
	phase string
	last  time.Time
}

func newProgress(s *session) maintain.Progress {
	p := &progressPrinter{w: s.errOut, table: s.name(), every: progressInterval}
	return p.event
}

func (p *progressPrinter) event(e maintain.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	first := e.Phase != p.phase
	last := e.Total > 0 && e.Done == e.Total
	if !first && !last && now.Sub(p.last) < p.every {
		return
	}
	p.phase, p.last = e.Phase, now
	if e.Total > 0 {
		fmt.Fprintf(p.w, "%s %s: %s %d/%d\n", e.Operation, p.table, e.Phase, e.Done, e.Total)
	} else {
		fmt.Fprintf(p.w, "%s %s: %s %d\n", e.Operation, p.table, e.Phase, e.Done)
	}
}

// printReport writes a maintenance report: its details, the removed files
// when asked (verbose) and, last, the summary line. A report of an
// operation that failed half-way is printed too, with what it did.
func printReport(w io.Writer, rep *maintain.Report, verbose bool) {
	if rep == nil {
		return
	}
	printReportDetails(w, rep)
	if verbose && !rep.DryRun {
		for _, f := range rep.Removed {
			fmt.Fprintf(w, "  removed %s\n", f)
		}
	}
	fmt.Fprintln(w, rep.Summary())
}

// printReportDetails writes a report's lines after its summary.
func printReportDetails(w io.Writer, rep *maintain.Report) {
	lines := strings.Split(rep.String(), "\n")
	for _, l := range lines[1:] {
		fmt.Fprintln(w, l)
	}
}

// maintenanceResult prints rep and passes err on. A report is printed
// when the operation succeeded, when it only failed to delete some files
// (ErrIncomplete: the report says how many; still exit code 1), and when
// it failed after changing something, so the user sees what was done.
func maintenanceResult(s *session, rep *maintain.Report, err error, verbose bool) error {
	if err == nil || errors.Is(err, maintain.ErrIncomplete) || rep != nil && (len(rep.Removed) > 0 || len(rep.Snapshots) > 0) {
		printReport(s.out, rep, verbose)
	}
	return err
}

// parseOlderThan reads --older-than: a duration before now (Paimon's
// "1 d", "12 h" or Go's "36h") or a point in time ("2024-05-30 12:00:00",
// "2024-05-30", RFC 3339). Times without a zone are local time, as Java's
// procedures read older_than in the JVM's default zone
// (ProcedureUtils.fillInSnapshotOptions: DateTimeUtils.parseTimestampData
// with TimeZone.getDefault()).
func parseOlderThan(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z07:00"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	d, err := parseDuration(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q is neither a duration (7d, 12h, 30min) nor a time (2024-05-30 12:00:00, 2024-05-30, RFC 3339)",
			flagOlderThan, v)
	}
	if d <= 0 {
		return time.Time{}, fmt.Errorf("--%s %q must be a positive duration", flagOlderThan, v)
	}
	return now.Add(-d), nil
}

// parseDuration takes Paimon's durations ("7 d", "1 h", "500ms") and Go's
// ("36h30m").
func parseDuration(v string) (time.Duration, error) {
	if d, err := schema.ParseDuration(v); err == nil {
		return d, nil
	}
	return time.ParseDuration(strings.ReplaceAll(v, " ", ""))
}

// repeatedFlag collects every occurrence of a flag as is: urfave/cli's
// slice flags split values at commas, which --partition k=v,k2=v2 needs.
type repeatedFlag struct{ values []string }

func (r *repeatedFlag) Set(v string) error {
	r.values = append(r.values, v)
	return nil
}

func (r *repeatedFlag) String() string { return strings.Join(r.values, " ") }

// verboseFlag is --verbose of the commands that delete files.
func verboseFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagVerbose, Aliases: []string{"v"}, Usage: "list every deleted file"}
}

// partitionFlag is the repeatable --partition flag.
func partitionFlag(usage string) cli.Flag {
	return &cli.GenericFlag{Name: flagPartition, Value: &repeatedFlag{}, Usage: usage}
}

// partitionValues returns the --partition values given.
func partitionValues(c *cli.Context) []string { return repeated(c, flagPartition) }

// repeated returns the values given to a repeatedFlag.
func repeated(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeatedFlag); ok {
		return r.values
	}
	return nil
}

// partitionSpecs parses the --partition values, Paimon's partition specs
// "k=v[,k2=v2]", into a filter whose values are partition strings (the
// directory values, unescaped; __DEFAULT_PARTITION__ for NULL).
func partitionSpecs(s *session, c *cli.Context) (partition.Filter, error) {
	return partition.ParseSpecs("--"+flagPartition, partitionValues(c), s.tbl.Schema().PartitionFields())
}

// livePartitions returns the distinct partitions of entries, in order of
// first appearance.
func livePartitions(namer *binrow.PartitionNamer, entries []manifest.Entry) ([]*binrow.Partition, error) {
	var parts []*binrow.Partition
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[string(e.Partition)] {
			continue
		}
		seen[string(e.Partition)] = true
		p, err := namer.Of(e.Partition)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", e.File.FileName, err)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// bindSpecs types a filter of partition strings against parts, partitions
// of the table partitioned by keys: a value stands for the typed values of
// the partitions whose string it is, so any key type works as Paimon's
// --partition k=v does, and a value no partition has matches nothing.
func bindSpecs(f partition.Filter, keys []types.DataField, parts []*binrow.Partition) (*partition.Predicate, error) {
	byString := make([]map[string][]any, len(keys))
	have := make([]map[string]bool, len(keys))
	for i := range keys {
		byString[i], have[i] = map[string][]any{}, map[string]bool{}
	}
	for _, p := range parts {
		for i, str := range p.Strings {
			// Distinct values may share a string; each is kept once.
			if id := fmt.Sprintf("%s\x00%T:%v", str, p.Values[i], p.Values[i]); !have[i][id] {
				have[i][id] = true
				byString[i][str] = append(byString[i][str], p.Values[i])
			}
		}
	}
	return f.Bind(keys, func(key types.DataField, v any) ([]any, error) {
		str, _ := v.(string)
		return byString[types.FieldByName(keys, key.Name)][str], nil
	})
}

// newPartitionNamer returns the namer of the schema's partitions, with the
// table's partition naming options.
func newPartitionNamer(s *schema.TableSchema) (*binrow.PartitionNamer, error) {
	o, err := s.Opts().PartitionOptions()
	if err != nil {
		return nil, err
	}
	return binrow.NewPartitionNamer(s.PartitionFields(), o), nil
}

// sortEntries orders live files by partition name, bucket, sequence
// number and name, for stable listings.
func sortEntries(entries []manifest.Entry, names map[string]string) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := &entries[i], &entries[j]
		if pa, pb := names[string(a.Partition)], names[string(b.Partition)]; pa != pb {
			return pa < pb
		}
		if a.Bucket != b.Bucket {
			return a.Bucket < b.Bucket
		}
		if a.File.MinSequenceNumber != b.File.MinSequenceNumber {
			return a.File.MinSequenceNumber < b.File.MinSequenceNumber
		}
		return a.File.FileName < b.File.FileName
	})
}

// formatTime renders epoch milliseconds as UTC RFC 3339 with milliseconds.
func formatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// formatBytes renders n in binary units, as maintain's reports do.
func formatBytes(n int64) string { return maintain.FormatBytes(n) }

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
