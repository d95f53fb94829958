package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

// TestPgCDCPermanentErrorsEndTheRun: a pg_cdc pipeline whose Connect
// meets an error retrying cannot fix (found by pg_cdc's own checks, or
// told by the server's SQLSTATE) ends `benthos-paimon -c` with exit code 1
// within seconds, logs the error once and prints it last.
func TestPgCDCPermanentErrorsEndTheRun(t *testing.T) {
	db := pgtest.New(t)
	db.Exec("CREATE TABLE orders (id bigint PRIMARY KEY, v text); ALTER TABLE orders REPLICA IDENTITY NOTHING")
	config := func(dsn string) string {
		return fmt.Sprintf("http: { enabled: false }\ninput:\n  pg_cdc:\n    dsn: %q\n    slot_name: %s_slot\n    tables: [ public.orders ]\noutput:\n  drop: {}\n",
			dsn, db.Name)
	}
	for _, tc := range []struct{ name, config, want string }{
		{"REPLICA IDENTITY NOTHING", config(db.DSN),
			`table public.orders has REPLICA IDENTITY NOTHING: Postgres cannot log its updates and deletes for replication (they fail on the source once it is published). Run: ALTER TABLE "public"."orders" REPLICA IDENTITY DEFAULT (or FULL)`},
		{"unknown database", config(strings.Replace(db.DSN, "/"+db.Name+"?", "/nosuchdb?", 1)), `database "nosuchdb" does not exist (SQLSTATE 3D000)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := binarytest.Path(t) // built before the clock starts
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-c", "config.yaml")
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want exit code 1:\n%s", err, out.String())
			}
			if d := time.Since(start); d > 10*time.Second { // about 1s
				t.Errorf("took %s to stop", d)
			}
			// The error log line (quotes escaped in the logfmt) and the last line.
			if n := strings.Count(out.String(), "(retrying cannot fix this)"); n != 2 {
				t.Errorf("the error appears %d times, want twice (logged once, printed last):\n%s", n, out.String())
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "benthos-paimon: the stream stopped: ") || !strings.Contains(last, tc.want) {
				t.Errorf("last line %q does not say why the stream stopped", last)
			}
		})
	}
}
