"""Train a small LeNet-style CNN on the 8x8 digit images for the suite.

Architecture (NHWC, the 64 features are the image row by row):
    conv 3x3, pad 1, C1 channels, + bias, ReLU, maxpool 2x2 stride 2   -> 4x4xC1
    conv 3x3, pad 1, C2 channels, + bias, ReLU, maxpool 2x2 stride 2   -> 2x2xC2
    flatten (h, w, c order) -> FC (hidden) + bias, ReLU -> FC (classes) + bias -> argmax
The SeeDot program pools before adding the bias and applying ReLU: the same function, with
4x fewer elements live after each convolution (max commutes with adding a per-channel constant
and with ReLU). Filters are stored as [1, 3, 3, Cin, Cout] (SeeDot's [G, HF, WF, C/G, Cout]).
Adam with a cosine-annealed learning rate, mini-batches of 64 in a seeded order; the epoch with
the best validation accuracy is kept.

Usage: .venv-train/bin/python tools/train/train_lenet.py [task ...]
"""

from __future__ import annotations

import sys

import common
import numpy as np
import reference_models as ref
import torch
from common import Task, decl, input_decl

CONFIG = {
    "digits10": dict(c1=6, c2=12, hidden=32, epochs=120, lr=0.005),
    "digits-binary": dict(c1=6, c2=12, hidden=16, epochs=120, lr=0.005),
}
SIDE = 8


def program(task: Task, p: dict[str, np.ndarray]) -> str:
    c1 = p["CF1"].shape[-1]
    c2 = p["CF2"].shape[-1]
    hidden = p["FW1"].shape[1]
    L = p["FW2"].shape[1]
    flat = 2 * 2 * c2
    return f"""// LeNet-style CNN on {task.name}: 8x8x1 image (NHWC), two conv3x3/maxpool stages
// ({c1} and {c2} channels), FC {flat} -> {hidden} -> {L}. Each stage pools before adding the
// bias and applying relu (the same function as conv, bias, relu, pool; fewer live elements).
// Trained by tools/train/train_lenet.py; weights are the .npy files beside this program.
{input_decl(task)}
{decl("CF1", p["CF1"])}
{decl("CB1", p["CB1"])}
{decl("CF2", p["CF2"])}
{decl("CB2", p["CB2"])}
{decl("FW1", p["FW1"])}
{decl("FB1", p["FB1"])}
{decl("FW2", p["FW2"])}
{decl("FB2", p["FB2"])}

let A0 = reshape(X, (1, 8, 8, 1), (1, 2)) in
let C1 = conv2d(A0, CF1, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) in
let P1 = relu(maxpool(C1, {{k 2 2}}, {{p 0 0 0 0}}, {{s 2 2}}) <+> CB1) in
let C2 = conv2d(P1, CF2, {{s 1 1}}, {{p 1 1 1 1}}, {{d 1 1}}, {{g 1}}) in
let P2 = relu(maxpool(C2, {{k 2 2}}, {{p 0 0 0 0}}, {{s 2 2}}) <+> CB2) in
let V = reshape(P2, (1, {flat}), (1, 2, 3, 4)) in
let F1 = relu((V * FW1) <+> FB1) in
let score = (F1 * FW2) <+> FB2 in
argmax(score)
"""


def train(task: Task, c1: int, c2: int, hidden: int, epochs: int, lr: float) -> tuple[dict, dict]:
    common.seed_everything()
    g = torch.Generator().manual_seed(common.SEED)
    L = task.classes
    torch.manual_seed(common.SEED)
    conv1 = torch.nn.Conv2d(1, c1, 3, padding=1)
    conv2 = torch.nn.Conv2d(c1, c2, 3, padding=1)
    fc1 = torch.nn.Linear(4 * c2, hidden)
    fc2 = torch.nn.Linear(hidden, L)
    mods = [conv1, conv2, fc1, fc2]
    allp = [q for m in mods for q in m.parameters()]
    opt = torch.optim.Adam(allp, lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    Xt = torch.tensor(task.x_train).reshape(-1, 1, SIDE, SIDE)
    Yt = torch.tensor(task.y_train)
    pool = torch.nn.functional.max_pool2d

    def forward(x: torch.Tensor) -> torch.Tensor:
        a = pool(torch.relu(conv1(x)), 2)
        a = pool(torch.relu(conv2(a)), 2)
        v = a.permute(0, 2, 3, 1).reshape(x.shape[0], -1)  # NHWC flatten, as the program
        return fc2(torch.relu(fc1(v)))

    def snapshot() -> dict[str, np.ndarray]:
        def f(t: torch.Tensor) -> np.ndarray:
            return t.detach().numpy().astype(np.float32)

        return {
            "CF1": f(conv1.weight.permute(2, 3, 1, 0))[None],
            "CB1": f(conv1.bias),
            "CF2": f(conv2.weight.permute(2, 3, 1, 0))[None],
            "CB2": f(conv2.bias),
            "FW1": f(fc1.weight.T),
            "FB1": f(fc1.bias),
            "FW2": f(fc2.weight.T),
            "FB2": f(fc2.bias),
        }

    arch = {
        "side": SIDE,
        "conv1_channels": c1,
        "conv2_channels": c2,
        "hidden": hidden,
        "kernel": 3,
        "padding": 1,
        "pool": 2,
    }
    val_data = common.dataset_array(task.x_val, task.y_val)
    best = (-1.0, None)
    for _epoch in range(epochs):
        order = torch.randperm(len(Xt), generator=g)
        for i in range(0, len(Xt), 64):
            idx = order[i : i + 64]
            loss = torch.nn.functional.cross_entropy(forward(Xt[idx]), Yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        p = snapshot()
        correct, count = ref.evaluate_arrays("lenet", p, val_data, arch)
        if correct / count >= best[0]:
            best = (correct / count, p)
    training = {
        "script": "tools/train/train_lenet.py",
        "seed": common.SEED,
        "loss": "softmax cross-entropy, Adam with cosine-annealed learning rate, batch 64",
        "epochs": epochs,
        "learning_rate": lr,
        "init": "PyTorch defaults under torch.manual_seed(0)",
        "selection": "epoch with the best validation accuracy (last one on ties)",
    }
    return best[1], {"architecture": arch, "training": training}


def main(tasks: list[str]) -> None:
    for name in tasks:
        task = common.load_task(name)
        params, meta = train(task, **CONFIG[name])
        info = common.write_model_dir(
            f"lenet-{name}",
            "lenet",
            task,
            program(task, params),
            params,
            meta["architecture"],
            meta["training"],
        )
        print(
            f"lenet-{name}: test {info['float_test_accuracy']:.4f} "
            f"val {info['float_val_accuracy']:.4f} params {info['parameter_count']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or list(CONFIG))
