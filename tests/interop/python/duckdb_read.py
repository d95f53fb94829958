"""Prints the rows of Parquet data files as canonical JSON lines (sorted), read by DuckDB, not by Paimon.

    python duckdb_read.py [--schema] FILE...

Each file is read on its own (files of different schema ids may differ) with DuckDB's read_parquet in the
UTC time zone and without Hive partitioning (Paimon files hold the partition columns themselves; DuckDB
would otherwise override them from the key=value directories, e.g. with "__DEFAULT_PARTITION__"), fetched
as Arrow and rendered by canonical.py from the Parquet/Arrow types alone: a timestamp with
isAdjustedToUTC=true is printed as an LTZ value (UTC, "Z" suffix). --schema prints, per file, the column
names and DuckDB types instead of rows. Known limit: DuckDB reads INT96 (Java's TIMESTAMP(9)) into
microseconds without the UTC flag.
"""

import json
import sys

import duckdb

import canonical


def main(argv):
    show_schema = False
    files = []
    for a in argv:
        if a == "--schema":
            show_schema = True
        elif a.startswith("-"):
            sys.stderr.write("usage: duckdb_read.py [--schema] FILE...\n")
            return 2
        else:
            files.append(a)
    if not files:
        sys.stderr.write("usage: duckdb_read.py [--schema] FILE...\n")
        return 2
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    lines = []
    for f in files:
        try:
            rel = con.sql("SELECT * FROM read_parquet('%s', hive_partitioning = false)" % f.replace("'", "''"))
            if show_schema:
                cols = [[n, str(t)] for n, t in zip(rel.columns, rel.types)]
                sys.stdout.write(json.dumps({"file": f, "columns": cols}, ensure_ascii=False) + "\n")
                continue
            table = rel.to_arrow_table()
        except Exception as e:  # noqa: BLE001
            sys.stderr.write("duckdb-read: %s: %s: %s\n" % (f, type(e).__name__, str(e).replace("\n", " ")))
            return 1
        lines.extend(canonical.table_lines(table))
    lines.sort()
    for line in lines:
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main(sys.argv[1:]))
