"""Reads a Paimon table fully with pypaimon's to_arrow, once per stdin line.

The peer of BenchmarkFullReadRatio (read_bench_test.go): the Go benchmark
starts this process once (imports and the JVM-free start-up are not
measured) and alternates its own reads with this one's. Each line of
stdin reads the table again: plan, then to_arrow of every split; stdout
gets one JSON line {"rows": n, "cpu": process CPU seconds, "wall": seconds}.

usage: pypaimon_read.py <warehouse> <database.table>
"""
import json
import os
import sys
import time

from pypaimon import CatalogFactory


def main():
    warehouse, name = sys.argv[1], sys.argv[2]
    for _ in sys.stdin:
        c0, t0 = time.process_time(), time.perf_counter()
        table = CatalogFactory.create({"warehouse": os.path.abspath(warehouse)}).get_table(name)
        rb = table.new_read_builder()
        splits = rb.new_scan().plan().splits()
        data = rb.new_read().to_arrow(splits)
        rows = 0 if data is None else data.num_rows
        c1, t1 = time.process_time(), time.perf_counter()
        sys.stdout.write(json.dumps({"rows": rows, "cpu": c1 - c0, "wall": t1 - t0}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
