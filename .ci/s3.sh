#!/usr/bin/env bash
# S3 server for integration tests: versitygw v1.8.0 with its posix backend
# (docs: test-infrastructure.md §1.2). Run from anywhere; paths are relative
# to the repository root (the parent of this script's directory).
#
#   bash .ci/s3.sh install           build .ci/bin/versitygw unless it is there
#                                    (cold: ~90 s, ~340 MB of module downloads)
#   eval "$(bash .ci/s3.sh start)"   start it and export its settings
#   bash .ci/s3.sh stop              stop it (also: status, env)
#
# `start` prints only shell `export` lines on stdout (all chatter goes to
# stderr), so that `eval "$(bash .ci/s3.sh start)"` sets:
#   BP_S3_ENDPOINT=http://127.0.0.1:<port>  BP_S3_ACCESS_KEY  BP_S3_SECRET_KEY  BP_S3_REGION
# which lakecore/storage/s3test picks up. If the server is already running,
# `start` prints the same lines again. If it cannot start the server it
# exits non-zero and prints `false` on stdout, so that the eval fails too
# (under `set -e` the caller stops).
#
# Settings (environment): BP_S3_PORT (default 7070; if busy, another free
# port is chosen), BP_S3_ACCESS_KEY / BP_S3_SECRET_KEY (default
# testkey/testsecret). Data lives in .ci/s3data, wiped at every start; it
# must be on a filesystem with user xattrs (ext4, xfs), not an old tmpfs.
# Files: .ci/bin/versitygw, .ci/versitygw.pid ("<pid> <port>"),
# .ci/versitygw.log.
set -euo pipefail

VERSION=v1.8.0
CI_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$CI_DIR/bin/versitygw"
DATA="$CI_DIR/s3data"
PIDFILE="$CI_DIR/versitygw.pid"
LOG="$CI_DIR/versitygw.log"
ACCESS_KEY="${BP_S3_ACCESS_KEY:-testkey}"
SECRET_KEY="${BP_S3_SECRET_KEY:-testsecret}"
REGION="${BP_S3_REGION:-us-east-1}"

log() { echo "s3.sh: $*" >&2; }

# running_pid prints "<pid> <port>" of the running server, or fails.
running_pid() {
	[[ -f "$PIDFILE" ]] || return 1
	local pid port
	read -r pid port <"$PIDFILE" || true
	[[ -n "$pid" && -n "$port" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid $port"
}

print_env() {
	echo "export BP_S3_ENDPOINT=http://127.0.0.1:$1"
	echo "export BP_S3_ACCESS_KEY=$ACCESS_KEY"
	echo "export BP_S3_SECRET_KEY=$SECRET_KEY"
	echo "export BP_S3_REGION=$REGION"
}

# answers PORT: true once something speaks HTTP there (versitygw says 403).
answers() {
	curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/"
}

port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

cmd_install() {
	# `versitygw --version` says "git" when built by go install; the module
	# version is in the build info.
	if [[ -x "$BIN" ]] && go version -m "$BIN" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/versity/versitygw[[:space:]]+$VERSION([[:space:]]|$)"; then
		log "versitygw $VERSION already at $BIN"
		return 0
	fi
	log "building versitygw $VERSION into $CI_DIR/bin (about 90 s cold)"
	mkdir -p "$CI_DIR/bin"
	GOBIN="$CI_DIR/bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSION" >&2
	log "installed $BIN"
}

cmd_start() {
	local pid running
	if running="$(running_pid)"; then
		log "versitygw already running (pid ${running% *})"
		print_env "${running#* }"
		return 0
	fi
	if [[ ! -x "$BIN" ]]; then
		log "no $BIN: run 'bash .ci/s3.sh install' first"
		echo false
		return 1
	fi
	command -v curl >/dev/null || {
		log "curl is required"
		echo false
		return 1
	}
	rm -rf "$DATA"
	mkdir -p "$DATA"
	local port="${BP_S3_PORT:-7070}" attempt
	for attempt in 1 2 3 4 5; do
		if port_busy "$port"; then
			log "port $port is busy"
			port=$((20000 + RANDOM % 40000))
			continue
		fi
		ROOT_ACCESS_KEY_ID="$ACCESS_KEY" ROOT_SECRET_ACCESS_KEY="$SECRET_KEY" \
			nohup "$BIN" --port "127.0.0.1:$port" --quiet posix "$DATA" >"$LOG" 2>&1 </dev/null &
		pid=$!
		local i
		for i in $(seq 1 200); do # up to 20 s
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if answers "$port"; then
				echo "$pid $port" >"$PIDFILE"
				log "versitygw $VERSION up at http://127.0.0.1:$port (pid $pid, data $DATA, log $LOG)"
				print_env "$port"
				return 0
			fi
			sleep 0.1
		done
		log "versitygw did not come up on port $port (attempt $attempt); log:"
		sed 's/^/  /' "$LOG" >&2 || true
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		port=$((20000 + RANDOM % 40000))
	done
	log "giving up"
	echo false
	return 1
}

cmd_stop() {
	local pid running
	if running="$(running_pid)"; then
		pid="${running% *}"
		kill "$pid"
		local i
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid ignored SIGTERM; killing"
			kill -9 "$pid" 2>/dev/null || true
		fi
		log "stopped versitygw (pid $pid)"
	else
		log "versitygw not running"
	fi
	rm -f "$PIDFILE"
}

cmd_status() {
	local running
	if running="$(running_pid)"; then
		log "running (pid ${running% *})"
		print_env "${running#* }" >&2
	else
		log "not running"
		return 1
	fi
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env)
	running="$(running_pid)" || { log "not running"; exit 1; }
	print_env "${running#* }"
	;;
*)
	echo "usage: bash .ci/s3.sh install|start|stop|status|env" >&2
	exit 2
	;;
esac
