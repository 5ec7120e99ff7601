"""`minun-opt`: xDSL's opt driver with minun-mlir's dialects, passes, frontends and targets.

Accepts xDSL's `-p a,b{opt=v}` and MLIR's `--pass-pipeline='builtin.module(a,b{opt=v})'`.
Reads `.mlir` (textual IR), `.sd` (SeeDot programs), `.onnx` (ONNX models) and `.tflite`
(TFLite models). Errors are
printed as diagnostics with a non-zero exit; the output file is written only on success.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import sys
import typing
from collections.abc import Callable, Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from minun_mlir import registry
from minun_mlir.diagnostics import MinunError, stage
from minun_mlir.inputs import check_input
from minun_mlir.ir_text import LocatingParser, verify_located
from minun_mlir.outputs import check_file, write_file
from minun_mlir.pipeline import STAGES, strip_module_anchor
from minun_mlir.tools.errors import run_tool

# xDSL passes that make sense on our IR; the rest of xDSL's catalogue is hidden so that
# `--help` lists what a user of this tool can run.
XDSL_PASSES = ("canonicalize", "cse", "dce", "licm", "convert-scf-to-cf")


# xDSL targets that print our IR (the rest of its targets are hidden, like its passes).
XDSL_TARGETS = ("mlir",)


class _Buffer(io.StringIO):
    def close(self) -> None:  # xDSL closes the output stream; keep the text
        pass


class MinunOptMain(xDSLOptMain):
    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=__doc__.splitlines()[0], args=args)

    def register_all_dialects(self) -> None:
        multiverse = registry.multiverse()
        for name, factory in multiverse.all_dialects.items():
            self.ctx.register_dialect(name, factory)
        for name, factory in registry.DIALECTS.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        multiverse = registry.multiverse()
        for name in XDSL_PASSES:
            self.register_pass(name, multiverse.all_passes[name])
        for name, factory in registry.PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        # only the targets that print this IR: xDSL's others (llvm, riscv-asm, wat, ...)
        # expect their own dialects and fail on ours with an assertion or print nothing
        # (xDSL's register_all_targets, on the multiverse read once)
        known = {**registry.multiverse().all_targets, **self.available_targets}
        self.available_targets = {name: known[name] for name in XDSL_TARGETS}
        for name, factory in registry.TARGETS.items():
            self.available_targets[name] = factory

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            data = stream.read()
            try:
                text = data.decode()
            except UnicodeDecodeError as e:
                raise MinunError(f"{self.get_input_name()}: error: not textual IR (not UTF-8 "
                                 f"at byte {e.start})") from None
            parser = LocatingParser(self.ctx, text, self.get_input_name(),
                                    self._chunk_line_offset)
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir
        for ext, factory in registry.FRONTENDS.items():
            self.available_frontends[ext] = self._frontend(factory)

    def _frontend(self, factory: Callable[[], Callable[..., ModuleOp]]):
        def run(stream: IO[bytes]) -> ModuleOp:
            return factory()(stream, self.args)

        return run

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--pass-pipeline", type=str, default=None,
            help="MLIR-style pipeline, e.g. 'builtin.module(canonicalize,quantize{bits=16})'",
        )
        arg_parser.add_argument(
            "--debug", action="store_true",
            help="show the Python traceback of an internal error",
        )
        arg_parser.add_argument(
            "--weights", type=str, default=None,
            help="SeeDot frontend: model directory with NAME.npy files, or an .npz "
                 "(default: the program's directory)",
        )
        arg_parser.add_argument(
            "--dim", action="append", default=[], metavar="NAME=N",
            help="ONNX frontend: fix a symbolic input dimension, e.g. --dim batch=1",
        )
        arg_parser.add_argument(
            "--input-range", action="append", default=[], metavar="NAME=LO,HI",
            help="ONNX frontend: declared value range of an input (default -1,1)",
        )
        arg_parser.add_argument(
            "--output", action="append", default=[], metavar="NAME",
            help="ONNX frontend: keep only this graph output (repeat for several; only "
                 "the nodes they need are imported); default: all",
        )
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        format_help = arg_parser.format_help

        def with_epilog() -> str:
            # built only for --help: the pass list imports every pass module (~0.3 s)
            arg_parser.epilog = ("the compile pipeline: " + ",".join(STAGES)
                                 + " (minun-compile --print-pipeline shows it with options)"
                                 + "\n\nminun-mlir passes, with their options and defaults:"
                                 + registry.pass_help()
                                 + "\n\nfrom xDSL: " + ", ".join(XDSL_PASSES) + "\n")
            return format_help()

        arg_parser.format_help = with_epilog

    def setup_pipeline(self) -> None:
        if self.args.pass_pipeline is not None:
            if self.args.passes:
                raise MinunError("minun-opt: error: give either -p or --pass-pipeline, not both")
            self.args.passes = strip_module_anchor(self.args.pass_pipeline)
        try:
            super().setup_pipeline()
        except (ValueError, TypeError) as e:  # unknown pass, bad option value
            raise MinunError(
                f"minun-opt: error: bad pass pipeline '{self.args.passes}': {e}") from None
        except ArgSpecParseError as e:  # xDSL's syntax error (a BaseException)
            raise MinunError(
                f"minun-opt: error: bad pass pipeline '{self.args.passes}' (string option "
                f"values are written in double quotes, e.g. data=\"train.npy\"):\n{e}"
            ) from None
        for p in self.pipeline.passes:
            check_option_types(p)

    def prepare_input(self):
        if self.args.input_file is not None:  # a FIFO or /dev/zero: refused, not read
            check_input(self.args.input_file, "the input")
        try:
            return super().prepare_input()
        except ValueError as e:  # unknown file extension
            raise MinunError(f"minun-opt: error: {e} (known: "
                             f"{', '.join(sorted(self.available_frontends))})") from None

    _chunk_line_offset = 0

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        self._chunk_line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        if not self.args.disable_verify:
            verify_located(prog)
        # as xDSL's PassPipeline.apply, with each pass named as the stage that runs
        passes, callback = self.pipeline.passes, self.pipeline.callback
        if callback is not None:
            callback(None, prog, passes[0] if passes else None)
        for i, p in enumerate(passes):
            with stage(p.name):
                p.apply(self.ctx, prog)
            if callback is not None:
                callback(p, prog, passes[i + 1] if i + 1 < len(passes) else None)

    def prepare_output(self) -> IO[str]:
        # Collected in memory and written at the end, so a failure leaves no half file.
        return self._output

    def run(self) -> None:
        output = self.args.output_file
        if output is not None:  # checked before any work: never an input, never a folder
            check_file(output, "-o", self.inputs())
        # Diagnostics printed under --verify-diagnostics go to the same buffer, in order.
        self._output = _Buffer()
        with contextlib.redirect_stdout(self._output):
            super().run()
        text = self._output.getvalue()
        if output is None:
            sys.stdout.write(text)
        else:
            write_file(output, text, "-o", self.inputs())

    def inputs(self) -> list[str]:
        """The files this run reads: the input and every pass option naming a file."""
        found = [self.args.input_file] if self.args.input_file else []
        for p in getattr(getattr(self, "pipeline", None), "passes", ()):
            found += [v for v in vars(p).values() if isinstance(v, str) and v
                      and os.path.isfile(v)]
        return found


def check_option_types(p) -> None:
    """xDSL takes `true` for an integer option (bool is an int in Python): refuse it, so
    that `quantize{synthetic=true}` or `maxscale=true` is not read as 1."""
    hints = typing.get_type_hints(type(p))
    for f in dataclasses.fields(p):
        value, hint = getattr(p, f.name), hints.get(f.name)
        allowed = (hint, *typing.get_args(hint))
        if type(value) is bool and bool not in allowed:
            what = "an integer" if int in allowed else "a number" if float in allowed \
                else "a string"
            raise MinunError(f"minun-opt: error: {p.name}: {f.name.replace('_', '-')} must "
                             f"be {what}, got {str(value).lower()}")


def _input_name(argv: Sequence[str]) -> str:
    return next((a for a in argv if not a.startswith("-") and os.path.exists(a)), "<stdin>")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)

    def body() -> int:
        try:
            MinunOptMain(args=argv).run()
        except ParseError as e:
            # xDSL prints "file:line:col", the source line, a caret, then the message; we
            # lead with the message in the usual compiler form.
            context = e.span.print_with_context().splitlines()[1:]
            raise MinunError("\n".join([f"{e.span.get_location()}: error: {e.msg.strip()}",
                                        *context])) from None
        except DiagnosticException as e:
            text = str(e)
            raise MinunError(text if ": error: " in text
                             else f"{_input_name(argv)}: error: {text}") from None
        except OSError as e:
            raise MinunError(f"minun-opt: error: {e.strerror}: {e.filename}") from None
        except MinunError as e:  # a pass's diagnostic on the module: name the input file
            text = str(e)
            if text.startswith("error: "):
                raise MinunError(f"{_input_name(argv)}: {text}") from None
            raise
        return 0

    return run_tool("minun-opt", body, debug="--debug" in argv)


if __name__ == "__main__":
    sys.exit(main())
