"""Domain ai.onnx.ml: the operators scikit-learn models export (skl2onnx).

Linear models, scalers and normalizers become ordinary L1 ops (matmul, bias_sub,
hadamard, sigmoid/softmax); tree ensembles become one `minun.tree_ensemble` (a node table,
see dialects/minun.py), and so do the comparisons of Binarizer and of a multiclass SVM's
one-vs-one votes (one-node trees: exact in fixed point); RBF, polynomial and sigmoid
kernels are a loop over the support vectors. A classifier's label output is the argmax
of its scores (or votes), a class index; string labels and integer labels other than
0..n-1 are recorded on @main (`minun.class_labels`, written to model.h) and the program
returns the index of one.
ZipMap is dropped: its output is the probability tensor. Inputs are one example, `[1, F]`
or `[F]`. docs/onnx-frontend.md has the table of what each operator accepts.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i32, i64

from minun_mlir.diagnostics import warn
from minun_mlir.dialects import minun

from .importer import Importer, Node, Value, identity, node_label
from .linear import matmul2d

ML = "ai.onnx.ml"
POST_TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX")


def _row(imp: Importer, x: Value) -> Value:
    """The input as a [1, F] row (one example)."""
    if x.is_int:
        raise imp.error("the input must be a float tensor, not a label")
    if x.rank == 1:
        return imp.reshape(x, (1, x.shape[0]))
    if x.rank != 2 or x.shape[0] != 1:
        raise imp.error(f"the input must be one example ([1, F] or [F]), got "
                        f"{minun.shape_str(x.shape)}")
    return x


def _class_count(imp: Importer, node: Node) -> int:
    """The number of classes. The label is the argmax, a class index; string labels and
    integer labels other than 0..n-1 are recorded (`Importer.record_class_labels`: model.h
    lists them, indexed by what the program returns)."""
    strings = node.attr("classlabels_strings")
    if strings:
        imp.record_class_labels(_strings(strings))
        return len(strings)
    labels = node.attr("classlabels_ints", node.attr("classlabels_int64s"))
    if not labels:
        raise imp.error("the classifier has no class labels")
    imp.record_class_labels([int(v) for v in labels])
    return len(labels)


def _strings(values) -> list[str]:
    return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]


def _post_transform(imp: Importer, node: Node, scores: Value) -> Value:
    kind = node.attr("post_transform", "NONE")
    if kind not in POST_TRANSFORMS:
        raise imp.error(f"post_transform {kind} is not supported (supported: "
                        f"{', '.join(POST_TRANSFORMS)})")
    if kind == "LOGISTIC":
        return imp.unary(minun.SigmoidOp, scores)
    if kind == "SOFTMAX":
        ssa = imp.make(minun.SoftmaxOp, imp.ir(scores, identity(2)), axis=IntegerAttr(1, i64))
        return Value.of(ssa)
    return scores


def _label(imp: Importer, scores: Value) -> Value:
    ssa = imp.emit(minun.ArgMaxOp.create(operands=[imp.ir(scores, identity(scores.rank))],
                                         result_types=[i32]))
    return Value((1,), ssa=ssa)


def _affine(imp: Importer, x: Value, coef: np.ndarray, intercepts: np.ndarray | None
            ) -> Value:
    """x W^T + b for W [T, F]."""
    if coef.shape[1] != x.shape[1]:
        raise imp.error(f"{coef.shape[1]} coefficients per target for {x.shape[1]} "
                        f"features")
    y = matmul2d(imp, x, Value.const(np.ascontiguousarray(coef.T), "coefficients"))
    if intercepts is not None and intercepts.size and np.any(intercepts != 0):
        y = imp.binary(minun.AddOp, y, Value.const(intercepts.reshape(1, -1), "intercepts"),
                       bias=minun.BiasAddOp)
    return y


def _floats(node: Node, name: str) -> np.ndarray:
    return np.asarray(node.attr(name, []), dtype=np.float32)


def _linear_classifier(imp: Importer, node: Node) -> list[Value]:
    x = _row(imp, node.inputs[0])
    n = _class_count(imp, node)
    coef = _floats(node, "coefficients")
    need = n * x.shape[1]
    if coef.size > need and coef.size % n == 0:
        warn(f"{node_label(imp.node)}: {coef.size} coefficients for {n} classes of "
             f"{x.shape[1]} features; onnxruntime reads the first {need} (one row per "
             f"class), and so does the compile")
        coef = coef[:need]
    intercepts = _floats(node, "intercepts")
    if n == 2 and coef.size == x.shape[1]:
        return _one_row_binary(imp, node, x, coef, intercepts)
    if coef.size != n * x.shape[1]:
        rows = coef.size // max(x.shape[1], 1)
        raise imp.error(f"{rows} coefficient rows for {n} classes; only one row per class "
                        f"(or one row for two classes) is supported")
    scores = _post_transform(imp, node, _affine(imp, x, coef.reshape(n, -1), intercepts))
    return [_label(imp, scores), scores]


def _one_row_binary(imp: Importer, node: Node, x: Value, coef: np.ndarray,
                    intercepts: np.ndarray) -> list[Value]:
    """Two classes from one coefficient row, as onnxruntime computes them: s = w.x + b,
    label s > 0 (compiled exactly: the argmax of [-s, s]), probabilities [1 - t(s), t(s)]
    for t = LOGISTIC or NONE."""
    kind = node.attr("post_transform", "NONE")
    if kind not in ("NONE", "LOGISTIC"):
        raise imp.error(f"post_transform {kind} is not supported for the binary one-row "
                        f"form (NONE, LOGISTIC)")
    if intercepts.size > 1:
        raise imp.error(f"{intercepts.size} intercepts for one coefficient row")
    s = _affine(imp, x, coef.reshape(1, -1), intercepts)
    p = imp.unary(minun.SigmoidOp, s) if kind == "LOGISTIC" else s
    one = Value.const(np.ones((1, 1), np.float32), "one")
    scores = imp.concat([imp.binary(minun.SubOp, one, p), p], 1)
    return [_label(imp, imp.concat([imp.unary(minun.NegOp, s), s], 1)), scores]


def _linear_regressor(imp: Importer, node: Node) -> list[Value]:
    x = _row(imp, node.inputs[0])
    if node.attr("post_transform", "NONE") != "NONE":
        raise imp.error(f"post_transform {node.attr('post_transform')} is not supported "
                        f"(only NONE)")
    targets = int(node.attr("targets", 1))
    coef = _floats(node, "coefficients")
    if coef.size != targets * x.shape[1]:
        raise imp.error(f"{coef.size} coefficients for {targets} targets of "
                        f"{x.shape[1]} features")
    return [_affine(imp, x, coef.reshape(targets, -1), _floats(node, "intercepts"))]


def _scaler(imp: Importer, node: Node) -> list[Value]:
    """(x - offset) * scale, element-wise; an offset or scale of one value broadcasts."""
    x = _row(imp, node.inputs[0])
    shape = node.inputs[0].shape
    f = x.shape[1]
    offset, scale = _floats(node, "offset"), _floats(node, "scale")
    for name, v in (("offset", offset), ("scale", scale)):
        if v.size not in (0, 1, f):
            raise imp.error(f"{name} has {v.size} values for {f} features")
    y = x
    if offset.size and np.any(offset != 0):
        y = imp.binary(minun.SubOp, y, Value.const(np.broadcast_to(offset, (1, f)).copy(),
                                                   "offset"), bias=minun.BiasSubOp)
    if scale.size and np.any(scale != 1):
        y = imp.binary(minun.HadamardOp, y,
                       Value.const(np.broadcast_to(scale, (1, f)).copy(), "scale"))
    return [imp.reshape(y, shape)]


def _imputer(imp: Importer, node: Node) -> list[Value]:
    """Replaces missing values (NaN, the default `replaced_value_float`) by the imputed
    ones: the identity, since the compiled program's inputs are never NaN (as for the
    trees' missing-value tracking; docs/onnx-frontend.md). Another replaced value would
    need an equality test and is refused."""
    x = node.inputs[0]
    if x.is_int:
        raise imp.error("the input must be a float tensor (replaced_value_int64 is for "
                        "integer inputs)")
    replaced = float(node.attr("replaced_value_float", float("nan")))
    if not np.isnan(replaced):
        raise imp.error(f"replaced_value_float {replaced:g}: only NaN (missing values) is "
                        "supported; inputs equal to a number are not replaced")
    return [x]


def _normalizer(imp: Importer, node: Node) -> list[Value]:
    """L2: minun.normalise_l2 (on the row seen as one NHWC pixel). L1 only right after a
    softmax over the same row (whose values are positive and sum to 1: the identity, as
    skl2onnx writes after LogisticRegression); MAX and other L1s are refused."""
    x = _row(imp, node.inputs[0])
    norm = node.attr("norm", "MAX")
    if norm == "L2":
        pixel = imp.reshape(x, (1, 1, 1, x.shape[1]))
        ssa = imp.make(minun.NormaliseL2Op, imp.ir(pixel, identity(4)))
        return [imp.reshape(Value.of(ssa), node.inputs[0].shape)]
    if norm == "L1" and x.ssa is not None and isinstance(x.ssa.owner, minun.SoftmaxOp):
        return [node.inputs[0]]
    raise imp.error(f"norm {norm} is only supported as L2, or L1 right after a softmax "
                    f"(where it is the identity)")


def _zipmap(imp: Importer, node: Node) -> list[Value]:
    """Dropped: the output is the probability tensor itself (one example's row). Its
    string class labels are recorded (and must be the classifier's)."""
    strings = node.attr("classlabels_strings")
    if strings:
        imp.record_class_labels(_strings(strings))
    ints = node.attr("classlabels_int64s")
    if ints:
        imp.record_class_labels([int(v) for v in ints])
    return [node.inputs[0]]


def _array_feature_extractor(imp: Importer, node: Node) -> list[Value]:
    """Run-time data with constant indices: the selected columns (last axis). Constant
    data indexed by a label (skl2onnx's `classes_[argmax]`): a class list of strings or
    integers, recorded as the class labels (the label stays the index into it), or
    floats 0..n-1, where the label is already the class."""
    x, idx = node.inputs[0], node.inputs[1]
    if x.array is not None and idx.is_int:
        if x.array.dtype.kind in "OSU":  # string classes: the label stays their index
            imp.record_class_labels(_strings(x.array.reshape(-1)))
            return [idx]
        if x.array.dtype.kind in "iu":  # integer classes: likewise
            imp.record_class_labels([int(v) for v in x.array.reshape(-1)])
            return [idx]
        if not np.array_equal(x.array.reshape(-1), np.arange(x.array.size)):
            raise imp.error("the class list indexed by the label is not 0..n-1; the "
                            "compiled label is the class index, so only labels 0..n-1 "
                            "(or integer or string class lists) are supported")
        return [idx]
    indices = np.asarray(imp.const(idx, "the indices")).reshape(-1).astype(np.int64)
    n = x.shape[-1]
    if indices.size == 0 or indices.min() < 0 or indices.max() >= n:
        raise imp.error(f"indices {indices.tolist()} out of range for {n} columns")
    axis = x.rank - 1
    return [imp.concat([imp.slice(x, axis, int(i), 1) for i in indices], axis)]


# -- trees ---------------------------------------------------------------------------

_MODES = {"BRANCH_LEQ": ("leq", False), "BRANCH_GT": ("leq", True),
          "BRANCH_LT": ("lt", False), "BRANCH_GTE": ("lt", True)}


def _tree_ensemble(imp: Importer, node: Node, prefix: str, n_out: int) -> tuple:
    """The node table of `minun.tree_ensemble` from the ONNX attribute lists. GT and GTE
    nodes become LEQ and LT with their children swapped (x > t is not x <= t); one
    ensemble uses one of LEQ/LT."""
    x = _row(imp, node.inputs[0])
    if node.attr("nodes_values_as_tensor") is not None or \
            node.attr("base_values_as_tensor") is not None or \
            node.attr(f"{prefix}_weights_as_tensor") is not None:
        raise imp.error("the *_as_tensor (double) attributes are not supported; the L1 "
                        "dialect computes in float32")
    tree_ids = list(node.attr("nodes_treeids", []))
    node_ids = list(node.attr("nodes_nodeids", []))
    features = list(node.attr("nodes_featureids", []))
    modes = list(node.attr("nodes_modes", []))
    values = _floats(node, "nodes_values")
    trues = list(node.attr("nodes_truenodeids", []))
    falses = list(node.attr("nodes_falsenodeids", []))
    count = len(tree_ids)
    if not count or any(len(a) != count for a in (node_ids, modes, trues, falses)) or \
            (values.size not in (0, count)) or len(features) != count:
        raise imp.error("the nodes_* attributes are empty or of different lengths")
    kinds = {m for m in modes if m != "LEAF"}
    unknown = sorted(kinds - set(_MODES))
    if unknown:
        raise imp.error(f"node mode {unknown[0]} is not supported (supported: LEAF, "
                        f"{', '.join(_MODES)})")
    families = {_MODES[m][0] for m in kinds}
    if len(families) > 1:
        raise imp.error("the ensemble mixes <=/> nodes with </>= nodes; one kind is "
                        "supported per ensemble")
    mode = families.pop() if families else "leq"
    # internal nodes and leaves, numbered in the order they appear
    ref: dict[tuple[int, int], int] = {}
    internal, leaves = [], []
    for i in range(count):
        key = (int(tree_ids[i]), int(node_ids[i]))
        if key in ref:
            raise imp.error(f"node {key[1]} of tree {key[0]} is defined twice")
        if modes[i] == "LEAF":
            ref[key] = -len(leaves) - 1
            leaves.append(key)
        else:
            ref[key] = len(internal)
            internal.append(i)
    table = np.zeros((len(internal), 3), np.int64)
    thresholds = np.zeros(len(internal), np.float32)
    for row, i in enumerate(internal):
        tree = int(tree_ids[i])
        try:
            t, f = ref[tree, int(trues[i])], ref[tree, int(falses[i])]
        except KeyError:
            raise imp.error(f"node {node_ids[i]} of tree {tree} has a child that is not "
                            f"defined") from None
        if _MODES[modes[i]][1]:
            t, f = f, t
        if not 0 <= int(features[i]) < x.shape[1]:
            raise imp.error(f"node {node_ids[i]} of tree {tree} reads feature "
                            f"{features[i]} of {x.shape[1]}")
        table[row] = (int(features[i]), t, f)
        thresholds[row] = values[i]
    # roots: the first node listed of each tree (in order of first appearance)
    first: dict[int, int] = {}
    for t, n in zip(tree_ids, node_ids):
        first.setdefault(int(t), int(n))
    roots = [ref[t, n] for t, n in first.items()]
    leaf_rows = {k: -ref[k] - 1 for k in leaves}
    weights = np.zeros((len(leaves), n_out), np.float32)
    w_trees = list(node.attr(f"{prefix}_treeids", []))
    w_nodes = list(node.attr(f"{prefix}_nodeids", []))
    w_ids = list(node.attr(f"{prefix}_ids", []))
    w_vals = _floats(node, f"{prefix}_weights")
    if not len(w_trees) == len(w_nodes) == len(w_ids) == w_vals.size:
        raise imp.error(f"the {prefix}_* attributes are of different lengths")
    for t, n, k, w in zip(w_trees, w_nodes, w_ids, w_vals):
        row = leaf_rows.get((int(t), int(n)))
        if row is None or not 0 <= int(k) < n_out:
            raise imp.error(f"a weight refers to node {n} of tree {t}, output {k}, which "
                            f"is not a leaf or not an output")
        weights[row, int(k)] += w
    base = _floats(node, "base_values")
    if base.size not in (0, n_out):
        raise imp.error(f"{base.size} base values for {n_out} outputs")
    base = base if base.size else np.zeros(n_out, np.float32)
    return x, mode, np.asarray(roots, np.int64), table, thresholds, weights, base


def _emit_trees(imp: Importer, x: Value, mode: str, roots, table, thresholds, weights,
                base) -> Value:
    op = minun.TreeEnsembleOp.create(
        operands=[imp.ir(x, identity(2))],
        attributes={"mode": StringAttr(mode), "roots": minun.dense_ints(roots),
                    "nodes": minun.dense_ints(table),
                    "thresholds": minun.dense_f32(thresholds),
                    "leaves": minun.dense_f32(weights), "base": minun.dense_f32(base)},
        result_types=[minun.tensor_of((1, weights.shape[1]))])
    return Value.of(imp.emit(op))


_V5_MODES = {0: "BRANCH_LEQ", 1: "BRANCH_LT", 2: "BRANCH_GTE", 3: "BRANCH_GT",
             4: "BRANCH_EQ", 5: "BRANCH_NEQ", 6: "BRANCH_MEMBER"}
_V5_POST = {0: "NONE", 1: "SOFTMAX", 2: "LOGISTIC", 3: "SOFTMAX_ZERO", 4: "PROBIT"}


def _tensor_attr(imp: Importer, node: Node, name: str) -> np.ndarray:
    from onnx import numpy_helper

    value = node.attr(name)
    if value is None:
        raise imp.error(f"attribute '{name}' is missing")
    return numpy_helper.to_array(value)


def _tree_ensemble_v5(imp: Importer, node: Node) -> list[Value]:
    """The opset-5 TreeEnsemble: nodes and leaves addressed by position, a leaf flag per
    child, one (target, weight) per leaf. The same node table as the classifier and
    regressor forms."""
    x = _row(imp, node.inputs[0])
    splits = _tensor_attr(imp, node, "nodes_splits")
    weights_in = _tensor_attr(imp, node, "leaf_weights")
    if splits.dtype != np.float32 or weights_in.dtype != np.float32:
        raise imp.error("double splits or leaf weights are not supported; the L1 dialect "
                        "computes in float32")
    modes = [_V5_MODES.get(int(m), str(m)) for m in _tensor_attr(imp, node, "nodes_modes")]
    bad = sorted({m for m in modes if m not in _MODES})
    if bad:
        raise imp.error(f"node mode {bad[0]} is not supported (supported: "
                        f"{', '.join(_MODES)})")
    families = {_MODES[m][0] for m in modes}
    if len(families) > 1:
        raise imp.error("the ensemble mixes <=/> nodes with </>= nodes; one kind is "
                        "supported per ensemble")
    agg = {0: "AVERAGE", 1: "SUM", 2: "MIN", 3: "MAX"}.get(
        int(node.attr("aggregate_function", 1)), "?")
    if agg not in ("SUM", "AVERAGE"):
        raise imp.error(f"aggregate_function {agg} is not supported (SUM, AVERAGE)")
    post = _V5_POST.get(int(node.attr("post_transform", 0)), "?")
    if post != "NONE":
        raise imp.error(f"post_transform {post} is not supported (only NONE)")
    features = list(node.attr("nodes_featureids", []))
    trues, falses = list(node.attr("nodes_truenodeids", [])), list(
        node.attr("nodes_falsenodeids", []))
    true_leaf = list(node.attr("nodes_trueleafs", []))
    false_leaf = list(node.attr("nodes_falseleafs", []))
    count = len(features)
    if not count or any(len(a) != count for a in (trues, falses, true_leaf, false_leaf,
                                                    modes)) or splits.size != count:
        raise imp.error("the nodes_* attributes are empty or of different lengths")
    targets = list(node.attr("leaf_targetids", []))
    n_out = int(node.attr("n_targets", 1))
    if len(targets) != weights_in.size or any(not 0 <= t < n_out for t in targets):
        raise imp.error("leaf_targetids and leaf_weights differ in length or name no "
                        "target")

    def child(c: int, is_leaf: int) -> int:
        limit = len(targets) if is_leaf else count
        if not 0 <= c < limit:
            raise imp.error(f"a child refers to {'leaf' if is_leaf else 'node'} {c} of "
                            f"{limit}")
        return -c - 1 if is_leaf else c

    table = np.zeros((count, 3), np.int64)
    for i in range(count):
        t, f = child(int(trues[i]), true_leaf[i]), child(int(falses[i]), false_leaf[i])
        if _MODES[modes[i]][1]:
            t, f = f, t
        if not 0 <= int(features[i]) < x.shape[1]:
            raise imp.error(f"node {i} reads feature {features[i]} of {x.shape[1]}")
        table[i] = (int(features[i]), t, f)
    roots = np.asarray(node.attr("tree_roots", []), np.int64)
    if roots.size == 0 or roots.min() < 0 or roots.max() >= count:
        raise imp.error("tree_roots must name nodes")
    weights = np.zeros((len(targets), n_out), np.float32)
    weights[np.arange(len(targets)), targets] = weights_in.reshape(-1)
    if agg == "AVERAGE" and roots.size > 1:
        weights = (weights / np.float32(roots.size)).astype(np.float32)
    return [_emit_trees(imp, x, _MODES[modes[0]][0], roots, table, splits.reshape(-1),
                        weights, np.zeros(n_out, np.float32))]


def _tree_classifier(imp: Importer, node: Node) -> list[Value]:
    n = _class_count(imp, node)
    ids = set(node.attr("class_ids", []))
    if len(ids) == 1 and n == 2:
        return _binary_trees(imp, node)
    x, mode, roots, table, thr, weights, base = _tree_ensemble(imp, node, "class", n)
    scores = _emit_trees(imp, x, mode, roots, table, thr, weights, base)
    scores = _post_transform(imp, node, scores)
    return [_label(imp, scores), scores]


def _binary_trees(imp: Importer, node: Node) -> list[Value]:
    """The binary form XGBoost and LightGBM export (onnxmltools): weights for class 0 only,
    one score s = base + the leaves, which onnxruntime reads as class 1's. Its rule, as
    onnxruntime's tree aggregator applies it: when every weight is >= 0, label s > 0.5 and
    probabilities [1 - t(s), t(s)]; otherwise label s > 0 and probabilities
    [t(-s), t(s)] (t the post_transform: LOGISTIC or NONE). The label is compiled exactly:
    the argmax of [-s, s], or for the 0.5 threshold a one-node tree over s (an exact
    comparison in every representation trees support)."""
    if set(node.attr("class_ids", [])) != {0}:
        raise imp.error("the binary form with weights for class 1 only is not supported "
                        "(onnxruntime gives class 0 no score); weights for class 0 (as "
                        "XGBoost and LightGBM export) or for both classes are")
    if node.attr("post_transform", "NONE") not in ("NONE", "LOGISTIC"):
        raise imp.error(f"post_transform {node.attr('post_transform')} is not supported for "
                        f"the binary form (NONE, LOGISTIC)")
    if len(node.attr("base_values", []) or []) > 1:
        raise imp.error("the binary form with two base values is not supported (one or "
                        "none: onnxruntime reads class 1's score from the first)")
    x, mode, roots, table, thr, weights, base = _tree_ensemble(imp, node, "class", 1)
    s = _emit_trees(imp, x, mode, roots, table, thr, weights, base)
    logistic = node.attr("post_transform", "NONE") == "LOGISTIC"
    if np.all(_floats(node, "class_weights") >= 0):
        one = Value.const(np.ones((1, 1), np.float32), "one")
        p = imp.unary(minun.SigmoidOp, s) if logistic else s
        scores = imp.concat([imp.binary(minun.SubOp, one, p), p], 1)
        return [_label(imp, _threshold_votes(imp, s, 0.5)), scores]
    neg = imp.unary(minun.NegOp, s)
    margins = imp.concat([neg, s], 1)
    scores = (imp.concat([imp.unary(minun.SigmoidOp, neg), imp.unary(minun.SigmoidOp, s)], 1)
              if logistic else margins)
    return [_label(imp, margins), scores]


def _threshold_votes(imp: Importer, s: Value, threshold: float) -> Value:
    """[1, 0] when s <= threshold, else [0, 1], for s [1, 1]: a one-node tree."""
    op = minun.TreeEnsembleOp.create(
        operands=[imp.ir(s, identity(2))],
        attributes={"mode": StringAttr("leq"), "roots": minun.dense_ints(np.zeros(1)),
                    "nodes": minun.dense_ints(np.array([[0, -1, -2]])),
                    "thresholds": minun.dense_f32(np.full(1, threshold, np.float32)),
                    "leaves": minun.dense_f32(np.eye(2, dtype=np.float32)),
                    "base": minun.dense_f32(np.zeros(2, np.float32))},
        result_types=[minun.tensor_of((1, 2))])
    return Value.of(imp.emit(op))


def _tree_regressor(imp: Importer, node: Node) -> list[Value]:
    n = int(node.attr("n_targets", 1))
    agg = node.attr("aggregate_function", "SUM")
    if agg not in ("SUM", "AVERAGE"):
        raise imp.error(f"aggregate_function {agg} is not supported (SUM, AVERAGE)")
    if node.attr("post_transform", "NONE") != "NONE":
        raise imp.error(f"post_transform {node.attr('post_transform')} is not supported "
                        f"(only NONE)")
    x, mode, roots, table, thr, weights, base = _tree_ensemble(imp, node, "target", n)
    if agg == "AVERAGE" and len(roots) > 1:
        weights = (weights / np.float32(len(roots))).astype(np.float32)
    return [_emit_trees(imp, x, mode, roots, table, thr, weights, base)]


MAX_BINARIZED = 64


def _binarizer(imp: Importer, node: Node) -> list[Value]:
    """x > threshold ? 1 : 0 per element, as a tree_ensemble of one-node trees: tree i
    compares element i and reaches the zero row or the one-hot row e_i (an exact
    comparison in every representation the trees support). Its leaf table grows as the
    square of the element count, so at most MAX_BINARIZED elements."""
    x = node.inputs[0]
    if x.is_int:
        raise imp.error("the input must be a float tensor, not a label")
    n = int(np.prod(x.shape))
    if n > MAX_BINARIZED:
        raise imp.error(f"{n} elements: at most {MAX_BINARIZED} are binarized (one tree "
                        f"per element)")
    t = np.float32(node.attr("threshold", 0.0))
    table = np.stack([np.arange(n), np.full(n, -1), -np.arange(n) - 2], axis=1)
    leaves = np.concatenate([np.zeros((1, n), np.float32), np.eye(n, dtype=np.float32)])
    ident = identity(x.rank)
    op = minun.TreeEnsembleOp.create(
        operands=[imp.ir(x, ident)],
        attributes={"mode": StringAttr("leq"), "roots": minun.dense_ints(np.arange(n)),
                    "nodes": minun.dense_ints(table),
                    "thresholds": minun.dense_f32(np.full(n, t, np.float32)),
                    "leaves": minun.dense_f32(leaves),
                    "base": minun.dense_f32(np.zeros(n, np.float32))},
        result_types=[minun.tensor_of(x.shape)])
    return [Value.of(imp.emit(op))]


# -- support vector machines -----------------------------------------------------------

KERNELS = ("LINEAR", "RBF", "POLY", "SIGMOID")


def _kernel_sum(imp: Importer, x: Value, sv: np.ndarray, coef: np.ndarray, kernel: str,
                params: list[float]):
    """sum_j coef[:, j] k(x, sv_j) ([1, T] for coef [T, vectors]) as a minun.loop over the
    support vectors, one [1, F] vector at a time, so no [vectors, F] tensor is ever stored.
    onnxruntime's kernels, for kernel_params [gamma, coef0, degree]:
    RBF exp(-gamma |x - sv|^2) (ProtoNN's form: the difference's squares summed by a
    matmul with ones), POLY (gamma x.sv + coef0)^degree (an integer degree >= 1, as
    repeated hadamard products), SIGMOID tanh(gamma x.sv + coef0)."""
    n, f = sv.shape
    t = coef.shape[0]
    gamma, coef0 = float(params[0]), float(params[1])
    degree = 0
    if kernel == "POLY":
        if params[2] != int(params[2]) or params[2] < 1:
            raise imp.error(f"POLY kernel of degree {params[2]}: only integer degrees >= 1 "
                            f"are supported")
        degree = int(params[2])
    x_ir = imp.ir(x, (0, 1))
    if kernel == "RBF":
        svs = imp.materialize(sv.reshape(n, 1, f), "support_vectors")
        ones = imp.materialize(np.ones((f, 1), np.float32), "ones")
        scale = imp.materialize(np.float32(-gamma).reshape(()), "minus_gamma")
    else:  # one column per vector: x.sv_j is a [1, F] x [F, 1] matmul
        svs = imp.materialize(sv.reshape(n, f, 1), "support_vectors")
        scale = imp.materialize(np.float32(gamma).reshape(()), "gamma")
        offset = (imp.materialize(np.full((1, 1), coef0, np.float32), "coef0")
                  if coef0 != 0 else None)
    coefs = imp.materialize(np.ascontiguousarray(coef.T).reshape(n, 1, t).astype(np.float32),
                            "svm_coefficients")
    zero = imp.leaf(minun.InitOp((1, t), 0.0), "svm_zero")

    def body(j, carried):
        sv_j = imp.emit(minun.IndexOp(svs, j), "sv_j")
        if kernel == "RBF":
            diff = imp.make(minun.SubOp, x_ir, sv_j)
            dist = imp.make(minun.MatMulOp, imp.make(minun.HadamardOp, diff, diff), ones)
            k = imp.make(minun.ExpOp, imp.make(minun.ScalarMulOp, scale, dist))
        else:
            u = imp.make(minun.ScalarMulOp, scale, imp.make(minun.MatMulOp, x_ir, sv_j))
            if offset is not None:
                u = imp.make(minun.AddOp, u, offset)
            if kernel == "SIGMOID":
                k = imp.make(minun.TanhOp, u)
            else:
                k = u
                for _ in range(degree - 1):
                    k = imp.make(minun.HadamardOp, k, u)
        term = imp.make(minun.HadamardOp, imp.emit(minun.IndexOp(coefs, j), "coef_j"), k)
        return [imp.make(minun.AddOp, carried[0], term)]

    return imp.loop(n, [zero], body, ["svm_sum"])[0]


def _svm_scores(imp: Importer, node: Node, x: Value, coef: np.ndarray) -> Value:
    """rho + coef k(x, sv) as a [1, T] value for coef [T, vectors] (T = 1 for a binary
    classifier or a regressor, one row per pair of classes otherwise). Linear: one matmul
    with W = coef sv (folded at import). RBF, POLY, SIGMOID: a loop over the support
    vectors (`_kernel_sum`)."""
    kernel = node.attr("kernel_type", "LINEAR")
    params = list(node.attr("kernel_params", [])) or [0.0, 0.0, 0.0]
    params += [0.0] * (3 - len(params))
    sv = _floats(node, "support_vectors")
    n_sv, f = coef.shape[1], x.shape[1]
    if sv.size != n_sv * f:
        raise imp.error(f"{sv.size} support vector values for {n_sv} vectors of {f} "
                        f"features")
    sv = sv.reshape(n_sv, f)
    rho = _floats(node, "rho")
    if rho.size != coef.shape[0]:
        raise imp.error(f"{rho.size} rho values for {coef.shape[0]} decision functions")
    if kernel == "LINEAR":
        w = (coef.astype(np.float64) @ sv.astype(np.float64)).astype(np.float32)
        s = matmul2d(imp, x, Value.const(np.ascontiguousarray(w.T), "svm_weights"))
    elif kernel in KERNELS:
        s = Value.of(_kernel_sum(imp, x, sv, coef, kernel, params))
    else:
        raise imp.error(f"kernel_type {kernel} is not supported ({', '.join(KERNELS)})")
    if np.any(rho != 0):
        s = imp.binary(minun.AddOp, s, Value.const(rho.reshape(1, -1), "rho"),
                       bias=minun.BiasAddOp)
    return s


def _pairwise(coef: np.ndarray, counts: list[int]) -> np.ndarray:
    """libsvm's one-vs-one coefficients ([classes - 1, vectors]) as one row per pair
    (i, j), i < j, in libsvm's order: class i's vectors weighted by row j - 1, class j's by
    row i (onnxruntime's SVMClassifier)."""
    n = len(counts)
    start = np.concatenate([[0], np.cumsum(counts)])
    rows = []
    for i in range(n):
        for j in range(i + 1, n):
            row = np.zeros(coef.shape[1], np.float32)
            row[start[i]:start[i + 1]] = coef[j - 1, start[i]:start[i + 1]]
            row[start[j]:start[j + 1]] = coef[i, start[j]:start[j + 1]]
            rows.append(row)
    return np.stack(rows)


def _votes(imp: Importer, scores: Value, n: int) -> Value:
    """One vote per pair (i, j): for i if its score is > 0, else for j; as one-node trees
    over the scores (leaf rows are the classes' unit vectors), so the comparison is exact
    in fixed point."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    table = np.array([(p, -j - 1, -i - 1) for p, (i, j) in enumerate(pairs)])
    op = minun.TreeEnsembleOp.create(
        operands=[imp.ir(scores, identity(2))],
        attributes={"mode": StringAttr("leq"), "roots": minun.dense_ints(np.arange(len(pairs))),
                    "nodes": minun.dense_ints(table),
                    "thresholds": minun.dense_f32(np.zeros(len(pairs), np.float32)),
                    "leaves": minun.dense_f32(np.eye(n, dtype=np.float32)),
                    "base": minun.dense_f32(np.zeros(n, np.float32))},
        result_types=[minun.tensor_of((1, n))])
    return Value.of(imp.emit(op))


def _svm_classifier(imp: Importer, node: Node) -> list[Value]:
    """SVC as onnxruntime computes it (no probability estimates, post_transform NONE).
    Binary: s = rho + sum_j coef_j k(x, sv_j), scores [-s, s], label 0 when s > 0 and 1
    otherwise (the argmax of [s, -s], so the class of the *smaller* score; the first on a
    tie at s = 0, where onnxruntime says 1). Multiclass: one decision value per pair of
    classes (the scores), and the label is the class with the most pairwise votes (the
    first on ties)."""
    x = _row(imp, node.inputs[0])
    n = _class_count(imp, node)
    counts = [int(c) for c in node.attr("vectors_per_class", [])]
    if not counts:
        raise imp.error("the liblinear form (no support vectors) is not supported; "
                        "skl2onnx exports LinearSVC as LinearClassifier")
    if len(counts) != n:
        raise imp.error(f"vectors_per_class has {len(counts)} entries for {n} classes")
    if node.attr("prob_a") or node.attr("prob_b"):
        raise imp.error("probability estimates (prob_a/prob_b, SVC(probability=True)) are "
                        "not supported")
    if node.attr("post_transform", "NONE") != "NONE":
        raise imp.error(f"post_transform {node.attr('post_transform')} is not supported "
                        f"for an SVM classifier (only NONE)")
    n_sv = sum(counts)
    coef = _floats(node, "coefficients")
    if coef.size != (n - 1) * n_sv:
        raise imp.error(f"{coef.size} coefficients for {n_sv} support vectors of {n} "
                        f"classes")
    if n == 2:
        s = _svm_scores(imp, node, x, coef.reshape(1, n_sv))
        neg = imp.unary(minun.NegOp, s)
        return [_label(imp, imp.concat([s, neg], 1)), imp.concat([neg, s], 1)]
    scores = _svm_scores(imp, node, x, _pairwise(coef.reshape(n - 1, n_sv), counts))
    return [_label(imp, _votes(imp, scores, n)), scores]


def _svm_regressor(imp: Importer, node: Node) -> list[Value]:
    x = _row(imp, node.inputs[0])
    if int(node.attr("one_class", 0)):
        raise imp.error("one_class=1 is not supported (its output is a sign)")
    if node.attr("post_transform", "NONE") != "NONE":
        raise imp.error(f"post_transform {node.attr('post_transform')} is not supported "
                        f"(only NONE)")
    n_sv = int(node.attr("n_supports", 0))
    if n_sv == 0:
        raise imp.error("the liblinear form (no support vectors) is not supported")
    coef = _floats(node, "coefficients")
    if coef.size != n_sv:
        raise imp.error(f"{coef.size} coefficients for {n_sv} support vectors")
    return [_svm_scores(imp, node, x, coef.reshape(1, n_sv))]


HANDLERS = {f"{ML}:{name}": handler for name, handler in {
    "Binarizer": _binarizer,
    "Imputer": _imputer,
    "SVMClassifier": _svm_classifier,
    "SVMRegressor": _svm_regressor,
    "LinearClassifier": _linear_classifier,
    "LinearRegressor": _linear_regressor,
    "Scaler": _scaler,
    "Normalizer": _normalizer,
    "ZipMap": _zipmap,
    "ArrayFeatureExtractor": _array_feature_extractor,
    "TreeEnsembleClassifier": _tree_classifier,
    "TreeEnsembleRegressor": _tree_regressor,
    "TreeEnsemble": _tree_ensemble_v5,
}.items()}
