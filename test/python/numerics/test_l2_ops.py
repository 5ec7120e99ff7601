"""Which ops L2 uses (docs/numerics.md): comparisons, selections and negation are `num`
ops with bit-exact kernels; only data movement and structure stay `minun`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minun_mlir.dialects import minun, num
from minun_mlir.driver import load_model
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.convert import HANDLERS
from minun_mlir.numerics.l2_eval import evaluate_l2
from minun_mlir.pipeline import lower_to_l2

ROOT = Path(__file__).resolve().parents[3]

ENCODED = (num.ReluOp, num.Relu6Op, num.ClipOp, num.NegOp, num.MaxOp, num.MinOp,
           num.MaxPoolOp, num.ArgMaxOp, num.SgnOp, num.SoftmaxOp, num.LogSoftmaxOp)
# element-type generic minun ops an L2 program may contain
GENERIC = (minun.ReshapeOp, minun.TransposeOp, minun.SpliceOp, minun.IndexOp,
           minun.ReverseOp, minun.ConcatOp, minun.SpliceAssignOp, minun.InitOp,
           minun.LoopOp, minun.SumOp, minun.IfNonNegOp, minun.CallOp, minun.YieldOp)


def test_every_new_num_op_appears_in_the_lit_round_trip():
    text = (ROOT / "test/lit/num/ops.mlir").read_text()
    assert not [op.name for op in ENCODED if f"{op.name} " not in text]


def test_the_handler_table_maps_each_l1_op_once_to_a_rule():
    assert all(callable(rule) for rule in HANDLERS.values())
    for l1, l2 in ((minun.ReluOp, "num.ReluOp"), (minun.MaxOp, "num.MaxOp"),
                   (minun.ArgMaxOp, "num.ArgMaxOp")):
        assert HANDLERS[l1].__name__ == f"as_num({l2.split('.')[1]})"


@pytest.mark.parametrize("model", ["lenet", "bonsai", "fastgrnn", "rnnpool"])
@pytest.mark.parametrize("repr_name", ["fixed", "float32"])
def test_quantized_examples_use_num_ops_except_for_data_movement(model, repr_name):
    l1 = load_model(ROOT / "examples" / f"{model}.sd")
    l2 = lower_to_l2(l1, bits=16, repr=repr_name)
    names = set()
    for op in l2.walk():
        names.add(op.name)
        if op.name.startswith("minun."):
            assert isinstance(op, GENERIC), op.name
        else:
            assert op.name.split(".")[0] in ("num", "func", "arith", "builtin"), op.name
    assert names & {"num.argmax", "num.sgn"} or model == "rnnpool"


FX = "!num.fixed<8, 4>"
PROGRAM = f"""
func.func @main() -> tensor<6x{FX}> attributes {{num.rounding = "nearest"}} {{
  %x = num.input "X" : tensor<6x{FX}>
  %n = num.neg %x : tensor<6x{FX}>
  %c = num.clip %n {{lo = -1.03 : f64, hi = 50.0 : f64}} : tensor<6x{FX}>
  %r = num.relu6 %c : tensor<6x{FX}>
  %m = num.max %r, %n : (tensor<6x{FX}>, tensor<6x{FX}>) -> tensor<6x{FX}>
  func.return %m : tensor<6x{FX}>
}}"""


def test_fixed_kernels_encode_bounds_and_wrap_negation():
    module = parse_ir(PROGRAM)
    x = np.array([[-8.0, -1.0, 0.0625, 1.0, 7.9375, -0.5]])
    (out,) = evaluate_l2(module, x).outputs
    q = np.array([-128, -16, 1, 16, 127, -8])  # stored inputs at scale 4
    neg = np.where(q == -128, -128, -q)  # -(-128) wraps in 8 bits
    # lo = round(-1.03 * 16) = -16 (nearest); hi = 50 * 16 is above 127: no bound
    clipped = np.clip(neg, -16, 127)
    relu6 = np.clip(clipped, 0, 96)  # 6 << 4
    np.testing.assert_array_equal(out[0], np.maximum(relu6, neg))


def test_float32_kernels_compute_in_float32():
    module = parse_ir(PROGRAM.replace(FX, "f32"))
    x = np.array([[-8.0, -1.0, 0.1, 1.0, 7.9, -0.5]])
    (out,) = evaluate_l2(module, x).outputs
    assert out.dtype == np.float32
    xf = x.astype(np.float32)[0]
    expect = np.maximum(np.clip(np.clip(-xf, np.float32(-1.03), np.float32(50.0)), 0, 6), -xf)
    np.testing.assert_array_equal(out[0], expect)
