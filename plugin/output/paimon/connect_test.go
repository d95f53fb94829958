package paimon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// connectOnce builds the output of yaml with a fatal handler (unless
// noHandler) and calls Connect once; it returns the output, the errors
// the handler receives (then and later) and Connect's error.
func connectOnce(t *testing.T, yaml string, noHandler bool) (*paimonOutput, *[]error, error) {
	t.Helper()
	res := service.MockResources()
	stopped := new([]error)
	if !noHandler {
		fatal.Install(res, func(err error) { *stopped = append(*stopped, err) })
	}
	o := newOutput(mustParse(t, yaml), res, options{})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	err := o.Connect(context.Background())
	return o, stopped, err
}

// TestConnectPermanentErrorsStopTheStream: what retrying cannot fix goes
// to the fatal handler once, with a message that names the table and the
// fix, and the empty warehouse directory Connect created is removed; a
// table that exists with another schema is reported the same way.
func TestConnectPermanentErrorsStopTheStream(t *testing.T) {
	existing := t.TempDir()
	cat, err := lakecore.OpenCatalog(context.Background(), existing, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(context.Background(), "db", "t", lakecore.TableSpec{Fields: mustFields(t, "id BIGINT", "v STRING")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(context.Background(), "db", "kv", lakecore.TableSpec{Fields: mustFields(t, "id BIGINT", "v STRING"),
		PrimaryKeys: []string{"id"}, Options: map[string]string{"bucket": "2"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		warehouse string
		extra     string
		want      string
		gone      bool // the warehouse directory must not exist afterwards
	}{
		{"missing table", filepath.Join(t.TempDir(), "new", "wh"), "table: t\n", "table not found: create it, or set create_table.enabled", true},
		{"schema mismatch", existing, "table: t\ncreate_table:\n  schema:\n    - { name: id, type: INT }\n", "the table does not match create_table", false},
		{"primary-key table with max_in_flight 4", existing, "table: kv\nmax_in_flight: 4\n", "set max_in_flight: 1 (it is 4)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, stopped, err := connectOnce(t, fmt.Sprintf("warehouse: %s\ndatabase: db\n%s", tc.warehouse, tc.extra), false)
			if err != nil {
				t.Errorf("Connect: %v; want nil (a failed state: the stream is stopping)", err)
			}
			batch := service.MessageBatch{service.NewMessage([]byte(`{"id":1}`))}
			if err := o.WriteBatch(context.Background(), batch); !errors.Is(err, errStopped) {
				t.Errorf("WriteBatch after the stop: %v, want errStopped", err)
			}
			if len(*stopped) != 1 || !strings.Contains((*stopped)[0].Error(), tc.want) || !strings.Contains((*stopped)[0].Error(), "retrying cannot fix this") {
				t.Fatalf("handler got %v; want one error with %q", *stopped, tc.want)
			}
			if !strings.Contains((*stopped)[0].Error(), " in "+tc.warehouse) {
				t.Errorf("%v does not name the table and warehouse", (*stopped)[0])
			}
			_, serr := os.Stat(tc.warehouse)
			if gone := errors.Is(serr, fs.ErrNotExist); gone != tc.gone {
				t.Errorf("warehouse gone: %v, want %v", gone, tc.gone)
			}
		})
	}
}

// TestConnectPermanentWithoutHandler: a StreamBuilder without a fatal
// handler keeps the error in sight, retried at the slowest pace.
func TestConnectPermanentWithoutHandler(t *testing.T) {
	_, _, err := connectOnce(t, "warehouse: "+t.TempDir()+"\ntable: t\n", true)
	var bo *service.ErrBackOff
	if !errors.As(err, &bo) || bo.Wait != retry.Max || !strings.Contains(err.Error(), "retried every 30s") {
		t.Fatalf("Connect: %v; want an ErrBackOff of %s saying so", err, retry.Max)
	}
}

// TestConnectTransientErrorsBackOff: an error that may pass (a refused
// connection) is not fatal; the waits double from 500ms up to 30s, and
// the message says which failure it is and when the next attempt comes.
func TestConnectTransientErrorsBackOff(t *testing.T) {
	c := mustParse(t, "warehouse: "+t.TempDir()+"\ntable: t\n")
	res := service.MockResources()
	var stopped []error
	fatal.Install(res, func(err error) { stopped = append(stopped, err) })
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	o := newOutput(c, res, options{openFileIO: func(context.Context, config.Table) (storage.FileIO, error) { return nil, refused }})
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		err := o.Connect(context.Background())
		var bo *service.ErrBackOff
		if !errors.As(err, &bo) || bo.Wait != w {
			t.Fatalf("attempt %d: %v; want a wait of %s", i+1, err, w)
		}
		if msg := fmt.Sprintf("failure %d in a row; retrying in %s, backing off exponentially from 500ms to at most 30s", i+1, w); !strings.Contains(err.Error(), msg) {
			t.Errorf("attempt %d: %v lacks %q", i+1, err, msg)
		}
	}
	if len(stopped) != 0 {
		t.Errorf("transient errors stopped the stream: %v", stopped)
	}
}

func mustFields(t *testing.T, cols ...string) []types.DataField {
	t.Helper()
	var fs []types.DataField
	for i, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		dt, err := types.Parse(typ)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, types.DataField{ID: i, Name: name, Type: dt})
	}
	return fs
}

// routedMsg is a message of content body whose `t` metadata names its
// table.
func routedMsg(table, body string) *service.Message {
	m := service.NewMessage([]byte(body))
	m.MetaSetMut("t", table)
	return m
}

// TestRoutedPermanentErrorsStopTheStream: a table named per message that
// is missing, or does not match create_table.schema, goes to the fatal
// handler once, with an error naming the table and the message; the other
// table of the batch is committed, and later batches are rejected.
func TestRoutedPermanentErrorsStopTheStream(t *testing.T) {
	wh := t.TempDir()
	cat, err := lakecore.OpenCatalog(context.Background(), wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"ok": "v STRING", "other": "v INT"} {
		if _, err := cat.CreateTable(context.Background(), "db", name, lakecore.TableSpec{Fields: mustFields(t, "id BIGINT", v)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, table, extra, want string
	}{
		{"missing table", "missing", "", "table db.missing in " + wh + ": table not found: create it, or set create_table.enabled"},
		{"schema mismatch", "other", "create_table: { schema: [ { name: id, type: BIGINT }, { name: v, type: STRING } ] }\n",
			`table db.other in ` + wh + `: the table does not match create_table (schema-0): column "v" has type INT in the table, STRING in create_table.schema`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, stopped, err := connectOnce(t, "warehouse: "+wh+"\ndatabase: db\ntable: ${! meta(\"t\") }\nmaintenance: { enabled: false }\n"+tc.extra, false)
			if err != nil {
				t.Fatal(err)
			}
			body := `{"id":2, "v":"b"}`
			batch := service.MessageBatch{routedMsg("ok", `{"id":1,"v":"a"}`), routedMsg(tc.table, body), routedMsg(tc.table, `{"id":3}`)}
			err = o.WriteBatch(context.Background(), batch)
			var bErr *service.BatchError
			if !errors.As(err, &bErr) || bErr.IndexedErrors() != 2 {
				t.Fatalf("WriteBatch: %v; want a BatchError failing the 2 messages of %s", err, tc.table)
			}
			if len(*stopped) != 1 {
				t.Fatalf("handler got %v; want one error", *stopped)
			}
			for _, want := range []string{tc.want, "the table was named by the message " + body, "(retrying cannot fix this)"} {
				if !strings.Contains((*stopped)[0].Error(), want) {
					t.Errorf("%v lacks %q", (*stopped)[0], want)
				}
			}
			tbl, err := lakecore.Open(context.Background(), wh, "db", "ok")
			if err != nil {
				t.Fatal(err)
			}
			if rows, err := tbl.ReadAll(context.Background(), 0); err != nil || len(rows) == 0 {
				t.Errorf("table ok: %v, %v; want the row of the batch", rows, err)
			}
			if err := o.WriteBatch(context.Background(), batch); !errors.Is(err, errStopped) {
				t.Errorf("WriteBatch after the stop: %v, want errStopped", err)
			}
			if len(*stopped) != 1 {
				t.Errorf("handler called again: %v", *stopped)
			}
		})
	}
}

// TestRoutedTransientErrorsAreRetried: a table named per message that
// cannot be opened because of an error that may pass (a refused
// connection) fails its messages, which Benthos delivers again, without
// stopping the stream; the next batch opens it.
func TestRoutedTransientErrorsAreRetried(t *testing.T) {
	wh := t.TempDir()
	local, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	fsys := faultfs.New(local, 1, faultfs.Fault{Path: "db.db/**", Times: 1, Err: refused})
	res := service.MockResources()
	var stopped []error
	fatal.Install(res, func(err error) { stopped = append(stopped, err) })
	c := mustParse(t, "warehouse: "+wh+"\ndatabase: db\ntable: ${! meta(\"t\") }\nmaintenance: { enabled: false }\n"+
		"create_table: { enabled: true, schema: [ { name: id, type: BIGINT } ] }\n")
	o := newOutput(c, res, options{openFileIO: func(context.Context, config.Table) (storage.FileIO, error) { return fsys, nil }})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	if err := o.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	batch := service.MessageBatch{routedMsg("t", `{"id":1}`)}
	if err := o.WriteBatch(context.Background(), batch); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("first WriteBatch: %v; want the refused connection", err)
	}
	if err := o.WriteBatch(context.Background(), batch); err != nil {
		t.Fatalf("second WriteBatch: %v", err)
	}
	if len(stopped) != 0 {
		t.Errorf("a transient error stopped the stream: %v", stopped)
	}
}

// TestRoutedExistingTableIsNotCheckedAgainstAMessage: without
// create_table.schema, a table named per message that exists is written
// as it is, even when the first message after a restart has a field the
// table lacks (unknown_fields: ignore drops it) or lacks a column; the
// fields of that message are not a schema to check.
func TestRoutedExistingTableIsNotCheckedAgainstAMessage(t *testing.T) {
	wh := t.TempDir()
	yaml := "warehouse: " + wh + "\ndatabase: db\ntable: ${! meta(\"t\") }\ncreate_table: { enabled: true }\nmaintenance: { enabled: false }\n" +
		"unknown_fields: ignore\n"
	for i, body := range []string{`{"id":1,"v":"a"}`, `{"id":2,"v":"b","extra":3}`, `{"id":3}`} {
		o, stopped, err := connectOnce(t, yaml, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.WriteBatch(context.Background(), service.MessageBatch{routedMsg("x", body)}); err != nil {
			t.Fatalf("run %d, %s: %v", i+1, body, err)
		}
		if len(*stopped) != 0 {
			t.Fatalf("run %d stopped the stream: %v", i+1, *stopped)
		}
		_ = o.Close(context.Background())
	}
	tbl, err := lakecore.Open(context.Background(), wh, "db", "x")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tbl.ReadAll(context.Background(), 0)
	if err != nil || len(rows) != 3 || len(tbl.Schema().Fields) != 2 {
		t.Errorf("rows %v (%v), columns %v; want 3 rows of id, v", rows, err, tbl.Schema().Fields)
	}
}
