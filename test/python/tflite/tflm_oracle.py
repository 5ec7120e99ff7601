"""TensorFlow Lite Micro's Python interpreter as the tests' oracle: one place that feeds a
.tflite file its inputs one invocation at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime


def tflm_outputs(path: Path, inputs, reset: bool = False) -> np.ndarray:
    """TFLM's output for each input in turn (each shaped as the model's input tensor), one
    row an input. `reset` clears the interpreter's variables before each invocation: the
    LSTM keeps its state between invocations, a model's batch of one sequence does not."""
    interp = runtime.Interpreter.from_file(str(path))
    out = []
    for x in inputs:
        if reset:
            interp.reset()
        interp.set_input(np.asarray(x), 0)
        interp.invoke()
        out.append(interp.get_output(0).copy().reshape(-1))
    return np.array(out)
