"""The number formats the compiler knows: one registration line each.

A format is a `Representation` (numerics/repr.py) in its own module; passes, the driver,
the CLI and the searches look one up here, by name or by the L2 element type it owns,
and then ask it (its options, bitwidths, searches, label, quantize, encode/decode,
kernels) instead of comparing format names. Adding a format: docs/numerics.md, "Adding a
number format".
"""

from __future__ import annotations

from xdsl.ir import Attribute

from minun_mlir.diagnostics import error
from minun_mlir.formats.bfloat16.representation import BFloat16Representation
from minun_mlir.formats.fixed.representation import FixedRepresentation
from minun_mlir.formats.float32.representation import Float32Representation
from minun_mlir.formats.posit.representation import PositRepresentation
from minun_mlir.formats.zero_skew.representation import ZeroSkewRepresentation
from minun_mlir.numerics.repr import Representation

REGISTRY: dict[str, Representation] = {rep.name: rep for rep in (
    FixedRepresentation(),
    Float32Representation(),
    PositRepresentation(),
    BFloat16Representation(),
    ZeroSkewRepresentation(),
)}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> Representation:
    if name not in REGISTRY:
        raise error(f"unknown number representation '{name}' (known: {', '.join(names())})")
    return REGISTRY[name]


def taking(option: str) -> list[str]:
    """The names of the representations that honour quantize option `option`."""
    return sorted(name for name, rep in REGISTRY.items() if option in rep.options)


def of_element(element: Attribute) -> Representation:
    for rep in REGISTRY.values():
        if rep.owns(element):
            return rep
    raise error(f"no number representation owns the type {element}")
