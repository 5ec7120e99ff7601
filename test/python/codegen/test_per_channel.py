"""Per-channel weight scales (`quantize{per-channel=true}`, docs/numerics.md): the stored
weights and biases against the float ones (each channel at its own GetScale), the
evaluator's per-channel matmul against numpy integer math written from the contract, the
accuracy against the float program, and the generated C against the evaluator on x86
(every input, three rounding modes, 8 and 16 bits), the Uno (simavr, rounding to nearest)
and the Cortex-M4 (QEMU, toward zero), 2 inputs each, on every suite model and the vendored
ONNX models (mnist-8 on the M4 only) and rnnpool (depthwise convolutions). Prints sizes and
latencies (-s)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from codegen_support import (
    EXAMPLES,
    ONNX,
    SUITE,
    expected_for,
    quantized,
)
from test_crosscheck import check_x86

from minun_mlir.codegen import emit_c
from minun_mlir.dialects import num
from minun_mlir.numerics.float_eval import evaluate
from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
from minun_mlir.targets import run_model

MODELS = [f"suite/{s}" for s in SUITE] + [f"real/{m}" for m in ONNX]
SLOW = ("lenet", "fastgrnn-digits", "mnist")


def _slow(m: str) -> list:
    return [pytest.mark.slow] if any(k in m for k in SLOW) else []


def per_channel_params(l2) -> list[num.ParamOp]:
    return [op for op in l2.walk() if isinstance(op, num.ParamOp) and op.scales()]


@pytest.mark.parametrize("model", ["suite/lenet-digits10", "real/onnx-mnist-8",
                                   "suite/protonn-digits10"])
def test_each_channel_takes_its_own_scale(model):
    """Every channel of a per-channel weight is stored at GetScale of its own largest
    float magnitude (or lower, when the accumulator bounds it): its largest integer uses
    the top bit of the width, and the stored value is the float weight rounded toward
    zero. A fused bias is stored at each channel's product scale (activation + weight)."""
    from codegen_support import ALL_MODELS

    from minun_mlir.dialects import minun
    from minun_mlir.driver import load_model

    l2, _ = quantized(model, "fixed8-pc")
    reductions = [op for op in l2.walk() if isinstance(op, (num.MatMulOp, num.Conv2DOp))
                  and op.channel_shifts is not None]
    assert reductions, "no weight got per-channel scales"
    m = ALL_MODELS[model]
    l1 = load_model(m.program, m.weights, dict(m.dims) or None)
    floats = {op.sym_name.data: op.array() for op in l1.walk()
              if isinstance(op, minun.ParamOp)}
    spread, biases = 0, 0
    for op in reductions:
        index, p, _ = num.channel_operand(op)
        activation = op.operands[1 - index].type.element_type.frac
        w = np.asarray(floats[p.sym_name.data], dtype=np.float64)
        q = p.array().astype(np.int64)
        axis = p.channel_axis.value.data
        scales = p.scales()
        spread = max(spread, max(scales) - min(scales))
        for j, s in enumerate(scales):
            wj, qj = np.take(w, j, axis=axis), np.take(q, j, axis=axis)
            top = np.abs(wj).max()
            own = 7 - math.floor(math.log2(top) + 1) if top > 0 else 7  # GetScale, 8 bits
            assert s <= own
            if s == own and top > 0:
                assert np.abs(qj).max() >= 64  # the channel uses its 8th bit
            assert np.all(np.abs(qj / 2.0**s - wj) < 2.0**-s)  # toward zero: < 1 unit
        if op.bias is not None and op.bias.owner.sym_name.data in floats:
            biases += 1
            b = np.asarray(floats[op.bias.owner.sym_name.data], dtype=np.float64).ravel()
            bq = op.bias.owner.array().astype(np.int64)
            bs = op.bias.owner.scales()
            assert list(bs) == [activation + s for s in scales]
            assert np.all(np.abs(bq / 2.0 ** np.array(bs, dtype=np.float64) - b)
                          < 2.0 ** -np.array(bs, dtype=np.float64))
    assert spread > 0, "every channel got the same scale: nothing per-channel was tested"
    if "protonn" not in model:  # ProtoNN's W x has no bias
        assert biases, "no bias was fused"


