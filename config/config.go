// Package config holds the configuration fields that the paimon input and
// output share, defined once: where the table is (warehouse, database,
// table) and how to reach S3 (endpoint, region, path style, credentials).
// It provides the fields as Benthos config-spec builders and parses them into
// a plain Table struct that lakecore takes; it does nothing beyond parsing
// and validation.
//
// Import direction: plugin/* -> config -> lakecore. This package never
// imports a plugin package.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Field names, for plugins that read or lint them.
const (
	FieldWarehouse = "warehouse"
	FieldDatabase  = "database"
	FieldTable     = "table"
	FieldS3        = "s3"

	FieldS3Endpoint       = "endpoint"
	FieldS3Region         = "region"
	FieldS3ForcePathStyle = "force_path_style"
	FieldS3Credentials    = "credentials"
	FieldS3CredID         = "id"
	FieldS3CredSecret     = "secret"
	FieldS3CredToken      = "token"
)

// DefaultDatabase is Paimon's default database name.
const DefaultDatabase = "default"

// ErrInvalid is wrapped by every validation error of this package.
var ErrInvalid = errors.New("invalid table configuration")

// Table says which Paimon table a plugin reads or writes and how to reach
// its storage. It is what lakecore's facade takes to open a table.
type Table struct {
	// Warehouse is the warehouse root: a local path, file:///path, or
	// s3://bucket[/prefix] (also s3a://, s3n://).
	Warehouse string
	// Database and Table name the table; its directory is
	// "<Database>.db/<Table>" under the warehouse.
	Database, Table string
	// S3 configures the S3 client; ignored for local warehouses.
	S3 storage.S3Config
}

// TableFields returns the config fields warehouse, database, table and s3,
// in the order the plugins list them.
func TableFields() []*service.ConfigField {
	return []*service.ConfigField{WarehouseField(), DatabaseField(), TableField(), S3Field()}
}

// RoutedTableFields is TableFields for a plugin that names its table per
// message (ParseTableTemplate): database and table take interpolations.
func RoutedTableFields() []*service.ConfigField {
	return []*service.ConfigField{
		WarehouseField(),
		service.NewInterpolatedStringField(FieldDatabase).
			Description("The database (namespace) of the table; its directory is `<database>.db` in the warehouse. " +
				"It may be interpolated per message, as `table` may.").
			Default(DefaultDatabase),
		service.NewInterpolatedStringField(FieldTable).
			Description("The table name; its directory is `<database>.db/<table>` in the warehouse. An interpolation "+
				"(`${! @table }`) names each message's table, so that one output writes many tables (a database sync).").
			Examples("events", "${! @table }", `${! json("source.table") }`).
			LintRule(`root = if this.trim() == "" { [ "table must not be empty" ] }`),
		S3Field(),
	}
}

// WarehouseField is the required `warehouse` field.
func WarehouseField() *service.ConfigField {
	return service.NewStringField(FieldWarehouse).
		Description("The Paimon warehouse: the root directory under which each database is a `<database>.db` directory "+
			"and each table a directory inside it, exactly as Java Paimon's filesystem catalog lays it out. "+
			"A local path (`/var/lib/lake` or `./lake`), a `file://` URI (`file:///var/lib/lake`), "+
			"or an S3 location `s3://bucket/prefix` (`s3a://` and `s3n://` are accepted as synonyms, so the warehouse "+
			"string of a Java job can be used unchanged). S3 connection settings are in `s3`.").
		Examples("/var/lib/paimon", "file:///var/lib/paimon", "s3://my-bucket/warehouse").
		LintRule(`root = if this.trim() == "" { [ "warehouse must not be empty" ] } ` +
			`else if this.re_match("^[a-zA-Z][a-zA-Z0-9+.-]+:") && !this.re_match("^(?i)(file|s3|s3a|s3n):") { ` +
			`[ "warehouse scheme is not supported: use a local path, file://, s3:// or s3a://" ] }`)
}

// DatabaseField is the `database` field, default "default".
func DatabaseField() *service.ConfigField {
	return service.NewStringField(FieldDatabase).
		Description("The database (namespace) of the table; its directory is `<database>.db` in the warehouse.").
		Default(DefaultDatabase)
}

// TableField is the required `table` field.
func TableField() *service.ConfigField {
	return service.NewStringField(FieldTable).
		Description("The table name; its directory is `<database>.db/<table>` in the warehouse.").
		Example("events").
		LintRule(`root = if this.trim() == "" { [ "table must not be empty" ] }`)
}

