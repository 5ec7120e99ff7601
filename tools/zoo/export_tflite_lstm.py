"""Small Keras LSTM models converted to TFLite by TensorFlow's own converter, into
test/zoo/tflite/lstm/. TensorFlow fuses a recurrent layer into TFLite's
UNIDIRECTIONAL_SEQUENCE_LSTM only from Keras 2 (`tf_keras`) with a fixed batch and the
default tanh; Keras 3's LSTM (and a Keras 2 LSTM with another activation) converts to a
WHILE loop over subgraphs, which the frontend unrolls. Files:

- `lstm_float.tflite`: LSTM(8) over 8 steps of 3 features, Dense(3) softmax on the last
  step (UNIDIRECTIONAL_SEQUENCE_LSTM, STRIDED_SLICE, FULLY_CONNECTED, SOFTMAX);
- `lstm2_float.tflite`: LSTM(6, return_sequences) then LSTM(4) then Dense(3): the whole
  output sequence of the first read by the second;
- `lstm2_int8.tflite`: the same, full-integer int8 (int8 input and output; TFLite's
  integer LSTM, int16 cell state), which compiles onto zero-skew with TFLM's integers;
- `keras3_lstm_float.tflite`, `keras3_gru_float.tflite`, `keras3_rnn_float.tflite`:
  Keras 3's LSTM(5), GRU(5) and SimpleRNN(5), each a WHILE loop over subgraphs (the
  frontend unrolls it, frontends/tflite/control.py);
- `keras3_seq_float.tflite` (Keras 3 LSTM(5, return_sequences): each step's row written
  with SLICE and CONCATENATION) and `keras3_stack_float.tflite` (GRU(6, return_sequences),
  LSTM(4), Dense(3) softmax: two WHILEs); TFLM's interpreter gives other values than
  TensorFlow Lite on these (zero rows in the sequence), so their oracle is TensorFlow
  Lite's;
- `peephole_float.tflite`, `relu_float.tflite`: one LSTM with peepholes, one with ReLU as
  its fused activation (which Keras does not write), built by the tests' flatbuffer writer
  (test/python/tflite/tflite_builder.py `lstm_model`): TFLM refuses peepholes and computes
  something else than TensorFlow Lite with ReLU (TFLite applies it to the cell gate and
  the output, as ONNX's activations), so their oracle is TensorFlow Lite's interpreter;
- `lstm.npz`: `x` (8 seeded random inputs, 1 x 8 x 3 each) and the float models' outputs:
  TensorFlow Lite's interpreter's outputs on them (the state reset before each input);
  `builder_x` (6 inputs, 2 x 5 x 3) and `peephole_float`, `relu_float` their outputs: the
  tests need no TensorFlow.

    .venv/bin/pip install tensorflow-cpu==2.21.0 tf_keras==2.21.0  # not dependencies
    .venv/bin/python tools/zoo/export_tflite_lstm.py

Weights are Keras' seeded initialisation, untrained (the tests compare with interpreters
on the same files).
"""

from __future__ import annotations

import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "zoo",
                   "tflite", "lstm")
T, F = 8, 3


def main() -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    import tf_keras as k2

    rng = np.random.default_rng(0)
    k2.utils.set_random_seed(0)
    keras.utils.set_random_seed(0)

    def write(name: str, data: bytes) -> None:
        with open(os.path.join(OUT, f"{name}.tflite"), "wb") as f:
            f.write(data)

    i = k2.Input((T, F), batch_size=1)
    one = k2.Model(i, k2.layers.Dense(3, activation="softmax")(k2.layers.LSTM(8)(i)))
    write("lstm_float", tf.lite.TFLiteConverter.from_keras_model(one).convert())

    i = k2.Input((T, F), batch_size=1)
    x = k2.layers.LSTM(4)(k2.layers.LSTM(6, return_sequences=True)(i))
    two = k2.Model(i, k2.layers.Dense(3, activation="softmax")(x))
    write("lstm2_float", tf.lite.TFLiteConverter.from_keras_model(two).convert())

    def representative():
        for _ in range(32):
            yield [rng.standard_normal((1, T, F)).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(two)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.int8
    write("lstm2_int8", conv.convert())

    for name, layer in (("keras3_lstm_float", keras.layers.LSTM),
                        ("keras3_gru_float", keras.layers.GRU),
                        ("keras3_rnn_float", keras.layers.SimpleRNN)):
        i = keras.Input((T, F), batch_size=1)
        k3 = keras.Model(i, layer(5)(i))
        write(name, tf.lite.TFLiteConverter.from_keras_model(k3).convert())
    i = keras.Input((T, F), batch_size=1)
    k3 = keras.Model(i, keras.layers.LSTM(5, return_sequences=True)(i))
    write("keras3_seq_float", tf.lite.TFLiteConverter.from_keras_model(k3).convert())
    i = keras.Input((T, F), batch_size=1)
    x = keras.layers.LSTM(4)(keras.layers.GRU(6, return_sequences=True)(i))
    k3 = keras.Model(i, keras.layers.Dense(3, activation="softmax")(x))
    write("keras3_stack_float", tf.lite.TFLiteConverter.from_keras_model(k3).convert())

    import tflite

    sys.path.insert(0, os.path.join(OUT, "..", "..", "..", "python", "tflite"))
    from tflite_builder import lstm_model

    act = tflite.ActivationFunctionType
    for name, peephole, fused in (("peephole_float", True, act.TANH),
                                  ("relu_float", False, act.RELU)):
        write(name, lstm_model(time_major=False, peephole=peephole, clip=0.0, act=fused))
    xs = rng.standard_normal((8, 1, T, F)).astype(np.float32)
    outputs = {"x": xs, "builder_x": rng.uniform(-3, 3, (6, 2, 5, 3)).astype(np.float32)}
    for name, key in (("lstm_float", "x"), ("lstm2_float", "x"), ("keras3_lstm_float", "x"),
                      ("keras3_gru_float", "x"), ("keras3_rnn_float", "x"),
                      ("keras3_seq_float", "x"), ("keras3_stack_float", "x"),
                      ("peephole_float", "builder_x"), ("relu_float", "builder_x")):
        interp = tf.lite.Interpreter(os.path.join(OUT, f"{name}.tflite"))
        interp.allocate_tensors()
        ys = []
        for x in outputs[key]:
            interp.reset_all_variables()
            interp.set_tensor(interp.get_input_details()[0]["index"], x)
            interp.invoke()
            ys.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())
        outputs[name] = np.array(ys)
    np.savez(os.path.join(OUT, "lstm.npz"), **outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
