"""The trained face-4 (benchmarks/real/edgeml-rnnpool-face-4/trained/, `make train-face`):
its weights lie in the program's declared ranges, our float evaluator computes what the
PyTorch model it was trained as computes (tools/face/model.py, an implementation
independent of the compiler; its answer on one generated scene is stored by
tools/face/reference.py), and the decoded detections find the heads of an easy scene."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from minun_mlir.driver import load_model
from minun_mlir.frontends.seedot import parser, typecheck
from minun_mlir.frontends.seedot.source import Source
from minun_mlir.native import float_outputs

ROOT = Path(__file__).resolve().parents[3]
FACE = ROOT / "benchmarks" / "real" / "edgeml-rnnpool-face-4" / "input.sd"
TRAINED = FACE.parent / "trained"
sys.path.insert(0, str(ROOT / "tools" / "face"))
import detect  # noqa: E402
import generate  # noqa: E402


def test_shipped_weights_lie_in_the_declared_ranges():
    source = Source(FACE.read_text(), str(FACE))
    checked = typecheck.check_program(source, parser.parse_source(source))
    names = {b.name for b in checked.params}
    assert names == {p.stem for p in (TRAINED / "weights").glob("*.npy")}
    for b in checked.params:
        w = np.load(TRAINED / "weights" / f"{b.name}.npy")
        assert w.shape == b.decl.shape, b.name
        assert b.decl.lo <= w.min() and w.max() <= b.decl.hi, b.name


def easy_scene() -> tuple[np.ndarray, np.ndarray]:
    """Two well-contrasted heads (one dark, one bright) on a generated textured background
    (a perfectly flat one is outside what the detector was trained on)."""
    rng = np.random.default_rng(0)
    img = generate.background(rng)
    yy, xx = np.mgrid[0:240, 0:320]
    heads = [(90.0, 100.0, 24.0, 30.0, -70.0), (210.0, 150.0, 32.0, 40.0, 60.0)]
    for cx, cy, a, b, contrast in heads:
        inside = ((xx - cx) / a) ** 2 + ((yy - cy) / b) ** 2 <= 1
        img[inside] = np.mean(img[inside]) + contrast
    img = np.clip(np.rint(img + rng.normal(0, 3, img.shape)), 0, 254)
    boxes = np.array([(cx - a, cy - b, cx + a, cy + b) for cx, cy, a, b, _ in heads])
    return img.astype(np.uint8), boxes


def test_float_evaluator_is_torch_and_finds_the_heads():
    torch_answer = np.load(TRAINED / "torch_answer.npy").astype(np.float64)
    scene, _ = generate.scene(1, 0)  # tools/face/reference.py's scene
    easy, truth = easy_scene()
    x = generate.program_inputs(np.stack([scene, easy])).reshape(2, -1, 1)
    l1 = load_model(FACE, TRAINED / "weights")
    out = np.asarray(float_outputs(l1, x, "native")[0], np.float64).reshape(2, -1)
    np.testing.assert_allclose(out[0], torch_answer, rtol=1e-3, atol=1e-3)
    boxes, scores = detect.detect(out[1])
    assert scores[1] >= 0.5  # the two most confident detections are the two heads
    assert np.all(detect.iou(truth, boxes[:2]).max(1) >= 0.5)
    assert detect.average_precision([(boxes, scores)], [truth]) == 1.0
