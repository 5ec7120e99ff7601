#!/usr/bin/env python3
"""Compute TFLM micro_speech's 49 x 40 int8 feature spectrograms of the four test clips
(test/zoo/tflite/micro_speech/*_1000ms.wav) with TFLM's own audio preprocessor model
(audio_preprocessor_int8.tflite) run by TFLM's interpreter (the `tflite-micro` package,
whose interpreter registers TFLM's signal ops: Window, FftAutoScale, Rfft, Energy,
FilterBank*, PCAN), exactly as micro_speech_test.cc's GenerateFeatures does: one interpreter
per clip (the noise estimate of the spectral subtraction and PCAN carries from window to
window within a clip), a 30 ms window (480 samples) every 20 ms (320 samples), 49 windows.

Writes features.npz beside the clips (`yes`, `no`, `silence`, `noise`: int8 (49, 40)), so
the tests need not run the preprocessor; `--check` recomputes and compares instead of
writing (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import sys
import wave
from pathlib import Path

import numpy as np

ZOO = Path(__file__).resolve().parents[1] / "test" / "zoo" / "tflite" / "micro_speech"
PREPROCESSOR = ZOO / "audio_preprocessor_int8.tflite"
FEATURES = ZOO / "features.npz"
CLIPS = ("yes", "no", "silence", "noise")
WINDOW, STRIDE, COUNT = 480, 320, 49  # micro_model_settings.h: 30 ms, 20 ms at 16 kHz


def samples(path: Path) -> np.ndarray:
    """The int16 mono 16 kHz samples of a WAV file."""
    with wave.open(str(path)) as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, 16000):
            raise ValueError(f"{path}: not 16-bit mono 16 kHz")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int16)


def features(audio: np.ndarray) -> np.ndarray:
    """TFLM's features of one clip: (windows, 40) int8, as many windows as fit (at most
    49), from a fresh preprocessor interpreter."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_file(str(PREPROCESSOR))
    rows = []
    start = 0
    while start + WINDOW <= len(audio) and len(rows) < COUNT:
        interp.set_input(audio[start:start + WINDOW].reshape(1, WINDOW), 0)
        interp.invoke()
        rows.append(np.asarray(interp.get_output(0)).reshape(-1).astype(np.int8))
        start += STRIDE
    return np.stack(rows)


def compute() -> dict[str, np.ndarray]:
    return {clip: features(samples(ZOO / f"{clip}_1000ms.wav")) for clip in CLIPS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help="recompute and compare with the stored features.npz; write nothing")
    args = p.parse_args(argv)
    fresh = compute()
    if args.check:
        stored = np.load(FEATURES)
        bad = [c for c in CLIPS if not np.array_equal(stored[c], fresh[c])]
        if bad:
            print(f"micro_speech_features: error: {FEATURES.name} differs from the "
                  f"preprocessor's features for {', '.join(bad)}", file=sys.stderr)
            return 1
        print(f"{FEATURES.name}: equal to the preprocessor's features on {len(CLIPS)} clips")
        return 0
    with open(FEATURES, "wb") as f:  # np.savez: the same bytes for the same arrays
        np.savez(f, **fresh)
    print(f"wrote {FEATURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
