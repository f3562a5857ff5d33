"""A tuning worker process: ``python -m tessera.tune.worker`` reads one JSON request a line on
stdin and answers one JSON line on stdout. Requests: {"op": "build", "task": {...}} ->
{"path", "error", "seconds"}; {"op": "measure", "path": ..., "task": {...}} -> {"times"} or
{"error"}. A separate program, not a multiprocessing child, so that it never re-runs the
caller's script."""

import json
import os
import sys


def main() -> None:
    # Answers go to the real stdout; anything the build prints goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    from .runner import Task, build_task, measure_library

    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        task = Task(**req["task"])
        task.args = [(tuple(s), d) for s, d in task.args]
        if req["op"] == "build":
            path, error, seconds = build_task(task)
            reply = {"path": path, "error": error, "seconds": seconds}
        else:
            try:
                reply = {"times": measure_library(req["path"], task)}
            except Exception as e:
                reply = {"error": f"run: {type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