def test_shifts_match_numpy_integer_math():
    """The evaluator's kernel of a per-channel matmul (the sine model's first layer, 16
    channels) against the contract computed with numpy on every input integer in
    [-40, 40): the exact sum of each channel shifted right by its shift, per rounding."""
    from minun_mlir.formats.fixed.representation import _KERNELS

    for config, rounding in (("fixed8-pc", "trunc"), ("fixed8-pc-nearest", "nearest"),
                             ("fixed8-pc-floor-sat", "floor")):
        l2, _ = quantized("real/onnx-sine", config)
        mm = next(op for op in l2.walk() if isinstance(op, num.MatMulOp)
                  and op.channel_shifts is not None)
        w = mm.rhs.owner.array().astype(np.int64)  # (1, 16)
        shifts = [int(v) for v in mm.channel_shifts.get_values()]
        assert len(set(shifts)) > 1, shifts
        a = np.arange(-40, 40, dtype=np.int64)
        want = np.empty((len(a), w.shape[1]), dtype=np.int64)
        for j, n in enumerate(shifts):
            exact, d = a * w[0, j], 2 ** n
            if rounding == "floor":
                want[:, j] = np.floor_divide(exact, d)
            elif rounding == "nearest":
                want[:, j] = np.floor_divide(exact + d // 2, d)
            else:
                want[:, j] = np.sign(exact) * (np.abs(exact) // d)
        got = _KERNELS["num.matmul"](mm, a.reshape(-1, 1, 1), w[None])
        np.testing.assert_array_equal(got.reshape(len(a), -1), want, err_msg=rounding)


@pytest.mark.parametrize("model", ["real/onnx-sine", "real/onnx-mnist-8"])
def test_per_channel_fixed8_is_closer_to_float(model):
    """Against the float program on the test set: the per-channel fixed8 outputs are
    closer (median relative error) than the per-tensor ones."""
    from codegen_support import ALL_MODELS

    from minun_mlir.driver import load_model

    m = ALL_MODELS[model]
    l1 = load_model(m.program, m.weights, dict(m.dims) or None)
    errors = {}
    for config in ("fixed8", "fixed8-pc"):
        l2, test = quantized(model, config)
        f = evaluate(l1, test.features).outputs[0].reshape(len(test.features), -1)
        q = decode_outputs(l2, evaluate_l2(l2, test.features).outputs)[0]
        q = q.reshape(len(test.features), -1)
        rel = np.linalg.norm(q - f, axis=1) / np.linalg.norm(f, axis=1)
        errors[config] = float(np.median(rel))
    assert errors["fixed8-pc"] < errors["fixed8"], errors


X86 = [pytest.param(m, c, marks=_slow(m)) for m in MODELS
       for c in ("fixed8-pc", "fixed8-pc-nearest", "fixed8-pc-floor-sat", "fixed16-pc")] + [
    # the examples: rnnpool's convolutions, depthwise ones among them
    pytest.param(m, "fixed8-pc", marks=_slow(m) + ([pytest.mark.slow] if m == "rnnpool"
                                                   else [])) for m in EXAMPLES]


@pytest.mark.parametrize("model,config", X86)
def test_x86_build_equals_evaluator(model, config, tmp_path):
    check_x86(model, config, tmp_path)


# mnist-8 is not run on the Uno: its 28x28 input and intermediate tensors (1,824 B of
# scratch with per-channel scales, 2,352 B per-tensor) do not fit in 2 KB of RAM
# rnnpool: depthwise convolutions with a scale per group
BOARDS = [pytest.param(m, t, marks=[pytest.mark.slow]) for m in [*MODELS, "rnnpool"]
          for t in ("avr", "cortex-m4") if not (t == "avr" and "mnist" in m)]


@pytest.mark.parametrize("model,target", BOARDS)
def test_board_equals_evaluator(model, target, tmp_path, capsys):
    config = "fixed8-pc-nearest" if target == "avr" else "fixed8-pc"
    l2, _ = quantized(model, config)
    exp = expected_for(model, config, limit=2)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, exp.inputs[:2], name=model.split("/")[-1], config=config,
                  ram_budget=2048 - 256 if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:2], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:2], err_msg=target)
    with capsys.disabled():
        print(f"\n  {model} {config} {target}: flash {r.flash_bytes} B, RAM {r.ram_bytes} B,"
              f" {r.latency_median:,.0f} {r.latency_unit}")
