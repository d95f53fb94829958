"""pypaimon in the peers section of the benchmark report (tests/bench/peers.go).

    python peer_bench.py write --warehouse W --rows N [--partitions P] [--database D] [--table T]
                               [--dataset payments|unique]
    python peer_bench.py read  --warehouse W --database D --table T

write builds rows 1..N of the payment event of internal/paymentevent in a pyarrow table (every value derived
from n exactly as its Row does, or with --dataset unique its UniqueRow: see unique_table), creates an append table with pypaimon's default options (bucket -1,
parquet, zstd level 1) and times one batch write_arrow and commit of it. read times a full read (plan and
to_arrow) of a table. Before the clock starts each does the same work once untimed (a write of a tenth of
the rows into a table of its own, a full read of the table), as the Java side does. Each prints one JSON line: the rows, the wall seconds and the CPU seconds of the
whole process (time.process_time: every thread, Arrow's included) over the timed part. Errors: one line
"peer-bench: ..." on stderr, exit 1 (2 for usage).
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pypaimon import CatalogFactory, Schema

COUNTRIES = ["DE", "FR", "US", "GB", "JP", "BR", "IN", "ES", "NL", "CA"]
METHODS = ["card", "paypal", "sepa", "apple_pay"]
EPOCH_MICROS = 1767225600000000  # 2026-01-01T00:00:00Z; event n happens n ms later


def arrow_schema():
    return pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("user_id", pa.int64(), nullable=False),
        pa.field("user", pa.string(), nullable=False),
        pa.field("amount", pa.decimal128(10, 2), nullable=False),
        pa.field("country", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("event_time", pa.timestamp("us"), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
    ])


def rows_table(rows, partitions):
    """Rows 1..rows in id order, as paymentevent.Row(n, partitions) gives them."""
    n = np.arange(1, rows + 1, dtype=np.int64)
    u = n * 7919 % 5000
    users = np.array(["user-%04d" % i for i in range(5000)], dtype=object)
    amount = _decimal((n % 500) * 100 + n % 100)
    dts = np.array(["d%03d" % i for i in range(partitions)], dtype=object)
    cols = [
        pa.array(n), pa.array(u), pa.array(users[u], type=pa.string()), amount,
        pa.array(np.array(COUNTRIES, dtype=object)[n % 10], type=pa.string()),
        pa.array(np.array(METHODS, dtype=object)[n % 4], type=pa.string()),
        pa.array(EPOCH_MICROS + n * 1000, type=pa.timestamp("us")),
        pa.array(dts[n % partitions], type=pa.string()),
    ]
    return pa.Table.from_arrays(cols, schema=arrow_schema())


def _decimal(unscaled):
    """A decimal128(10, 2) array of the non-negative int64 unscaled values."""
    # decimal128 is 16 little-endian bytes: the unscaled value and its sign extension (0, as it is >= 0)
    dec = np.zeros((len(unscaled), 2), dtype=np.int64)
    dec[:, 0] = unscaled
    return pa.Array.from_buffers(pa.decimal128(10, 2), len(unscaled), [None, pa.py_buffer(dec.tobytes())])


_U64 = np.uint64


def mix64(x):
    """splitmix64 of each uint64 of x: paymentevent.Mix64 (numpy's uint64 arithmetic wraps as Go's does)."""
    z = x + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def unique_table(rows, partitions):
    """Rows 1..rows in id order, as paymentevent.UniqueRow(n, partitions) gives them: stream k of row n is
    mix64(n << 2 | k)."""
    n = np.arange(1, rows + 1, dtype=np.int64)
    s = n.astype(np.uint64) << _U64(2)
    h0, h1, h2, h3 = mix64(s), mix64(s | _U64(1)), mix64(s | _U64(2)), mix64(s | _U64(3))
    low = (h0 & _U64(0xFFFFFFFF)).tolist()
    users = ["u%d-%08x" % (i, h) for i, h in zip(n.tolist(), low)]
    jitter = (h3 % _U64(60_000_000)).astype(np.int64) - 30_000_000
    dts = np.array(["d%03d" % i for i in range(partitions)], dtype=object)
    cols = [
        pa.array(n), pa.array((h0 >> _U64(44)).astype(np.int64)), pa.array(users, type=pa.string()),
        _decimal((h1 >> _U64(31)).astype(np.int64)),
        pa.array(np.array(COUNTRIES, dtype=object)[((h2 >> _U64(32)) % _U64(10)).astype(np.intp)], type=pa.string()),
        pa.array(np.array(METHODS, dtype=object)[(h2 & _U64(3)).astype(np.intp)], type=pa.string()),
        pa.array(EPOCH_MICROS + n * 1000 + jitter, type=pa.timestamp("us")),
        pa.array(dts[n % partitions], type=pa.string()),
    ]
    return pa.Table.from_arrays(cols, schema=arrow_schema())


DATASETS = {"payments": rows_table, "unique": unique_table}


def _catalog(args):
    return CatalogFactory.create({"warehouse": os.path.abspath(args.warehouse)})


def _create(catalog, ident):
    catalog.create_table(ident, Schema.from_pyarrow_schema(arrow_schema(), partition_keys=["dt"]), False)
    return catalog.get_table(ident)


def _write(table, data):
    """One batch write of data and its commit."""
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    c = wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def _read(table):
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def cmd_write(args):
    catalog = _catalog(args)
    ident = "%s.%s" % (args.database, args.table)
    catalog.create_database(args.database, True)
    make = DATASETS[args.dataset]
    _write(_create(catalog, ident + "_warmup"), make(min(args.rows, max(1000, args.rows // 10)), args.partitions))
    table = _create(catalog, ident)
    data = make(args.rows, args.partitions)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    _write(table, data)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"rows": data.num_rows, "seconds": round(wall, 4), "processCpuSeconds": round(cpu, 4),
            "nativeWriter": _native_writer()}


def _native_writer():
    """Whether pypaimon's optional Rust writer was available (else its pyarrow path wrote)."""
    try:
        from pypaimon.write.native_write import native_write_available
    except ImportError:
        return False
    return native_write_available()


def cmd_read(args):
    table = _catalog(args).get_table("%s.%s" % (args.database, args.table))
    _read(table)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    data = _read(table)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rows = 0 if data is None else data.num_rows
    id_sum = 0 if rows == 0 else pc.sum(data.column("id")).as_py()
    return {"rows": rows, "idSum": id_sum, "seconds": round(wall, 4), "processCpuSeconds": round(cpu, 4)}


def _parser():
    p = argparse.ArgumentParser(prog="peer_bench.py")
    sub = p.add_subparsers(dest="cmd")
    for name in ("write", "read"):
        s = sub.add_parser(name)
        s.add_argument("--warehouse", required=True)
        s.add_argument("--database", default="bench" if name == "write" else None, required=name == "read")
        s.add_argument("--table", default="events" if name == "write" else None, required=name == "read")
        if name == "write":
            s.add_argument("--rows", type=int, required=True)
            s.add_argument("--partitions", type=int, default=4)
            s.add_argument("--dataset", choices=sorted(DATASETS), default="payments")
    return p


def main(argv):
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.cmd is None:
        p.print_usage(sys.stderr)
        return 2
    try:
        result = cmd_write(args) if args.cmd == "write" else cmd_read(args)
    except Exception as e:  # noqa: BLE001 - one clear line for the harness
        sys.stderr.write("peer-bench: %s: %s: %s\n" % (args.cmd, type(e).__name__, str(e).replace("\n", " ")))
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
