"""TFLM's micro_speech example end to end (test/zoo/tflite/micro_speech): the 49 x 40 int8
features of its four 1 s test clips, computed by TFLM's own audio preprocessor model in
TFLM's interpreter (tools/micro_speech_features.py; stored in features.npz), through the
keyword model compiled by minun onto zero-skew:

- the preprocessor is TFLM's: on the 30 ms clips it gives the features micro_speech_test.cc
  expects, and features.npz is what it gives on the 1 s clips;
- the bit-exact evaluator, the x86 C and the Cortex-M4 C under QEMU output TFLM's
  interpreter's integers on every clip (one build and one run per target for all four);
- the labels are micro_speech_test.cc's: yes -> "yes", no -> "no", silence -> "silence",
  noise -> "silence".
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime

from minun_mlir.codegen import emit_c
from minun_mlir.frontends.tflite import import_model
from minun_mlir.numerics.l2_eval import evaluate_l2, storage_inputs
from minun_mlir.pipeline import lower_to_l2
from minun_mlir.targets import run_model

ROOT = Path(__file__).resolve().parents[3]
ZOO = ROOT / "test" / "zoo" / "tflite" / "micro_speech"
MODEL = ZOO / "micro_speech_quantized.tflite"
LABELS = ("silence", "unknown", "yes", "no")  # micro_model_settings.h's kCategoryLabels
# micro_speech_test.cc: TestAudioSample(expected label, clip)
EXPECTED = {"yes": "yes", "no": "no", "silence": "silence", "noise": "silence"}
CLIPS = tuple(EXPECTED)
# micro_speech_test.cc's NoFeatureTest and YesFeatureTest: the first feature of the 30 ms
# clips, EXPECT_EQ on every target but Xtensa HiFi
TFLM_30MS = {
    "no": [126, 103, 124, 102, 124, 102, 123, 100, 118, 97, 118, 100, 118, 98, 121, 100, 121,
           98, 117, 91, 96, 74, 54, 87, 100, 87, 109, 92, 91, 80, 64, 55, 83, 74, 74, 78, 114,
           95, 101, 81],
    "yes": [124, 105, 126, 103, 125, 101, 123, 100, 116, 98, 115, 97, 113, 90, 91, 82, 104,
            96, 117, 97, 121, 103, 126, 101, 125, 104, 126, 104, 125, 101, 116, 90, 81, 74,
            80, 71, 83, 76, 82, 71],
}


@functools.cache
def tool():
    spec = importlib.util.spec_from_file_location(
        "micro_speech_features", ROOT / "tools" / "micro_speech_features.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored_features() -> np.ndarray:
    """(4, 1, 1960) int8: the clips' features as the model's flat input, in CLIPS order."""
    with np.load(ZOO / "features.npz") as f:
        return np.stack([f[c].reshape(1, -1) for c in CLIPS])


@functools.cache
def tflm_outputs() -> np.ndarray:
    """TFLM's interpreter's int8 outputs (4, 4) on the clips' features."""
    interp = runtime.Interpreter.from_file(str(MODEL))
    out = []
    for q in stored_features():
        interp.set_input(q, 0)
        interp.invoke()
        out.append(np.asarray(interp.get_output(0)).reshape(-1).copy())
    return np.array(out).astype(np.int64)


@functools.cache
def l2():
    return lower_to_l2(import_model(MODEL), repr="zero-skew", bits=8)


def reals() -> np.ndarray:
    """The reals the int8 features stand for (the model's input quantization), which the
    zero-skew program quantizes back to the same integers."""
    d = runtime.Interpreter.from_file(str(MODEL)).get_input_details(0)
    scale = np.float32(d["quantization_parameters"]["scales"][0])
    zp = int(d["quantization_parameters"]["zero_points"][0])
    return (scale * (stored_features().astype(np.float32) - zp)).astype(np.float64)


@pytest.mark.parametrize("clip", sorted(TFLM_30MS))
def test_the_preprocessor_gives_tflm_s_expected_features(clip):
    audio = tool().samples(ZOO / f"{clip}_30ms.wav")
    got = tool().features(audio)
    assert got.shape == (1, 40)
    np.testing.assert_array_equal(got[0], TFLM_30MS[clip])


