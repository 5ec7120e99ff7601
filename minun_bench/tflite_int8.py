"""A numpy model of TFLite's int8 arithmetic (the reference CMSIS-NN's s8 kernels follow):
TFLite's quantization rules for a float network and its integer inference, so that the
CMSIS-NN benchmark (minun_bench/cmsis.py) checks every output of the C kernels.

Rules (TFLite's int8 quantization spec): activations asymmetric per tensor
(ChooseQuantizationParams on the calibrated range), weights symmetric in [-127, 127] (per
output channel for convolutions, per tensor for fully connected layers), int32 biases at
scale s_in * s_w, and each output requantized by MultiplyByQuantizedMultiplier with the
multiplier and shift QuantizeMultiplier gives for s_in * s_w / s_out (affine.py). Tensors are
NHWC, filters OHWI (CMSIS-NN's layouts). The 16x8 variant (CMSIS-NN's s16): int16
activations symmetric (zero point 0), the same int8 weights, int64 biases and accumulators.
"""

from __future__ import annotations

import numpy as np

from minun_mlir.formats.zero_skew import arith as affine


def conv_float(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """x (H, W, C), w (O, KH, KW, C), stride 1, zero padding `pad` on every side."""
    kh, kw = w.shape[1:3]
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    oh, ow = xp.shape[0] - kh + 1, xp.shape[1] - kw + 1
    cols = np.stack([xp[i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
    return cols.reshape(oh, ow, -1) @ w.reshape(w.shape[0], -1).T + b


def max_pool(x: np.ndarray, k: int) -> np.ndarray:
    """k x k windows at stride k, no padding (the rows/columns left over are dropped)."""
    oh, ow = x.shape[0] // k, x.shape[1] // k
    return x[:oh * k, :ow * k].reshape(oh, k, ow, k, -1).max(axis=(1, 3))


def quantize_weights(w: np.ndarray, per_channel: bool) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights (zero point 0, [-127, 127]) and their scale per output row."""
    rows = w.reshape(w.shape[0], -1)
    if per_channel:
        scales = np.array([affine.symmetric_scale(r) for r in rows])
    else:
        scales = np.full(w.shape[0], affine.symmetric_scale(rows))
    q = np.stack([affine.quantize(r, s, 0, 8) for r, s in zip(rows, scales)])
    return np.clip(q, -127, 127).reshape(w.shape).astype(np.int8), scales


def layer_params(w, b, s_in: float, s_out: float, per_channel: bool) -> dict:
    """The integer parameters of one conv/fc layer: weights, int32 bias, multiplier/shift
    per output channel."""
    qw, s_w = quantize_weights(w, per_channel)
    bias = np.array([int(affine.round_away(v / (s_in * s))) for v, s in zip(b, s_w)])
    ms = [affine.quantize_multiplier(s_in * s / s_out) for s in s_w]
    return {"w": qw, "bias": bias.astype(np.int64),
            "mult": np.array([m for m, _ in ms]), "shift": np.array([s for _, s in ms])}


def mbqm64(acc: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier on an int64 accumulator (the 16x8 kernels):
    the multiplier reduced to 16 bits (rounded), one rounding shift by 15 - shift."""
    reduced = (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF
    total = 15 - shift
    return (np.asarray(acc, dtype=np.int64) * reduced + (1 << (total - 1))) >> total


def requantize(acc: np.ndarray, p: dict, zp_out: int, lo: int, hi: int, bits: int = 8
               ) -> np.ndarray:
    """acc (..., O) -> int8 (int32 acc, MultiplyByQuantizedMultiplier) or int16 (int64 acc,
    its 64-bit form) per channel, + zp_out, clamped to the activation range."""
    mul = affine.mbqm if bits == 8 else mbqm64
    out = np.empty(acc.shape, dtype=np.int64)
    for o in range(acc.shape[-1]):
        out[..., o] = mul(acc[..., o], int(p["mult"][o]), int(p["shift"][o]))
    return np.clip(out + zp_out, lo, hi)


def conv_int8(x: np.ndarray, p: dict, pad: int, zp_in: int, zp_out: int, lo: int,
              hi: int, bits: int = 8) -> np.ndarray:
    """TFLite's int8 (or 16x8) convolution: padding holds real 0 (the input's zero point)."""
    xs = x.astype(np.int64) - zp_in  # padded taps are then exactly 0
    acc = conv_float(xs, p["w"].astype(np.int64), p["bias"], pad)
    return requantize(acc, p, zp_out, lo, hi, bits)


def fc_int8(x: np.ndarray, p: dict, zp_in: int, zp_out: int, lo: int, hi: int,
            bits: int = 8) -> np.ndarray:
    acc = p["w"].astype(np.int64) @ (x.reshape(-1).astype(np.int64) - zp_in) + p["bias"]
    return requantize(acc, p, zp_out, lo, hi, bits)


def depthwise_float(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """x (H, W, C), w (C, KH, KW) (channel multiplier 1), stride 1, zero padding `pad`."""
    kh, kw = w.shape[1:3]
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    oh, ow = xp.shape[0] - kh + 1, xp.shape[1] - kw + 1
    return sum(xp[i:i + oh, j:j + ow] * w[:, i, j] for i in range(kh) for j in range(kw)) + b


def avg_pool_float(x: np.ndarray, k: int) -> np.ndarray:
    oh, ow = x.shape[0] // k, x.shape[1] // k
    return x[:oh * k, :ow * k].reshape(oh, k, ow, k, -1).mean(axis=(1, 3))


def depthwise_int8(x: np.ndarray, p: dict, pad: int, zp_in: int, zp_out: int, lo: int,
                   hi: int, bits: int = 8) -> np.ndarray:
    acc = depthwise_float(x.astype(np.int64) - zp_in, p["w"].astype(np.int64), p["bias"], pad)
    return requantize(acc, p, zp_out, lo, hi, bits)


def avg_pool_int(x: np.ndarray, k: int, lo: int, hi: int) -> np.ndarray:
    """TFLite's integer average pool (scale and zero point kept): the window's sum divided
    by its count, rounded half away from zero, clamped."""
    oh, ow = x.shape[0] // k, x.shape[1] // k
    s = x[:oh * k, :ow * k].astype(np.int64).reshape(oh, k, ow, k, -1).sum(axis=(1, 3))
    n = k * k
    q = np.where(s > 0, (s + n // 2) // n, -((-s + n // 2) // n))  # C's truncating division
    return np.clip(q, lo, hi)
