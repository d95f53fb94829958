"""pypaimon interop oracle: the same read/plan/write/snapshots roles as the Java oracle (see ../README.md).

    python paimon_py.py read      --warehouse W --database D --table T [--snapshot N] [--filter EXPR] [--no-exact]
    python paimon_py.py plan      --warehouse W --database D --table T [--snapshot N] [--filter EXPR]
    python paimon_py.py write     --warehouse W --database D --table T --spec FILE
    python paimon_py.py snapshots --warehouse W --database D --table T
    python paimon_py.py version
    python paimon_py.py batch       (stdin: one JSON array of arguments per line, see cmd_batch)

Rows are canonical JSON lines (canonical.py), sorted. Errors: one line "paimon-py: ..." on stderr, exit 1
(2 for usage). Set PAIMON_INTEROP_TRACE=1 for a traceback.
"""

import argparse
import datetime
import decimal
import json
import os
import re
import sys
import traceback

import pyarrow as pa
import pyarrow.compute as pc

import batch
import canonical

from pypaimon import CatalogFactory, Schema
from pypaimon.common.predicate_builder import PredicateBuilder
from pypaimon.schema.data_types import (ArrayType, AtomicType, DataField, MapType, MultisetType,
                                        PyarrowFieldParser, RowType)
from pypaimon.schema.schema_change import SchemaChange

DEFAULT_COMMIT_USER = "interop-python"


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- types

class _TypeParser:
    """Paimon type strings -> pypaimon DataType (the grammar of TypeParser.java)."""

    def __init__(self, s):
        self.s = s
        self.pos = 0

    def parse(self):
        t = self.type()
        self.space()
        if self.pos != len(self.s):
            raise ValueError("type %s: unexpected text at %d" % (self.s, self.pos))
        return t

    def space(self):
        while self.pos < len(self.s) and self.s[self.pos].isspace():
            self.pos += 1

    def word(self):
        m = re.compile(r"[A-Za-z0-9_]*").match(self.s, self.pos)
        self.pos = m.end()
        return m.group(0)

    def expect(self, c):
        self.space()
        if not self.s.startswith(c, self.pos):
            raise ValueError("type %s: expected %r at %d" % (self.s, c, self.pos))
        self.pos += 1

    def not_null(self):
        save = self.pos
        self.space()
        w = self.word().upper()
        if w == "NOT":
            self.space()
            if self.word().upper() != "NULL":
                raise ValueError("type %s: expected NULL after NOT" % self.s)
            return False
        if w != "NULL":
            self.pos = save
        return True

    def type(self):
        self.space()
        start = self.pos
        w = self.word().upper()
        if w in ("ARRAY", "MULTISET"):
            self.expect("<")
            e = self.type()
            self.expect(">")
            nullable = self.not_null()
            return ArrayType(nullable, e) if w == "ARRAY" else MultisetType(nullable, e)
        if w == "MAP":
            self.expect("<")
            k = self.type()
            self.expect(",")
            v = self.type()
            self.expect(">")
            return MapType(self.not_null(), k, v)
        if w == "ROW":
            self.space()
            close = ")" if self.s[self.pos] == "(" else ">"
            self.pos += 1
            fields = []
            self.space()
            if self.s.startswith(close, self.pos):
                self.pos += 1
                return RowType(self.not_null(), fields)
            while True:
                self.space()
                if self.s[self.pos] == "`":
                    end = self.s.index("`", self.pos + 1)
                    name = self.s[self.pos + 1:end]
                    self.pos = end + 1
                else:
                    name = self.word()
                self.space()
                if self.s.startswith(":", self.pos):
                    self.pos += 1
                ft = self.type()
                self.space()
                desc = None
                if self.s.startswith("'", self.pos):
                    end = self.s.index("'", self.pos + 1)
                    desc = self.s[self.pos + 1:end]
                    self.pos = end + 1
                fields.append(DataField(len(fields), name, ft, desc))
                self.space()
                if self.s.startswith(",", self.pos):
                    self.pos += 1
                    continue
                self.expect(close)
                return RowType(self.not_null(), fields)
        # atomic: up to the next top-level ',' or '>'
        self.pos = start
        depth = 0
        while self.pos < len(self.s):
            c = self.s[self.pos]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif depth == 0 and c in ",>":
                break
            self.pos += 1
        text = re.sub(r"\s+", " ", self.s[start:self.pos].strip())
        nullable = True
        for suffix in (" NOT NULL", " NULL"):
            if text.upper().endswith(suffix):
                nullable = suffix == " NULL"
                text = text[:-len(suffix)]
        return AtomicType(_normalize_atomic(text), nullable)


