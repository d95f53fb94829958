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
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// connectOnce builds the output of yaml with a fatal handler (unless
// noHandler) and calls Connect once; it returns the output, the errors
// the handler received and Connect's error.
func connectOnce(t *testing.T, yaml string, noHandler bool) (*paimonOutput, []error, error) {
	t.Helper()
	res := service.MockResources()
	var stopped []error
	if !noHandler {
		fatal.Install(res, func(err error) { stopped = append(stopped, err) })
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
			if len(stopped) != 1 || !strings.Contains(stopped[0].Error(), tc.want) || !strings.Contains(stopped[0].Error(), "retrying cannot fix this") {
				t.Fatalf("handler got %v; want one error with %q", stopped, tc.want)
			}
			if !strings.Contains(stopped[0].Error(), " in "+tc.warehouse) {
				t.Errorf("%v does not name the table and warehouse", stopped[0])
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
