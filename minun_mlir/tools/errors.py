"""The one error path of every command-line tool (minun-opt, minun-compile, minun-run).

A user's mistake is a `MinunError` whose text is complete: it is printed as it is (led by
the tool's name when it names no place: `minun-compile: error: --bits ...`), with exit
status 1. Anything else escaping our code (or xDSL's, onnx's, numpy's) is an internal
error: one line that says so and names the stage it happened in, exit status 1, and the
traceback only with `--debug`. Deep recursion (a chain of thousands of ops, modules
nested thousands deep) gets its own plain message.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable

from minun_mlir.diagnostics import MinunError, MinunWarning, stage_of

# xDSL's printer and verifier, and our lowering of fused expressions, recurse once per
# nesting level or chained op: the work runs on a thread with a large stack so that deep
# (but finite) inputs compile instead of overflowing the interpreter's default limits.
RECURSION_LIMIT = 60_000
STACK_BYTES = 512 * 2**20


def _on_large_stack(body: Callable[[], int | None]) -> int | None:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["status"] = body()
        except BaseException as e:  # handed to the caller's thread as it is
            outcome["error"] = e

    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="minun-tool")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("status")  # type: ignore[return-value]


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = str(message)
    print(text if issubclass(category, MinunWarning) else f"warning: {text}", file=sys.stderr)


def run_tool(tool: str, body: Callable[[], int | None], debug: bool = False) -> int:
    """Run a tool's work; return its exit status with every failure reported on stderr."""
    warnings.showwarning = _print_warning
    try:
        status = _on_large_stack(body)
    except MinunError as e:
        text = str(e)  # a message that names no place is the tool's own (an option)
        print(f"{tool}: {text}" if text.startswith("error: ") else text, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    except RecursionError as e:
        if debug:
            raise
        where = f" in {stage_of(e)}" if stage_of(e) else ""
        print(f"{tool}: error: the input is nested or chained too deeply to process{where}",
              file=sys.stderr)
        return 1
    except Exception as e:
        if debug:
            raise
        where = f" in {stage_of(e)}" if stage_of(e) else ""
        detail = " ".join(str(e).split())[:300]
        print(f"{tool}: internal error{where}: {type(e).__name__}: {detail} (a bug in "
              f"minun-mlir: please report it with the input; --debug shows the traceback)",
              file=sys.stderr)
        return 1
    return status or 0