def test_the_stored_features_are_the_preprocessor_s():
    fresh = tool().compute()
    with np.load(ZOO / "features.npz") as stored:
        assert sorted(stored.files) == sorted(CLIPS)
        for clip in CLIPS:
            assert stored[clip].shape == (49, 40) and stored[clip].dtype == np.int8
            np.testing.assert_array_equal(stored[clip], fresh[clip], err_msg=clip)


def test_tflm_gives_its_test_s_labels():
    """The oracle itself: TFLM's interpreter labels the clips as micro_speech_test.cc
    expects (else the features would not be TFLM's)."""
    labels = [LABELS[i] for i in tflm_outputs().argmax(-1)]
    assert labels == [EXPECTED[c] for c in CLIPS]


def test_the_evaluator_equals_tflm_on_every_clip():
    ours = np.asarray(evaluate_l2(l2(), reals()).outputs[0]).reshape(len(CLIPS), -1)
    np.testing.assert_array_equal(ours, tflm_outputs())
    assert [LABELS[i] for i in ours.argmax(-1)] == [EXPECTED[c] for c in CLIPS]


@pytest.mark.parametrize("target", ["x86", pytest.param("cortex-m4", marks=pytest.mark.slow)])
def test_the_c_equals_tflm_on_every_clip(target, tmp_path):
    """One build, the four clips in one run: the C's output integers are TFLM's, and its
    labels (minun_predict: the arg max) are micro_speech_test.cc's."""
    emit_c(l2(), target, tmp_path)
    r = run_model(tmp_path, target, storage_inputs(l2(), reals()), name="micro_speech",
                  config="zero-skew8", x86_repeat=1)
    np.testing.assert_array_equal(np.asarray(r.outputs).reshape(len(CLIPS), -1),
                                  tflm_outputs())
    assert [LABELS[i] for i in np.asarray(r.labels).reshape(-1)] == [EXPECTED[c] for c in CLIPS]


def test_the_bench_section_is_the_rendering_of_its_record(tmp_path):
    """BENCHMARKS.md's "TFLM micro_speech" (`tools/bench.py --tflm`) renders
    benchmarks/tflm.json, whose TFLM integers and labels are the interpreter's now and whose
    M4 static RAM and flash are what model.c takes now."""
    import json

    from minun_bench import face as bench_face
    from minun_bench import tflm_speech

    record = json.loads((ROOT / "benchmarks" / "tflm.json").read_text())
    _, parts = bench_face.split_sections((ROOT / "BENCHMARKS.md").read_text())
    assert parts[tflm_speech.SECTION] == tflm_speech.render(record)
    assert record["clips"] == list(CLIPS)
    np.testing.assert_array_equal(record["tflm_outputs"], tflm_outputs())
    assert record["labels"] == [EXPECTED[c] for c in CLIPS]
    emit_c(l2(), "cortex-m4", tmp_path / "c")
    sizes = tflm_speech.object_sizes(tmp_path / "c", "cortex-m4", tmp_path / "obj")
    assert {k: record["cortex-m4"][k] for k in sizes} == sizes


def test_the_uno_has_too_little_ram(tmp_path):
    """micro_speech does not fit the Uno (nor does TFLM run there): linking it for the
    ATmega328P is refused with the RAM it needs, its own scratch alone over the 2,048 B."""
    import re

    from minun_mlir.targets.errors import BudgetExceeded

    emit_c(l2(), "avr", tmp_path)
    with pytest.raises(BudgetExceeded) as info:
        run_model(tmp_path, "avr", storage_inputs(l2(), reals()[:1]), name="micro_speech")
    message = str(info.value)
    assert "does not fit avr" in message and "RAM budget of 2,048 bytes" in message, message
    scratch = re.search(r"minun_scratch ([\d,]+) B", message)
    assert scratch and int(scratch.group(1).replace(",", "")) > 2048, message
