"""A Keras MLP converted to full-integer TFLite with uint8 input and output by
TensorFlow's own converter (`inference_input_type = inference_output_type = tf.uint8`:
QUANTIZE uint8 -> int8, two int8 FULLY_CONNECTED, QUANTIZE int8 -> uint8), into
test/zoo/tflite/uint8/mlp_uint8io.tflite.

    .venv/bin/pip install tensorflow-cpu==2.21.0   # not a dependency of the project
    .venv/bin/python tools/zoo/export_tflite_uint8.py

Weights are Keras' seeded initialisation, calibrated on 32 seeded random inputs (the test
compares with TFLM's interpreter on the same file, which needs no accuracy).
"""

from __future__ import annotations

import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "zoo",
                   "tflite", "uint8")


def main() -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    i = keras.Input((10,))
    x = keras.layers.Dense(8, activation="relu")(i)
    model = keras.Model(i, keras.layers.Dense(3)(x))

    def representative():
        for _ in range(32):
            yield [rng.standard_normal((1, 10)).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.uint8
    with open(os.path.join(OUT, "mlp_uint8io.tflite"), "wb") as f:
        f.write(conv.convert())
    return 0


if __name__ == "__main__":
    sys.exit(main())
