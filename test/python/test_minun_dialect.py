"""Python-level checks of the L1 dialect: builders infer the same types the verifiers
demand, large weights travel as hex, and every op of the dialect has a lit round-trip."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from minun_mlir.dialects import minun
from minun_mlir.ir_text import LocatingParser

ROOT = Path(__file__).resolve().parents[2]


def _ctx() -> Context:
    ctx = Context()
    ctx.load_dialect(minun.Minun)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(arith.Arith)
    from xdsl.dialects.builtin import Builtin

    ctx.load_dialect(Builtin)
    return ctx


def _print(op) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


def test_builders_infer_types_the_verifier_accepts():
    x = minun.InputOp("X", (64, 1), 0.0, 16.0)
    w = minun.ParamOp("W", np.ones((10, 64), np.float32), -1.0, 1.0)
    mm = minun.MatMulOp.make(w, x)
    assert mm.result.type == minun.tensor_of((10, 1))
    tr = minun.TransposeOp.make(mm, perm=minun.i64_array([1, 0]))
    assert tr.result.type == minun.tensor_of((1, 10))
    s = minun.ConstantOp(np.float32(0.5))
    add = minun.AddOp.make(tr, s)
    assert add.result.type == minun.tensor_of((1, 10))
    for op in (x, w, mm, tr, s, add):
        op.verify()


def test_builder_rejects_bad_shapes_with_both_shapes_in_message():
    x = minun.InputOp("X", (63, 1), 0.0, 1.0)
    w = minun.ParamOp("W", np.ones((10, 64), np.float32), -1.0, 1.0)
    with pytest.raises(VerifyException, match=r"lhs 10x64, rhs 63x1"):
        minun.MatMulOp.make(w, x)


def test_large_parameter_is_printed_as_hex_and_round_trips_exactly():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(100, 200)).astype(np.float32)
    w = minun.ParamOp("W", values, float(values.min()), float(values.max()))
    ret = func.ReturnOp(w.result)
    f = func.FuncOp("main", ((), (w.result.type,)))
    f.body.block.add_ops([w, ret])
    text = _print(ModuleOp([f]))
    assert re.search(r'dense<"0x[0-9A-F]{160000}">', text)
    parsed = LocatingParser(_ctx(), text, "t.mlir").parse_module()
    back = next(op for op in parsed.walk() if isinstance(op, minun.ParamOp))
    np.testing.assert_array_equal(back.array(), values)


def test_every_dialect_op_appears_in_the_lit_round_trip():
    text = (ROOT / "test/lit/minun/ops.mlir").read_text()
    missing = [op.name for op in minun.Minun.operations if f"{op.name} " not in text]
    assert not missing


def test_constant_index_out_of_range_is_rejected():
    a = minun.InputOp("A", (4, 5), 0.0, 1.0)
    four = arith.ConstantOp(IntegerAttr(4, i32))
    idx = minun.IndexOp(a, four)
    with pytest.raises(VerifyException, match="index 4 is outside the first dimension of 4x5"):
        idx.verify()
