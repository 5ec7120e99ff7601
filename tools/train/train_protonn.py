"""Train ProtoNN models (Gupta et al., ICML 2017) for the benchmark suite.

score_c(x) = sum_j Z[j, c] exp(-gamma^2 ||W x - B_j||^2), predict argmax.
Initialisation as in the paper: W from the top principal directions of the training data,
prototypes B by per-class k-means in the projected space, Z one-hot of the prototype's class,
gamma = 2.5 / median distance from a projected point to its nearest prototype. Then W, B and Z
are trained jointly (Adam, full batch) on the paper's squared loss ||onehot(y) - score||^2;
gamma stays fixed. The epoch with the best validation accuracy is kept.

Usage: .venv-train/bin/python tools/train/train_protonn.py [task ...]
"""

from __future__ import annotations

import sys

import common
import numpy as np
import torch
from common import Task, decl, input_decl, lit

CONFIG = {
    # task: projection dim d, prototypes m, epochs, learning rate
    "digits10": dict(d=12, m=40, epochs=400, lr=0.01),
    "digits-binary": dict(d=10, m=20, epochs=400, lr=0.01),
    "wine": dict(d=5, m=6, epochs=300, lr=0.01),
    "breast-cancer": dict(d=6, m=8, epochs=300, lr=0.01),
}


def program(task: Task, p: dict[str, np.ndarray]) -> str:
    d, D = p["W"].shape
    m = p["B"].shape[0]
    L = p["Z"].shape[1]
    return f"""// ProtoNN on {task.name}: {m} prototypes, {d}-dimensional projection, {L} classes.
// score = sum_j Z[j] * exp(-g2 * ||W X - B[j]||^2); prediction = argmax(score).
// Trained by tools/train/train_protonn.py; weights are the .npy files beside this program.
{input_decl(task)}
{decl("W", p["W"])}
{decl("B", p["B"])}
{decl("Z", p["Z"])}
let g2 = {lit(p["g2"].item())} in

let WX = W * X in
let res = $(i = [0:{m}]) (
    let del = WX - B[i] in
    Z[i] * exp(-g2 * (del^T * del))
) in
argmax(res)
"""


def train(task: Task, d: int, m: int, epochs: int, lr: float) -> tuple[dict, dict]:
    from sklearn.cluster import KMeans

    common.seed_everything()
    X = task.x_train.astype(np.float64)
    y = task.y_train
    L = task.classes
    # W: top-d right singular vectors of the (uncentred) training data.
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    W0 = vt[:d]
    WX = X @ W0.T
    per_class = [m // L + (1 if c < m % L else 0) for c in range(L)]
    B0, Z0 = [], []
    for c in range(L):
        km = KMeans(n_clusters=per_class[c], n_init=10, random_state=common.SEED)
        km.fit(WX[y == c])
        B0.append(km.cluster_centers_)
        Z0.append(np.tile(np.eye(L)[c], (per_class[c], 1)))
    B0 = np.concatenate(B0)
    Z0 = np.concatenate(Z0)
    d2 = ((WX[:, None, :] - B0[None]) ** 2).sum(-1)
    gamma = 2.5 / np.median(np.sqrt(d2.min(axis=1)))
    g2 = float(np.float32(gamma**2))

    Wt = torch.tensor(W0, dtype=torch.float32, requires_grad=True)
    Bt = torch.tensor(B0, dtype=torch.float32, requires_grad=True)
    Zt = torch.tensor(Z0, dtype=torch.float32, requires_grad=True)
    Xt = torch.tensor(task.x_train)
    Yt = torch.nn.functional.one_hot(torch.tensor(y), L).float()
    Xv = torch.tensor(task.x_val)
    opt = torch.optim.Adam([Wt, Bt, Zt], lr=lr)

    def scores(x: torch.Tensor) -> torch.Tensor:
        wx = x @ Wt.T
        dist = ((wx[:, None, :] - Bt[None]) ** 2).sum(-1)
        return torch.exp(-g2 * dist) @ Zt

    best = (-1.0, None)
    for _epoch in range(epochs):
        opt.zero_grad()
        loss = ((scores(Xt) - Yt) ** 2).sum(1).mean()
        loss.backward()
        opt.step()
        with torch.no_grad():
            val = (scores(Xv).argmax(1).numpy() == task.y_val).mean()
        if val >= best[0]:
            best = (float(val), (Wt.detach().clone(), Bt.detach().clone(), Zt.detach().clone()))
    Wb, Bb, Zb = (t.numpy().astype(np.float32) for t in best[1])
    params = {
        "W": Wb,
        "B": Bb.reshape(m, d, 1),
        "Z": Zb.reshape(m, L, 1),
        "g2": np.array([g2], dtype=np.float32),
    }
    arch = {"projection_dim": d, "prototypes": m, "gamma_squared": g2}
    training = {
        "script": "tools/train/train_protonn.py",
        "seed": common.SEED,
        "loss": "squared loss to one-hot labels (ProtoNN paper), Adam full batch",
        "epochs": epochs,
        "learning_rate": lr,
        "selection": "epoch with the best validation accuracy (last one on ties)",
        "init": "W = top-d right singular vectors of X_train; B = per-class k-means; "
        "Z = one-hot; gamma = 2.5 / median nearest-prototype distance (fixed)",
    }
    return params, {"architecture": arch, "training": training}


def main(tasks: list[str]) -> None:
    for name in tasks:
        task = common.load_task(name)
        params, meta = train(task, **CONFIG[name])
        info = common.write_model_dir(
            f"protonn-{name}",
            "protonn",
            task,
            program(task, params),
            params,
            meta["architecture"],
            meta["training"],
        )
        print(
            f"protonn-{name}: test {info['float_test_accuracy']:.4f} "
            f"val {info['float_val_accuracy']:.4f} params {info['parameter_count']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or list(CONFIG))
