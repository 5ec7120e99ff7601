"""Packed 4-bit weights (`quantize{weight_bits=4}`, `minun-compile --weight-bits 4`).

The weights of matmuls and convolutions become int4 codes, symmetric (zero point 0) with
a scale per output channel, stored two to a byte in flash; biases, other parameters and
the activations keep their format (fixed8/fixed16, zero-skew int8). Why so little code:

- L2: a packed weight is the format's own per-channel weight (fixed point's
  `channel_scales`, zero-skew's `channel_real_scales`) of 8-bit elements whose codes lie
  in [-8, 7], marked `packed_bits = 4` (num.param verifies the range and the users). The
  arithmetic is the format's, so both evaluators compute the same integers unchanged.
- L3: lower-to-loops stores the marked constants two codes per byte and reads them back
  with explicit arith ops (minun_mlir/formats/int4/packed.py), so neither the C printer nor the
  target kernels know of it.

Byte layout: code 2k in the low nibble of byte k, code 2k+1 in the high nibble; the C
reads `(int8_t)(b << 4) >> 4` (low) and `(int8_t)b >> 4` (high).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation

from minun_mlir.formats.fixed import arith as fx

CODE_BITS = 4
LO, HI = -(1 << (CODE_BITS - 1)), (1 << (CODE_BITS - 1)) - 1
STORED_BITS = 8  # the L2 element width of a packed weight (the codes widen to it)
ATTR = "packed_bits"  # on num.param


def code_bits(config, width: int) -> int:
    """The bits a per-channel weight's codes take: 4 under weight_bits=4, else `width`."""
    return config.weight_bits or width


def code_rounding(config) -> str:
    """How a fixed-point per-channel weight's reals round to its codes: to nearest for
    int4 codes (rounding toward zero, the fixed-point default, would lose up to a whole
    code of 16), else the compile's rounding."""
    return "nearest" if config.weight_bits else config.rounding


def tensor_scale(config, values: np.ndarray, frac: int) -> int:
    """The scale the weight would have as one tensor (`frac`, its converted type's), at 4
    bits under weight_bits=4: every channel's scale is at least this, which keeps the
    per-channel shifts non-negative."""
    if not config.weight_bits:
        return frac
    return fx.get_scale(float(np.abs(values).max()), CODE_BITS)


def channel_scale(config, values: np.ndarray, scale: int) -> int:
    """A fixed-point channel's scale: `scale` (GetScale of its largest magnitude), or under
    weight_bits=4 one or two higher when saturating its few largest weights loses less
    (squared error, codes rounded to nearest) than the coarser grid does: at 4 bits a
    power-of-two scale otherwise leaves up to half the codes unused."""
    if not config.weight_bits:
        return scale

    def loss(s: int) -> float:
        codes = np.clip(np.floor(values * 2.0**s + 0.5), LO, HI)
        return float(np.sum((codes * 2.0**-s - values) ** 2))

    return min((scale, scale + 1, scale + 2), key=loss)


def real_scale(config, values: np.ndarray, int8_scale: float) -> float:
    """A zero-skew channel's real scale: `int8_scale` (max|w| / 127), or under
    weight_bits=4 max|w| / 7 shrunk by up to half where saturating the largest weights
    loses less (squared error, codes rounded to nearest, ties away from zero)."""
    if not config.weight_bits:
        return int8_scale
    top = float(np.abs(values).max()) if values.size else 0.0
    if top == 0.0:
        return 1.0

    def loss(s: float) -> float:
        q = np.clip(np.trunc(values / s + np.copysign(0.5, values)), LO, HI)
        return float(np.sum((q * s - values) ** 2))

    return min((top / HI * f for f in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)), key=loss)


def stored_bits(config, width: int) -> int:
    """The L2 element width of a per-channel weight (8 for packed codes)."""
    return STORED_BITS if config.weight_bits else width


def mark(config, param: Operation) -> None:
    """Mark a per-channel weight just made as packed (under weight_bits=4)."""
    if config.weight_bits:
        param.attributes[ATTR] = IntegerAttr(CODE_BITS, i64)


def refusal(weight_bits, scales: str, weight_rounding: str, flag: str = "--weight-bits"
            ) -> str | None:
    """Why weight_bits cannot be honoured with these options (one line), or None."""
    if weight_bits is None:
        return None
    if weight_bits != CODE_BITS:
        return f"{flag} takes {CODE_BITS} (packed int4 weights), got {weight_bits}"
    if scales == "maxscale":
        return f"{flag} 4 needs data-driven scales (a scale per output channel)"
    if weight_rounding != "nearest":
        return (f"{flag} 4 rounds to the nearest int4 code; weight-rounding "
                f"{weight_rounding} chooses int8 codes")
    return None


def pack(codes: Sequence[int]) -> bytes:
    """Codes in [-8, 7] -> bytes, two per byte (an odd count pads the last high nibble
    with 0). Plain Python: the reference the lowering's packing is checked against."""
    out = bytearray((len(codes) + 1) // 2)
    for i, c in enumerate(codes):
        c = int(c)
        if not LO <= c <= HI:
            raise ValueError(f"int4 code out of range: {c}")
        out[i >> 1] |= (c & 0xF) << (4 * (i & 1))
    return bytes(out)


def unpack(data: bytes, n: int) -> list[int]:
    """The n codes of `pack`'s bytes, read as the generated C reads them."""
    def s8(v: int) -> int:
        v &= 0xFF
        return v - 256 if v > 127 else v

    return [s8(data[i >> 1] << 4) >> 4 if i % 2 == 0 else s8(data[i >> 1]) >> 4
            for i in range(n)]


def encloses(config, definition: Operation, user: Operation) -> bool:
    """Under weight_bits=4, whether the L1 weight `definition` lies in a block enclosing
    `user`'s (a recurrent cell's weights, read in its loop): such a weight is packed too
    (the per-channel rules of --per-channel alone take weights of the user's block only,
    which keeps their code as it was)."""
    if not config.weight_bits:
        return False
    target, block = definition.parent_block(), user.parent_block()
    while block is not None and block is not target:
        parent = block.parent_op()
        block = None if parent is None else parent.parent_block()
    return block is not None
