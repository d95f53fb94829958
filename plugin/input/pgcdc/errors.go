package pgcdc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// permanentError marks an error that retrying cannot fix: a check of
// Connect that failed (a DSN that does not parse, a table without a
// primary key or with REPLICA IDENTITY NOTHING, wal_level not logical, a
// server older than 13, a missing publication or slot that may not be
// created, an invalidated slot) or a TRUNCATE under truncate: error, which
// the slot delivers again on every restart. Its message is the wrapped
// error's: it says what to change.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// permanentf returns a permanentError of fmt.Errorf(format, a...).
func permanentf(format string, a ...any) error {
	return permanentError{fmt.Errorf(format, a...)}
}

// SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html)
// of server errors that retrying cannot fix.
const (
	// Class 28, invalid authorization specification: a wrong password, an
	// unknown role, no pg_hba.conf line for the connection.
	sqlStateClassAuthorization = "28"
	// insufficient_privilege: a role without REPLICATION starting a
	// walsender, CREATE PUBLICATION by a role that does not own the tables,
	// SELECT on a table without the grant.
	sqlStateInsufficientPrivilege = "42501"
	// invalid_catalog_name: the DSN's database does not exist.
	sqlStateInvalidCatalogName = "3D000"
	// object_not_in_prerequisite_state: START_REPLICATION on a slot that
	// was invalidated ("can no longer get changes from replication slot"),
	// logical decoding with wal_level below logical.
	sqlStateNotInPrerequisiteState = "55000"
)

// isPermanent reports whether err, from Connect or a session, is one that
// retrying cannot fix: a permanentError, or a server error whose SQLSTATE
// says so (above). Everything else is worth retrying: refused connections
// and time-outs, a server shutting down or starting up (57P01, 57P03), too
// many connections (53300), a slot still held by a walsender that is about
// to exit (55006), a standby in recovery that may be promoted (0A000).
func isPermanent(err error) bool {
	if errors.As(err, new(permanentError)) {
		return true
	}
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	switch pg.Code {
	case sqlStateInsufficientPrivilege, sqlStateInvalidCatalogName, sqlStateNotInPrerequisiteState:
		return true
	}
	return strings.HasPrefix(pg.Code, sqlStateClassAuthorization)
}
