"""Spark SQL oracle: pyspark with Paimon's Spark runtime jar, one Spark session for a whole run (see ../README.md).

    python spark_sql.py sql --warehouse W --query Q     rows of Q (a SELECT, INSERT, CALL ...) as canonical JSON
    python spark_sql.py session                         starts Spark, prints {"spark":..., "java":..., ...}
    python spark_sql.py version                         versions without starting Spark (pyspark, the jar)
    python spark_sql.py batch       (stdin: one JSON array of arguments per line, as paimon_py.py's batch)

Each warehouse W gets its own Paimon catalog (org.apache.paimon.spark.SparkCatalog, warehouse file:W, registered
on first use while the session runs, named w_<sha1 of W>), which is the current catalog while Q runs: Q names
tables as database.table and procedures as sys.<name> (CALL sys.compact(table => 'db.t')). The catalog's table
cache is off, so every query sees the table as it is on disk now (other writers commit between queries).

Rows are canonical JSON lines (canonical.py) rendered from the Arrow form of Spark's result (session time zone
UTC: TIMESTAMP, Paimon's LTZ, prints with "Z"; TIMESTAMP_NTZ, Paimon's TIMESTAMP, without), sorted by code
point; a statement without result columns prints nothing. The Spark runtime is PAIMON_SPARK_JAR, default
<repo>/.cache/paimon-jars/paimon-spark-3.5-0.9.0.jar (tests/interop/setup.sh fetches it). Spark and the JVM log
to stderr only: fd 1 is moved to stderr before the JVM starts, so nothing but rows reaches the protocol.
Errors: one line "spark-sql: ..." on stderr, exit 1 (2 for usage). PAIMON_INTEROP_TRACE=1 for a traceback.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import traceback
import zipfile

import batch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_JAR = os.path.join(REPO, ".cache", "paimon-jars", "paimon-spark-3.5-0.9.0.jar")


class UsageError(Exception):
    pass


def _jar():
    jar = os.environ.get("PAIMON_SPARK_JAR") or DEFAULT_JAR
    if not os.path.isfile(jar):
        raise UsageError("Paimon's Spark runtime %s is missing (run tests/interop/setup.sh)" % jar)
    return jar


def _jar_version(jar):
    """Paimon's version and artifact from the jar's own Maven metadata."""
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.startswith("META-INF/maven/org.apache.paimon/paimon-spark-") and name.endswith("/pom.properties"):
                props = dict(line.split("=", 1) for line in z.read(name).decode().splitlines()
                             if "=" in line and not line.startswith("#"))
                return props.get("artifactId"), props.get("version")
    return None, None


def cmd_version(args, out):
    import pyspark
    artifact, version = _jar_version(_jar())
    out.write(json.dumps({"pyspark": pyspark.__version__, "paimonSpark": "%s:%s" % (artifact, version),
                          "python": sys.version.split()[0]}) + "\n")


# ---------------------------------------------------------------- the session

_spark = None
_scratch = None
_catalogs = {}


def _session():
    global _spark, _scratch
    if _spark is not None:
        return _spark
    from pyspark.sql import SparkSession
    _scratch = scratch = tempfile.mkdtemp(prefix="spark-sql-oracle-")
    jvm_opts = "-Duser.timezone=UTC -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.io.tmpdir=" + scratch
    b = (SparkSession.builder.master("local[2]").appName("benthos-paimon-interop")
         .config("spark.jars", _jar())
         .config("spark.sql.extensions", "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
         .config("spark.sql.catalogImplementation", "in-memory")
         .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.extraJavaOptions", jvm_opts)
         .config("spark.driver.memory", os.environ.get("SPARK_ORACLE_MEMORY", "1g"))
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.default.parallelism", "2"))
    _spark = b.getOrCreate()
    _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def _use_warehouse(spark, warehouse):
    """Registers (once) and selects the Paimon catalog of a warehouse."""
    wh = os.path.abspath(warehouse)
    name = _catalogs.get(wh)
    if name is None:
        name = "w_" + hashlib.sha1(wh.encode()).hexdigest()[:12]
        prefix = "spark.sql.catalog." + name
        spark.conf.set(prefix, "org.apache.paimon.spark.SparkCatalog")
        spark.conf.set(prefix + ".warehouse", "file:" + wh)
        spark.conf.set(prefix + ".cache-enabled", "false")
        _catalogs[wh] = name
    spark.catalog.setCurrentCatalog(name)
    return name


def cmd_session(args, out):
    spark = _session()
    jvm = spark.sparkContext._jvm
    artifact, version = _jar_version(_jar())
    out.write(json.dumps({"spark": spark.version, "scala": jvm.scala.util.Properties.versionNumberString(),
                          "paimonSpark": "%s:%s" % (artifact, version),
                          "java": jvm.java.lang.System.getProperty("java.version")}) + "\n")


def cmd_sql(args, out):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    import canonical

    spark = _session()
    _use_warehouse(spark, args.warehouse)
    df = spark.sql(args.query)
    if not df.columns:
        df.collect()  # runs it (spark.sql runs commands eagerly; this is for the rest)
        return
    batches = df._collect_as_arrow()
    schema = to_arrow_schema(df.schema)
    table = pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()
    for line in canonical.table_lines(table):
        out.write(line + "\n")


# ---------------------------------------------------------------- batch and errors

def cmd_batch(args, out):
    """One process for many commands (batch.py)."""
    batch.serve(_parser, _COMMANDS, out, _describe, buffered=True)


def _describe(e):
    """One line: the Python exception, or for a Java one its class, message and causes (no stack trace)."""
    try:
        from py4j.protocol import Py4JJavaError
        if isinstance(e, Py4JJavaError):
            parts, j = [], e.java_exception
            while j is not None and len(parts) < 6:
                parts.append(str(j.toString()))
                j = j.getCause()
            return " <- ".join(parts).replace("\n", " ")[:4000]
    except ImportError:
        pass
    msg = str(e)
    # pyspark's captured exceptions append the JVM stack trace after the message
    msg = msg.split("\n\nJVM stacktrace:")[0]
    desc = getattr(e, "desc", None) or msg
    return ("%s: %s" % (type(e).__name__, desc)).replace("\n", " ")[:4000]


def _parser():
    p = argparse.ArgumentParser(prog="spark_sql.py")
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("sql")
    s.add_argument("--warehouse", required=True)
    s.add_argument("--query", required=True)
    sub.add_parser("session")
    sub.add_parser("version")
    sub.add_parser("batch")
    return p


_COMMANDS = {"sql": cmd_sql, "session": cmd_session, "version": cmd_version, "batch": cmd_batch}


def main(argv):
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.cmd is None:
        p.print_usage(sys.stderr)
        return 2
    # The protocol gets its own copy of stdout; fd 1, which the JVM inherits, goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        _COMMANDS[args.cmd](args, out)
    except UsageError as e:
        sys.stderr.write("spark-sql: %s: %s\n" % (args.cmd, e))
        return 2
    except Exception as e:  # noqa: BLE001 - one clear line for the driver
        if os.environ.get("PAIMON_INTEROP_TRACE"):
            traceback.print_exc()
        sys.stderr.write("spark-sql: %s: %s\n" % (args.cmd, _describe(e)))
        return 1
    finally:
        out.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    if _spark is not None:
        _spark.stop()
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
    sys.exit(code)
