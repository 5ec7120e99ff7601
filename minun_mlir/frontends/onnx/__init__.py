"""ONNX frontend: import an ONNX model into the L1 tensor dialect (see docs/onnx-frontend.md).

    from minun_mlir.frontends.onnx import import_model
    module = import_model("model.onnx", dims={"N": 1})

`minun-opt model.onnx [--dim N=1]` runs the same importer (via `frontend`).
"""

from __future__ import annotations

import argparse
import os
from typing import IO

import onnx
from google.protobuf.message import DecodeError
from xdsl.dialects.builtin import ModuleOp

from minun_mlir.diagnostics import MinunError, error
from minun_mlir.inputs import problem, read_input

from . import (
    convpool,
    elementwise,
    linear,
    loop,
    ml,
    quantized,
    recurrent,
    reduce,
    resize,
    shape,
)
from .batch import unfix_batch
from .fold_bn import fold_batchnorm
from .fuse import fuse_rms_norm
from .importer import DEFAULT_INPUT_RANGE, Importer
from .softplus_threshold import drop_softplus_threshold

__all__ = ["DEFAULT_INPUT_RANGE", "HANDLERS", "frontend", "import_model", "load_model",
           "read_model"]

HANDLERS = {**elementwise.HANDLERS, **linear.HANDLERS, **convpool.HANDLERS,
            **shape.HANDLERS, **recurrent.HANDLERS, **loop.HANDLERS, **quantized.HANDLERS,
            **ml.HANDLERS, **reduce.HANDLERS, **resize.HANDLERS}


def _rewritten(model: onnx.ModelProto) -> onnx.ModelProto:
    """The graph rewrites before import: exporters' spellings of one operation made one
    node (softplus_threshold.py, fuse.py, fold_bn.py)."""
    return fold_batchnorm(fuse_rms_norm(drop_softplus_threshold(model)))


def load_model(data: bytes, path: str | None = None) -> onnx.ModelProto:
    """Parse a serialized ModelProto; a file that is not one is a user error, not a
    traceback. External tensor data is read from the model's folder."""
    where = path or "<bytes>"
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, RuntimeWarning, ValueError) as e:
        raise error(f"not a valid ONNX model file (protobuf: {e})", at=where) from None
    if not model.ir_version or not model.HasField("graph"):
        raise error("not a valid ONNX model file (no IR version or no "
                         "graph: corrupt or not ONNX)", at=where)
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
        for tensor in model.graph.initializer:
            if tensor.data_location == onnx.TensorProto.EXTERNAL:
                check_external_data(tensor, base, where)
        try:
            onnx.external_data_helper.load_external_data_for_model(model, base)
        except (OSError, ValueError) as e:
            raise error(f"cannot read external tensor data: {e}", at=where) from None
    return model


def read_model(path: str | os.PathLike) -> onnx.ModelProto:
    """An ONNX model file, read and parsed as `load_model` does (the one reader of model
    files: minun-opt's frontend and minun-compile both come here)."""
    return load_model(read_input(path, "the model"), os.fspath(path))


def check_external_data(tensor: onnx.TensorProto, base: str, where: str) -> None:
    """External tensor data must be a file inside the model's folder, and the bytes the
    tensor names must be in it (a model file must not read anything else on the disk)."""
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    target = os.path.realpath(os.path.join(base, location))
    if not location or os.path.isabs(location) or \
            os.path.commonpath([target, os.path.realpath(base)]) != os.path.realpath(base):
        raise error(f"initializer '{tensor.name}': external data location '{location}' is "
                    "not a file inside the model's folder", at=where)
    if not os.path.exists(target):
        raise error(f"initializer '{tensor.name}': external data file '{location}' is "
                    "missing", at=where)
    why = problem(target, f"external data file '{location}'")  # a FIFO, a device, ...
    if why:
        raise error(f"initializer '{tensor.name}': {why}", at=where)
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", -1))
    except ValueError:
        raise error(f"initializer '{tensor.name}': external data offset/length are not "
                    "integers", at=where) from None
    size = os.path.getsize(target)
    if offset < 0 or offset > size or (length >= 0 and offset + length > size):
        raise error(f"initializer '{tensor.name}': external data bytes {offset}.."
                    f"{offset + max(length, 0)} are past the end of '{location}' ({size} "
                    "bytes)", at=where)