// S3Field is the `s3` object: endpoint, region, force_path_style and
// credentials (id, secret, token). Every field has a default, so the object
// may be left out entirely for AWS with the default credential chain.
func S3Field() *service.ConfigField {
	return service.NewObjectField(FieldS3,
		service.NewStringField(FieldS3Endpoint).
			Description("A custom S3 endpoint URL (`http://` or `https://`) for S3-compatible stores such as MinIO, "+
				"Ceph, versitygw or R2. Leave empty for AWS.").
			Default("").
			Example("http://localhost:9000"),
		service.NewStringField(FieldS3Region).
			Description("The AWS region. Leave empty to take it from the default chain (`AWS_REGION`, the shared config "+
				"file), falling back to `us-east-1`.").
			Default("").
			Example("eu-west-1"),
		service.NewBoolField(FieldS3ForcePathStyle).
			Description("Address buckets as `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>`. "+
				"Most S3-compatible servers need this.").
			Default(false),
		service.NewObjectField(FieldS3Credentials,
			service.NewStringField(FieldS3CredID).
				Description("The access key id of static credentials. Leave empty to use the AWS SDK's default credential "+
					"chain (environment variables, shared credentials file, web identity, container or instance role).").
				Default(""),
			service.NewStringField(FieldS3CredSecret).
				Description("The secret access key of static credentials; required with `id`.").
				Default("").
				Secret(),
			service.NewStringField(FieldS3CredToken).
				Description("The session token of temporary static credentials; optional.").
				Default("").
				Secret(),
		).
			Description("Static credentials. When `id` is empty the default credential chain is used.").
			Advanced(),
	).
		Description("S3 connection settings, used when the warehouse is an `s3://` location and ignored otherwise.").
		Advanced().
		LintRule(`root = if this.credentials.id.or("") != "" && this.credentials.secret.or("") == "" { ` +
			`[ "s3.credentials.secret is required when s3.credentials.id is set" ] } ` +
			`else if this.credentials.id.or("") == "" && (this.credentials.secret.or("") != "" || this.credentials.token.or("") != "") { ` +
			`[ "s3.credentials.secret and token need s3.credentials.id; leave all three empty for the default credential chain" ] }`)
}

// ParseTable reads the fields of TableFields from conf (the plugin's root
// config) and validates them with Table.Validate.
func ParseTable(conf *service.ParsedConfig) (Table, error) {
	var t Table
	var err error
	if t.Warehouse, err = conf.FieldString(FieldWarehouse); err != nil {
		return t, err
	}
	if t.Database, err = conf.FieldString(FieldDatabase); err != nil {
		return t, err
	}
	if t.Table, err = conf.FieldString(FieldTable); err != nil {
		return t, err
	}
	if conf.Contains(FieldS3) {
		if t.S3, err = parseS3(conf.Namespace(FieldS3)); err != nil {
			return t, err
		}
	}
	return t, t.Validate()
}

// ParseTableTemplate is ParseTable for a plugin that names its table per
// message: database and table may hold interpolations (`${! ... }`), in
// which case dynamic is true and their names are not checked here; check
// each name they give with WithNames.
func ParseTableTemplate(conf *service.ParsedConfig) (t Table, dynamic bool, err error) {
	if t.Warehouse, err = conf.FieldString(FieldWarehouse); err != nil {
		return t, false, err
	}
	if t.Database, err = conf.FieldString(FieldDatabase); err != nil {
		return t, false, err
	}
	if t.Table, err = conf.FieldString(FieldTable); err != nil {
		return t, false, err
	}
	if conf.Contains(FieldS3) {
		if t.S3, err = parseS3(conf.Namespace(FieldS3)); err != nil {
			return t, false, err
		}
	}
	dynamic = IsInterpolated(t.Database) || IsInterpolated(t.Table)
	check := t
	if dynamic {
		check.Database, check.Table = DefaultDatabase, "t" // the names are checked per message
	}
	return t, dynamic, check.Validate()
}

// IsInterpolated reports whether a field's text holds a Benthos
// interpolation.
func IsInterpolated(s string) bool { return strings.Contains(s, "${!") }

// WithNames returns t naming database db and table name instead, checked
// as Validate checks them.
func (t Table) WithNames(db, name string) (Table, error) {
	t.Database, t.Table = db, name
	if err := validateName("database", db); err != nil {
		return t, err
	}
	if err := validateName("table", name); err != nil {
		return t, err
	}
	if strings.Contains(name, "$") {
		return t, fmt.Errorf("%w: table %q: '$' marks Paimon system tables (t$snapshots) and cannot be used", ErrInvalid, name)
	}
	return t, nil
}

func parseS3(conf *service.ParsedConfig) (storage.S3Config, error) {
	var c storage.S3Config
	var err error
	if c.Endpoint, err = conf.FieldString(FieldS3Endpoint); err != nil {
		return c, err
	}
	if c.Region, err = conf.FieldString(FieldS3Region); err != nil {
		return c, err
	}
	if c.ForcePathStyle, err = conf.FieldBool(FieldS3ForcePathStyle); err != nil {
		return c, err
	}
	if c.AccessKeyID, err = conf.FieldString(FieldS3Credentials, FieldS3CredID); err != nil {
		return c, err
	}
	if c.SecretAccessKey, err = conf.FieldString(FieldS3Credentials, FieldS3CredSecret); err != nil {
		return c, err
	}
	if c.SessionToken, err = conf.FieldString(FieldS3Credentials, FieldS3CredToken); err != nil {
		return c, err
	}
	return c, nil
}

