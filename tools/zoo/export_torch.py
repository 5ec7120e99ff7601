"""Train small PyTorch classifiers on scikit-learn's bundled digits (8x8 images, 10 classes)
and export each with both of PyTorch's ONNX exporters into test/zoo/torch/:
`<model>_ts.onnx` (the TorchScript exporter, `torch.onnx.export(..., dynamo=False)`) and
`<model>_dynamo.onnx` (`dynamo=True`, torch.export + onnxscript), plus `<model>.npz`
holding 40 test inputs in the model's input shape (`x`, float32) and PyTorch's own
predicted labels for them (`y`), and `data/digits01-train.npz`, 200 training images
(`x`: pixels / 16, flattened; `y`: labels), the profiling data for quantize.

    .venv/bin/pip install torch==2.13.0 onnxscript   # not a dependency of the project
    .venv/bin/python tools/zoo/export_torch.py            # rewrite the zoo
    .venv/bin/python tools/zoo/export_torch.py --check    # exit 1 if a model would change
    .venv/bin/python tools/zoo/export_torch.py --only transformer   # one model

Deterministic: fixed seeds, one thread, full-batch training for a fixed number of steps,
fixed opsets. The models are small (a few KB each); test/zoo/torch/README.md lists the
versions used. The tests never import torch: the exported files are committed.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo", "torch")
N_TEST = 40
N_TRAIN = 200
TS_OPSET = 17
DYNAMO_OPSET = 18
OLD_OPSET = 14  # the TorchScript exporter before LayerNormalization (opset 17) existed
OLD_OPSET_TOO = ("transformer",)
STEPS = 150  # full-batch Adam steps (a few seconds per model on one core)


def _data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)


def _models():
    """{name: (input shape of one example, module factory)}."""
    import torch
    from torch import nn

    class Rnn(nn.Module):
        """The digit's 8 rows as a sequence of 8 features; a classifier on the last state."""

        def __init__(self, cell: str):
            super().__init__()
            self.cell = cell
            kind = {"gru": nn.GRU, "bigru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}[cell]
            self.rnn = kind(8, 16, batch_first=True, bidirectional=cell == "bigru")
            self.fc = nn.Linear(32 if cell == "bigru" else 16, 10)

        def forward(self, x):
            out, h = self.rnn(x)
            if self.cell == "gru":
                return self.fc(h[-1])  # h: [layers, batch, hidden]
            return self.fc(out[:, -1])  # the last output step (both directions for bigru)

    class Residual(nn.Module):
        """A MobileNet-like block: x + pointwise(relu6(bn(depthwise(x))))."""

        def __init__(self, c: int):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.BatchNorm2d(c),
                nn.ReLU6(), nn.Conv2d(c, c, 1))

        def forward(self, x):
            return x + self.body(x)

    class LogSoftmax(nn.Module):
        def __init__(self, body):
            super().__init__()
            self.body = body

        def forward(self, x):
            return torch.log_softmax(self.body(x), dim=1)

    class Transformer(nn.Module):
        """One pre-norm transformer block over the digit's 8 rows as 8 tokens: a 2-head
        self-attention (MatMul, Softmax, Transpose, Reshape), LayerNorms and a GELU MLP
        (Erf), then the mean over the tokens and a linear classifier."""

        def __init__(self, d: int = 16, heads: int = 2):
            super().__init__()
            self.heads, self.dh = heads, d // heads
            self.embed = nn.Linear(8, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
            self.head = nn.Linear(d, 10)

        def forward(self, x):
            h = self.embed(x)
            b, t, d = h.shape
            q, k, v = self.qkv(self.ln1(h)).chunk(3, dim=-1)
            q, k, v = (z.reshape(b, t, self.heads, self.dh).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax((q @ k.transpose(-2, -1)) * self.dh ** -0.5, dim=-1)
            h = h + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            h = h + self.mlp(self.ln2(h))
            return self.head(h.mean(dim=1))

    class Conv1dPool(nn.Module):
        """Conv1d over the 8 rows (as time), then the mean and the maximum over the time
        axis of the 3-D activation (ReduceMean and ReduceMax on axis 2), concatenated."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(8, 16, 3, padding=1)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            h = torch.relu(self.conv(x))
            return self.fc(torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1))

    def cnn():
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64, 10))

    return {
        "mlp": ((64,), lambda: nn.Sequential(
            nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))),
        "mlp_softmax": ((64,), lambda: nn.Sequential(
            nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10), nn.Softmax(dim=1))),
        "cnn": ((1, 8, 8), cnn),
        "cnn_logsoftmax": ((1, 8, 8), lambda: LogSoftmax(cnn())),
        "dscnn": ((1, 8, 8), lambda: nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AvgPool2d(2),
            nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False), nn.BatchNorm2d(16),
            nn.ReLU(), nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))),
        "mlp_bn": ((64,), lambda: nn.Sequential(
            nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(32, 10))),
        "mobile_res": ((1, 8, 8), lambda: nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.Hardswish(),
            Residual(8), nn.MaxPool2d(2), Residual(8), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(), nn.Linear(8, 10), nn.Softmax(dim=1))),
        "gru": ((8, 8), lambda: Rnn("gru")),
        "bigru": ((8, 8), lambda: Rnn("bigru")),
        "rnn": ((8, 8), lambda: Rnn("rnn")),
        "lstm": ((8, 8), lambda: Rnn("lstm")),
        # keyword-spotting-like: 8 "frames" (columns) of 8 "coefficients" (rows), 1-D convs
        # over time, global average pooling, a softmax
        "kws1d": ((8, 8), lambda: nn.Sequential(
            nn.Conv1d(8, 16, 3, padding=1), nn.ReLU(),
            nn.Conv1d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 10), nn.Softmax(dim=1))),
        "transformer": ((8, 8), Transformer),
        "conv1d_pool": ((8, 8), Conv1dPool),
        # decoder-style upsampling and normalisation layers (Resize, ConvTranspose,
        # InstanceNormalization, Softplus / Mish)
        "upsample": ((1, 8, 8), lambda: nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(8 * 4 * 4, 10))),
        "convtranspose": ((1, 8, 8), lambda: nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(8, 4, 2, stride=2), nn.ReLU(),
            nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.MaxPool2d(4), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))),
        "groupnorm": ((1, 8, 8), lambda: nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1), nn.InstanceNorm2d(8, affine=True), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))),
        "mish": ((64,), lambda: nn.Sequential(
            nn.Linear(64, 32), nn.Mish(), nn.Linear(32, 16), nn.Softplus(beta=2),
            nn.Linear(16, 10))),
    }


def _train(name, shape, factory, x_train, y_train):
    import torch

    torch.manual_seed(0)
    model = factory()
    x = torch.from_numpy(x_train.reshape(-1, *shape))
    y = torch.from_numpy(y_train.astype(np.int64))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss() if name not in (
        "mlp_softmax", "kws1d", "mobile_res") else None
    model.train()
    for _ in range(STEPS):
        opt.zero_grad()
        out = model(x)
        if loss_fn is None:  # the model ends in a softmax: the loss on its log
            loss = torch.nn.functional.nll_loss(torch.log(out + 1e-9), y)
        elif name == "cnn_logsoftmax":
            loss = torch.nn.functional.nll_loss(out, y)
        else:
            loss = loss_fn(out, y)
        loss.backward()
        opt.step()
    model.eval()
    return model


def _export(model, example, dynamo: bool, opset: int | None = None) -> bytes:
    import onnx
    import torch

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = os.path.join(tmp, "m.onnx")
        if dynamo:
            prog = torch.onnx.export(model, (example,), dynamo=True, opset_version=DYNAMO_OPSET,
                                     input_names=["input"], output_names=["output"],
                                     verbose=False)
            prog.save(path)
        else:
            torch.onnx.export(model, (example,), path, dynamo=False,
                              opset_version=opset or TS_OPSET,
                              input_names=["input"], output_names=["output"])
        m = onnx.load(path)
    # drop what changes from run to run without changing the model (stack traces, names
    # of the exporting process's temporaries)
    for node in m.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    del m.metadata_props[:]
    m.graph.doc_string = ""
    return m.SerializeToString(deterministic=True)


def export_all(only: list[str] | None = None) -> dict[str, bytes]:
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x_train, x_test, y_train, _ = _data()
    files = {"data/digits01-train.npz": _npz(x=x_train[:N_TRAIN], y=y_train[:N_TRAIN])}
    for name, (shape, factory) in _models().items():
        if only and name not in only:
            continue
        model = _train(name, shape, factory, x_train, y_train)
        x = x_test[:N_TEST].reshape(-1, *shape)
        with torch.no_grad():
            pred = model(torch.from_numpy(x)).numpy().argmax(1)
        example = torch.from_numpy(x[:1])
        files[f"{name}_ts.onnx"] = _export(model, example, dynamo=False)
        files[f"{name}_dynamo.onnx"] = _export(model, example, dynamo=True)
        if name in OLD_OPSET_TOO:  # LayerNormalization decomposed, as before opset 17
            files[f"{name}_ts{OLD_OPSET}.onnx"] = _export(model, example, dynamo=False,
                                                        opset=OLD_OPSET)
        files[f"{name}.npz"] = _npz(x=x, y=pred.astype(np.int64))
    return files


def _npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    parser.add_argument("--only", nargs="+", metavar="MODEL",
                        help="export (or check) only these models")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed (pip install torch==2.13.0 onnxscript)", file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    from export_sklearn import write_or_check

    return write_or_check(export_all(args.only), OUT, args.check)


if __name__ == "__main__":
    sys.exit(main())
