"""The batch protocol every Python oracle speaks (internal/oracle in the Go driver): one process for many commands.
Each stdin line is a JSON array of the arguments of one command; its output is followed by
{"__done__":true,"ok":true} or {"__done__":true,"ok":false,"error":"..."}."""

import json
import os
import sys
import traceback


class UsageError(Exception):
    """A command line that names no command the oracle has."""


def serve(parser, commands, out, describe, buffered=False):
    """Runs the commands of stdin until it ends. parser() makes the argparse parser (its dest "cmd" names the
    command), commands maps a command to its function(args, out), describe(e) is an error's one line. With buffered,
    a command's output is written only when it succeeds, so that a failed command prints nothing but its error."""
    for line in sys.stdin:
        if not line.strip():
            continue
        error = None
        buf = []
        target = _Lines(buf) if buffered else out
        try:
            argv = json.loads(line)
            if not argv or argv[0] == "batch":
                raise UsageError("bad batch command %r" % (argv,))
            a = parser().parse_args(argv)
            commands[a.cmd](a, target)
        except SystemExit as e:
            error = "usage error (exit %s)" % e.code
        except Exception as e:  # noqa: BLE001 - one clear line for the driver
            if os.environ.get("PAIMON_INTEROP_TRACE"):
                traceback.print_exc()
            error = describe(e)
        if error is None:
            out.write("".join(buf))
        out.write(json.dumps({"__done__": True, "ok": True} if error is None else
                             {"__done__": True, "ok": False, "error": error},
                             ensure_ascii=False, separators=(",", ":")) + "\n")
        out.flush()


class _Lines:
    """Collects a command's output."""

    def __init__(self, buf):
        self.buf = buf

    def write(self, s):
        self.buf.append(s)
