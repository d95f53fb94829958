"""Proves the oracles against the Java-written fixtures and against each other (see ../README.md).

    .venv/bin/python tools/check.py [--only fixtures|specs] [-k SUBSTRING] [--update-goldens] [-v]

fixtures: every case of testdata/fixtures/cases.tsv is read from a temporary copy of the shared fixture by
  Java Paimon 1.x, Java Paimon 2.x and pypaimon, and compared with testdata/fixtures/<case>.jsonl.
specs:    every testdata/specs/*.json is written by each writer (java1, java2, py) into its own temporary
  warehouse, then read by every reader (java1, java2, py; duckdb on the live data files of specs without
  schema changes) and compared with the rows tools/spec_expect.py computes from the spec alone. Each of the
  spec's "filters" is then read by every reader from every writer's table and compared with what Java 1.x
  reads from its own table: a row lost there means wrong partition, bucket or stats pruning.

Known incompatibilities are listed in KNOWN below with the reason (they are findings, reported as "known");
a known case that starts passing is reported as "fixed?" and counted as passed. Ends with the plain line
"N passed, N failed, N skipped" (skipped = known); exit code 1 if anything failed. The Java and pypaimon
oracles run in batch mode (one process each for the whole run); CHECK_NO_BATCH=1 starts one per command.
"""
import argparse
import difflib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)                      # tests/interop
REPO = os.path.dirname(os.path.dirname(ROOT))     # repo root
FIXTURES = os.environ.get("PAIMON_FIXTURES", os.path.join(os.path.dirname(REPO), "shared", "fixtures", "paimon"))
PY = os.path.join(ROOT, ".venv", "bin", "python")
JAVA = os.path.join(ROOT, "bin", "paimon-java")

sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

# (kind, case, role) -> reason.  role: reader name, or "writer>reader" for specs.
KNOWN = {
    ("fixtures", "type_cast_evolution", "py"):
        "pypaimon casts STRING->BOOLEAN with pyarrow, which rejects 'Yes'/'nO' (Java accepts them)",
    ("fixtures", "type_cast_evolution_filter", "py"): "same STRING->BOOLEAN cast failure",
    ("fixtures", "nested_orc_manifest", "py"): "pypaimon reads only Avro manifests (KeyError 'avro.schema' on ORC)",
    ("fixtures", "nested_orc_manifest_s1", "py"): "pypaimon reads only Avro manifests",
    ("specs", "timestamp_extremes", "java1>py"):
        "pypaimon reads TIMESTAMP(9) as int64 nanoseconds: 9999-12-31 wraps silently (to 1816-03-30)",
    ("specs", "timestamp_extremes", "java2>py"): "same int64-nanosecond wrap-around",
    ("specs", "timestamp_extremes", "py"):
        "pypaimon cannot write TIMESTAMP(9) outside int64 nanoseconds (OverflowError)",
    ("specs", "timestamp_extremes", "java1>duckdb"): "DuckDB reads INT96 (TIMESTAMP(9)) as microseconds",
    ("specs", "multiset", "java1>py"): "pypaimon has no Arrow mapping for MULTISET",
    ("specs", "multiset", "java2>py"): "pypaimon has no Arrow mapping for MULTISET",
    ("specs", "multiset", "py"): "pypaimon has no Arrow mapping for MULTISET (cannot write)",
    ("specs", "overwrite_expire_compact", "py"): "pypaimon has no snapshot expiry and no compaction",
    ("specs", "bucketed_string", "py"): "pypaimon has no compaction",
    ("specs", "all_types [f > 0]", "java1>py"):
        "pypaimon's scan plan drops the Java-written file holding NaN, Infinity and 0.1 (NaN in its stats?)",
    ("specs", "all_types [f > 0]", "java2>py"): "same file dropped by pypaimon's scan plan",
    ("specs", "all_types [f > 0]", "py>py"):
        "pypaimon filters rows itself with Arrow semantics: NaN > 0 is false (Java's compareTo: true)",
    ("specs", "all_types [dec_18_4 > 0]", "py>java1"):
        "pypaimon writes DECIMAL(18,4) as FIXED_LEN_BYTE_ARRAY (Java: INT64); Java 1.4.2's Parquet filter "
        "pushdown then fails (2.0.0 copes)",
    ("specs", "timestamp_extremes", "java1>duckdb"): "DuckDB reads INT96 (TIMESTAMP(9)) as microseconds",
}