def _normalize_atomic(text):
    """pypaimon compares atomic type names textually: write them as Java's asSQLString does."""
    u = text.upper()
    u = re.sub(r"\s*,\s*", ", ", u)
    u = re.sub(r"\(\s*", "(", u)
    u = re.sub(r"\s*\)", ")", u)
    if u == "INTEGER":
        return "INT"
    if u == "TIMESTAMP":
        return "TIMESTAMP(6)"
    if u == "TIMESTAMP WITH LOCAL TIME ZONE" or u == "TIMESTAMP_LTZ":
        return "TIMESTAMP(6) WITH LOCAL TIME ZONE"
    m = re.fullmatch(r"TIMESTAMP_LTZ\((\d)\)", u)
    if m:
        return "TIMESTAMP(%s) WITH LOCAL TIME ZONE" % m.group(1)
    if u in ("DECIMAL", "NUMERIC", "DEC"):
        return "DECIMAL(10, 0)"
    if u == "TIME":
        return "TIME(0)"
    return u


def parse_type(s):
    return _TypeParser(s).parse()


def _reassign_ids(t, counter):
    """Nested ROW field ids as Java's Schema.Builder gives them: depth first, after the owning column's id."""
    if isinstance(t, RowType):
        for f in t.fields:
            counter[0] += 1
            f.id = counter[0]
            _reassign_ids(f.type, counter)
    elif isinstance(t, (ArrayType, MultisetType)):
        _reassign_ids(t.element, counter)
    elif isinstance(t, MapType):
        _reassign_ids(t.key, counter)
        _reassign_ids(t.value, counter)


def schema_fields(spec_fields):
    """pypaimon DataFields for the spec's schema, with Java's field id assignment."""
    counter = [-1]
    out = []
    for f in spec_fields:
        counter[0] += 1
        fid = counter[0]
        t = parse_type(f["type"])
        _reassign_ids(t, counter)
        out.append(DataField(fid, f["name"], t, f.get("description")))
    return out


def _arrow_type(paimon_type):
    if isinstance(paimon_type, MultisetType):
        return pa.map_(pa.field("key", _arrow_type(paimon_type.element), nullable=False),
                       pa.field("value", pa.int32(), nullable=False))
    return PyarrowFieldParser.from_paimon_type(paimon_type)


# ---------------------------------------------------------------- filters

_TOKEN = re.compile(r"\s*(?:(?P<s>'(?:[^']|'')*')|(?P<q>`[^`]*`)|(?P<n>-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
                    r"|(?P<w>[A-Za-z_][A-Za-z0-9_]*)|(?P<p><=|>=|<>|!=|[=<>(),]))")


def _lex(expr):
    toks, pos = [], 0
    expr = expr.rstrip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise ValueError("filter %s: unexpected text at %d" % (expr, pos))
        kind = m.lastgroup
        text = m.group(kind)
        if kind == "s":
            text = text[1:-1].replace("''", "'")
        elif kind == "q":
            kind, text = "w", text[1:-1]
        toks.append((kind, text))
        pos = m.end()
    return toks


def _python_literal(field, kind, text):
    """A literal as pypaimon compares it with stats (the Python value of its BinaryRow decoder)."""
    t = field.type
    if kind == "w" and text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    name = t.type.upper() if isinstance(t, AtomicType) else ""
    if name in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):
        return int(text)
    if name in ("FLOAT", "DOUBLE"):
        return float(text)
    if name.startswith("DECIMAL"):
        return decimal.Decimal(text)
    if name == "DATE":
        return datetime.date.fromisoformat(text)
    if name.startswith("TIMESTAMP"):
        return datetime.datetime.fromisoformat(text.rstrip("Z").replace(" ", "T")[:26])
    if name in ("BYTES",) or name.startswith("BINARY") or name.startswith("VARBINARY"):
        import base64
        return base64.b64decode(text)
    return text