def import_model(model: str | os.PathLike | onnx.ModelProto,
                 dims: dict[str, int] | None = None, *,
                 input_ranges: dict[str, tuple[float, float]] | None = None,
                 outputs: list[str] | None = None,
                 path: str | os.PathLike | None = None) -> ModuleOp:
    """Import an ONNX model (a path or a ModelProto) as a module with `func.func @main`.

    `dims` fixes symbolic input dimensions by name (`{"N": 1}`; an unnamed dimension is
    `"input_name:axis"`), like `minun-opt --dim N=1`; the others compile as 1, each with a
    one-line warning. `input_ranges` gives the declared
    value range of inputs by name (default DEFAULT_INPUT_RANGE; profiling refines it).
    `outputs` keeps only these graph outputs, in this order (default: all).
    Raises MinunError with a `node 'name' (OpType): message` text on unsupported models
    (prefixed with the model's path: the one given, or `path` for a ModelProto).
    """
    if not isinstance(model, onnx.ModelProto):
        path = os.fspath(model)
        model = read_model(path)
    try:
        model, dims = unfix_batch(model, dims)
        return Importer(_rewritten(model), HANDLERS, dims, input_ranges,
                        outputs).run()
    except MinunError as e:
        if path is None:
            raise
        raise error(f"{e}", at=path) from None


def parse_dims(specs: list[str]) -> dict[str, int]:
    """`["N=1", "seq=16"]` -> {"N": 1, "seq": 16} (the `--dim` option)."""
    dims = {}
    for spec in specs or []:
        name, sep, value = spec.rpartition("=")
        if not sep or not name:
            raise MinunError(f"--dim {spec}: expected NAME=N")
        try:
            size = int(value)
        except ValueError:
            raise MinunError(f"--dim {spec}: N must be an integer") from None
        if name in dims:  # the last one would win silently
            raise MinunError(f"--dim {spec}: {name} is given twice ({name}={dims[name]} "
                             f"and {spec})")
        dims[name] = size
    return dims


def parse_ranges(specs: list[str]) -> dict[str, tuple[float, float]]:
    """`["x=-1,1"]` -> {"x": (-1.0, 1.0)} (the `--input-range` option)."""
    ranges = {}
    for spec in specs or []:
        name, sep, value = spec.rpartition("=")
        parts = value.split(",")
        try:
            lo, hi = (float(v) for v in parts)
        except ValueError:
            lo = hi = None
        if not sep or not name or lo is None or not lo <= hi:
            raise error(f"--input-range {spec}: expected NAME=LO,HI with LO <= HI")
        ranges[name] = (lo, hi)
    return ranges


def frontend(stream: IO[bytes], args: argparse.Namespace) -> ModuleOp:
    """The `.onnx` frontend of minun-opt."""
    path = getattr(args, "input_file", None) or "<stdin>"
    try:
        dims = parse_dims(getattr(args, "dim", []))
        ranges = parse_ranges(getattr(args, "input_range", []))
    except MinunError as e:  # an option's diagnostic names the tool
        raise MinunError(f"minun-opt: error: {str(e).removeprefix('error: ')}") from None
    outputs = getattr(args, "output", []) or None
    model = load_model(stream.read(), path)
    try:
        model, dims = unfix_batch(model, dims)
        return Importer(_rewritten(model), HANDLERS, dims, ranges,
                        outputs).run()
    except MinunError as e:
        raise error(f"{e}", at=path) from None
