"""TFLite frontend: a .tflite flatbuffer into the L1 tensor dialect (docs/tflite-frontend.md).

    from minun_mlir.frontends.tflite import import_model
    module = import_model("model.tflite")

The flatbuffer is read with the `tflite` package (the schema's generated Python readers).
The operators become the ONNX nodes of the same reals (convert.py, ops.py) and go through
the ONNX importer, so layouts, constant folding and the int8 models' own scales and zero
points (frontends/onnx/quantized.py) are the ONNX frontend's; the one difference is the
requantization rounding, TFLite's. `minun-opt model.tflite` runs the same import.
"""

from __future__ import annotations

import argparse
import os
import re
import struct
from typing import IO

import tflite
from xdsl.dialects.builtin import ModuleOp

from minun_mlir.diagnostics import MinunError, error
from minun_mlir.inputs import read_input

from ..onnx import HANDLERS as ONNX_HANDLERS
from ..onnx.importer import Importer, mark_uint8_io
from ..onnx.loop import sharing
from .control import BODY
from .convert import Converter
from .lstm import ONNX_HANDLERS as LSTM_HANDLERS
from .ops import HANDLERS

__all__ = ["import_model", "load_model", "read_model", "to_onnx"]

# the importer's "node 'operator 3 (ADD)' (Add): ..." names the TFLite operator
_NODE = re.compile(r"node '(operator \d+ \([^)]*\)[^']*)' \([^)]*\): ")


def load_model(data: bytes, path: str | None = None) -> tflite.Model:
    """A .tflite flatbuffer's Model table; a file that is not one is a located error."""
    where = path or "<bytes>"
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise error("not a TFLite model file (no 'TFL3' flatbuffer identifier)", at=where)
    try:
        model = tflite.Model.GetRootAsModel(data, 0)
        model.SubgraphsLength(), model.OperatorCodesLength(), model.BuffersLength()
    except Exception as e:  # noqa: BLE001 - a damaged flatbuffer fails anywhere
        raise error(f"not a valid TFLite model file (damaged flatbuffer: {e})",
                    at=where) from None
    return model


def read_model(path: str | os.PathLike) -> tuple[tflite.Model, bytes]:
    data = read_input(path, "the model")
    return load_model(data, os.fspath(path)), data


def to_onnx(model: tflite.Model, data: bytes):
    """The ONNX model computing the TFLite model's reals (its first subgraph), and the
    declared ranges of its int8 inputs by name."""
    try:
        converter = Converter(model, data, HANDLERS)
        return converter.run(), converter.input_ranges
    except MinunError:
        raise
    except (IndexError, ValueError, TypeError, AttributeError, OverflowError,
            struct.error) as e:  # a damaged table: an offset or a size out of bounds
        raise MinunError(f"not a valid TFLite model file (damaged flatbuffer: {e})") from None


def _import(model: tflite.Model, data: bytes, where: str,
            input_range: tuple[float, float] | None) -> ModuleOp:
    try:
        onnx_model, ranges = to_onnx(model, data)
        ranges = ranges if input_range is None else {
            i.name: input_range for i in onnx_model.graph.input}
        imp = Importer(onnx_model, {**ONNX_HANDLERS, **LSTM_HANDLERS}, None, ranges, None,
                       requantize="tflite")
        if any(BODY in n.name for n in onnx_model.graph.node):
            imp.materialize = sharing(imp.materialize, {})  # one bias for all the steps
        module = imp.run()
        graph = model.Subgraphs(0)
        uint8 = [[graph.Tensors(int(i)).Type() == tflite.TensorType.UINT8
                  for i in getattr(graph, side)()] for side in ("InputsAsNumpy", "OutputsAsNumpy")]
        mark_uint8_io(next(iter(module.ops)), *uint8)
        return module
    except MinunError as e:
        raise error(_NODE.sub(r"\1: ", str(e)), at=where) from None


def import_model(path: str | os.PathLike, *,
                 input_range: tuple[float, float] | None = None) -> ModuleOp:
    """Import a .tflite file as a module with `func.func @main`. `input_range` is the
    declared range of every input (profiling refines it); by default an int8 input's is
    the range its integers stand for, a float input's [-1, 1]. Raises MinunError
    (`path: error: operator K (NAME): message`) on what it cannot import."""
    model, data = read_model(path)
    return _import(model, data, os.fspath(path), input_range)


def frontend(stream: IO[bytes], args: argparse.Namespace) -> ModuleOp:
    """The `.tflite` frontend of minun-opt."""
    path = getattr(args, "input_file", None) or "<stdin>"
    data = stream.read()
    return _import(load_model(data, path), data, path, None)