class Result:
    def __init__(self, verbose):
        self.passed = self.failed = self.skipped = 0
        self.verbose = verbose
        self.lines = []

    def report(self, kind, case, role, ok, detail="", known_case=None):
        reason = KNOWN.get((kind, case, role)) or (KNOWN.get((kind, known_case, role)) if known_case else None)
        if ok:
            self.passed += 1
            status = "FIXED?" if reason else "PASS"
        elif reason:
            self.skipped += 1
            status = "KNOWN"
            detail = reason + ("" if not self.verbose else " | " + detail)
        else:
            self.failed += 1
            status = "FAIL"
        line = "%-6s %s/%s [%s]%s" % (status, kind, case, role, (" " + detail) if detail else "")
        print(line, flush=True)


class Batch:
    """One long-lived oracle process in batch mode (a JSON array of arguments per line, output ended by a
    {"__done__":...} line): saves a JVM or Python start per command."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.proc = None

    def call(self, args):
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(self.cmd + ["batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, encoding="utf-8", bufsize=1)
        self.proc.stdin.write(json.dumps(args) + "\n")
        self.proc.stdin.flush()
        out = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                return 1, "".join(out), "oracle process died"
            if line.startswith('{"__done__":'):
                done = json.loads(line)
                return (0, "".join(out), "") if done["ok"] else (1, "".join(out), done.get("error", ""))
            out.append(line)

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


BATCH = {}


def run(cmd, timeout=300):
    """Runs an oracle command; java1/java2/py commands go through their batch process unless CHECK_NO_BATCH."""
    for key, prefix in (("java1", [JAVA, "paimon1"]), ("java2", [JAVA, "paimon2"]),
                        ("py", [PY, os.path.join(ROOT, "python", "paimon_py.py")])):
        if cmd[:len(prefix)] == prefix and not os.environ.get("CHECK_NO_BATCH"):
            if key not in BATCH:
                BATCH[key] = Batch(prefix)
            return BATCH[key].call(cmd[len(prefix):])
    p = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=timeout)
    return p.returncode, p.stdout, p.stderr.strip()


def reader_cmd(reader, warehouse, db, table, snapshot=None, flt=None):
    if reader in ("java1", "java2"):
        cmd = [JAVA, "paimon1" if reader == "java1" else "paimon2", "read"]
    else:
        cmd = [PY, os.path.join(ROOT, "python", "paimon_py.py"), "read"]
    cmd += ["--warehouse", warehouse, "--database", db, "--table", table]
    if snapshot:
        cmd += ["--snapshot", str(snapshot)]
    if flt:
        cmd += ["--filter", flt]
    return cmd


def compare(want, got):
    if want == got:
        return True, ""
    diff = list(difflib.unified_diff(want, got, "want", "got", lineterm="", n=0))
    return False, "%d lines differ: %s" % (len(diff), " ".join(d[:160] for d in diff[2:6]))


def check_fixtures(res, only_k, update):
    cases_file = os.path.join(ROOT, "testdata", "fixtures", "cases.tsv")
    if not os.path.isdir(FIXTURES):
        print("SKIP fixtures: %s not found (set PAIMON_FIXTURES)" % FIXTURES)
        return
    tmp = tempfile.mkdtemp(prefix="interop-fixtures-")
    try:
        with open(cases_file, encoding="utf-8") as fh:
            rows = [line.rstrip("\n").split("\t") for line in fh if line.strip() and not line.startswith("#")]
        for case, fixture, table, snapshot, flt in rows:
            if only_k and only_k not in case:
                continue
            src = os.path.join(FIXTURES, fixture)
            dst = os.path.join(tmp, fixture)
            if not os.path.exists(dst):
                shutil.copytree(src, dst)
                for d, _, files in os.walk(dst):
                    os.chmod(d, 0o755)
                    for f in files:
                        os.chmod(os.path.join(d, f), 0o644)
            golden = os.path.join(ROOT, "testdata", "fixtures", case + ".jsonl")
            snap = None if snapshot == "-" else snapshot
            fl = None if flt == "-" else flt
            if update:
                rc, out, err = run(reader_cmd("java1", os.path.join(dst, "warehouse"), "default", table, snap, fl))
                if rc != 0:
                    raise SystemExit("cannot update %s: %s" % (case, err))
                with open(golden, "w", encoding="utf-8") as fh:
                    fh.write(out)
            with open(golden, encoding="utf-8") as fh:
                want = fh.read().splitlines()
            for reader in ("java1", "java2", "py"):
                rc, out, err = run(reader_cmd(reader, os.path.join(dst, "warehouse"), "default", table, snap, fl))
                if rc != 0:
                    res.report("fixtures", case, reader, False, "exit %d: %s" % (rc, err[-300:]))
                    continue
                ok, detail = compare(want, out.splitlines())
                res.report("fixtures", case, reader, ok, detail)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_specs(res, only_k):
    import spec_expect
    from decimal import Decimal
    specs = sorted(glob.glob(os.path.join(ROOT, "testdata", "specs", "*.json")))
    tmp = tempfile.mkdtemp(prefix="interop-specs-")
    try:
        for path in specs:
            name = os.path.splitext(os.path.basename(path))[0]
            if only_k and only_k not in name:
                continue
            with open(path, encoding="utf-8") as fh:
                spec = json.load(fh, parse_float=Decimal)
            want = spec_expect.expect(spec)
            has_alter = any(c["kind"] == "alter" for c in spec.get("commits", []))
            refs = {}
            for writer in ("java1", "java2", "py"):
                wh = os.path.join(tmp, writer)
                if writer == "py":
                    cmd = [PY, os.path.join(ROOT, "python", "paimon_py.py"), "write"]
                else:
                    cmd = [JAVA, "paimon1" if writer == "java1" else "paimon2", "write"]
                cmd += ["--warehouse", wh, "--database", "interop", "--table", name, "--spec", path]
                rc, out, err = run(cmd)
                if rc != 0:
                    res.report("specs", name, writer, False, "write failed: " + err[-300:])
                    continue
                if writer != "py" and "expectJavaSnapshots" in spec:
                    # the live snapshots (id, kind) after the commits: compaction's extra empty APPEND, expiry
                    # that keeps what a consumer still needs
                    rc, out, err = run([JAVA, "paimon1" if writer == "java1" else "paimon2", "snapshots",
                                        "--warehouse", wh, "--database", "interop", "--table", name])
                    got = [[json.loads(x)["id"], json.loads(x)["kind"]] for x in out.splitlines()] if rc == 0 else err
                    want_s = spec["expectJavaSnapshots"]
                    res.report("specs", name + " snapshots", writer, got == want_s,
                               "" if got == want_s else "got %s, want %s" % (got, want_s))
                readers = ["java1", "java2", "py"] + (["duckdb"] if writer == "java1" and not has_alter else [])
                for flt in spec.get("filters", []):
                    # reference: Java 1.x reading its own table (pruning, then Predicate.test on every row)
                    case = "%s [%s]" % (name, flt)
                    for reader in ("java1", "java2", "py"):
                        rc, out, err = run(reader_cmd(reader, wh, "interop", name, flt=flt))
                        if writer == "java1" and reader == "java1":
                            if rc != 0:
                                res.report("specs", case, "java1>java1", False, "exit %d: %s" % (rc, err[-300:]),
                                           known_case=name)
                                break
                            refs[flt] = out.splitlines()
                            res.report("specs", case, "java1>java1", True, "%d rows" % len(refs[flt]))
                            continue
                        role = "%s>%s" % (writer, reader)
                        if flt not in refs:
                            continue
                        if rc != 0:
                            res.report("specs", case, role, False, "exit %d: %s" % (rc, err[-300:]), known_case=name)
                            continue
                        ok, detail = compare(refs[flt], out.splitlines())
                        res.report("specs", case, role, ok, detail, known_case=name)
                for reader in readers:
                    role = "%s>%s" % (writer, reader)
                    if reader == "duckdb":
                        rc, out, err = run([JAVA, "paimon1", "plan", "--warehouse", wh, "--database", "interop",
                                            "--table", name])
                        files = [json.loads(line)["path"] for line in out.splitlines()]
                        if rc == 0:
                            rc, out, err = run([PY, os.path.join(ROOT, "python", "duckdb_read.py")] + files)
                    else:
                        rc, out, err = run(reader_cmd(reader, wh, "interop", name))
                    if rc != 0:
                        res.report("specs", name, role, False, "exit %d: %s" % (rc, err[-300:]))
                        continue
                    ok, detail = compare(want, out.splitlines())
                    res.report("specs", name, role, ok, detail)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["fixtures", "specs"])
    ap.add_argument("-k", default="")
    ap.add_argument("--update-goldens", action="store_true",
                    help="rewrite testdata/fixtures/*.jsonl from Java Paimon 1.x (review the diff!)")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    res = Result(a.v)
    t0 = time.time()
    if a.only in (None, "fixtures"):
        check_fixtures(res, a.k, a.update_goldens)
    if a.only in (None, "specs"):
        check_specs(res, a.k)
    for b in BATCH.values():
        b.close()
    print("took %.0fs" % (time.time() - t0))
    print("%d passed, %d failed, %d skipped" % (res.passed, res.failed, res.skipped))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
