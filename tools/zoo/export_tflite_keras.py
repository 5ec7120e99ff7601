"""Small Keras models converted to TFLite by TensorFlow's own converter, as TFLite users
make them, into test/zoo/tflite/keras/: each as `<name>_float.tflite` and
`<name>_int8.tflite` (full-integer post-training quantization, calibrated on 32 seeded
random inputs; resnet_tiny and dscnn_tiny also with int8 input and output), plus
`<name>_x.npy`, 8 seeded random test inputs. The architectures follow MLPerf Tiny's and
TFLM's examples at toy size: a ResNet-8-like block with ADD, a DS-CNN with batch norm, an
FC autoencoder, and magic_wand's CONV/MAXPOOL/FLATTEN/DENSE with tanh and sigmoid. Keras'
Flatten becomes SHAPE, STRIDED_SLICE, PACK and RESHAPE in TFLite.

    .venv/bin/pip install tensorflow-cpu==2.21.0   # not a dependency of the project
    .venv/bin/python tools/zoo/export_tflite_keras.py

Weights are Keras' seeded initialisation (no training: the tests compare against TFLM's
interpreter on the same file, which needs no accuracy). The tests never import
TensorFlow: the files are committed.
"""

from __future__ import annotations

import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "zoo",
                   "tflite", "keras")


def main() -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from tensorflow import keras

    keras.utils.set_random_seed(0)
    layers = keras.layers
    rng = np.random.default_rng(0)

    def save(name, model, shape, int8io=False):
        def representative():
            for _ in range(32):
                yield [rng.standard_normal((1, *shape)).astype(np.float32)]

        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        with open(os.path.join(OUT, f"{name}_float.tflite"), "wb") as f:
            f.write(conv.convert())
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if int8io:
            conv.inference_input_type = conv.inference_output_type = tf.int8
        with open(os.path.join(OUT, f"{name}_int8.tflite"), "wb") as f:
            f.write(conv.convert())
        np.save(os.path.join(OUT, f"{name}_x.npy"),
                rng.standard_normal((8, *shape)).astype(np.float32))

    i = keras.Input((16, 16, 3))
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(i)
    y = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    y = layers.Conv2D(8, 3, padding="same")(y)
    x = layers.ReLU()(layers.Add()([x, y]))
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Flatten()(layers.AveragePooling2D(8)(x))
    save("resnet_tiny", keras.Model(i, layers.Dense(10, activation="softmax")(x)),
         (16, 16, 3), int8io=True)

    i = keras.Input((20, 10, 1))
    x = layers.Conv2D(16, (5, 3), strides=(2, 2), padding="same")(i)
    x = layers.ReLU()(layers.BatchNormalization()(x))
    for _ in range(2):
        x = layers.ReLU()(layers.BatchNormalization()(
            layers.DepthwiseConv2D(3, padding="same")(x)))
        x = layers.ReLU()(layers.BatchNormalization()(layers.Conv2D(16, 1)(x)))
    x = layers.GlobalAveragePooling2D()(x)
    save("dscnn_tiny", keras.Model(i, layers.Dense(4, activation="softmax")(x)),
         (20, 10, 1), int8io=True)

    i = keras.Input((32,))
    x = i
    for n in (16, 8, 16):
        x = layers.Dense(n, activation="relu")(x)
    save("autoenc", keras.Model(i, layers.Dense(32)(x)), (32,))

    i = keras.Input((32, 3, 1))
    x = layers.Conv2D(4, (4, 3), padding="same", activation="relu")(i)
    x = layers.MaxPooling2D((3, 3))(x)
    x = layers.Conv2D(8, (4, 1), padding="same", activation="relu")(x)
    x = layers.Flatten()(layers.MaxPooling2D((3, 1), padding="same")(x))
    x = layers.Dense(16, activation="tanh")(x)
    save("wand", keras.Model(i, layers.Dense(3, activation="sigmoid")(x)), (32, 3, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