// Validate checks the warehouse URI (scheme, bucket), the database and table
// names and the S3 settings, with messages that name the field. Errors wrap
// ErrInvalid.
func (t Table) Validate() error {
	if strings.TrimSpace(t.Warehouse) == "" {
		return fmt.Errorf("%w: warehouse must not be empty", ErrInvalid)
	}
	_, bucket, _, err := storage.SplitURI(t.Warehouse)
	if err != nil {
		return fmt.Errorf("%w: warehouse: %v", ErrInvalid, err)
	}
	if t.IsS3() && bucket == "" {
		return fmt.Errorf("%w: warehouse %q names no bucket (want s3://bucket/prefix)", ErrInvalid, t.Warehouse)
	}
	if err := validateName("database", t.Database); err != nil {
		return err
	}
	if err := validateName("table", t.Table); err != nil {
		return err
	}
	if strings.Contains(t.Table, "$") {
		return fmt.Errorf("%w: table %q: '$' marks Paimon system tables (t$snapshots) and cannot be used", ErrInvalid, t.Table)
	}
	s := t.S3
	if s.AccessKeyID != "" && s.SecretAccessKey == "" {
		return fmt.Errorf("%w: s3.credentials.secret is required when s3.credentials.id is set", ErrInvalid)
	}
	if s.AccessKeyID == "" && (s.SecretAccessKey != "" || s.SessionToken != "") {
		return fmt.Errorf("%w: s3.credentials.secret and token need s3.credentials.id", ErrInvalid)
	}
	if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "http://") && !strings.HasPrefix(s.Endpoint, "https://") {
		return fmt.Errorf("%w: s3.endpoint %q is not an http:// or https:// URL", ErrInvalid, s.Endpoint)
	}
	return nil
}

// validateName checks a database or table name: it becomes one path element
// of every file of the table, on local disks and in S3 keys.
func validateName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s must not be empty", ErrInvalid, field)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %s %q is not a valid name", ErrInvalid, field, name)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%w: %s %q has leading or trailing spaces", ErrInvalid, field, name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%w: %s %q must not contain '/' or '\\'", ErrInvalid, field, name)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%w: %s %q contains a control character or invalid UTF-8", ErrInvalid, field, name)
		}
	}
	return nil
}

// IsS3 reports whether the warehouse is an S3 location.
func (t Table) IsS3() bool {
	scheme, _, _, err := storage.SplitURI(t.Warehouse)
	return err == nil && (scheme == "s3" || scheme == "s3a" || scheme == "s3n")
}

// Path is the table's directory relative to the warehouse:
// "<database>.db/<table>".
func (t Table) Path() string { return t.Database + ".db/" + t.Table }

// String names the table for logs and errors, without credentials:
// "default.events in s3://bucket/wh". A relative local warehouse is named
// as given and as resolved, since it depends on the working directory:
// "default.events in ./wh (resolved against the working directory to
// /srv/wh)".
func (t Table) String() string {
	s := t.Database + "." + t.Table + " in " + t.Warehouse
	if dir := t.LocalDir(); dir != "" && !filepath.IsAbs(t.Warehouse) && !strings.Contains(t.Warehouse, ":") {
		s += " (resolved against the working directory to " + dir + ")"
	}
	return s
}

// LocalDir is the absolute directory of a local warehouse, "" for S3 or
// an invalid warehouse.
func (t Table) LocalDir() string {
	scheme, _, p, err := storage.SplitURI(t.Warehouse)
	if err != nil || (scheme != "" && scheme != "file") {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return abs
}

// DirGuard remembers which directories of a local warehouse path did not
// exist before a component opened it (opening a local warehouse creates
// it), so that a component that then fails can remove them again and
// leave no empty warehouse behind.
type DirGuard struct {
	missing []string // from the warehouse up to the highest missing parent
}

// GuardWarehouse returns the DirGuard of t's warehouse, taken now; for S3
// it guards nothing.
func GuardWarehouse(t Table) *DirGuard {
	g := &DirGuard{}
	dir := t.LocalDir()
	for dir != "" {
		if _, err := os.Lstat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		g.missing = append(g.missing, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return g
}

// RemoveEmpty removes the directories that were missing when the guard was
// taken, deepest first, as long as they are empty: a directory something
// was written into stays, and so do its parents.
func (g *DirGuard) RemoveEmpty() {
	for _, d := range g.missing {
		if os.Remove(d) != nil {
			return
		}
	}
}
