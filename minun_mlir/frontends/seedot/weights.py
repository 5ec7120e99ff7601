"""Where a program's parameters come from: a model directory (`NAME.npy` per parameter, as
the original tools wrote them), an `.npz` archive, or an in-memory dict.

The original tools saved at most 2-D arrays, so an array is reshaped to the declared shape
whenever the element count matches; anything else is an error at the declaration that
names the file.
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from minun_mlir.dialects.minun import shape_str
from minun_mlir.inputs import check_input, problem


class WeightError(Exception):
    """A parameter that cannot be loaded; the message becomes a diagnostic at its declaration."""


class Weights:
    """A lookup `name -> float32 array of the declared shape`."""

    def __init__(self, arrays: Mapping[str, np.ndarray] | None = None,
                 directory: Path | None = None, archive: Path | None = None,
                 synthetic: int | None = None):
        self.arrays = dict(arrays or {})
        self.directory = directory
        self.archive = archive
        self.synthetic = synthetic  # a seed: draw every parameter inside its declared range
        self._npz: Mapping[str, np.ndarray] | None = None

    def draw(self, name: str, shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
        """Synthetic weights: uniform in the declared `[lo, hi]`, seeded by the seed and the
        parameter's name (the same program and seed give the same weights), so a model
        can be sized (RAM, flash, speed) before it is trained."""
        rng = np.random.default_rng([self.synthetic, zlib.crc32(name.encode())])
        return rng.uniform(lo, hi, size=shape).astype(np.float32)

    @classmethod
    def from_path(cls, path: str | Path) -> Weights:
        """A model directory or an `.npz` file."""
        path = Path(path)
        if os.path.lexists(path):  # a FIFO, a device: refused unread (missing: per name)
            check_input(path, "the weights", directory=True)
        if path.suffix == ".npz":
            return cls(archive=path)
        return cls(directory=path)

    def where(self, name: str) -> str:
        if self.directory is not None:
            return str(self.directory / f"{name}.npy")
        if self.archive is not None:
            return f"'{name}' in {self.archive}"
        return f"the weights given for '{name}'"

    def _raw(self, name: str) -> np.ndarray:
        if name in self.arrays:
            return np.asarray(self.arrays[name])
        if self.directory is not None:
            file = self.directory / f"{name}.npy"
            if not file.exists() and not file.is_symlink():
                raise WeightError(f"no weights for parameter '{name}': {file} does not exist")
            why = problem(file, str(file))  # a FIFO, a device, a folder: refused unread
            if why is not None:
                raise WeightError(why)
            try:
                return np.load(file, allow_pickle=False)
            except (OSError, ValueError, EOFError) as e:
                raise WeightError(f"cannot read {file}: {e}") from None
        if self.archive is not None:
            if self._npz is None:
                try:
                    with np.load(self.archive, allow_pickle=False) as npz:
                        self._npz = {k: npz[k] for k in npz.files}
                except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
                    raise WeightError(f"cannot read {self.archive}: {e}") from None
            if name not in self._npz:
                raise WeightError(f"no weights for parameter '{name}': {self.archive} has no "
                                  f"array '{name}'")
            return self._npz[name]
        raise WeightError(f"no weights for parameter '{name}'")

    def load(self, name: str, shape: tuple[int, ...],
             declared: tuple[float, float] | None = None) -> np.ndarray:
        if self.synthetic is not None and declared is not None:
            return self.draw(name, shape, *declared)
        array = self._raw(name)
        where = self.where(name)
        if array.dtype.kind not in "biuf":
            raise WeightError(f"{where} holds {array.dtype} values, not numbers")
        want = math.prod(shape)
        if array.size != want:
            raise WeightError(
                f"{where} has {array.size} values (shape {shape_str(array.shape)}) but "
                f"'{name}' is declared {shape_str(shape)} ({want} values)")
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below
            out = np.ascontiguousarray(array, dtype=np.float32).reshape(shape)
        if not np.isfinite(out).all():
            raise WeightError(f"{where} contains NaN or infinite values (as float32)")
        return out
