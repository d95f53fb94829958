package paimon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// Many tables from one output (a database sync).
//
// With `table` or `database` interpolated, each message names its table.
// WriteBatch splits the batch by table, in the order tables first appear,
// and writes each part through that table's sink: one commit per table per
// batch, and the batch is answered once every part is committed or has
// failed. A failure of one table's part fails only that part's messages
// (Benthos delivers them again); the others stay committed.
//
// A table that does not exist is created when create_table.enabled: with
// create_table.schema when it is given, else from the first message's
// `schema` metadata (Benthos' common schema, as CDC inputs set it; a field
// may name its Paimon type in `paimon_type`), else from the first
// message's top-level values (rowconv.InferType). Its primary keys are
// create_table.primary_keys, else the `pk` metadata (comma-separated
// column names, as pg_cdc sets it), else those a CDC envelope names
// (cdc_format). With cdc_format the columns come from the envelope's
// schema when there is no `schema` metadata (Debezium's schema, Canal's
// mysqlType), else from the values of its first row. Partition keys, bucket, bucket key and
// options are create_table's, the same for every table, except that a
// table without primary keys or bucket key is bucket-unaware. A table idle for
// table_idle_timeout has its sink closed (its goroutines stopped and its
// state dropped) and is opened again by its next message.
//
// Opening a table can fail for good as Connect can for a static table
// (missing without create_table, not matching create_table.schema, a
// setting that does not fit it, access denied): that stops the stream
// through internal/fatal, with an error naming the table and the message
// that named it. Any other failure to open fails the table's messages,
// which Benthos delivers again (with its input's back-off).

// Route is the per-message table of an output whose database or table is
// interpolated.
type Route struct {
	Database, Table *text
	// IdleTimeout closes the sink of a table without batches for this long.
	IdleTimeout time.Duration
}

// tableGroup is the part of a batch that goes to one table.
type tableGroup struct {
	name    tableName
	indexes []int
}

// writeRouted writes each table's part of batch through its sink, setting
// msgErrs for the messages that failed.
func (o *paimonOutput) writeRouted(ctx context.Context, batch service.MessageBatch, msgErrs []error) error {
	groups := o.route(batch, msgErrs)
	for _, g := range groups {
		part := make(service.MessageBatch, len(g.indexes))
		for j, i := range g.indexes {
			part[j] = batch[i]
		}
		k, err := o.sinkFor(ctx, g.name, part)
		if err != nil && permanent(err) {
			err = fmt.Errorf("%w; the table was named by the message %s", err, describeMessage(part[0]))
			if o.stop(err) {
				err = errStopped
			}
		}
		var errs []error
		if err == nil {
			errs, err = k.write(ctx, part)
		}
		if err != nil {
			if len(groups) == 1 {
				return err // the whole batch: Benthos retries it as one
			}
			for _, i := range g.indexes {
				msgErrs[i] = err
			}
			continue
		}
		for j, i := range g.indexes {
			msgErrs[i] = errs[j]
		}
	}
	o.closeIdle(ctx)
	return nil
}

// route returns the table of each message, grouped in first-seen order;
// a message whose table cannot be named fails in msgErrs.
func (o *paimonOutput) route(batch service.MessageBatch, msgErrs []error) []tableGroup {
	r := o.conf.Route
	var groups []tableGroup
	at := map[tableName]int{}
	dbs, tables := r.Database.over(batch), r.Table.over(batch)
	for i := range batch {
		db, err := dbs.TryString(i)
		if err != nil {
			msgErrs[i] = fmt.Errorf("database: %w", err)
			continue
		}
		name, err := tables.TryString(i)
		if err != nil {
			msgErrs[i] = fmt.Errorf("table: %w", err)
			continue
		}
		if _, err := o.conf.Table.WithNames(db, name); err != nil {
			msgErrs[i] = err
			continue
		}
		n := tableName{db, name}
		g, ok := at[n]
		if !ok {
			g = len(groups)
			at[n] = g
			groups = append(groups, tableGroup{name: n})
		}
		groups[g].indexes = append(groups[g].indexes, i)
	}
	return groups
}

