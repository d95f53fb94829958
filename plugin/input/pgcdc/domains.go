package pgcdc

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// domainResolver maps user-defined types to what typeOf knows: a domain
// to its base type (recursively; the domain's own typmod when the column
// has none), an array of domains to an array of the base type. pgoutput
// sends a domain column with the domain's OID and prints its values with
// the base type's output function, so typing it by its base keeps an
// `int` domain an INT column instead of text. Enums, composites and
// ranges stay unknown, i.e. text. Both the snapshot and the stream ask
// through one resolver (one cache), so they type a column alike.
type domainResolver struct {
	mu    sync.Mutex
	cache map[uint32]resolvedType
}

type resolvedType struct {
	oid    uint32
	typmod int32
	array  bool // an array whose element is oid
}

func newDomainResolver() *domainResolver { return &domainResolver{cache: map[uint32]resolvedType{}} }

// builtin reports whether typeOf knows oid without a lookup.
func builtin(oid uint32) bool {
	if _, ok := arrayElem[oid]; ok {
		return true
	}
	return oid < 16384 // FirstNormalObjectId: built-in types
}

// resolve returns the type to decide the column by; conn is used for the
// first lookup of each user-defined OID (the caller serialises its use).
func (r *domainResolver) resolve(ctx context.Context, conn *pgx.Conn, oid uint32, typmod int32) (uint32, int32, error) {
	if builtin(oid) {
		return oid, typmod, nil
	}
	r.mu.Lock()
	rt, ok := r.cache[oid]
	r.mu.Unlock()
	if !ok {
		var err error
		if rt, err = lookupType(ctx, conn, oid, 0); err != nil {
			return 0, 0, fmt.Errorf("look up type %d: %w", oid, err)
		}
		r.mu.Lock()
		r.cache[oid] = rt
		r.mu.Unlock()
	}
	if typmod < 0 {
		typmod = rt.typmod
	}
	if rt.array {
		for arr, elem := range arrayElem {
			if elem == rt.oid {
				return arr, typmod, nil
			}
		}
		return oid, typmod, nil // an array of a type without a known array: text
	}
	return rt.oid, typmod, nil
}

func lookupType(ctx context.Context, conn *pgx.Conn, oid uint32, depth int) (resolvedType, error) {
	var typtype string
	var base, elem uint32
	var typmod int32
	err := conn.QueryRow(ctx, "SELECT typtype::text, typbasetype, typtypmod, typelem FROM pg_type WHERE oid = $1", oid).Scan(&typtype, &base, &typmod, &elem)
	if err == pgx.ErrNoRows {
		return resolvedType{oid: oid, typmod: -1}, nil
	}
	if err != nil || depth > 8 {
		return resolvedType{}, err
	}
	switch {
	case typtype == "d":
		if builtin(base) {
			return resolvedType{oid: base, typmod: typmod}, nil
		}
		return lookupType(ctx, conn, base, depth+1)
	case elem != 0 && typtype == "b": // an array type (of a user type)
		e, err := lookupType(ctx, conn, elem, depth+1)
		if err != nil {
			return e, err
		}
		if !builtin(e.oid) || e.array {
			return resolvedType{oid: oid, typmod: -1}, nil
		}
		return resolvedType{oid: e.oid, typmod: e.typmod, array: true}, nil
	}
	return resolvedType{oid: oid, typmod: -1}, nil
}
