"""TFLite's fully-integer LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM with int8 input, weights and
hidden state, an int16 cell state and int16 gates: TFLM's "8x8->16" kernel, lstm_eval.h
and lstm_eval_common.cc), integer for integer: the integers of `minun.tflite_lstm` in the
zero-skew representation, for its numpy evaluator and its C (formats/zero_skew/loops.py).

Per time step and batch row, for each gate g (input, forget, cell, output), with x the int8
input, h the int8 hidden state before the step:

    a = clamp16(MBQM(bias_g + sum W_g (x - zp_x), M_g))     (effective scale s_x s_W / 2^-12)
    r = clamp16(MBQM(sum R_g (h - zp_h), N_g))              (s_h s_R / 2^-12)
    gate = sigmoid16(clamp16(a + r))   (the cell gate: tanh16), Q3.12 in, Q0.15 out
    c = clamp16(clamp16(MBQM(f c, 2^-15)) + clamp16(MBQM(i g, 2^-30 / s_c))), clipped
    h = clamp8(zp_h + MBQM(tanh16(c at s_c) o, 2^-30 / s_h))

MBQM is TFLite's MultiplyByQuantizedMultiplier (arith.mbqm), each multiplier TFLite's
QuantizeMultiplier of the double TFLM's Prepare computes (`params`). sigmoid16 and tanh16
are TFLite's reference_integer_ops Logistic / Tanh on int16: a linear interpolation in
TFLite's 256-entry sigmoid table (tflite_sigmoid_table.py, measured from TFLM's
interpreter), the input first multiplied by 3 (and shifted right, rounding, for a cell
state finer than 2^-12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .arith import mbqm, quantize_multiplier
from .tflite_sigmoid_table import SIGMOID_TABLE

GATES = "ifco"  # TFLite's order of the gates' tensors: input, forget, cell, output
GATE_INPUT_SCALE = 2.0 ** -12  # the gates' int16 input (Q3.12)
GATE_OUTPUT_SCALE = 2.0 ** -15  # the gates' int16 output (Q0.15)
TABLE = np.asarray(SIGMOID_TABLE, dtype=np.int64)


def f32(v: float) -> float:
    return float(np.float32(v))


@dataclass(frozen=True)
class LstmParams:
    """Everything the kernel reads, as TFLM's Prepare computes it from the file: int8
    weights W [4, H, I] and R [4, H, H] (gates i, f, c, o), int32 biases [4, H], per gate
    the (multiplier, shift) of the input and recurrent products, the three cell
    multiplications', the zero points, the cell state's power of two and its clip."""

    w: np.ndarray
    r: np.ndarray
    bias: np.ndarray
    input_mult: tuple[tuple[int, int], ...]
    recurrent_mult: tuple[tuple[int, int], ...]
    forget_cell_mult: tuple[int, int]
    input_cell_mult: tuple[int, int]
    output_mult: tuple[int, int]
    zp_x: int
    zp_h: int
    cell_power: int
    cell_clip: int  # the quantized clip, 0: none

    @property
    def hidden(self) -> int:
        return int(self.r.shape[1])

    def cell_tanh_scaling(self) -> tuple[int, int]:
        """(multiplier, right shift) TFLM's Tanh takes for the cell state."""
        return tanh_scaling(self.cell_power)

    def vector(self) -> np.ndarray:
        """The scalars as one int32 vector (`minun.tflite_lstm`'s `params`): per gate the
        input and recurrent (multiplier, shift), then the cell's three, zp_x, zp_h, the cell
        state's power of two, the quantized clip."""
        v = [x for g in range(4) for x in (*self.input_mult[g], *self.recurrent_mult[g])]
        v += [*self.forget_cell_mult, *self.input_cell_mult, *self.output_mult, self.zp_x,
              self.zp_h, self.cell_power, self.cell_clip]
        return np.asarray(v, dtype=np.int64)

    @staticmethod
    def from_arrays(w, r, bias, vector) -> LstmParams:
        v = [int(x) for x in np.asarray(vector).reshape(-1)]
        pairs = [(v[k], v[k + 1]) for k in range(0, 22, 2)]
        return LstmParams(np.asarray(w, np.int64), np.asarray(r, np.int64),
                          np.asarray(bias, np.int64), tuple(pairs[0:8:2]),
                          tuple(pairs[1:8:2]), pairs[8], pairs[9], pairs[10], v[22], v[23],
                          v[24], v[25])


VECTOR_LENGTH = 26


