"""Train small gradient-boosted tree models with XGBoost, LightGBM and CatBoost on
scikit-learn's bundled datasets and export them as their users would: XGBoost and LightGBM
through onnxmltools (its defaults), CatBoost through its own `save_model(format="onnx")`.
Also copies the logistic-regression file that ships inside the onnxruntime wheel.

Each model goes to test/zoo/<producer>/<model>.onnx with <model>.npz: `x`, the first 40
test-split inputs of export_sklearn's split (so the profiling data is the sklearn zoo's
data/<dataset>-train.npz), and the producer's own predictions on them (`y`, labels; or
`values` for the regressors). The binary classifiers learn iris' virginica against the
other two species (features of similar ranges: trees compare them on one input scale in
fixed point, docs/onnx-frontend.md). Deterministic: fixed seeds, one thread.

    .venv/bin/python tools/zoo/export_trees.py            # rewrite the zoo
    .venv/bin/python tools/zoo/export_trees.py --check    # exit 1 if a model would change

The tests never import these packages: the files are committed. Versions are in each
producer's README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo")
N_TEST = 40
ROUNDS, DEPTH = 10, 3  # small: the node tables stay a few KB
VOLATILE = ("train_finish_time", "model_guid")  # CatBoost's metadata that changes per run


def _xgboost():
    import xgboost as xgb

    kw = dict(n_estimators=ROUNDS, max_depth=DEPTH, random_state=0, n_jobs=1,
              tree_method="exact")
    return {"xgboost/xgb_clf_iris": ("iris", xgb.XGBClassifier(**kw)),
            "xgboost/xgb_bin_iris": ("iris_virginica", xgb.XGBClassifier(**kw)),
            "xgboost/xgb_reg_diabetes": ("diabetes", xgb.XGBRegressor(**kw))}


def _lightgbm():
    import lightgbm as lgb

    kw = dict(n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=8, random_state=0,
              n_jobs=1, deterministic=True, force_row_wise=True, verbose=-1)
    return {"lightgbm/lgbm_clf_wine": ("wine", lgb.LGBMClassifier(**kw)),
            "lightgbm/lgbm_bin_iris": ("iris_virginica", lgb.LGBMClassifier(**kw)),
            "lightgbm/lgbm_reg_diabetes": ("diabetes", lgb.LGBMRegressor(**kw))}


def _catboost():
    import catboost as cb

    kw = dict(iterations=ROUNDS, depth=DEPTH, random_seed=0, thread_count=1,
              verbose=False, allow_writing_files=False)
    return {"catboost/cb_clf_iris": ("iris", cb.CatBoostClassifier(**kw)),
            "catboost/cb_bin_iris": ("iris_virginica", cb.CatBoostClassifier(**kw)),
            "catboost/cb_reg_diabetes": ("diabetes", cb.CatBoostRegressor(**kw))}


def _to_onnx(name: str, est, n_features: int) -> bytes:
    """The producer's own exporter with its defaults."""
    if name.startswith("catboost/"):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.onnx")
            est.save_model(path, format="onnx")
            with open(path, "rb") as f:
                data = f.read()
        import onnx

        onx = onnx.load_from_string(data)
        onx.graph.name = name.split("/")[1]
        keep = [p for p in onx.metadata_props if p.key not in VOLATILE]
        del onx.metadata_props[:]
        onx.metadata_props.extend(keep)
        return onx.SerializeToString(deterministic=True)
    import onnxmltools
    from onnxmltools.convert.common.data_types import FloatTensorType

    types = [("input", FloatTensorType([None, n_features]))]
    convert = (onnxmltools.convert_xgboost if name.startswith("xgboost/")
               else onnxmltools.convert_lightgbm)
    onx = convert(est, initial_types=types, target_opset=15)  # onnxmltools 1.16 goes up to 15
    onx.graph.name = name.split("/")[1]  # onnxmltools names the graph with a random uuid
    opsets = sorted((o.domain, o.version) for o in onx.opset_import)  # set order
    del onx.opset_import[:]
    for domain, version in opsets:
        onx.opset_import.add(domain=domain, version=version)
    return onx.SerializeToString(deterministic=True)


def _ort_logreg() -> dict[str, bytes]:
    """onnxruntime's datasets/logreg_iris.onnx as shipped, with 40 iris rows (the sklearn
    zoo's split, the first two features: the file declares 2, sepal length and width) and
    onnxruntime's labels for them (the file's input batch is fixed at 3:
    x holds the rows one by one, the tests compile a batch of 1); logreg_iris-train.npz,
    the training split's same two features (profiling data)."""
    import onnxruntime as ort
    from export_sklearn import _data, _npz

    path = os.path.join(os.path.dirname(ort.__file__), "datasets", "logreg_iris.onnx")
    with open(path, "rb") as f:
        data = f.read()
    x_train, x_test, y_train, _ = _data("iris")
    x = np.ascontiguousarray(x_test[:N_TEST, :2])  # its two features: the sepal's
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    out = sess.get_outputs()[0].name
    rows = [sess.run([out], {name: np.repeat(xi[None], 3, 0)})[0][0] for xi in x]
    return {"onnxruntime/logreg_iris.onnx": data,
            "onnxruntime/logreg_iris.npz": _npz(x=x, y=np.asarray(rows, np.int64)),
            "onnxruntime/logreg_iris-train.npz": _npz(
                x=np.ascontiguousarray(x_train[:, :2]), y=y_train)}


def export_all(only: str | None = None) -> dict[str, bytes]:
    """{path under test/zoo: bytes} of every model and its test data."""
    from export_sklearn import _data, _npz

    files = {}
    for group in (_xgboost, _lightgbm, _catboost):
        for name, (dataset, est) in group().items():
            if only and not name.startswith(only):
                continue
            x_train, x_test, y_train, _ = _data(dataset.removesuffix("_virginica"))
            if dataset.endswith("_virginica"):  # binary: virginica (2) or not
                y_train = (y_train == 2).astype(np.int64)
            est.fit(x_train, y_train)
            files[f"{name}.onnx"] = _to_onnx(name, est, x_train.shape[1])
            x = x_test[:N_TEST]
            pred = np.asarray(est.predict(x)).reshape(len(x), -1)[:, 0]
            files[f"{name}.npz"] = (_npz(x=x, values=pred.astype(np.float64))
                                    if dataset == "diabetes" else
                                    _npz(x=x, y=pred.astype(np.int64)))
    if not only or only.startswith("onnxruntime"):
        files.update(_ort_logreg())
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    parser.add_argument("--only", help="only the models whose path starts with this")
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    from export_sklearn import write_or_check

    return write_or_check(export_all(args.only), OUT, args.check)


if __name__ == "__main__":
    sys.exit(main())
