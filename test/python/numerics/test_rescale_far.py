"""num.rescale by 63 or more shifts either way (values whose scales are far apart, as in a
deep network whose activations grow to 2^59 beside 2^-20 biases): the evaluator and the
generated C agree with the definition, computed here with Python integers."""

from __future__ import annotations

import numpy as np
import pytest

from minun_mlir import native
from minun_mlir.ir_text import parse_ir
from minun_mlir.numerics.l2_eval import evaluate_l2


def program(bits_in: int, s_in: int, bits_out: int, s_out: int, rounding: str,
            overflow: str) -> str:
    t = f"tensor<6x!num.fixed<{bits_in}, {s_in}>>"
    r = f"tensor<6x!num.fixed<{bits_out}, {s_out}>>"
    return (f'func.func @main() -> {r} attributes {{num.rounding = "trunc", '
            f'num.overflow = "wrap"}} {{\n'
            f'  %x = num.input "X" : {t}\n'
            f'  %y = num.rescale %x {{rounding = #num<rounding {rounding}>, overflow = '
            f'#num<overflow {overflow}>}} : {t} -> {r}\n'
            f'  func.return %y : {r}\n}}\n')


def reference(x: int, shift: int, bits: int, rounding: str, overflow: str) -> int:
    """narrow(round(x / 2^shift)) with unbounded integers."""
    if shift >= 0:
        d = 1 << shift
        q = {"floor": x // d, "trunc": -((-x) // d) if x < 0 else x // d,
             "nearest": (x + d // 2) // d}[rounding]
    else:
        q = x << -shift
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if overflow == "saturate":
        return min(max(q, lo), hi)
    return (q - lo) % (1 << bits) + lo


@pytest.mark.parametrize("s_in,s_out", [(20, -44), (70, 0), (0, 63), (-44, 20), (0, -64),
                                        (10, -90)])
@pytest.mark.parametrize("rounding", ["trunc", "floor", "nearest"])
@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_far_rescale_matches_the_definition_in_the_evaluator_and_c(s_in, s_out, rounding,
                                                                    overflow):
    l2 = parse_ir(program(32, s_in, 16, s_out, rounding, overflow))
    ints = np.array([0, 1, -1, 123456789, -2**31, 2**31 - 1], dtype=np.int64)
    x = ints.astype(np.float64) * 2.0 ** -s_in  # exact in float64: encodes back to ints
    got = np.asarray(evaluate_l2(l2, x[None]).outputs[0])[0]
    want = [reference(int(v), s_in - s_out, 16, rounding, overflow) for v in ints]
    assert list(got) == want
    assert list(native.NativeProgram(l2).outputs(x[None])[0][0]) == want
