"""Packed 4-bit weights (`quantize{weight_bits=4}`, formats/int4/weights.py): the packing
against its definition in plain Python (every code, both nibbles), the L2 codes (int4,
symmetric, per output channel, every matmul and convolution weight of the suite packed),
the generated C against the evaluator on x86 (every suite model, fixed8 / fixed16 /
zero-skew activations, every test input), the Uno (simavr) and the Cortex-M4 (QEMU) on a
few models, the flash it saves on the M4, and minun-compile's flag and refusals."""

from __future__ import annotations

import itertools
import json
import re
import subprocess

import numpy as np
import pytest
from cli_tools import tool as cli_tool
from codegen_support import SUITE, expected_for, quantized
from test_crosscheck import check_x86

from minun_mlir.codegen import emit_c
from minun_mlir.dialects import num
from minun_mlir.formats.int4 import weights as int4
from minun_mlir.targets import run_model

CONFIGS = ("fixed8-w4", "fixed16-w4", "mixed16-8-w4", "zero-skew8-w4")
SLOW = ("lenet", "fastgrnn-digits")


def test_pack_unpack_every_code_in_both_nibbles():
    """Plain Python, no numpy: all 16 codes (-8 included) in every pair, in the low and
    the high nibble, and an odd count; byte k = code 2k | code 2k+1 << 4."""
    codes = list(range(-8, 8))
    assert len(codes) == 16
    pairs = [c for pair in itertools.product(codes, repeat=2) for c in pair]
    data = int4.pack(pairs)
    assert len(data) == 256
    assert int4.unpack(data, len(pairs)) == pairs
    assert int4.pack([-8, 7]) == bytes([0x78])  # 1000 low, 0111 high
    assert int4.pack([7, -8]) == bytes([0x87])
    assert int4.pack([-1, 0, 3]) == bytes([0x0F, 0x03])  # the odd code's high nibble 0
    assert int4.unpack(int4.pack([-1, 0, 3]), 3) == [-1, 0, 3]
    for bad in (8, -9):
        with pytest.raises(ValueError):
            int4.pack([bad])


def reduction_weights(l2) -> list[num.ParamOp]:
    """The dense parameters read by matmuls and convolutions as their weight."""
    out = []
    for op in l2.walk():
        if isinstance(op, (num.MatMulOp, num.Conv2DOp)):
            for v in op.operands[:2]:
                if isinstance(v.owner, num.ParamOp) and v.owner.array().size > 1:
                    out.append(v.owner)
    return out


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("model", ["suite/lenet-digits10", "suite/fastgrnn-digits10",
                                   "suite/protonn-digits10"])
def test_weights_are_int4_codes_per_channel(model, config):
    """Every matmul and convolution weight (conv filters, dense layers, the recurrent
    cell's W and U read inside its loop) is packed: codes in [-8, 7] with a scale per
    output channel; zero-skew's scale (max|w| / 7, or lower where clipping the largest
    weights loses less) gives each channel a code of 7 or -8."""
    l2, _ = quantized(model, config)
    weights = reduction_weights(l2)
    assert weights
    for p in weights:
        assert p.packed_bits is not None, p.sym_name.data
        q = p.array().astype(np.int64)
        assert q.min() >= -8 and q.max() <= 7
        axis = p.channel_axis.value.data
        if "zero-skew" in config:
            tops = np.abs(np.moveaxis(q, axis, 0).reshape(q.shape[axis], -1)).max(axis=1)
            assert np.all(tops[tops > 0] >= 7), (p.sym_name.data, tops)


X86 = [pytest.param(f"suite/{m}", c, marks=[pytest.mark.slow] if any(
    k in m for k in SLOW) else []) for m in SUITE for c in CONFIGS]


@pytest.mark.parametrize("model,config", X86)
def test_x86_build_equals_evaluator(model, config, tmp_path):
    check_x86(model, config, tmp_path)


BOARDS = [("suite/protonn-digits10", "fixed8-w4", "avr"),
          ("suite/fastgrnn-lr-digits10", "zero-skew8-w4", "avr"),
          ("suite/fastgrnn-digits-binary", "fixed16-w4", "avr"),
          ("suite/lenet-digits10", "zero-skew8-w4", "cortex-m4"),
          ("suite/lenet-digits10", "fixed16-w4", "cortex-m4"),
          ("suite/fastgrnn-digits10", "fixed8-w4", "cortex-m4")]