// sinkFor returns the open sink of table n, opening it (and creating the
// table from part's first message) when needed. Concurrent batches for the
// same table wait for one open.
func (o *paimonOutput) sinkFor(ctx context.Context, n tableName, part service.MessageBatch) (*tableSink, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errCommitterClosed
	}
	slot, ok := o.sinks[n]
	if !ok {
		slot = &sinkSlot{ready: make(chan struct{})}
		o.sinks[n] = slot
	}
	cat := o.cat
	o.mu.Unlock()
	if ok {
		select {
		case <-slot.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if slot.sink != nil {
			o.mu.Lock()
			open := o.sinks[n] == slot
			if open {
				// Under mu, so that closeIdle cannot close it between here
				// and the write.
				slot.sink.lastUsed.Store(time.Now().UnixNano())
			}
			o.mu.Unlock()
			if open {
				return slot.sink, nil
			}
			return o.sinkFor(ctx, n, part) // closed as idle meanwhile: open it again
		}
		// The last attempt failed: take the slot over and try again.
		o.mu.Lock()
		if o.sinks[n] == slot {
			delete(o.sinks, n)
		}
		o.mu.Unlock()
		return o.sinkFor(ctx, n, part)
	}
	conf := o.conf
	conf.Table, _ = o.conf.Table.WithNames(n.database, n.table) // checked by route
	if !o.conf.CommitUserSet {
		conf.CommitUser = DefaultCommitUser(conf.Table, o.conf.Label)
	}
	conf.Maintenance.TableMetrics = false // the gauges describe one table
	ct, err := createSpec(o.conf.CreateTable, o.conf.CDCFormat, part[0])
	if err != nil {
		slot.err = fmt.Errorf("table %s: %w", conf.Table, err)
	} else {
		slot.sink, slot.err = openSink(ctx, cat, conf, ct, o.opts, o.log, o.met) // its errors name the table
	}
	close(slot.ready)
	if slot.err != nil {
		o.mu.Lock()
		if o.sinks[n] == slot {
			delete(o.sinks, n)
		}
		o.mu.Unlock()
		return nil, slot.err
	}
	return slot.sink, nil
}

// closeIdle closes the sinks of tables without batches for longer than
// the route's idle timeout.
func (o *paimonOutput) closeIdle(ctx context.Context) {
	idle := o.conf.Route.IdleTimeout
	if idle <= 0 {
		return
	}
	cutoff := time.Now().Add(-idle).UnixNano()
	var stale []*tableSink
	o.mu.Lock()
	for n, slot := range o.sinks {
		select {
		case <-slot.ready:
		default:
			continue // still opening
		}
		if slot.sink != nil && slot.sink.lastUsed.Load() < cutoff {
			stale = append(stale, slot.sink)
			delete(o.sinks, n)
		}
	}
	o.mu.Unlock()
	for _, k := range stale {
		if err := k.close(ctx); err != nil {
			o.log.Warnf("Closing idle table %s: %v", k.conf.Table, err)
		} else {
			o.log.Debugf("Closed table %s after %v without batches", k.conf.Table, idle)
		}
	}
}

// createSpec is create_table for a table named per message: the
// configured one, with the columns and primary keys msg gives where
// create_table leaves them out, validated as create_table is.
func createSpec(base CreateTable, format cdcformat.Format, msg *service.Message) (CreateTable, error) {
	ct := base
	if !ct.Enabled || len(ct.Fields) > 0 {
		return ct, nil
	}
	if len(ct.PrimaryKeys) == 0 {
		if v, ok := msg.MetaGetMut("pk"); ok {
			for _, k := range strings.Split(fmt.Sprint(v), ",") {
				if k = strings.TrimSpace(k); k != "" {
					ct.PrimaryKeys = append(ct.PrimaryKeys, k)
				}
			}
		}
	}
	var ev *cdcformat.Event
	if format != "" {
		data, err := msg.AsBytes()
		if err != nil {
			return ct, err
		}
		e, err := cdcformat.Decode(format, data)
		if err != nil {
			return ct, fmt.Errorf("create the table from its first message: %w", err)
		}
		ev = &e
		if len(ct.PrimaryKeys) == 0 {
			ct.PrimaryKeys = slices.Clone(e.PrimaryKeys)
		}
	}
	var err error
	if v, ok := msg.MetaGetMut("schema"); ok {
		if ct.Fields, err = fieldsFromCommonSchema(v); err != nil {
			return ct, fmt.Errorf("metadata schema: %w", err)
		}
	} else if ev != nil && len(ev.Fields) > 0 {
		ct.Fields = slices.Clone(ev.Fields)
	} else if ev != nil {
		if len(ev.Changes) == 0 {
			return ct, errors.New("create the table from its first message: it has no rows (a tombstone or DDL event) and no schema")
		}
		ct.Fields = fieldsFromObject(ev.Changes[0].Row)
	} else if ct.Fields, err = fieldsFromValues(msg); err != nil {
		return ct, err
	}
	ct.Inferred = true
	if len(ct.PrimaryKeys) == 0 && len(ct.BucketKey) == 0 {
		ct.Bucket = -1 // an append table without a bucket key is bucket-unaware
	}
	types.AssignFieldIDs(ct.Fields, 0)
	for i, f := range ct.Fields {
		if slices.Contains(ct.PrimaryKeys, f.Name) {
			ct.Fields[i].Type = f.Type.NotNull()
		}
	}
	if err := ct.Validate(); err != nil {
		return ct, fmt.Errorf("create the table from its first message: %w", err)
	}
	return ct, nil
}

