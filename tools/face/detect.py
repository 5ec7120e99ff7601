"""What face-4's 18,000 outputs mean, as boxes: the anchors of its four heads, the
decoding of scores and offsets, non-maximum suppression and average precision (numpy only,
so the benchmark and the tests use it without torch).

The program's heads (input.sd) are S3FD's (Zhang et al., ICCV 2017), as EdgeML's RNNPool
face detector uses them:
- head k in 0..3 reads a feature map of stride STEPS[k] (8, 8, 16, 16 pixels: 30x40,
  30x40, 15x20, 15x20 cells) and has one square anchor of side SIZES[k] per cell,
  centred at ((col + 0.5) * step, (row + 0.5) * step);
- its two scores per cell are (background, face) logits (head 0's background is the max
  of three logits: S3FD's max-out background label); the face probability is their
  softmax;
- its four offsets per cell (dx, dy, dw, dh) give the box centre anchor_c + d * 0.1 * size
  and side size * exp(d * 0.2) (S3FD's variances 0.1, 0.2).
The answer holds the score maps CN0..CN3 (NHWC-flattened) then the offset maps LC0..LC3.
The anchor sizes are this repository's choice for the generated heads (20-110 px tall).
"""

from __future__ import annotations

import numpy as np

GRIDS = ((30, 40), (30, 40), (15, 20), (15, 20))
STEPS = (8, 8, 16, 16)
SIZES = (20.0, 36.0, 64.0, 112.0)
VARIANCES = (0.1, 0.2)
CELLS = sum(h * w for h, w in GRIDS)  # 3,000 anchors
OUTPUTS = CELLS * 6  # 18,000


def anchors() -> np.ndarray:
    """[3000, 4] anchors (cx, cy, w, h) in pixels, in the answer's order."""
    rows = []
    for (gh, gw), step, size in zip(GRIDS, STEPS, SIZES):
        cy, cx = np.mgrid[0:gh, 0:gw]
        a = np.stack([(cx.ravel() + 0.5) * step, (cy.ravel() + 0.5) * step,
                      np.full(gh * gw, size), np.full(gh * gw, size)], 1)
        rows.append(a)
    return np.concatenate(rows).astype(np.float64)


ANCHORS = anchors()


def split(answer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[..., 18000] -> logits [..., 3000, 2], offsets [..., 3000, 4]."""
    answer = np.asarray(answer, np.float64)
    lead = answer.shape[:-1]
    return (answer[..., :CELLS * 2].reshape(*lead, CELLS, 2),
            answer[..., CELLS * 2:].reshape(*lead, CELLS, 4))


def decode_boxes(offsets: np.ndarray, a: np.ndarray = ANCHORS) -> np.ndarray:
    """offsets [..., n, 4] of the anchors `a` [n, 4] -> boxes [..., n, 4] (x1, y1, x2, y2)."""
    c = a[:, :2] + offsets[..., :2] * VARIANCES[0] * a[:, 2:]
    s = a[:, 2:] * np.exp(np.clip(offsets[..., 2:] * VARIANCES[1], -10, 10))
    return np.concatenate([c - s / 2, c + s / 2], -1)


def encode(boxes: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """The offsets that decode to `boxes` [n, 4] from `anchor` [n, 4] (training targets)."""
    c = (boxes[:, :2] + boxes[:, 2:]) / 2
    s = np.maximum(boxes[:, 2:] - boxes[:, :2], 1e-6)
    return np.concatenate([(c - anchor[:, :2]) / (VARIANCES[0] * anchor[:, 2:]),
                           np.log(s / anchor[:, 2:]) / VARIANCES[1]], 1)


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[n, 4] x [m, 4] (x1, y1, x2, y2) -> [n, m] intersection over union."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), -1)
    area = lambda x: np.prod(np.clip(x[:, 2:] - x[:, :2], 0, None), -1)  # noqa: E731
    return inter / np.maximum(area(a)[:, None] + area(b)[None, :] - inter, 1e-12)


def detect(answer: np.ndarray, threshold: float = 0.05, nms: float = 0.3,
           top: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """One image's answer [18000] -> (boxes [k, 4], scores [k]), best first: face
    probability above `threshold`, greedy non-maximum suppression at IoU `nms`."""
    logits, offsets = split(answer)
    z = logits - logits.max(-1, keepdims=True)
    p = np.exp(z[:, 1]) / np.exp(z).sum(-1)
    keep = np.flatnonzero(p > threshold)
    keep = keep[np.argsort(-p[keep], kind="stable")][:1000]
    boxes = decode_boxes(offsets[keep], ANCHORS[keep])
    chosen: list[int] = []
    for i in range(len(keep)):
        if len(chosen) >= top:
            break
        if not chosen or iou(boxes[i:i + 1], boxes[chosen]).max() <= nms:
            chosen.append(i)
    return boxes[chosen], p[keep][chosen]


def average_precision(detections: list[tuple[np.ndarray, np.ndarray]],
                      truths: list[np.ndarray], iou_threshold: float = 0.5) -> float:
    """VOC/COCO-style AP: detections of all images ranked by score, each a true positive
    when it matches a not yet matched truth at IoU >= the threshold; the area under the
    precision-recall curve with precision made monotone (all points)."""
    rows = []
    for k, (boxes, scores) in enumerate(detections):
        rows += [(float(s), k, b) for b, s in zip(boxes, scores)]
    rows.sort(key=lambda r: -r[0])
    total = sum(len(t) for t in truths)
    used = [np.zeros(len(t), bool) for t in truths]
    tp = np.zeros(len(rows))
    for n, (_, k, box) in enumerate(rows):
        if len(truths[k]) == 0:
            continue
        o = iou(box[None], np.asarray(truths[k], np.float64))[0]
        o[used[k]] = -1
        j = int(np.argmax(o))
        if o[j] >= iou_threshold:
            used[k][j] = True
            tp[n] = 1
    if total == 0:
        return 0.0
    ctp = np.cumsum(tp)
    recall = np.concatenate([[0.0], ctp / total, [ctp[-1] / total if len(ctp) else 0.0]])
    precision = np.concatenate([[1.0], ctp / np.arange(1, len(rows) + 1), [0.0]])
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.sum(np.diff(recall) * precision[1:]))


def ap_scores(answers: np.ndarray, truths: list[np.ndarray]) -> dict[str, float]:
    """AP at IoU 0.5 and COCO's mAP (mean AP over IoU 0.50, 0.55, ..., 0.95)."""
    dets = [detect(a) for a in np.asarray(answers).reshape(len(truths), -1)]
    aps = [average_precision(dets, truths, t) for t in np.arange(0.5, 0.951, 0.05)]
    return {"ap50": aps[0], "map": float(np.mean(aps))}
