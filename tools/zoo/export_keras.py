"""Train small Keras 3 models on scikit-learn's bundled digits and breast-cancer data and
export them with tf2onnx into test/zoo/keras/, as a Keras user would:

- `tf2onnx.convert.from_keras` (opset 17): a Dense MLP, a Conv2D CNN (NHWC input), a GRU
  (tf2onnx writes Keras 3's GRU as a `Loop` over the time steps), an LSTM (tf2onnx
  rewrites it into ONNX's LSTM), and two Dense MLPs on the RAW breast-cancer features
  (values from 0.001 to 4,000): without normalisation, and with a Keras Normalization
  layer (adapted on the training data) as its first layer;
- the TFLite converter (full-integer int8, a representative dataset), then
  `tf2onnx.convert.from_tflite`: the MLP with float input/output (`tflite_int8_mlp`) and
  with int8 input/output (`tflite_int8io_mlp`, TFLite's usual int8-in/int8-out form).

Each `<model>.onnx` has a `<model>.npz`: `x`, 40 test inputs stacked on the batch axis, and
`y`, the producer's own predicted labels (Keras's; the TFLite interpreter's for the TFLite
models). `data/*-train.npz` hold the profiling data (`x`, `y`).

    .venv/bin/pip install tensorflow-cpu==2.21.0 tf2onnx==1.17.0   # not project deps
    .venv/bin/python tools/zoo/export_keras.py

Deterministic: fixed seeds, op determinism, one thread, full-batch training for a fixed
number of epochs. The tests never import TensorFlow: the files are committed.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo", "keras")
N_TEST = 40
N_TRAIN = 200
OPSET = 17
EPOCHS = 150


def _digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    x, y = load_breast_cancer(return_X_y=True)
    return train_test_split(x.astype(np.float32), y, test_size=0.3, random_state=0,
                            stratify=y)


def _models(keras):
    """{name: (dataset, input shape of one example, layer list factory)}."""
    layers = keras.layers
    return {
        "mlp_digits": ("digits", (64,), lambda: [
            layers.Dense(32, activation="relu"), layers.Dense(10)]),
        "cnn_digits": ("digits", (8, 8, 1), lambda: [
            layers.Conv2D(8, 3, padding="same", activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(8, 3, activation="relu"), layers.Flatten(), layers.Dense(10)]),
        "gru_digits": ("digits", (8, 8), lambda: [layers.GRU(16), layers.Dense(10)]),
        "lstm_digits": ("digits", (8, 8), lambda: [layers.LSTM(16), layers.Dense(10)]),
        "bigru_digits": ("digits", (8, 8), lambda: [
            layers.Bidirectional(layers.GRU(8)), layers.Dense(10)]),
        "simplernn_digits": ("digits", (8, 8), lambda: [
            layers.SimpleRNN(16), layers.Dense(10)]),
        "mlp_raw_breast_cancer": ("breast_cancer", (30,), lambda: [
            layers.Dense(16, activation="relu"), layers.Dense(2)]),
        # the usual remedy in Keras: a Normalization layer (adapted on the training
        # data) inside the model, which still takes the raw features
        "mlp_norm_breast_cancer": ("breast_cancer", (30,), lambda: [
            "normalization", layers.Dense(16, activation="relu"), layers.Dense(2)]),
    }


def _train(keras, shape, make, x, y, classes):
    keras.backend.clear_session()  # layer names restart: the same names on every run
    keras.utils.set_random_seed(0)
    inp = keras.Input(shape, name="x")
    h = inp
    for layer in make():
        if layer == "normalization":
            layer = keras.layers.Normalization()
            layer.adapt(x.reshape((-1, *shape)))
        h = layer(h)
    model = keras.Model(inp, h)
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x.reshape((-1, *shape)), y, epochs=EPOCHS, batch_size=len(x), verbose=0,
              shuffle=False)
    return model


def _tflite(tf, model, x_train, int8_io: bool) -> bytes:
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([x_train[i:i + 1]] for i in range(len(x_train)))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if int8_io:
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def _tflite_run(tf, data: bytes, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interpreter's outputs, and x as the model takes it (quantized for int8 io)."""
    interp = tf.lite.Interpreter(model_content=data, num_threads=1)
    interp.allocate_tensors()
    i, o = interp.get_input_details()[0], interp.get_output_details()[0]
    if i["dtype"] == np.int8:
        scale, zp = i["quantization"]
        x = np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    outs = []
    for row in x:
        interp.set_tensor(i["index"], row[None])
        interp.invoke()
        outs.append(interp.get_tensor(o["index"])[0])
    return np.stack(outs), x


