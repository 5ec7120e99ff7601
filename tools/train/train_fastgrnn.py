"""Train FastGRNN and low-rank FastGRNN (Kusupati et al., NeurIPS 2018) for the suite.

The 8x8 digit images are read row by row: 8 time steps of 8 features (the paper's
pixel-MNIST trick). Cell, with h_0 = 0:
    pre = W x_t + U h            (low rank: W = W2 W1, U = U2 U1, computed W2 (W1 x_t) + U2 (U1 h))
    z   = sigmoid(pre + Bg)
    c   = tanh(pre + Bh)
    h   = (zeta (1 - z) + nu) * c + z * h
with zeta = sigmoid(a), nu = sigmoid(b) for trained scalars a, b (initialised 1 and -4 as in
the paper); the exported zeta and nu are the post-sigmoid values (like the USPS model).
Scores = FC h_8 + FCbias, predict argmax. Adam, mini-batches of 64 in a seeded order,
gradient norm clipped at 1; the epoch with the best validation accuracy is kept.

Usage: .venv-train/bin/python tools/train/train_fastgrnn.py [fastgrnn|fastgrnn-lr]:[task] ...
"""

from __future__ import annotations

import sys

import common
import numpy as np
import reference_models as ref
import torch
from common import Task, decl, input_decl, lit

STEPS = 8
CONFIG = {
    ("fastgrnn", "digits10"): dict(hidden=32, rank=None, epochs=200, lr=0.01),
    ("fastgrnn", "digits-binary"): dict(hidden=16, rank=None, epochs=200, lr=0.01),
    ("fastgrnn-lr", "digits10"): dict(hidden=32, rank=6, epochs=200, lr=0.01),
    ("fastgrnn-lr", "digits-binary"): dict(hidden=16, rank=4, epochs=200, lr=0.01),
}


def program(task: Task, p: dict[str, np.ndarray], low_rank: bool) -> str:
    H = p["Bg"].shape[0]
    L = p["FC"].shape[0]
    F = task.features // STEPS
    if low_rank:
        r = p["W1"].shape[0]
        head = f"// Low-rank FastGRNN (rank {r}: W = W2 * W1, U = U2 * U1) on {task.name}:"
        weights = [
            decl("W1", p["W1"]),
            decl("W2", p["W2"]),
            decl("U1", p["U1"]),
            decl("U2", p["U2"]),
        ]
        pre = "W2 * (W1 * xt) + U2 * (U1 * H)"
    else:
        head = f"// FastGRNN on {task.name}:"
        weights = [decl("W", p["W"]), decl("U", p["U"])]
        pre = "W * xt + U * H"
    wlines = "\n".join(weights)
    return f"""{head}
// {STEPS} time steps of {F} features (the image rows), hidden state of {H}, {L} classes.
// z = sigmoid(pre + Bg); c = tanh(pre + Bh); H = z <*> H + (zeta (1 - z) + nu) <*> c.
// Trained by tools/train/train_fastgrnn.py; weights are the .npy files beside this program.
{input_decl(task)}
{wlines}
{decl("Bg", p["Bg"])}
{decl("Bh", p["Bh"])}
{decl("FC", p["FC"])}
{decl("FCbias", p["FCbias"])}
let zeta = {lit(p["zeta"].item())} in
let nu = {lit(p["nu"].item())} in

let H = init([{H}, 1], 0.0) in
let res = loop(t = [0:{STEPS}], H) (
    let xt = X[{F} * t:+{F}][0:+1] in
    let pre = {pre} in
    let z = sigmoid(pre + Bg) in
    let c = tanh(pre + Bh) in
    let H = (z <*> H) + (zeta * (1.0 - z) + nu) <*> c in
    H
) in
let score = FC * res + FCbias in
argmax(score)
"""


