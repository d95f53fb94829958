package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/retry"
)

// stops collects what an input reports to its stream's fatal handler.
type stops struct {
	mu   sync.Mutex
	errs []error
}

func (s *stops) get() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// newStoppableInput builds an Input from yaml whose resources carry a
// fatal handler (unless noHandler) that collects what it is told.
func newStoppableInput(t *testing.T, yaml string, noHandler bool) (*Input, *stops) {
	t.Helper()
	res := service.MockResources()
	st := &stops{}
	if !noHandler {
		fatal.Install(res, func(err error) {
			st.mu.Lock()
			st.errs = append(st.errs, err)
			st.mu.Unlock()
		})
	}
	in := newInputWith(t, yaml, res)
	t.Cleanup(func() { _ = in.Close(context.Background()) })
	return in, st
}

// checkStopped checks that st got exactly one error, containing want and
// saying that retrying cannot fix it, and that the input has ended.
func checkStopped(t *testing.T, in *Input, st *stops, want string) {
	t.Helper()
	got := st.get()
	if len(got) != 1 || !strings.Contains(got[0].Error(), want) || !strings.Contains(got[0].Error(), "(retrying cannot fix this)") {
		t.Fatalf("handler got %v, want one error containing %q", got, want)
	}
	if _, _, err := in.ReadBatch(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
		t.Errorf("ReadBatch after the stop: %v, want ErrEndOfInput", err)
	}
	if err := in.Connect(context.Background()); !errors.Is(err, service.ErrEndOfInput) {
		t.Errorf("Connect after the stop: %v, want ErrEndOfInput", err)
	}
}

// withRole creates a login role with the given attributes and grants on
// db's tables, dropped again when t ends; it returns a DSN for it.
func withRole(t *testing.T, db *pgtest.DB, suffix, attrs, grants string) string {
	t.Helper()
	role := db.Name + "_" + suffix
	db.Exec(fmt.Sprintf("CREATE ROLE %s WITH LOGIN %s", role, attrs))
	if grants != "" {
		db.Exec(fmt.Sprintf(grants, role))
	}
	t.Cleanup(func() {
		db.Exec(fmt.Sprintf("DROP OWNED BY %s", role))
		db.Exec(fmt.Sprintf("DROP ROLE %s", role))
	})
	return strings.Replace(db.DSN, "postgres@", role+"@", 1)
}

