package paimon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// newStoppableInput builds an Input from yaml whose resources carry a
// fatal handler (unless noHandler) that collects what it is told.
func newStoppableInput(t *testing.T, yaml string, noHandler bool) (*Input, *[]error) {
	t.Helper()
	res := service.MockResources()
	stopped := &[]error{}
	if !noHandler {
		fatal.Install(res, func(err error) { *stopped = append(*stopped, err) })
	}
	in := newInputWith(t, yaml, res)
	t.Cleanup(func() { _ = in.Close(context.Background()) })
	return in, stopped
}

// TestConnectPermanentErrors: with bounded: true a missing table ends the
// input and stops the stream with the error (and leaves no warehouse
// directory behind); a tailing input waits for the table (a transient
// error, backed off); a column the table lacks is permanent either way;
// without a fatal handler the error is retried at the slowest pace rather
// than ending the read as if it were complete.
func TestConnectPermanentErrors(t *testing.T) {
	existing := newTestTable(t, nil, nil)
	// A table whose latest schema asks for Parquet manifests, which
	// lakecore does not read.
	parquetManifests := newTestTable(t, nil, nil)
	s := parquetManifests.tbl.Schema().Clone()
	s.ID++
	s.Options["manifest.format"] = "parquet"
	if err := parquetManifests.tbl.Schemas().Commit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		yaml      string
		noHandler bool
		stops     string        // the error the handler must get; "" for none
		wait      time.Duration // the ErrBackOff wait when it does not stop
		gone      string        // a directory that must not exist afterwards
	}{
		{name: "bounded, missing table", yaml: "warehouse: WH/new\ntable: events\nbounded: true\n",
			stops: "paimon input on default.events in WH/new: open table default.events: latest schema of default.db/events: table not found", gone: "WH/new"},
		{name: "tailing, missing table", yaml: "warehouse: WH/new\ntable: events\n", wait: retry.Min},
		{name: "bounded, missing table, no handler", yaml: "warehouse: WH/new\ntable: events\nbounded: true\n", noHandler: true, wait: retry.Max},
		{name: "Parquet manifests", yaml: parquetManifests.yaml(""), stops: `manifest.format = "parquet": lakecore reads avro manifests only`},
		{name: "unknown column", yaml: existing.yaml("columns: [ id, nope ]\n"), stops: `columns: "nope" is not a column of the table`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wh := t.TempDir()
			yaml := strings.ReplaceAll(tc.yaml, "WH", wh)
			in, stopped := newStoppableInput(t, yaml, tc.noHandler)
			err := in.Connect(context.Background())
			if tc.stops != "" {
				want := strings.ReplaceAll(tc.stops, "WH", wh)
				if !errors.Is(err, service.ErrEndOfInput) {
					t.Errorf("Connect: %v, want ErrEndOfInput", err)
				}
				if len(*stopped) != 1 || !strings.Contains((*stopped)[0].Error(), want) || !strings.Contains((*stopped)[0].Error(), "retrying cannot fix this") {
					t.Fatalf("handler got %v, want one error with %q", *stopped, want)
				}
				if _, _, err := in.ReadBatch(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
					t.Errorf("ReadBatch after the stop: %v, want ErrEndOfInput", err)
				}
			} else {
				var bo *service.ErrBackOff
				if !errors.As(err, &bo) || bo.Wait != tc.wait {
					t.Errorf("Connect: %v, want an ErrBackOff of %s", err, tc.wait)
				}
				if len(*stopped) != 0 {
					t.Errorf("stopped with %v", *stopped)
				}
			}
			if tc.gone != "" {
				if _, err := os.Stat(strings.ReplaceAll(tc.gone, "WH", wh)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is left behind (%v)", tc.gone, err)
				}
			}
		})
	}
}

// TestReadBatchPermanentError: a data file lakecore cannot read (ORC) in a
// bounded read stops the stream with the error that names the file,
// instead of failing every ReadBatch for ever.
func TestReadBatchPermanentError(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	ctx := context.Background()
	w, err := tt.tbl.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, row("d", "eu", 1)); err != nil {
		t.Fatal(err)
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orc := strings.TrimSuffix(msgs[0].NewFiles[0].FileName, filepath.Ext(msgs[0].NewFiles[0].FileName)) + ".orc"
	msgs[0].NewFiles[0].FileName = orc
	tt.commit(msgs)

	in, stopped := newStoppableInput(t, tt.yaml("bounded: true\n"), false)
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, _, err = in.ReadBatch(rctx)
	if !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("ReadBatch: %v, want ErrEndOfInput after the stop", err)
	}
	if len(*stopped) != 1 || !strings.Contains((*stopped)[0].Error(), orc) || !strings.Contains((*stopped)[0].Error(), "lakecore reads Parquet data files only") {
		t.Fatalf("handler got %v, want the error naming %s", *stopped, orc)
	}
}

// TestExpiredSnapshotStopsTheStream: with on_expired: error, a next
// snapshot that was expired before it was read will not come back: the
// stream is stopped with the error and its advice.
func TestExpiredSnapshotStopsTheStream(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	tt.appendRows(row("d", "eu", 1))
	in, stopped := newStoppableInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\non_expired: error\n"), false)
	caughtUp, resume := make(chan struct{}), make(chan struct{})
	in.idle = func(ctx context.Context, _ time.Duration) bool {
		select {
		case caughtUp <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		select {
		case <-resume:
			return true
		case <-ctx.Done():
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.ReadBatch(ctx); err != nil {
		t.Fatal(err)
	}
	<-caughtUp // the reader waits for snapshot 2 ...
	tt.appendRows(row("d", "eu", 2))
	tt.appendRows(row("d", "eu", 3))
	tt.expire(2) // ... which expires before it looks again
	close(resume)
	if _, _, err := in.ReadBatch(ctx); !errors.Is(err, service.ErrEndOfInput) {
		t.Fatalf("ReadBatch: %v, want ErrEndOfInput after the stop", err)
	}
	if len(*stopped) != 1 || !strings.Contains((*stopped)[0].Error(), "snapshot expired") {
		t.Fatalf("handler got %v, want the expiry error", *stopped)
	}
}
