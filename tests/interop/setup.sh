#!/usr/bin/env bash
# Installs and builds the interop oracles (see README.md); idempotent and fast when nothing changed.
#   1. the Paimon 2.0.0 jar that Maven's resolver cannot fetch (its parent POM is not served), checked by SHA-1
#   2. the Java oracle for Paimon 1.x and 2.x:  java/target/paimon{1,2}/{paimon-interop.jar,classpath.txt},
#      and the Flink SQL oracles: java/target/flink2/ (Flink 2.0.0 + paimon-flink-2.0 2.0.0) and
#      java/target/flink1/ (Flink 1.20.3 + paimon-flink-1.20 1.3.1, its jar fetched and checked by SHA-1)
#   3. the Python venv tests/interop/.venv with python/requirements.txt (pypaimon, pyarrow, duckdb, pyspark)
#   4. Spark SQL: Paimon's Spark runtime jar paimon-spark-3.5 0.9.0 (the only one the registry serves), checked
#      by SHA-1, for pyspark 3.5.2 (python/spark_sql.py)
# Caches: <repo>/.cache/m2 (Maven), <repo>/.cache/pip, <repo>/.cache/paimon-jars (all git-ignored).
# Env: PYTHON (default python3), JAVA_HOME/java and mvn from PATH. Exit 1 with the list of what is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.cache"
python="${PYTHON:-python3}"
m2="$cache/m2"
paimon2_version=2.0.0
paimon2_jar="$cache/paimon-jars/paimon-flink-2.0-$paimon2_version.jar"
# Flink 1.20 line: paimon-flink-1.20 is served up to 1.3.1 only (README "Flink SQL")
paimon_flink120_version=1.3.1
paimon_flink120_jar="$cache/paimon-jars/paimon-flink-1.20-$paimon_flink120_version.jar"
paimon_flink120_sha1=500be697f0cb81b68d5356e9025aba756c7b42c9 # the registry's .sha1 of paimon-flink-1.20-1.3.1.jar
# Spark: the registry serves paimon-spark-3.5 up to 0.9.0 only (README "Spark SQL"); built for Spark 3.5.2, Scala 2.12
paimon_spark_version=0.9.0
paimon_spark_jar="$cache/paimon-jars/paimon-spark-3.5-$paimon_spark_version.jar"
paimon_spark_sha1=8dfa6c87a1b9ca142bbb40fc0dbf4329746ca699 # the registry's .sha1 of paimon-spark-3.5-0.9.0.jar

log() { printf 'interop-setup: %s\n' "$*" >&2; }

missing=()
command -v java >/dev/null 2>&1 || missing+=("java: a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless)")
command -v mvn >/dev/null 2>&1 || missing+=("mvn: Maven 3.8+ (Debian: apt-get install -y maven)")
if ! command -v "$python" >/dev/null 2>&1; then
  missing+=("$python: Python 3.9-3.13 with the venv module (or set PYTHON=...)")
elif ! "$python" -c 'import sys, venv; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
  missing+=("$python: needs Python 3.9-3.13 with the venv module, found $("$python" --version 2>&1)")
fi
if command -v java >/dev/null 2>&1; then
  jv="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  if [[ -n "$jv" && "${jv%%.*}" -lt 17 ]]; then missing+=("java: needs 17 or newer, found $jv"); fi