// TestConnectPermanentErrors: a Connect error that retrying cannot fix,
// whether pg_cdc's own check found it or the server's SQLSTATE says so,
// ends the input and stops the stream with the error; transient ones (a
// refused connection) back off from retry.Min; without a fatal handler a
// permanent error is retried every retry.Max.
func TestConnectPermanentErrors(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL + "CREATE TABLE nothing (id int PRIMARY KEY); ALTER TABLE nothing REPLICA IDENTITY NOTHING")
	replicator := withRole(t, db, "repl", "REPLICATION", "GRANT SELECT ON orders TO %s")
	plain := withRole(t, db, "plain", "", "GRANT SELECT ON orders TO %s")
	db.Exec(fmt.Sprintf("CREATE PUBLICATION %s_norepl FOR TABLE orders", db.Name))
	yaml := func(dsn, slot, extra string) string {
		return fmt.Sprintf("dsn: %q\nslot_name: %s_%s\nstatus_interval: 100ms\nheartbeat_interval: 0s\n%s", dsn, db.Name, slot, extra)
	}
	orders := "tables: [ public.orders ]\n"
	for _, tc := range []struct {
		name      string
		yaml      string
		noHandler bool
		stops     string        // in the error the handler must get; "" for none
		wait      time.Duration // the ErrBackOff wait when it does not stop
		says      string        // in the ErrBackOff's message
	}{
		{name: "dsn that does not parse", yaml: yaml("host=127.0.0.1 port=notaport", "dsn", orders), stops: "pg_cdc: dsn: "},
		{name: "unknown database", yaml: yaml(strings.Replace(db.DSN, "/"+db.Name+"?", "/nosuchdb?", 1), "db", orders),
			stops: `database "nosuchdb" does not exist (SQLSTATE 3D000)`},
		{name: "unknown role", yaml: yaml(strings.Replace(db.DSN, "postgres@", "nosuchrole@", 1), "role", orders),
			stops: `role "nosuchrole" does not exist (SQLSTATE 28000)`},
		{name: "no such table", yaml: yaml(db.DSN, "table", "tables: [ public.nope ]\n"), stops: "table public.nope does not exist"},
		{name: "REPLICA IDENTITY NOTHING", yaml: yaml(db.DSN, "nothing", "tables: [ public.nothing ]\n"),
			stops: `ALTER TABLE "public"."nothing" REPLICA IDENTITY DEFAULT`},
		{name: "publication the role may not create", yaml: yaml(replicator, "pub", orders),
			stops: "(SQLSTATE 42501)); run as the tables' owner: CREATE PUBLICATION"},
		{name: "publication not created", yaml: yaml(db.DSN, "nopub", orders+"create_publication: false\n"),
			stops: "create_publication is false"},
		{name: "role without REPLICATION", yaml: yaml(plain, "norepl", orders), stops: "REPLICATION attribute"},
		{name: "slot not created", yaml: yaml(db.DSN, "noslot", orders+"create_slot: false\n"), stops: "create_slot is false"},
		{name: "connection refused", yaml: yaml(fmt.Sprintf("postgres://postgres@127.0.0.1:1/%s?sslmode=disable", db.Name), "refused", orders),
			wait: retry.Min, says: "connection refused (failure 1 in a row; retrying in 500ms"},
		{name: "REPLICA IDENTITY NOTHING, no handler", yaml: yaml(db.DSN, "nothing", "tables: [ public.nothing ]\n"), noHandler: true,
			wait: retry.Max, says: "REPLICA IDENTITY DEFAULT (or FULL) (retrying cannot fix this); retried every 30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, st := newStoppableInput(t, tc.yaml, tc.noHandler)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := in.Connect(ctx)
			if tc.stops != "" {
				if !errors.Is(err, service.ErrEndOfInput) {
					t.Fatalf("Connect: %v, want ErrEndOfInput", err)
				}
				checkStopped(t, in, st, tc.stops)
				return
			}
			var bo *service.ErrBackOff
			if !errors.As(err, &bo) || bo.Wait != tc.wait || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Connect: %v, want an ErrBackOff of %s saying %q", err, tc.wait, tc.says)
			}
			if got := st.get(); len(got) != 0 {
				t.Errorf("stopped with %v", got)
			}
		})
	}
}

