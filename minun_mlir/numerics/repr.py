"""The number-representation interface (architecture property 1).

Everything that depends on how a real is encoded lives behind `Representation`: how a
program's L1 values get their L2 types (`quantize`), how stored values map to reals, and
the bit-exact kernels the L2 evaluator runs. One implementation per representation
(fixed-point, float32, posits, bfloat16, zero-skew int8). Passes and searches look
representations up by name or by element type and never test which one they have.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from minun_mlir.formats.fixed import arith as fx
from minun_mlir.formats.fixed.arith import DEFAULT_ROUNDING
from minun_mlir.numerics.float_eval import Profile

# the representation a compile uses when none is named (and an assignment that names none)
DEFAULT_REPRESENTATION = "fixed"


@dataclass(frozen=True)
class QuantizeConfig:
    """Options of the quantize pass (see passes/quantize.py for their meaning)."""

    bits: int = 16
    es: int = 2  # exponent bits of the posit representation (posit<bits, es>)
    # posits: es per bitwidth where it is not `es` (MinUn's stage I picks es for 8-bit and
    # 16-bit posits separately, e.g. {8: 0, 16: 1})
    es_by_bits: dict[int, int] = field(default_factory=dict)
    scales: str = "data-driven"  # or "maxscale"
    maxscale: int | None = None  # None: tuned on the training data (SeeDot §5.3.2)
    rounding: str = DEFAULT_ROUNDING
    overflow: str = "wrap"
    # Shiftry's generated arithmetic (to reproduce its paper): its shifts are arithmetic
    # (shift-rounding=floor) while its constants and inputs truncate (`rounding`), and it
    # adds at the result's scale (adds=result-scale) where ours adds exactly, rounding once
    shift_rounding: str | None = None  # rescales and reductions; None: `rounding`
    adds: str = "exact"  # or "result-scale"
    input_scale: int | None = None
    # "feature": per-feature input ranges folded into the first weights
    # (numerics/input_scales.py); "tensor": one input scale; "auto": feature where the
    # features' ranges are far apart (input_scales.AUTO_SPREAD) and it applies
    input_scales: str = "auto"
    exp: str = "auto"  # "shiftry", "seedot", or auto: seedot under maxscale
    demote: tuple[str, ...] = ()  # names (params, inputs, SSA name hints) at bits // 2
    bits_by_name: dict[str, int] = field(default_factory=dict)
    # all parameters at this bitwidth (e.g. 8 of 16); literals (1 - z) stay at `bits`
    param_bits: int | None = None
    input_bits: int | None = None  # the input at this bitwidth (8: camera pixels as bytes)
    # data-driven scales fixed by name (a bitwidth search's choice, minun_mlir/
    # bitwidth_search.py); a computed value never goes above its operands' precision
    scale_by_name: dict[str, int] = field(default_factory=dict)
    # fixed point: a scale per output channel for the weights of matmuls and convolutions
    # (docs/numerics.md, "Per-channel weight scales")
    per_channel: bool = False
    # fixed point and zero-skew: matmul and convolution weights as packed int4 codes with
    # a scale per output channel (formats/int4/weights.py); None: the format's width
    weight_bits: int | None = None
    # zero-skew: move each bias by the mean error the quantized program makes there on
    # the calibration data, then quantize again (numerics/bias_correction.py)
    bias_correction: bool = False
    # zero-skew: "gptq" chooses a layer's int8 weight codes together so that its output on
    # the calibration data stays closest to the float model's (numerics/weight_rounding.py)
    weight_rounding: str = "nearest"
    # posits: dot products (matmul, conv2d, softmax's and normalise_l2's sums) accumulate
    # in a quire; false rounds every product and partial sum instead (no quire in RAM)
    quire: bool = True

    def bits_for(self, name: str | None, is_param: bool = False) -> int:
        if is_param and self.param_bits is not None and name not in self.bits_by_name:
            return self.param_bits
        if name is not None:
            if name in self.bits_by_name:
                return self.bits_by_name[name]
            if name in self.demote:
                return self.bits // 2
        return self.bits


    def es_for(self, bits: int) -> int:
        """The exponent bits of the posits of width `bits`."""
        return self.es_by_bits.get(bits, self.es)

    def scale_override(self, name: str | None) -> int | None:
        return None if name is None else self.scale_by_name.get(name)


class Representation(ABC):
    """One way of encoding reals, from quantization down to the evaluator's kernels."""

    name: str
    # whether quantize needs the float program's profile (data-driven scales); a
    # representation with one type per program (float32, posits) does not
    needs_profile: bool = True
    # the bitwidths `bits` (and per-tensor bits) may take, and how an error message says so
    bitwidths: tuple[int, ...] = (8, 16, 32)
    bitwidths_text: str = "8, 16 or 32"
    default_bits: int = 16
    # the quantize options (beyond repr) this representation honours, by their pass names:
    # the tools refuse any other one given for it instead of ignoring it
    options: frozenset[str] = frozenset()
    # the precision searches (minun_mlir/bitwidth_search.py) that can assign its
    # per-tensor bitwidths: "shiftry" (demotion, explores scales), "haunter"
    searches: frozenset[str] = frozenset()

    def label(self, options) -> str:
        """A short name of a configuration for reports (fixed16, posit8-es0, ...), from the
        compile's options (driver.Options): what distinguishes it within this format."""
        return self.name

    @abstractmethod
    def owns(self, element: Attribute) -> bool:
        """Whether an L2 element type belongs to this representation."""

    @abstractmethod
    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        """Rewrite an L1 module into L2 (a new module)."""

    @abstractmethod
    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        """Reals -> stored values of this element type (what the C input buffer holds)."""

    def input_rounding(self, fn) -> str:
        """The `rounding` that `encode` and `c_encode` get for the inputs of the L2
        function fn: its `num.rounding` (a representation may read more of fn)."""
        return fx.rounding_in(fn)

    def c_encode(self, element: Attribute, rounding: str) -> str | None:
        """The body of a C99 function `(double v)` returning what `encode` stores for v,
        integer for integer, for the native evaluator's batch driver (which then takes
        reals); None where only `encode` can (the driver then takes encoded inputs)."""
        return None

    @abstractmethod
    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        """Stored values -> reals (float64)."""

    @abstractmethod
    def kernels(self) -> dict[str, Callable[..., np.ndarray]]:
        """Bit-exact evaluator kernels, keyed by L2 op name (see numerics/l2_eval.py)."""