fi
if ((${#missing[@]})); then
  log "missing:"
  for m in "${missing[@]}"; do printf '  - %s\n' "$m" >&2; done
  exit 1
fi

mvn_q=(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$m2")

# fetch_jar REL DEST [SHA1]: downloads REL (a path in the repository) from the repository Maven itself uses (mirrors
# from settings.xml applied, so no host is hard-coded here), checks it against the registry's .sha1 (and SHA1, the
# pinned one, when given), stores it as DEST.
repo_url=""
fetch_jar() {
  local rel="$1" dest="$2" pinned="${3:-}"
  mkdir -p "$(dirname "$dest")"
  if [[ -z "$repo_url" ]]; then
    repo_url="$(cd "$here/java" && "${mvn_q[@]}" org.apache.maven.plugins:maven-help-plugin:3.5.1:evaluate \
      -Dexpression='project.remoteArtifactRepositories[0].url' -DforceStdout 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | tail -n1)"
  fi
  log "fetching $rel from $repo_url"
  "$python" - "$repo_url/$rel" "$dest" "$pinned" <<'PY'
import hashlib, os, sys, urllib.request
url, dest, pinned = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    data = urllib.request.urlopen(url, timeout=300).read()
    want = urllib.request.urlopen(url + ".sha1", timeout=60).read().decode().split()[0].strip()
except OSError as e:
    sys.exit("cannot fetch %s: %s" % (url, e))
got = hashlib.sha1(data).hexdigest()
if got != want:
    sys.exit("sha1 mismatch for %s: got %s, registry says %s" % (url, got, want))
if pinned and got != pinned:
    sys.exit("sha1 of %s is %s, setup.sh pins %s" % (url, got, pinned))
with open(dest + ".part", "wb") as fh:
    fh.write(data)
os.replace(dest + ".part", dest)
PY
}

# 1. Paimon 2.0.0 -------------------------------------------------------------------------------------------
if [[ ! -s "$paimon2_jar" ]]; then
  fetch_jar "org/apache/paimon/paimon-flink-2.0/$paimon2_version/paimon-flink-2.0-$paimon2_version.jar" "$paimon2_jar"
fi

# 1b. paimon-flink-1.20 1.3.1, for the Flink 1.20 SQL oracle (its parent POM is not served either) -------------
if [[ ! -s "$paimon_flink120_jar" ]]; then
  fetch_jar "org/apache/paimon/paimon-flink-1.20/$paimon_flink120_version/paimon-flink-1.20-$paimon_flink120_version.jar" \
    "$paimon_flink120_jar" "$paimon_flink120_sha1"
fi

# 2. Java oracle ---------------------------------------------------------------------------------------------
for line in paimon1 paimon2 flink2 flink1; do
  jar="$here/java/target/$line/paimon-interop.jar"
  cp="$here/java/target/$line/classpath.txt"
  stale=1
  if [[ -f "$jar" && -f "$cp" ]]; then
    stale=0
    newer="$(find "$here/java/pom.xml" "$here/java/src" -newer "$jar" -type f | head -n1 || true)"
    [[ -n "$newer" ]] && stale=1
    # every classpath entry must still exist (a wiped .cache/m2)
    IFS=: read -r -a entries < "$cp" || true
    for e in "${entries[@]}"; do [[ -f "$e" ]] || stale=1; done
  fi
  if ((stale)); then
    log "building the Java oracle for $line"
    (cd "$here/java" && "${mvn_q[@]}" -P"$line" package) 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
  fi
done

# 3. Python venv ---------------------------------------------------------------------------------------------
venv="$here/.venv"
stamp="$venv/.requirements.sha1"
want_sum="$(sha1sum "$here/python/requirements.txt" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" ]]; then
  log "creating $venv"
  "$python" -m venv "$venv"
fi
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want_sum" ]]; then
  log "installing python/requirements.txt"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --cache-dir "$cache/pip" \
    -r "$here/python/requirements.txt" >&2
  echo "$want_sum" > "$stamp"
fi

# 4. Spark SQL ----------------------------------------------------------------------------------------------
# pyspark itself is pinned in python/requirements.txt (step 3); Paimon's Spark runtime is one shaded jar
# (checked against the pinned SHA-1 on every run: 0.1 s)
if [[ ! -s "$paimon_spark_jar" || "$(sha1sum "$paimon_spark_jar" | cut -d' ' -f1)" != "$paimon_spark_sha1" ]]; then
  fetch_jar "org/apache/paimon/paimon-spark-3.5/$paimon_spark_version/paimon-spark-3.5-$paimon_spark_version.jar" \
    "$paimon_spark_jar" "$paimon_spark_sha1"
fi

# smoke test: prints the versions in use
"$here/bin/paimon-java" paimon1 version
"$here/bin/paimon-java" paimon2 version
"$here/bin/flink-sql" flink2 version
"$here/bin/flink-sql" flink1 version
"$venv/bin/python" "$here/python/paimon_py.py" version
"$venv/bin/python" "$here/python/spark_sql.py" version