// fieldsFromValues gives each top-level field of msg the type schema
// evolution would give it; null fields become STRING.
func fieldsFromValues(msg *service.Message) ([]types.DataField, error) {
	v, err := msg.AsStructured()
	if err != nil {
		return nil, fmt.Errorf("create the table from its first message: not JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("create the table from its first message: not a JSON object but %T", v)
	}
	return fieldsFromObject(obj), nil
}

// fieldsFromObject gives each field of obj the type schema evolution
// would give it, in name order; null fields become STRING.
func fieldsFromObject(obj map[string]any) []types.DataField {
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	fields := make([]types.DataField, 0, len(names))
	for _, name := range names {
		t, ok := rowconv.InferType(obj[name])
		if !ok {
			t = types.MustParse("STRING")
		}
		fields = append(fields, types.DataField{Name: name, Type: t})
	}
	return fields
}

// errCommonSchema marks metadata that is not a Benthos common schema.
var errCommonSchema = errors.New("not a Benthos common schema")

// fieldsFromCommonSchema maps a Benthos common schema (the map form of
// public/schema.Common.ToAny: type, name, optional, children) of an OBJECT
// to columns. A child may carry `paimon_type`, a Paimon type that wins
// over the mapping (a CDC input knows DECIMAL(10,2) where the common
// schema has only STRING).
func fieldsFromCommonSchema(v any) ([]types.DataField, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %T", errCommonSchema, v)
	}
	if t, _ := obj["type"].(string); t != "OBJECT" {
		return nil, fmt.Errorf("%w: the top level is %q, not an OBJECT", errCommonSchema, obj["type"])
	}
	children, _ := obj["children"].([]any)
	if len(children) == 0 {
		return nil, fmt.Errorf("%w: an OBJECT without children", errCommonSchema)
	}
	fields := make([]types.DataField, 0, len(children))
	for i, c := range children {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: child %d is %T", errCommonSchema, i, c)
		}
		name, _ := m["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("%w: child %d has no name", errCommonSchema, i)
		}
		t, err := commonType(m)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		fields = append(fields, types.DataField{Name: name, Type: t})
	}
	return fields, nil
}

// commonType maps one common-schema node to a Paimon type.
func commonType(m map[string]any) (types.DataType, error) {
	optional, _ := m["optional"].(bool)
	nullable := func(t types.DataType) types.DataType { return t.WithNullable(optional) }
	if pt, ok := m["paimon_type"].(string); ok && pt != "" {
		t, err := types.Parse(pt)
		if err != nil {
			return t, fmt.Errorf("paimon_type: %w", err)
		}
		return t, nil
	}
	kind, _ := m["type"].(string)
	simple := map[string]string{
		"BOOLEAN": "BOOLEAN", "INT32": "INT", "INT64": "BIGINT", "FLOAT32": "FLOAT", "FLOAT64": "DOUBLE",
		"STRING": "STRING", "BYTE_ARRAY": "BYTES", "TIMESTAMP": "TIMESTAMP(6) WITH LOCAL TIME ZONE",
		"NULL": "STRING", "UNION": "STRING",
	}
	if s, ok := simple[kind]; ok {
		return nullable(types.MustParse(s)), nil
	}
	children, _ := m["children"].([]any)
	child := func() (types.DataType, error) {
		if len(children) != 1 {
			return types.DataType{}, fmt.Errorf("%w: %s needs one child, has %d", errCommonSchema, kind, len(children))
		}
		c, ok := children[0].(map[string]any)
		if !ok {
			return types.DataType{}, fmt.Errorf("%w: the child of %s is %T", errCommonSchema, kind, children[0])
		}
		return commonType(c)
	}
	switch kind {
	case "ARRAY":
		e, err := child()
		if err != nil {
			return e, err
		}
		return nullable(types.ArrayType(e)), nil
	case "MAP":
		e, err := child()
		if err != nil {
			return e, err
		}
		return nullable(types.MapType(types.MustParse("STRING NOT NULL"), e)), nil
	case "OBJECT":
		fields, err := fieldsFromCommonSchema(m)
		if err != nil {
			return types.DataType{}, err
		}
		return nullable(types.RowType(fields...)), nil
	}
	return types.DataType{}, fmt.Errorf("%w: unknown type %q", errCommonSchema, kind)
}

// describeMessage shows msg in an error about the table it named: its
// content, on one line and shortened to 200 bytes, so that a user can
// find the message (and the interpolation's input) that named the table.
func describeMessage(msg *service.Message) string {
	b, err := msg.AsBytes()
	if err != nil {
		return fmt.Sprintf("(content unreadable: %v)", err)
	}
	const limit = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(b))
}
