"""RNNPool face detection (EdgeML's face-4 SeeDot program) at test size.

The vendored program (benchmarks/real/edgeml-rnnpool-face-4/input.sd) reads a 320x240
image; the numpy evaluators take minutes per image on it. `small_face_program` rewrites its
sizes (and nothing else) for a 40x32 image: the same ops, loops, patch geometry (8x8
patches at stride 4, two bidirectional RNN passes), four MBConv blocks (one at stride 2),
normaliseL2 and detection heads, with a 4x5 grid of patches and 312 outputs.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
FACE = ROOT / "benchmarks" / "real" / "edgeml-rnnpool-face-4" / "input.sd"
# face-4's trained weights (`make train-face`): no parameter depends on the image size, so
# they serve the test-size program too, with the activations of a trained network
TRAINED = FACE.parent / "trained" / "weights"
X_RANGE = (-117.0, 137.0)  # the program's declared input range

# (original text, test-size text): image 240x320 -> 32x40, patch grid 30x40 -> 4x5.
SIZES = [
    ("(76800, 1)", "(1280, 1)"),
    ("(1, 240, 320, 1)", "(1, 32, 40, 1)"),
    ("init([1, 30, 40, 64], 0.0)", "init([1, 4, 5, 64], 0.0)"),
    ("patchX = [0:29]", "patchX = [0:3]"),
    ("patchY = [0:39]", "patchY = [0:4]"),
    ("rnnOutput[0:+1][29:+1][0:+39][0:+64] = rnnOutput[0:+1][28:+1][0:+39][0:+64]",
     "rnnOutput[0:+1][3:+1][0:+4][0:+64] = rnnOutput[0:+1][2:+1][0:+4][0:+64]"),
    ("rnnOutput[0:+1][0:+30][39:+1][0:+64] = rnnOutput[0:+1][0:+30][38:+1][0:+64]",
     "rnnOutput[0:+1][0:+4][4:+1][0:+64] = rnnOutput[0:+1][0:+4][3:+1][0:+64]"),
    ("init([1, 30, 40, 2], 0.0)", "init([1, 4, 5, 2], 0.0)"),
    ("i1 = [0:30]", "i1 = [0:4]"),
    ("i2 = [0:40]", "i2 = [0:5]"),
    ("init([1, 18000], 0.0)", "init([1, 312], 0.0)"),
]
# The eight heads' places in the output: (original offset, size) -> (offset, size).
HEADS = [((0, 2400), (0, 40)), ((2400, 2400), (40, 40)), ((4800, 600), (80, 12)),
         ((5400, 600), (92, 12)), ((6000, 4800), (104, 80)), ((10800, 4800), (184, 80)),
         ((15600, 1200), (264, 24)), ((16800, 1200), (288, 24))]
OUTPUTS = 312


def small_face_program() -> str:
    text = FACE.read_text()
    for old, new in SIZES:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    for (o, n), (o2, n2) in HEADS:
        old = f"answer[0:+1][{o}:+{n}] = reshape("
        assert text.count(old) == 1, old
        text = text.replace(old, f"answer[0:+1][{o2}:+{n2}] = reshape(")
        text = text.replace(f", (1, {n}), (1, 2, 3, 4))", f", (1, {n2}), (1, 2, 3, 4))", 1)
    return text


def images(n: int, seed: int, pixels: int = 1280) -> np.ndarray:
    """n images drawn uniformly in the declared input range, as a SeeDot dataset
    (label 0 first)."""
    x = np.random.default_rng(seed).uniform(*X_RANGE, size=(n, pixels)).astype(np.float32)
    return np.concatenate([np.zeros((n, 1), np.float32), x], axis=1)


# Work several face tests repeat with the same inputs (a quantize profiling 8 images, a
# numpy evaluation of the face program: seconds each), done once per process: see `shared`.
_SHARED: dict[tuple, object] = {}


def shared(key: tuple, compute: Callable[[], object]) -> object:
    """compute() once per process for `key`, which names everything the result depends on
    (constants of this file, or `content` of the module and inputs). Callers must not
    modify what they get: modules are handed out as clones, arrays read-only."""
    if key not in _SHARED:
        value = compute()
        for a in (value, *getattr(value, "__dict__", {}).values()):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        _SHARED[key] = value
    return _SHARED[key]


def content(module, features: np.ndarray | None = None) -> str:
    """A key for a module's text (and features' bytes): same key, same program and data."""
    digest = hashlib.sha256(str(module).encode())
    if features is not None:
        a = np.ascontiguousarray(features)
        digest.update(f"{a.dtype.str} {a.shape}".encode() + b"\0" + a.tobytes())
    return digest.hexdigest()


def expected_once(l2, features: np.ndarray):
    """codegen_support.expected(l2, features) (the numpy evaluator's integers), computed
    once per process per program text and features; its arrays are read-only."""
    from codegen_support import expected

    return shared(("expected", content(l2, features)), lambda: expected(l2, features))


def small_face_l2_8bit_image() -> tuple:
    """The test-size face program at fixed16 with its image at 8 bits, profiled on 8
    images, and one other image's features: (L2 module, features [1, 1280, 1]). Quantized
    once per process (everything it depends on is fixed here); each call gets a clone."""
    l2, x = shared(("small-face-l2-8bit",), _small_face_l2_8bit_image)
    return l2.clone(), x.copy()


def _small_face_l2_8bit_image() -> tuple:
    from minun_mlir.driver import load_model
    from minun_mlir.pipeline import lower_to_l2

    with tempfile.TemporaryDirectory(prefix="minun-face-") as tmp:
        folder = Path(tmp)
        program = folder / "face.sd"
        program.write_text(small_face_program())
        np.save(folder / "train.npy", images(8, seed=0))
        l1 = load_model(program, synthetic=0)
        l2 = lower_to_l2(l1, bits=16, data=str(folder / "train.npy"), input_bits=8)
    return l2, images(1, seed=1)[:, 1:].reshape(1, 1280, 1)


def full_face_l2_synthetic():
    """The full-size face-4 at fixed16 with its image at 8 bits (synthetic weights 0,
    scales profiled natively on 2 inputs drawn in the declared range): the planner tests'
    program, quantized once per process; each call gets a clone."""
    def compute():
        from minun_bench.face import FACE as FULL_FACE
        from minun_mlir.driver import load_model
        from minun_mlir.pipeline import lower_to_l2

        l1 = load_model(FULL_FACE, synthetic=0)
        return lower_to_l2(l1, bits=16, input_bits=8, synthetic=2, evaluator="native")

    return shared(("full-face-l2-synthetic",), compute).clone()


def full_face_on_the_m4(tmp_path: Path, images: int, **options):
    """The full-size face-4 at fixed16 (8-bit image and 18,000 scores in the scratch,
    `options` on top, weights: `synthetic_weights` or `weights` in `options`) compiled for
    the real 256 KB cortex-m4 and run in QEMU on `images` generated test scenes; asserts
    every score equals the evaluator's. Returns (compile result, run result).

    The test scenes' stored scores come from the native evaluator, as compile_model's
    `test=` computes them, but without the float evaluation `test=` adds (a float32 build
    of face-4 and its run: seconds), which nothing here reads."""
    from minun_bench.face import FACE as FULL_FACE
    from minun_bench.face import OUTPUTS
    from minun_bench.face import images as qvga
    from minun_mlir.data import load_dataset
    from minun_mlir.driver import Options, _input_shape, compile_model
    from minun_mlir.native import evaluate_outputs
    from minun_mlir.numerics.l2_eval import storage_inputs
    from minun_mlir.targets import run_model

    np.save(tmp_path / "train.npy", qvga(8, seed=0))
    np.save(tmp_path / "test.npy", qvga(images, seed=1))
    weights = {k: options.pop(k) for k in ("weights", "synthetic_weights") if k in options}
    config = Options(bits=16, input_bits=8, input_in_scratch=True, output_in_scratch=True,
                     target="cortex-m4", evaluator="native", **options)
    result = compile_model(FULL_FACE, config, **weights, train=tmp_path / "train.npy",
                           out_dir=tmp_path / "c", name="face-4")
    features = load_dataset(tmp_path / "test.npy", _input_shape(result.l1)).features
    inputs = storage_inputs(result.l2, features)
    run = run_model(result.c_dir, "cortex-m4", inputs, name="face-4", config="fixed16")
    got = np.asarray(run.outputs).reshape(images, -1)
    want = np.asarray(evaluate_outputs(result.l2, features, "native")[0]).reshape(images, -1)
    assert want.shape == (images, OUTPUTS)
    np.testing.assert_array_equal(got, want)
    return result, run