def train(task: Task, hidden: int, rank: int | None, epochs: int, lr: float) -> tuple[dict, dict]:
    common.seed_everything()
    g = torch.Generator().manual_seed(common.SEED)
    F = task.features // STEPS
    L = task.classes
    Hn = hidden

    def init(*shape: int) -> torch.nn.Parameter:
        fan_in = shape[-1]
        return torch.nn.Parameter(torch.randn(*shape, generator=g) / np.sqrt(fan_in))

    if rank is None:
        mats = {"W": init(Hn, F), "U": init(Hn, Hn)}
    else:
        mats = {
            "W1": init(rank, F),
            "W2": init(Hn, rank),
            "U1": init(rank, Hn),
            "U2": init(Hn, rank),
        }
    Bg = torch.nn.Parameter(torch.ones(Hn))
    Bh = torch.nn.Parameter(torch.ones(Hn))
    FC = init(L, Hn)
    FCb = torch.nn.Parameter(torch.zeros(L))
    za = torch.nn.Parameter(torch.tensor(1.0))
    nb = torch.nn.Parameter(torch.tensor(-4.0))
    allp = list(mats.values()) + [Bg, Bh, FC, FCb, za, nb]
    opt = torch.optim.Adam(allp, lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    Xt = torch.tensor(task.x_train).reshape(-1, STEPS, F)
    Yt = torch.tensor(task.y_train)

    def forward(xs: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(xs.shape[0], Hn)
        zeta, nu = torch.sigmoid(za), torch.sigmoid(nb)
        for t in range(STEPS):
            x = xs[:, t, :]
            if rank is None:
                pre = x @ mats["W"].T + h @ mats["U"].T
            else:
                pre = (x @ mats["W1"].T) @ mats["W2"].T + (h @ mats["U1"].T) @ mats["U2"].T
            z = torch.sigmoid(pre + Bg)
            c = torch.tanh(pre + Bh)
            h = (zeta * (1 - z) + nu) * c + z * h
        return h @ FC.T + FCb

    def snapshot() -> dict[str, np.ndarray]:
        out = {k: v.detach().numpy().astype(np.float32) for k, v in mats.items()}
        out["Bg"] = Bg.detach().numpy().reshape(Hn, 1).astype(np.float32)
        out["Bh"] = Bh.detach().numpy().reshape(Hn, 1).astype(np.float32)
        out["FC"] = FC.detach().numpy().astype(np.float32)
        out["FCbias"] = FCb.detach().numpy().reshape(L, 1).astype(np.float32)
        out["zeta"] = torch.sigmoid(za).detach().numpy().reshape(1).astype(np.float32)
        out["nu"] = torch.sigmoid(nb).detach().numpy().reshape(1).astype(np.float32)
        return out

    family = "fastgrnn" if rank is None else "fastgrnn-lr"
    arch = {"steps": STEPS, "step_features": F, "hidden": Hn}
    if rank is not None:
        arch["rank"] = rank
    val_data = common.dataset_array(task.x_val, task.y_val)
    best = (-1.0, None)
    for _epoch in range(epochs):
        order = torch.randperm(len(Xt), generator=g)
        for i in range(0, len(Xt), 64):
            idx = order[i : i + 64]
            loss = torch.nn.functional.cross_entropy(forward(Xt[idx]), Yt[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(allp, 1.0)
            opt.step()
        sched.step()
        p = snapshot()
        correct, count = ref.evaluate_arrays(family, p, val_data, arch)
        if correct / count >= best[0]:
            best = (correct / count, p)
    params = best[1]
    arch["zeta"] = float(params["zeta"][0])
    arch["nu"] = float(params["nu"][0])
    training = {
        "script": "tools/train/train_fastgrnn.py",
        "seed": common.SEED,
        "loss": "softmax cross-entropy, Adam with cosine-annealed learning rate, batch 64, "
        "gradient norm clipped at 1",
        "epochs": epochs,
        "learning_rate": lr,
        "init": "weights N(0, 1/fan_in), Bg = Bh = 1, zeta = sigmoid(1), nu = sigmoid(-4)",
        "selection": "epoch with the best validation accuracy (last one on ties)",
    }
    return params, {"architecture": arch, "training": training}


def main(keys: list[tuple[str, str]]) -> None:
    for family, name in keys:
        task = common.load_task(name)
        cfg = CONFIG[(family, name)]
        params, meta = train(task, **cfg)
        info = common.write_model_dir(
            f"{family}-{name}",
            family,
            task,
            program(task, params, cfg["rank"] is not None),
            params,
            meta["architecture"],
            meta["training"],
        )
        print(
            f"{family}-{name}: test {info['float_test_accuracy']:.4f} "
            f"val {info['float_val_accuracy']:.4f} params {info['parameter_count']}"
        )


if __name__ == "__main__":
    args = [tuple(a.split(":", 1)) for a in sys.argv[1:]]
    main(args or list(CONFIG))
