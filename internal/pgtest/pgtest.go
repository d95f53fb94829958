// Package pgtest gives tests a real PostgreSQL 15 server configured for
// logical replication, and a fresh database on it per test.
//
// One cluster is started per `go test` process, lazily on the first call to
// New: initdb into a temporary directory, wal_level=logical, a free
// loopback port, started with pg_ctl. Postgres refuses to run as root, so
// under root the server commands run as the postgres OS user (runuser), and
// the data directory is given to that user. The package's TestMain must
// call Run so that the cluster is stopped when the tests end.
//
// When the binaries (Debian's postgresql-15, BinDir) are missing, New skips
// the test, or fails it with REQUIRE_POSTGRES=1 (internal/testenv).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// BinDir is where Debian's postgresql-15 package installs the server
// binaries; BP_PG_BIN overrides it.
const BinDir = "/usr/lib/postgresql/15/bin"

// EnvRequire set to 1 turns the skip for missing binaries into a failure.
const EnvRequire = testenv.RequirePostgres

// Cluster is a running server.
type Cluster struct {
	Dir  string // data directory (also the Unix socket directory)
	Port int
	bin  string
	asPG bool // server commands run as the postgres OS user
}

var (
	once     sync.Once
	cluster  *Cluster
	startErr error
)

func binDir() string {
	if d := os.Getenv("BP_PG_BIN"); d != "" {
		return d
	}
	return BinDir
}

// Run runs the tests and stops the cluster if one was started: call it from
// TestMain as os.Exit(pgtest.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	if cluster != nil {
		cluster.stop()
	}
	return code
}

// Get returns the process's cluster, starting it on first use; it skips or
// fails t when that is impossible.
func Get(t testing.TB) *Cluster {
	t.Helper()
	if _, err := os.Stat(filepath.Join(binDir(), "initdb")); err != nil {
		testenv.Missingf(t, EnvRequire, "pgtest: no PostgreSQL server binaries in %s (apt-get install postgresql-15)", binDir())
		return nil
	}
	once.Do(func() { cluster, startErr = start() })
	if startErr != nil {
		t.Fatalf("pgtest: start PostgreSQL: %v", startErr)
	}
	return cluster
}

// command builds a server command, as the postgres user when running as root.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.asPG {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func start() (*Cluster, error) {
	c := &Cluster{bin: binDir(), asPG: os.Geteuid() == 0}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	if c.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres OS user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if out, err := c.command("initdb", "-D", dir, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "-U", "postgres").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	for range 3 { // a port taken between probe and bind: try another
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		c.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		conf := fmt.Sprintf("listen_addresses='127.0.0.1'\nport=%d\nunix_socket_directories='%s'\nwal_level=logical\n"+
			"max_wal_senders=20\nmax_replication_slots=40\nshared_buffers=128MB\nfsync=off\nsynchronous_commit=off\n"+
			"full_page_writes=off\nlogical_decoding_work_mem=64MB\nmax_connections=200\nwal_sender_timeout=60s\n", c.Port, dir)
		if err := c.writeConf(conf); err != nil {
			return nil, err
		}
		out, err := c.command("pg_ctl", "-D", dir, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			return c, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		lastErr = fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil, lastErr
}

// writeConf replaces postgresql.auto.conf (read after postgresql.conf, so
// its settings win); written as the server's user via the directory owner.
func (c *Cluster) writeConf(conf string) error {
	p := filepath.Join(c.Dir, "postgresql.auto.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		return err
	}
	if c.asPG {
		u, _ := user.Lookup("postgres")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return os.Chown(p, uid, gid)
	}
	return nil
}

func (c *Cluster) stop() {
	_ = c.command("pg_ctl", "-D", c.Dir, "-m", "immediate", "-w", "stop").Run()
	_ = os.RemoveAll(c.Dir)
}

// DSN returns a connection string for database db as the superuser.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// DB is a database created for one test.
type DB struct {
	t       testing.TB
	Cluster *Cluster
	Name    string
	DSN     string
}

// New creates a database for t on the process's cluster and drops it (with
// every replication slot of it) when t ends. It skips or fails t when no
// server can be started.
func New(t testing.TB) *DB {
	t.Helper()
	c := Get(t)
	if c == nil {
		return nil
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	admin := c.DSN("postgres")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	d := &DB{t: t, Cluster: c, Name: name, DSN: c.DSN(name)}
	t.Cleanup(func() { d.drop() })
	return d
}

// drop removes the database's slots (forgotten slots retain WAL) and the
// database itself.
func (d *DB) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.Cluster.DSN("postgres"))
	if err != nil {
		d.t.Errorf("pgtest: cleanup connect: %v", err)
		return
	}
	defer conn.Close(ctx)
	// Terminate walsenders and sessions first: an active slot cannot be dropped.
	_, _ = conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", d.Name)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 OR slot_name LIKE $2",
			d.Name, d.Name+"%")
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // a walsender still exiting holds its slot
	}
	if err != nil {
		d.t.Errorf("pgtest: drop slots of %s: %v", d.Name, err)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)"); err != nil {
		d.t.Errorf("pgtest: drop database %s: %v", d.Name, err)
	}
}

// Conn opens an ordinary connection to the database, closed when the test ends.
func (d *DB) Conn() *pgx.Conn {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.DSN)
	if err != nil {
		d.t.Fatalf("pgtest: connect %s: %v", d.Name, err)
	}
	d.t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// withConn runs f on a short-lived connection (60 s at most) and fails the
// test with f's error, naming sql.
func (d *DB) withConn(sql string, f func(ctx context.Context, conn *pgx.Conn) error) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.DSN)
	if err != nil {
		d.t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if err := f(ctx, conn); err != nil {
		d.t.Fatalf("pgtest: %s: %v", firstLine(sql), err)
	}
}

// Exec runs SQL statements (separated by semicolons, in one simple-protocol
// round trip, so in one implicit transaction) and fails the test on error.
func (d *DB) Exec(sql string) {
	d.t.Helper()
	d.withConn(sql, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.PgConn().Exec(ctx, sql).ReadAll()
		return err
	})
}

// QueryStrings runs a query and returns its rows as text (NULL as "NULL"),
// each row's columns joined by "|": the canonical form tests compare.
func (d *DB) QueryStrings(sql string) []string {
	d.t.Helper()
	var res *pgconn.Result
	d.withConn(sql, func(ctx context.Context, conn *pgx.Conn) error {
		res = conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		return res.Err
	})
	out := make([]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		cols := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				cols[i] = "NULL"
			} else {
				cols[i] = string(v)
			}
		}
		out = append(out, strings.Join(cols, "|"))
	}
	return out
}

// QueryString returns the single value of a one-row, one-column query.
func (d *DB) QueryString(sql string) string {
	d.t.Helper()
	rows := d.QueryStrings(sql)
	if len(rows) != 1 {
		d.t.Fatalf("pgtest: %s: %d rows, want 1", firstLine(sql), len(rows))
	}
	return rows[0]
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