def _json_literal(kind, text):
    if kind == "n":
        return int(text) if re.fullmatch(r"-?\d+", text) else text
    if kind == "w" and text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    return text


def parse_filter(expr, fields, schema):
    """Returns (pypaimon Predicate, pyarrow Expression) for the --filter language of Filters.java."""
    toks = _lex(expr)
    pos = [0]
    builder = PredicateBuilder(fields)
    by_name = {f.name: f for f in fields}

    def peek(kind=None, text=None):
        if pos[0] >= len(toks):
            return False
        k, t = toks[pos[0]]
        return (kind is None or k == kind) and (text is None or t.upper() == text)

    def take():
        if pos[0] >= len(toks):
            raise ValueError("filter %s: unexpected end" % expr)
        pos[0] += 1
        return toks[pos[0] - 1]

    def expect(kind, text):
        if not peek(kind, text):
            raise ValueError("filter %s: expected %s" % (expr, text))
        pos[0] += 1

    def literal(field):
        k, t = take()
        if k not in ("s", "n", "w"):
            raise ValueError("filter %s: bad literal %s" % (expr, t))
        return _python_literal(field, k, t), _json_literal(k, t)

    preds, exprs = [], []
    while True:
        k, name = take()
        if k != "w" or name not in by_name:
            raise ValueError("filter %s: no column %s" % (expr, name))
        f = by_name[name]
        col = pc.field(name)
        if peek("w", "IS"):
            take()
            neg = peek("w", "NOT")
            if neg:
                take()
            expect("w", "NULL")
            preds.append(builder.is_not_null(name) if neg else builder.is_null(name))
            exprs.append(col.is_valid() if neg else col.is_null())
        else:
            neg = peek("w", "NOT")
            if neg:
                take()
            if peek("w", "IN"):
                take()
                expect("p", "(")
                lits = [literal(f)]
                while peek("p", ","):
                    take()
                    lits.append(literal(f))
                expect("p", ")")
                values = [x[0] for x in lits]
                arr = canonical.build([x[1] for x in lits], schema.field(name).type)
                preds.append(builder.is_not_in(name, values) if neg else builder.is_in(name, values))
                e = col.isin(arr)
                exprs.append(~e & col.is_valid() if neg else e)
            else:
                k2, op = take()
                lit, js = literal(f)
                scalar = canonical.build([js], schema.field(name).type)[0]
                table = {
                    "=": (builder.equal, lambda: col == scalar),
                    "!=": (builder.not_equal, lambda: col != scalar),
                    "<>": (builder.not_equal, lambda: col != scalar),
                    "<": (builder.less_than, lambda: col < scalar),
                    "<=": (builder.less_or_equal, lambda: col <= scalar),
                    ">": (builder.greater_than, lambda: col > scalar),
                    ">=": (builder.greater_or_equal, lambda: col >= scalar),
                }
                if k2 != "p" or op not in table:
                    raise ValueError("filter %s: unknown operator %s" % (expr, op))
                preds.append(table[op][0](name, lit))
                e = table[op][1]()
                if pa.types.is_floating(schema.field(name).type) and op in (">", ">=", "!=", "<>"):
                    # Java's Predicate.test compares with Float/Double.compareTo: NaN is above everything
                    e = e | pc.is_nan(col)
                exprs.append(e)
        if pos[0] >= len(toks):
            break
        expect("w", "AND")
    pred = preds[0] if len(preds) == 1 else PredicateBuilder.and_predicates(preds)
    arrow_expr = exprs[0]
    for e in exprs[1:]:
        arrow_expr = arrow_expr & e
    return pred, arrow_expr


# ---------------------------------------------------------------- commands

def _catalog(args):
    return CatalogFactory.create({"warehouse": os.path.abspath(args.warehouse)})


def _table(args):
    t = _catalog(args).get_table("%s.%s" % (args.database, args.table))
    if getattr(args, "snapshot", None) is not None:
        t = t.copy({"scan.snapshot-id": str(args.snapshot)})
    return t


