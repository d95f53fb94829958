"""Computes the expected table contents of a write spec, as sorted canonical JSON lines, without Paimon.

    .venv/bin/python tools/spec_expect.py SPEC.json

Simulates the commits: append adds rows; overwrite with a partition map naming every partition key deletes
that partition (values compared as Paimon's partition strings, null = the default partition); with a partial or
empty map and Paimon's default dynamic-partition-overwrite=true only the full partitions that receive new rows
(and match the map) are replaced; an unpartitioned overwrite replaces everything. alter adds (null for old
rows), renames, drops columns and changes types (values kept); expire, compact and consumer change nothing. Values are
normalized to the canonical form by the final column type (README "Canonical JSON"), independently of the
Java and pypaimon code paths.
"""
import base64
import datetime
import decimal
import json
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import canonical  # noqa: E402
from paimon_py import parse_type  # noqa: E402
from pypaimon.schema.data_types import ArrayType, AtomicType, MapType, MultisetType, RowType  # noqa: E402


def _ts(text, ltz):
    s = text.replace(" ", "T")
    if s.endswith("Z"):
        s = s[:-1]
    main, _, frac = s.partition(".")
    datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S")
    return canonical.quote(main + "." + (frac + "000000000")[:9] + ("Z" if ltz else ""))


def norm(v, t):
    if v is None:
        return "null"
    if isinstance(t, ArrayType):
        return "[" + ",".join(norm(x, t.element) for x in v) + "]"
    if isinstance(t, (MapType, MultisetType)):
        kt = t.key if isinstance(t, MapType) else t.element
        vt = t.value if isinstance(t, MapType) else AtomicType("INT", False)
        pairs = sorted((norm(k, kt), norm(x, vt)) for k, x in v)
        return "[" + ",".join("[" + k + "," + x + "]" for k, x in pairs) + "]"
    if isinstance(t, RowType):
        if isinstance(v, list):
            v = {f.name: x for f, x in zip(t.fields, v)}
        return "{" + ",".join(canonical.quote(f.name) + ":" + norm(v.get(f.name), f.type) for f in t.fields) + "}"
    name = t.type.upper()
    if name == "BOOLEAN":
        return "true" if v else "false"
    if name in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):
        return str(int(v))
    if name == "FLOAT":
        return canonical.format_float(float(canonical.parse_float32(str(v))), True)
    if name == "DOUBLE":
        return canonical.format_float(float(str(v)))
    if name.startswith("DECIMAL"):
        scale = int(name.split(",")[1].rstrip(")")) if "," in name else 0
        q = Decimal(str(v)).quantize(Decimal(1).scaleb(-scale), context=decimal.Context(prec=100))
        return canonical.quote(format(q, "f"))
    if name.startswith(("CHAR", "VARCHAR", "STRING")):
        return canonical.quote(v)
    if name.startswith(("BINARY", "VARBINARY", "BYTES")):
        return canonical.quote(base64.b64encode(base64.b64decode(v)).decode("ascii"))
    if name == "DATE":
        return canonical.quote(datetime.date.fromisoformat(v).isoformat() if isinstance(v, str) else
                               (datetime.date(1970, 1, 1) + datetime.timedelta(days=v)).isoformat())
    if name.startswith("TIME") and not name.startswith("TIMESTAMP"):
        h, m, s = v.split(":")
        sec, _, frac = s.partition(".")
        return canonical.quote("%02d:%02d:%02d.%s" % (int(h), int(m), int(sec), (frac + "000")[:3]))
    if name.startswith("TIMESTAMP"):
        return _ts(v, "LOCAL TIME ZONE" in name or name.startswith("TIMESTAMP_LTZ"))
    raise ValueError("no canonical form for %s" % name)


def _part_string(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def expect(spec):
    cols = [(f["name"], parse_type(f["type"])) for f in spec.get("schema", [])]
    pkeys = spec.get("partitionKeys", [])
    rows = []
    for c in spec.get("commits", []):
        kind = c["kind"]
        if kind == "append":
            rows.extend(dict(r) for r in c["rows"])
        elif kind == "overwrite":
            new = [dict(r) for r in c["rows"]]
            part = c.get("partition", {})
            dynamic = str(spec.get("options", {}).get("dynamic-partition-overwrite", "true")).lower() == "true"

            def hit(r):
                return all(_part_string(r.get(k)) == (None if v is None else str(v)) for k, v in part.items())

            def tup(r):
                return tuple(_part_string(r.get(k)) for k in pkeys)
            if not pkeys:
                rows = []
            elif dynamic and set(part) != set(pkeys):
                # dynamic partition overwrite: only the full partitions that receive new rows are replaced
                touched = {tup(r) for r in new}
                rows = [r for r in rows if not (hit(r) and tup(r) in touched)]
            else:
                rows = [r for r in rows if not hit(r)]
            rows.extend(new)
        elif kind == "alter":
            for a in c.get("addColumns", []):
                cols.append((a["name"], parse_type(a["type"])))
            for rn in c.get("renameColumns", []):
                cols = [(rn["to"] if n == rn["from"] else n, t) for n, t in cols]
                for r in rows:
                    if rn["from"] in r:
                        r[rn["to"]] = r.pop(rn["from"])
            for d in c.get("dropColumns", []):
                cols = [(n, t) for n, t in cols if n != d]
                for r in rows:
                    r.pop(d, None)
            for u in c.get("updateColumnTypes", []):
                cols = [(n, parse_type(u["type"]) if n == u["name"] else t) for n, t in cols]
        elif kind in ("expire", "compact", "consumer"):
            pass
        else:
            raise ValueError("unknown commit kind %s" % kind)
    lines = ["{" + ",".join(canonical.quote(n) + ":" + norm(r.get(n), t) for n, t in cols) + "}" for r in rows]
    return sorted(lines)


def main(argv):
    with open(argv[0], encoding="utf-8") as fh:
        spec = json.load(fh, parse_float=Decimal)
    for line in expect(spec):
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main(sys.argv[1:]))