_COUNTER = re.compile(r"(__|_frozen_|unk__|_)(\d{3,})")


def _canonical(proto):
    """tf2onnx's names carry TensorFlow's and its own global counters (`while_body_frozen_
    10698`, `const_fold_opt__63`, `unk__174`), which differ from run to run: renumber them
    in order of first appearance, so the same model gives the same bytes."""
    import onnx

    seen: dict[str, str] = {}

    def fix(name: str) -> str:
        def sub(m):
            key = m.group(0)
            if key not in seen:
                seen[key] = f"{m.group(1)}{len(seen)}"
            return seen[key]

        return _COUNTER.sub(sub, name)

    def graph(g) -> None:
        g.name = fix(g.name)
        for vi in (*g.input, *g.output, *g.value_info):
            vi.name = fix(vi.name)
            for d in vi.type.tensor_type.shape.dim:
                if d.dim_param:
                    d.dim_param = fix(d.dim_param)
        for t in g.initializer:
            t.name = fix(t.name)
        for n in g.node:
            n.name = fix(n.name)
            n.input[:] = [fix(x) for x in n.input]
            n.output[:] = [fix(x) for x in n.output]
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    graph(a.g)
                for sub_graph in a.graphs:
                    graph(sub_graph)

    graph(proto.graph)
    return proto


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # TensorFlow's graph names follow set order
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    import keras
    import onnx
    import tensorflow as tf
    import tf2onnx

    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    os.makedirs(os.path.join(OUT, "data"), exist_ok=True)
    data = {"digits": _digits(), "breast_cancer": _breast_cancer()}
    for name, (xtr, _, ytr, _) in data.items():
        np.savez(os.path.join(OUT, "data", f"{name}-train.npz"), x=xtr[:N_TRAIN],
                 y=ytr[:N_TRAIN])
    trained = {}
    for name, (dataset, shape, make) in _models(keras).items():
        xtr, xte, ytr, yte = data[dataset]
        model = _train(keras, shape, make, xtr, ytr, int(ytr.max()) + 1)
        trained[name] = model
        x = xte[:N_TEST].reshape((-1, *shape))
        y = np.argmax(model.predict(x, verbose=0), axis=-1)
        spec = (tf.TensorSpec((None, *shape), tf.float32, name="x"),)
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=OPSET)
        onnx.save(_canonical(proto), os.path.join(OUT, f"{name}.onnx"))
        np.savez(os.path.join(OUT, f"{name}.npz"), x=x, y=y)
        full = np.argmax(model.predict(xte.reshape((-1, *shape)), verbose=0), axis=-1)
        print(f"{name}: Keras accuracy on the {len(xte)} test rows {np.mean(full == yte):.3f}, "
              f"on the 40 stored {np.mean(y == yte[:N_TEST]):.3f}; "
              f"{[n.op_type for n in proto.graph.node]}")
    xtr, xte, _, yte = data["digits"]
    for name, int8_io in (("tflite_int8_mlp", False), ("tflite_int8io_mlp", True)):
        flat = _tflite(tf, trained["mlp_digits"], xtr[:N_TRAIN], int8_io)
        scores, x = _tflite_run(tf, flat, xte[:N_TEST])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.tflite")
            with open(path, "wb") as f:
                f.write(flat)
            proto, _ = tf2onnx.convert.from_tflite(path, opset=OPSET)
        onnx.save(_canonical(proto), os.path.join(OUT, f"{name}.onnx"))
        y = np.argmax(scores, axis=-1)
        np.savez(os.path.join(OUT, f"{name}.npz"), x=x, y=y)
        print(f"{name}: TFLite accuracy on the 40 stored {np.mean(y == yte[:N_TEST]):.3f}; "
              f"{[n.op_type for n in proto.graph.node]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