@pytest.mark.slow
@pytest.mark.parametrize("model,config,target", BOARDS)
def test_board_equals_evaluator(model, config, target, tmp_path):
    l2, _ = quantized(model, config)
    exp = expected_for(model, config, limit=2)
    emit_c(l2, target, tmp_path)
    r = run_model(tmp_path, target, exp.inputs[:2], name=model.split("/")[-1], config=config,
                  ram_budget=2048 - 256 if target == "avr" else None)
    np.testing.assert_array_equal(r.labels, exp.labels[:2], err_msg=target)
    np.testing.assert_array_equal(r.outputs, exp.scores[:2], err_msg=target)


def test_packed_arrays_hold_two_codes_per_byte(tmp_path):
    """model.c's weight arrays: each packed parameter's array (and any re-ordered copy)
    has ceil(n / 2) bytes, where the per-channel int8 build has n."""
    sizes = {}
    for config in ("zero-skew8-pc", "zero-skew8-w4"):
        l2, _ = quantized("suite/lenet-digits10", config)
        emit_c(l2, "x86", tmp_path / config)
        text = (tmp_path / config / "model.c").read_text()
        sizes[config] = {m[0]: int(m[1]) for m in re.findall(
            r"static const int8_t (p_(?:CF1|CF2|FW1|FW2)\w*)\[(\d+)\]", text)}
    assert sizes["zero-skew8-pc"].keys() == sizes["zero-skew8-w4"].keys()
    assert sizes["zero-skew8-pc"]
    for name, n in sizes["zero-skew8-pc"].items():
        assert sizes["zero-skew8-w4"][name] == (n + 1) // 2, name


@pytest.mark.slow
def test_flash_on_the_m4_drops_by_most_of_half_the_weights(tmp_path):
    """LeNet on the Cortex-M4: the image with packed weights is smaller than the one with
    per-channel int8 weights by at least 40% of the weights' bytes (half of them, less
    the unpacking code)."""
    flash = {}
    for config in ("zero-skew8-pc", "zero-skew8-w4"):
        l2, _ = quantized("suite/lenet-digits10", config)
        exp = expected_for("suite/lenet-digits10", config, limit=1)
        emit_c(l2, "cortex-m4", tmp_path / config)
        r = run_model(tmp_path / config, "cortex-m4", exp.inputs[:1], name="lenet",
                      config=config)
        np.testing.assert_array_equal(r.outputs, exp.scores[:1])
        flash[config] = r.flash_bytes
        if config.endswith("w4"):
            n = sum(p.array().size for p in reduction_weights(l2))
    assert flash["zero-skew8-pc"] - flash["zero-skew8-w4"] >= 0.4 * n, (flash, n)


LENET = SUITE["lenet-digits10"].weights
MISTAKES = [
    (["--repr", "posit", "--weight-bits", "4"],
     "--weight-bits is for --repr fixed or zero-skew, not --repr posit"),
    (["--weight-bits", "4", "--scales", "maxscale"],
     "--weight-bits 4 needs data-driven scales (a scale per output channel)"),
    (["--repr", "zero-skew", "--weight-bits", "4", "--weight-rounding", "gptq", "--train",
      str(LENET / "train.npy")],
     "--weight-bits 4 rounds to the nearest int4 code; weight-rounding gptq chooses int8 "
     "codes"),
    (["--weight-bits", "4", "--search", "shiftry", "--train", str(LENET / "train.npy")],
     "--weight-bits 4 is not searched: the precision searches and their assignments choose "
     "8-, 16- or 32-bit tensors"),
]


def minun_compile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([cli_tool("minun-compile"), *args],
                          capture_output=True, text=True, timeout=600)


def test_cli_runs_and_refuses_with_one_line(tmp_path):
    """minun-compile --weight-bits 4 names the configuration, packs the weights and its
    x86 run agrees with the evaluator; what it cannot honour is one line and exit 1."""
    report = tmp_path / "r.json"
    r = minun_compile(str(LENET / "model.onnx"), "--repr", "zero-skew", "--weight-bits",
                      "4", "--train", str(LENET / "train.npy"), "--test",
                      str(LENET / "test.npy"), "--out", str(tmp_path / "c"), "--run",
                      "--max-inputs", "20", "--json", str(report))
    assert r.returncode == 0, r.stderr
    assert "model [zero-skew8-w4]" in r.stdout
    assert json.loads(report.read_text())["run"]["agreement"] == 1.0
    assert "static const int8_t p_conv1_w_t[27]" in (tmp_path / "c" / "model.c").read_text()
    for args, message in MISTAKES:
        bad = minun_compile(str(LENET / "model.onnx"), *args)
        assert bad.returncode == 1 and "Traceback" not in bad.stderr, bad.stderr
        assert bad.stderr.strip().splitlines() == [f"minun-compile: error: {message}"]