def cmd_read(args, out):
    table = _table(args)
    rb = table.new_read_builder()
    arrow_expr = None
    if args.filter:
        schema = PyarrowFieldParser.from_paimon_schema(table.fields)
        pred, arrow_expr = parse_filter(args.filter, table.fields, schema)
        rb = rb.with_filter(pred)
    splits = rb.new_scan().plan().splits()
    data = rb.new_read().to_arrow(splits)
    if data is None:
        data = PyarrowFieldParser.from_paimon_schema(table.fields).empty_table()
    if arrow_expr is not None and not args.no_exact:
        data = data.filter(arrow_expr)
    for line in canonical.table_lines(data):
        out.write(line + "\n")


def cmd_plan(args, out):
    table = _table(args)
    rb = table.new_read_builder()
    if args.filter:
        schema = PyarrowFieldParser.from_paimon_schema(table.fields)
        rb = rb.with_filter(parse_filter(args.filter, table.fields, schema)[0])
    lines = []
    for s in rb.new_scan().plan().splits():
        for f in s.files:
            values = list(getattr(s.partition, "values", []) or [])
            part = {k: _plain(v) for k, v in zip(table.partition_keys, values)}
            lines.append(json.dumps({"partition": part, "bucket": s.bucket, "file": f.file_name,
                                     "rowCount": f.row_count, "level": f.level, "schemaId": f.schema_id},
                                    ensure_ascii=False, separators=(",", ":")))
    for line in sorted(lines):
        out.write(line + "\n")


def _plain(v):
    """A partition value from pypaimon's BinaryRow decoder, close to the canonical form (plan output only)."""
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        import base64
        return base64.b64encode(v).decode("ascii")
    return v


def cmd_snapshots(args, out):
    table = _table(args)
    snaps = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    for s in snaps:
        out.write(json.dumps({"id": s.id, "schemaId": s.schema_id, "kind": s.commit_kind,
                              "totalRecordCount": s.total_record_count, "deltaRecordCount": s.delta_record_count,
                              "commitUser": s.commit_user, "commitIdentifier": s.commit_identifier,
                              "timeMillis": s.time_millis}) + "\n")


def _rows_table(table, rows):
    fields = table.fields
    schema = pa.schema([pa.field(f.name, _arrow_type(f.type), nullable=f.type.nullable) for f in fields])
    return canonical.build_table(rows, schema)


def _next_identifier(table, user):
    sm = table.snapshot_manager()
    latest = sm.get_latest_snapshot()
    if latest is None:
        return 1
    for i in range(latest.id, 0, -1):
        try:
            s = sm.get_snapshot_by_id(i)
        except Exception:
            break
        if s is None:
            break
        if s.commit_user == user:
            return s.commit_identifier + 1
    return 1


