"""A precision search's result, the bitwidth assignment: per-tensor bitwidths and scales
(or posit formats) on top of a default bitwidth, as a JSON file. The searches
(bitwidth_search.py) write it; the quantize pass (`quantize{assign=FILE}`) and
minun-compile (`--assign FILE`) read it. Its own module so that quantize does not import
the search, which runs quantize.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from minun_mlir.diagnostics import error
from minun_mlir.numerics import formats
from minun_mlir.numerics.repr import DEFAULT_REPRESENTATION, QuantizeConfig

FORMAT = "minun-bitwidth-assignment"


@dataclass(frozen=True)
class Assignment:
    """Per-tensor bitwidths and scales on top of a default bitwidth."""

    bits: int = 16
    tensors: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    representation: str = DEFAULT_REPRESENTATION  # or posit: posit<bits, es> (no scales)
    quire: bool = True  # posits: false when the search chose programs without a quire
    es: dict[int, int] = field(default_factory=dict)  # posits: es per bitwidth (stage I)
    rounding: str | None = None  # fixed point: the rounding searched with (None: quantize's)

    def check_representation(self, representation: str) -> None:
        if representation != self.representation:
            raise error(f"quantize: the assignment is for repr={self.representation}, the "
                        f"pass runs repr={representation}")

    def apply(self, config: QuantizeConfig) -> QuantizeConfig:
        if config.bits != self.bits:
            raise error(f"quantize: the assignment was searched at {self.bits} bits, the "
                        f"pass runs at {config.bits} (use bits={self.bits})")
        return dataclasses.replace(
            config, quire=config.quire and self.quire,
            rounding=self.rounding or config.rounding,
            es_by_bits={**config.es_by_bits, **self.es},
            bits_by_name={**config.bits_by_name,
                                  **{n: b for n, (b, _) in self.tensors.items()}},
            scale_by_name={**config.scale_by_name,
                           **{n: s for n, (_, s) in self.tensors.items() if s is not None}})

    @staticmethod
    def from_json(text: str, where: str = "<assignment>") -> Assignment:
        return _parse_assignment(text, where)

    def to_json(self, extra: dict | None = None) -> str:
        doc = {"format": FORMAT, "version": 1, "bits": self.bits,
               **({"repr": self.representation}
                  if self.representation != DEFAULT_REPRESENTATION else {}),
               **({} if self.quire else {"quire": False}),
               **({"es": {str(b): e for b, e in sorted(self.es.items())}} if self.es else {}),
               **({"rounding": self.rounding} if self.rounding else {}),
               "tensors": {n: {"bits": b, "scale": s}
                           for n, (b, s) in sorted(self.tensors.items())}}
        return json.dumps(doc | (extra or {}), indent=2) + "\n"


# A tensor's scale s at b bits is sensible when its largest value, 2^(b - 1 - s), is a
# float32 number.
SCALES = (-126, 127)


def error_at(path: str, message: str) -> Exception:
    return error(message, at=path)


def load_assignment(path: str | Path) -> Assignment:
    from minun_mlir.inputs import read_input

    try:
        text = read_input(path, "the assignment").decode("utf-8")
    except UnicodeDecodeError as e:
        raise error_at(str(path), f"not a bitwidth assignment: not UTF-8 text (byte "
                       f"{e.start})") from None
    return Assignment.from_json(text, str(path))


def _parse_assignment(text: str, path: str) -> Assignment:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise error_at(path, f"not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise error_at(path, f"not a bitwidth assignment (expected \"format\": \"{FORMAT}\")")
    rep = doc.get("repr", DEFAULT_REPRESENTATION)
    searched = [name for name in formats.names() if formats.get(name).searches]
    if rep not in searched:
        raise error_at(path, f"repr must be {' or '.join(searched)}, got {rep!r}")

    widths = formats.get(rep)
    bits = doc.get("bits", 16)
    if type(bits) is not int or bits not in widths.bitwidths:
        raise error_at(path, f"bits must be {widths.bitwidths_text}, got {bits!r}")
    if not isinstance(doc.get("tensors", {}), dict):
        raise error_at(path, "tensors must be an object mapping names to "
                       "{\"bits\": B, \"scale\": S}")
    tensors = {}
    for name, t in doc.get("tensors", {}).items():
        if not isinstance(t, dict) or type(t.get("bits")) is not int \
                or t["bits"] not in widths.bitwidths:
            raise error_at(path, f"tensor '{name}': bits must be {widths.bitwidths_text}")
        scale = t.get("scale")
        if scale is not None and type(scale) is not int:
            raise error_at(path, f"tensor '{name}': scale must be an integer")
        if scale is not None and not SCALES[0] <= t["bits"] - 1 - scale <= SCALES[1]:
            raise error_at(path, f"tensor '{name}': scale {scale} at {t['bits']} bits holds "
                           f"values up to 2^{t['bits'] - 1 - scale}, beyond float32's "
                           f"range (2^{SCALES[0]}..2^{SCALES[1]})")
        tensors[name] = (t["bits"], scale)
    quire = doc.get("quire", True)
    if not isinstance(quire, bool) or (not quire and "quire" not in widths.options):
        raise error_at(path, "quire must be true or false, and false only with repr "
                       + " or ".join(formats.taking("quire")))
    es = doc.get("es", {})
    if not isinstance(es, dict) or (es and "es" not in widths.options) or not all(
            b.isdigit() and int(b) in widths.bitwidths and type(e) is int and 0 <= e <= 2
            for b, e in es.items()):
        raise error_at(path, "es must map posit bitwidths to 0, 1 or 2 (e.g. "
                       "{\"8\": 0, \"16\": 1}), and only with repr "
                       + " or ".join(formats.taking("es")))
    rounding = doc.get("rounding")
    if rounding is not None and (rounding not in ("trunc", "floor", "nearest")
                                 or "rounding" not in widths.options):
        raise error_at(path, "rounding must be trunc, floor or nearest, and only with repr "
                       + " or ".join(formats.taking("rounding")))
    return Assignment(bits, tensors, rep, quire,
                      {int(b): e for b, e in es.items()}, rounding)