// TestSessionPermanentErrors: errors of a running session that a restart
// from the slot would meet again stop the stream: a TRUNCATE under
// truncate: error (the slot is not confirmed past it), and a table the
// role may not SELECT for the snapshot (SQLSTATE 42501).
func TestSessionPermanentErrors(t *testing.T) {
	// readUntilEnd reads and acks until ReadBatch answers ErrEndOfInput,
	// connecting again after ErrNotConnected as Benthos would.
	readUntilEnd := func(t *testing.T, in *Input) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			b, ack, err := in.ReadBatch(ctx)
			switch {
			case errors.Is(err, service.ErrEndOfInput):
				return
			case errors.Is(err, service.ErrNotConnected):
				if err := in.Connect(ctx); errors.Is(err, service.ErrEndOfInput) {
					return
				}
			case err == nil && len(b) > 0:
				_ = ack(ctx, nil)
			}
		}
		t.Fatal("the input did not end")
	}
	t.Run("truncate", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
		in, st := newStoppableInput(t, streamOnly(db, ""), false)
		connect(t, in)
		start := confirmedFlush(t, db)
		db.Exec("TRUNCATE orders")
		readUntilEnd(t, in)
		checkStopped(t, in, st, "TRUNCATE of public.orders")
		if got := confirmedFlush(t, db); got != start {
			t.Fatalf("confirmed_flush_lsn moved past the TRUNCATE: %s → %s", start, got)
		}
	})
	t.Run("a table without primary key appears in the schema", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + fmt.Sprintf("CREATE PUBLICATION %s_slot FOR TABLES IN SCHEMA public", db.Name))
		in, st := newStoppableInput(t, baseYAML(db, "schema: public\nsnapshot: never\n"), false)
		connect(t, in)
		db.Exec("CREATE TABLE scratch (v text); INSERT INTO scratch VALUES ('x')")
		readUntilEnd(t, in)
		checkStopped(t, in, st, "table public.scratch, which appeared in schema public after the start, has no primary key")
	})
	t.Run("no SELECT for the snapshot", func(t *testing.T) {
		db := pgtest.New(t)
		db.Exec(ordersDDL + "INSERT INTO orders VALUES (1, 'new', 1, NULL)")
		dsn := withRole(t, db, "nosel", "REPLICATION", "")
		db.Exec(fmt.Sprintf("CREATE PUBLICATION %s_slot FOR TABLE orders", db.Name))
		yaml := fmt.Sprintf("dsn: %s\nslot_name: %s_slot\nstatus_interval: 100ms\nheartbeat_interval: 0s\ntables: [ public.orders ]\n", dsn, db.Name)
		in, st := newStoppableInput(t, yaml, false)
		if err := in.Connect(context.Background()); err != nil && !errors.Is(err, service.ErrEndOfInput) {
			t.Fatalf("Connect: %v", err)
		}
		readUntilEnd(t, in)
		checkStopped(t, in, st, "_nosel may not SELECT from table public.orders, which the snapshot reads (snapshot: initial). Run: GRANT SELECT ON")
		// refused before the slot was made: nothing holds WAL for a pipeline that cannot start
		if slots := db.QueryString(fmt.Sprintf("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%s_slot%%'", db.Name)); slots != "0" {
			t.Errorf("%s replication slots of %s_slot left behind by a start that failed on permissions", slots, db.Name)
		}
	})
}

func TestIsPermanent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{permanentf("slot %s does not exist", "s"), true},
		{fmt.Errorf("pg_cdc: %w", permanentf("wal_level is replica")), true},
		{fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01"}), true},
		{&pgconn.PgError{Code: "28000"}, true},
		{&pgconn.PgError{Code: "42501"}, true},
		{&pgconn.PgError{Code: "3D000"}, true},
		{&pgconn.PgError{Code: "55000"}, true},
		{&pgconn.PgError{Code: "57P01"}, false}, // admin_shutdown: the server restarts
		{&pgconn.PgError{Code: "57P03"}, false}, // cannot_connect_now: it is starting up
		{&pgconn.PgError{Code: "53300"}, false}, // too_many_connections
		{&pgconn.PgError{Code: "55006"}, false}, // object_in_use: a slot still held
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
	} {
		if got := isPermanent(tc.err); got != tc.want {
			t.Errorf("isPermanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestTerminatedWalsenderIsRetried: a walsender ended by the server
// (FATAL 57P01, as on a restart) is not a permanent error: with a fatal
// handler installed the input does not stop, reconnects from the slot and
// delivers what follows.
func TestTerminatedWalsenderIsRetried(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(ordersDDL)
	in, st := newStoppableInput(t, streamOnly(db, ""), false)
	connect(t, in)
	// Terminating before the walsender holds the slot would end nothing.
	waitSlotActive(t, db)
	// pg_terminate_backend waits until the backend is gone; one row, true.
	if got := db.QueryStrings(fmt.Sprintf("SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots WHERE slot_name = '%s' AND active", slotName(db))); len(got) != 1 || got[0] != "t" {
		t.Fatalf("terminating the walsender: %v, want [t]", got)
	}
	db.Exec("INSERT INTO orders VALUES (1, 'new', 1, NULL)")
	if e := readEvents(t, in, 1)[0]; e.Op != "insert" || e.Row["id"] != jsonNumber(1) {
		t.Fatalf("after the walsender was terminated: %+v", e)
	}
	if in.Failure() == nil || !strings.Contains(in.Failure().Error(), "SQLSTATE 57P01") {
		t.Errorf("the session did not fail with 57P01: %v", in.Failure())
	}
	if got := st.get(); len(got) != 0 {
		t.Fatalf("stopped with %v", got)
	}
}