def cmd_write(args, out):
    with open(args.spec, encoding="utf-8") as fh:
        spec = json.load(fh)
    allowed = {"description", "schema", "partitionKeys", "primaryKeys", "options", "commitUser", "commits", "filters",
               "expectJavaSnapshots"}
    extra = set(spec) - allowed
    if extra:
        raise ValueError("spec: unknown keys %s" % sorted(extra))
    catalog = _catalog(args)
    ident = "%s.%s" % (args.database, args.table)
    user = spec.get("commitUser", DEFAULT_COMMIT_USER)
    try:
        catalog.get_table(ident)
        exists = True
    except Exception:
        exists = False
    if not exists:
        fields = schema_fields(spec.get("schema", []))
        if not fields:
            raise ValueError("table %s does not exist and the spec has no schema" % ident)
        catalog.create_database(args.database, True)
        catalog.create_table(ident, Schema(fields=fields, partition_keys=spec.get("partitionKeys", []),
                                           primary_keys=spec.get("primaryKeys", []),
                                           options={k: str(v) for k, v in spec.get("options", {}).items()}),
                             False)
    for step, c in enumerate(spec.get("commits", [])):
        kind = c.get("kind")
        table = catalog.get_table(ident)
        detail = {}
        try:
            if kind == "append":
                data = _rows_table(table, c.get("rows", []))
                ident_no = _next_identifier(table, user)
                wb = table.new_stream_write_builder()._with_commit_user(user)
                w = wb.new_write()
                cm = wb.new_commit()
                w.write_arrow(data)
                cm.commit(w.prepare_commit(ident_no), ident_no)
                w.close()
                cm.close()
                detail = {"rows": data.num_rows, "commitIdentifier": ident_no}
            elif kind == "overwrite":
                data = _rows_table(table, c.get("rows", []))
                default = table.options.partition_default_name() if hasattr(
                    table.options, "partition_default_name") else "__DEFAULT_PARTITION__"
                part = {k: (default if v is None else str(v)) for k, v in c.get("partition", {}).items()}
                wb = table.new_batch_write_builder().overwrite(part)
                w = wb.new_write()
                cm = wb.new_commit()
                w.write_arrow(data)
                cm.commit(w.prepare_commit())
                w.close()
                cm.close()
                detail = {"rows": data.num_rows}
            elif kind == "alter":
                changes = []
                for a in c.get("addColumns", []):
                    changes.append(SchemaChange.add_column(a["name"], parse_type(a["type"]), a.get("description")))
                for r in c.get("renameColumns", []):
                    changes.append(SchemaChange.rename_column(r["from"], r["to"]))
                for d in c.get("dropColumns", []):
                    changes.append(SchemaChange.drop_column(d))
                for u in c.get("updateColumnTypes", []):
                    changes.append(SchemaChange.update_column_type(u["name"], parse_type(u["type"])))
                for k, v in c.get("setOptions", {}).items():
                    changes.append(SchemaChange.set_option(k, str(v)))
                for k in c.get("removeOptions", []):
                    changes.append(SchemaChange.remove_option(k))
                catalog.alter_table(ident, changes, False)
            elif kind == "consumer":
                from pypaimon.consumer.consumer import Consumer
                table.consumer_manager().reset_consumer(c["id"], Consumer(c["nextSnapshot"]))
            else:
                raise ValueError("commit kind %r is not supported by pypaimon (Java only: expire, compact)" % kind)
        except Exception as e:
            raise RuntimeError("commit %d (%s): %s" % (step, kind, e)) from e
        latest = catalog.get_table(ident).snapshot_manager().get_latest_snapshot()
        rec = {"step": step, "kind": kind, "snapshot": latest.id if latest else None}
        rec.update(detail)
        out.write(json.dumps(rec) + "\n")


def cmd_version(args, out):
    import duckdb
    import pypaimon
    out.write(json.dumps({"pypaimon": getattr(pypaimon, "__version__", None) or _dist_version("pypaimon"),
                          "pyarrow": pa.__version__, "duckdb": duckdb.__version__,
                          "python": sys.version.split()[0]}) + "\n")


def _dist_version(name):
    from importlib.metadata import version
    return version(name)


def cmd_batch(args, out):
    """One process for many commands (batch.py)."""
    batch.serve(_parser, _COMMANDS, out, _describe)


def _describe(e):
    msg = "%s: %s" % (type(e).__name__, e)
    cause = e.__cause__
    while cause is not None:
        msg += " <- %s: %s" % (type(cause).__name__, cause)
        cause = cause.__cause__
    return msg.replace("\n", " ")


def _parser():
    p = argparse.ArgumentParser(prog="paimon_py.py")
    sub = p.add_subparsers(dest="cmd")
    for name in ("read", "plan", "write", "snapshots"):
        s = sub.add_parser(name)
        s.add_argument("--warehouse", required=True)
        s.add_argument("--database", required=True)
        s.add_argument("--table", required=True)
        if name in ("read", "plan"):
            s.add_argument("--snapshot", type=int)
            s.add_argument("--filter")
        if name == "read":
            s.add_argument("--no-exact", action="store_true")
        if name == "write":
            s.add_argument("--spec", required=True)
    sub.add_parser("version")
    sub.add_parser("batch")
    return p


_COMMANDS = {"read": cmd_read, "plan": cmd_plan, "write": cmd_write, "snapshots": cmd_snapshots,
             "version": cmd_version, "batch": cmd_batch}


def main(argv):
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.cmd is None:
        p.print_usage(sys.stderr)
        return 2
    out = sys.stdout
    try:
        _COMMANDS[args.cmd](args, out)
    except Exception as e:  # noqa: BLE001 - one clear line for the driver
        if os.environ.get("PAIMON_INTEROP_TRACE"):
            traceback.print_exc()
        sys.stderr.write("paimon-py: %s: %s\n" % (args.cmd, _describe(e)))
        return 1
    out.flush()
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main(sys.argv[1:]))
