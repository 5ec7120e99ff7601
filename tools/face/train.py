"""Train face-4 (tools/face/model.py) on the generated head scenes (tools/face/generate.py)
on the CPU, keeping every parameter in its declared range, and export the weights the
compiler loads (benchmarks/real/edgeml-rnnpool-face-4/trained/weights/NAME.npy).

S3FD's training (Zhang et al. 2017) with this repository's anchors (tools/face/detect.py):
an anchor is a face when its IoU with a head is >= 0.35, and each head's best anchor is
one; cross-entropy on the faces and the hardest 3x as many background anchors, smooth L1
on the faces' offsets; Adam, projected (parameters clamped into their declared ranges
after every step). Seeds: data set 0 (training), model and shuffling 0; one torch thread
per --threads, deterministic algorithms.

Run by `make train-face` (not by the tests): about 35 minutes on 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import detect  # noqa: E402
import generate  # noqa: E402
from model import DECLS, Face4  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "real" / "edgeml-rnnpool-face-4" \
    / "trained"
TRAIN_SEED, VAL_SEED = 0, 2  # the test set is seed 1 (minun_bench/face_ap.py)
POS_IOU, NEG_RATIO = 0.35, 3


def targets(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S3FD matching: labels [3000] (1 face, 0 background), offsets [3000, 4]."""
    a = detect.ANCHORS
    corners = np.concatenate([a[:, :2] - a[:, 2:] / 2, a[:, :2] + a[:, 2:] / 2], 1)
    labels = np.zeros(len(a), np.int64)
    offsets = np.zeros((len(a), 4), np.float32)
    if len(boxes) == 0:
        return labels, offsets
    o = detect.iou(corners, boxes.astype(np.float64))  # [3000, k]
    best = o.argmax(1)
    best_iou = o.max(1)
    for j, i in enumerate(o.argmax(0)):  # every head gets its best anchor
        best[i], best_iou[i] = j, 1.0
    labels[best_iou >= POS_IOU] = 1
    offsets[:] = detect.encode(boxes[best].astype(np.float64), a)
    return labels, offsets


def loss_fn(answer: torch.Tensor, labels: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    n = answer.shape[0]
    logits = answer[:, :detect.CELLS * 2].reshape(n, detect.CELLS, 2)
    loc = answer[:, detect.CELLS * 2:].reshape(n, detect.CELLS, 4)
    ce = F.cross_entropy(logits.reshape(-1, 2), labels.reshape(-1), reduction="none").reshape(
        n, -1)
    pos = labels == 1
    npos = pos.sum(1, keepdim=True)
    neg_ce = ce.detach().masked_fill(pos, -1.0)
    rank = neg_ce.argsort(1, descending=True).argsort(1)
    neg = rank < torch.clamp(NEG_RATIO * npos, min=8)
    conf = ce[pos | neg].sum()
    box = F.smooth_l1_loss(loc[pos], offsets[pos], reduction="sum")
    return (conf + box) / torch.clamp(npos.sum(), min=1)


def export(model: Face4, out: Path) -> None:
    (out / "weights").mkdir(parents=True, exist_ok=True)
    for name, (shape, lo, hi) in DECLS.items():
        v = model.p[name].detach().numpy().astype(np.float32).reshape(shape)
        assert lo <= v.min() and v.max() <= hi, name
        np.save(out / "weights" / f"{name}.npy", v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=480)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (timing)")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    t0 = time.time()
    pixels, boxes = generate.dataset(TRAIN_SEED, args.images)
    x = torch.tensor(generate.program_inputs(pixels)).reshape(-1, 240, 320)
    tl = [targets(b) for b in boxes]
    labels = torch.tensor(np.stack([t[0] for t in tl]))
    offsets = torch.tensor(np.stack([t[1] for t in tl]))
    vpix, vboxes = generate.dataset(VAL_SEED, 24)
    vx = torch.tensor(generate.program_inputs(vpix)).reshape(-1, 240, 320)
    print(f"data: {args.images} scenes, {sum(len(b) for b in boxes)} heads, "
          f"{int(labels.sum())} face anchors ({time.time() - t0:.0f} s)", flush=True)
    model = Face4(seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps_per_epoch = (args.images + args.batch - 1) // args.batch
    total = args.epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=total,
                                                pct_start=0.15)
    g = torch.Generator().manual_seed(0)
    step, history = 0, []
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(args.images, generator=g)
        running = 0.0
        for b in range(steps_per_epoch):
            idx = order[b * args.batch:(b + 1) * args.batch]
            loss = loss_fn(model(x[idx]), labels[idx], offsets[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            model.clamp_()
            running += float(loss.detach())
            step += 1
            if step % 10 == 0 or step <= 3:
                print(f"  step {step}/{total} loss {running / (b + 1):.3f} "
                      f"({time.time() - t0:.0f} s)", flush=True)
            if args.steps and step >= args.steps:
                break
        with torch.no_grad():
            va = torch.cat([model(vx[i:i + 8]) for i in range(0, len(vx), 8)]).numpy()
        score = detect.ap_scores(va, vboxes)
        history.append({"epoch": epoch + 1, "loss": running / steps_per_epoch, **score})
        print(f"epoch {epoch + 1}: loss {running / steps_per_epoch:.3f} validation AP50 "
              f"{score['ap50']:.3f} mAP {score['map']:.3f} ({time.time() - t0:.0f} s)",
              flush=True)
        if args.steps and step >= args.steps:
            break
    export(model, args.out)
    info = {"train_seed": TRAIN_SEED, "validation_seed": VAL_SEED, "model_seed": 0,
            "images": args.images, "epochs": args.epochs, "batch": args.batch, "lr": args.lr,
            "threads": args.threads, "seconds": round(time.time() - t0),
            "torch": torch.__version__, "history": history}
    (args.out / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