def make_params(w, r, bias, s_x: float, zp_x: int, s_w, s_r, s_h: float, zp_h: int,
                s_c: float, clip: float) -> LstmParams:
    """TFLM's PrepareGateParametersInteger and CreateLstmCellStateInfo. s_w, s_r: the
    four gates' weight scales (float32, as the file stores them)."""
    def fc(s_in: float, s_weight: float) -> tuple[int, int]:
        # GetQuantizedConvolutionMultipler: the float32 product, then double
        return quantize_multiplier(f32(f32(s_in) * f32(s_weight)) / GATE_INPUT_SCALE)

    def mul(s1: float, s2: float, s_out: float) -> tuple[int, int]:
        return quantize_multiplier(f32(s1) * f32(s2) / f32(s_out))

    power = round(math.log2(f32(s_c)))
    q_clip = int(min(max(f32(clip) / f32(s_c), -32768.0), 32767.0)) if clip > 0 else 0
    return LstmParams(
        np.asarray(w, np.int64), np.asarray(r, np.int64), np.asarray(bias, np.int64),
        tuple(fc(s_x, s) for s in s_w), tuple(fc(s_h, s) for s in s_r),
        mul(GATE_OUTPUT_SCALE, s_c, s_c), mul(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, s_c),
        mul(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, s_h), int(zp_x), int(zp_h), power, q_clip)


def tanh_scaling(power: int) -> tuple[int, int]:
    """TFLM's lstm_internal::Tanh: (input multiplier, right shift) of an int16 at 2^power;
    reference_integer_ops::Tanh's power-of-two case folds a left shift into the 3."""
    shift = 15 + power - 3
    return (3, -shift) if shift < 0 else (3 << shift, 0)


def _scaled(z: np.ndarray, mult: int, shift: int) -> np.ndarray:
    return (z * mult + ((1 << (shift - 1)) if shift > 0 else 0)) >> shift


def sigmoid16(z: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic(0, 0, ...): int16 Q3.12 -> int16 Q0.15."""
    v = np.asarray(z, np.int64) * 3
    a = np.abs(v)
    uh = np.minimum(a >> 9, 254)
    inter = (TABLE[uh] << 9) + (a & 0x1FF) * (TABLE[uh + 1] - TABLE[uh])
    res = np.where((a >> 9) >= 255, 0x7FFF << 10, inter)
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return res >> 10


def tanh16(z: np.ndarray, mult: int = 3, shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Tanh(mult, shift, ...) on int16 (after its power-of-two
    case: `mult` already holds it): -> int16 Q0.15."""
    v = _scaled(np.asarray(z, np.int64), mult, shift)
    a = np.abs(v)
    uh = np.minimum(a >> 8, 254)
    inter = (TABLE[uh] << 8) + (a & 0xFF) * (TABLE[uh + 1] - TABLE[uh])
    res = np.where((a >> 8) >= 255, 0xFFFF << 8, inter)
    res = np.where(v >= 0, res - (1 << 23) + (1 << 7), -res + (1 << 23) + (1 << 7) - 1)
    return res >> 8


def _clamp(v: np.ndarray, bits: int) -> np.ndarray:
    return np.clip(v, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def step(p: LstmParams, x: np.ndarray, h: np.ndarray, c: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray]:
    """One time step on rows: x [..., I] int8, h [..., H] int8, c [..., H] int16 -> (h, c)."""
    gates = []
    for g in range(4):
        acc = p.bias[g] + (x - p.zp_x) @ p.w[g].T
        a = _clamp(mbqm(acc, *p.input_mult[g]), 16)
        rec = _clamp(mbqm((h - p.zp_h) @ p.r[g].T, *p.recurrent_mult[g]), 16)
        z = _clamp(a + rec, 16)
        gates.append(tanh16(z) if GATES[g] == "c" else sigmoid16(z))
    i, f, cg, o = gates
    c = _clamp(_clamp(mbqm(f * c, *p.forget_cell_mult), 16) +
               _clamp(mbqm(i * cg, *p.input_cell_mult), 16), 16)
    if p.cell_clip:
        c = np.clip(c, -p.cell_clip, p.cell_clip)
    t = tanh16(c, *p.cell_tanh_scaling())
    h = _clamp(p.zp_h + mbqm(t * o, *p.output_mult), 8)
    return h, c


def lstm(p: LstmParams, x: np.ndarray, time_major: bool) -> np.ndarray:
    """The int8 output sequence of int8 x ([..., B, T, I], or [..., T, B, I] time-major),
    states starting at zero (the hidden state's zero point is its real 0)."""
    x = np.asarray(x, np.int64)
    seq = np.moveaxis(x, -3, -2) if time_major else x  # [..., B, T, I]
    h = np.full((*seq.shape[:-2], p.hidden), p.zp_h, dtype=np.int64)
    c = np.zeros_like(h)
    out = []
    for t in range(seq.shape[-2]):
        h, c = step(p, seq[..., t, :], h, c)
        out.append(h)
    y = np.stack(out, axis=-2)  # [..., B, T, H]
    return np.moveaxis(y, -2, -3) if time_major else y
