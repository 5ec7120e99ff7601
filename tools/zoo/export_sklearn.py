"""Train small scikit-learn models on sklearn's bundled datasets and export them with
skl2onnx into test/zoo/sklearn/: `<model>.onnx` plus `<model>.npz` holding the test
inputs (`x`, float32) and what scikit-learn itself predicts for them (`y`, labels; or
`values` for the regressors; for models fit on class names, `y` is the class index and
`classes` the names), and `data/<dataset>-train.npz`, the first training inputs
(`x`, `y`: profiling data for quantize). Deterministic: fixed random_state everywhere,
fixed opsets.

    .venv/bin/python tools/zoo/export_sklearn.py            # rewrite the zoo
    .venv/bin/python tools/zoo/export_sklearn.py --check    # exit 1 if a model would change

The models are kept small (a few KB to ~100 KB) so they can live in git; see
test/zoo/sklearn/README.md for the exporters' versions.
"""

from __future__ import annotations

import argparse
import io
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "zoo", "sklearn")
OPSETS = {"": 17, "ai.onnx.ml": 3}
N_TEST = 40  # test inputs stored per model
N_TRAIN = 120  # training inputs stored per dataset of many features (profiling data)


def _data(name: str):
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    load = {"digits": datasets.load_digits, "wine": datasets.load_wine,
            "breast_cancer": datasets.load_breast_cancer, "iris": datasets.load_iris,
            "diabetes": datasets.load_diabetes}[name]
    x, y = load(return_X_y=True)
    x = x.astype(np.float32)
    return train_test_split(x, y, test_size=0.3, random_state=0, stratify=(
        None if name == "diabetes" else y))


def _models():
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler
    from sklearn.svm import SVC, SVR, LinearSVC
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    return {
        # name: (dataset, estimator, zipmap); zipmap True: skl2onnx's default output (a
        # ZipMap of the probabilities), False: the option zipmap=False (a tensor), None:
        # the estimator has no probabilities
        "logreg_digits": ("digits", LogisticRegression(max_iter=2000, random_state=0), True),
        "logreg_norm_iris": ("iris", make_pipeline(
            Normalizer(), LogisticRegression(max_iter=1000, random_state=0)), True),
        "logreg_breast_cancer": ("breast_cancer", make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=1000, random_state=0)), True),
        "linearsvc_wine": ("wine", make_pipeline(
            StandardScaler(), LinearSVC(random_state=0)), None),
        "svc_linear_breast_cancer": ("breast_cancer", make_pipeline(
            StandardScaler(), SVC(kernel="linear", C=0.1, random_state=0)), None),
        "svc_rbf_breast_cancer": ("breast_cancer", make_pipeline(
            StandardScaler(), SVC(kernel="rbf", random_state=0)), None),
        "svc_rbf_iris": ("iris", make_pipeline(
            StandardScaler(), SVC(kernel="rbf", random_state=0)), None),
        "svc_poly_breast_cancer": ("breast_cancer", make_pipeline(
            StandardScaler(), SVC(kernel="poly", degree=3, coef0=1.0, random_state=0)), None),
        "svc_sigmoid_breast_cancer": ("breast_cancer", make_pipeline(
            StandardScaler(), SVC(kernel="sigmoid", random_state=0)), None),
        "mlp_digits": ("digits", make_pipeline(StandardScaler(), MLPClassifier(
            hidden_layer_sizes=(32,), max_iter=300, random_state=0)), True),
        "dtree_wine": ("wine", DecisionTreeClassifier(max_depth=5, random_state=0), True),
        "rf_digits": ("digits", RandomForestClassifier(
            n_estimators=10, max_depth=6, random_state=0), True),
        "gb_iris": ("iris", GradientBoostingClassifier(
            n_estimators=15, max_depth=3, random_state=0), True),
        "linreg_diabetes": ("diabetes", LinearRegression(), None),
        "svr_rbf_diabetes": ("diabetes", make_pipeline(StandardScaler(), SVR(
            kernel="rbf", C=50.0)), None),
        "dtreg_diabetes": ("diabetes", DecisionTreeRegressor(max_depth=5, random_state=0),
                           None),
        # fit on the class names (STRING_LABELS): classlabels_strings, a string label
        "logreg_names_iris": ("iris", make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=1000, random_state=0)), True),
    }


# Models fit on class names instead of 0..n-1 (skl2onnx then exports classlabels_strings
# and a STRING label): the names of the dataset's classes 0..n-1, in sorted order so that
# scikit-learn's classes_ (sorted) keep the dataset's numbering. Their .npz holds `y` as
# the class index and `classes`, the names.
STRING_LABELS = {"logreg_names_iris": ("setosa", "versicolor", "virginica")}


def export_all() -> dict[str, bytes]:
    """{file name: bytes} of every model and its test data."""
    import warnings

    from skl2onnx import to_onnx

    files = {}
    for name, (dataset, est, zipmap) in _models().items():
        x_train, x_test, y_train, _ = _data(dataset)
        names = STRING_LABELS.get(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings of the small budgets
            est.fit(x_train, y_train if names is None else np.asarray(names)[y_train])
        last = est.steps[-1][1] if hasattr(est, "steps") else est
        options = {id(last): {"zipmap": False}} if zipmap is False else None
        if zipmap is None and last is not est and hasattr(last, "classes_"):
            # skl2onnx 1.20 asks a pipeline's last step for a zipmap option that LinearSVC
            # and SVC do not have, unless the step is given options of its own
            options = {id(last): {"nocl": False}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # SVC.probA_, read by skl2onnx
            onx = to_onnx(est, x_train[:1], target_opset=OPSETS, options=options)
        # skl2onnx lists the opsets in set order (it changes with PYTHONHASHSEED)
        opsets = sorted((o.domain, o.version) for o in onx.opset_import)
        del onx.opset_import[:]
        for domain, version in opsets:
            onx.opset_import.add(domain=domain, version=version)
        x = x_test[:N_TEST]
        pred = est.predict(x)
        files[f"{name}.onnx"] = onx.SerializeToString(deterministic=True)
        if dataset == "diabetes":  # a regressor's values are no labels (minun-compile --test)
            files[f"{name}.npz"] = _npz(x=x, values=pred.astype(np.float64))
        elif names is not None:
            assert list(est.classes_) == list(names)
            files[f"{name}.npz"] = _npz(x=x, y=np.searchsorted(names, pred).astype(np.int64),
                                        classes=np.asarray(names))
        else:
            files[f"{name}.npz"] = _npz(x=x, y=pred.astype(np.int64))
        n = N_TRAIN if x_train.shape[1] > 16 else len(x_train)  # few features: all rows
        files[f"data/{dataset}-train.npz"] = _npz(x=x_train[:n], y=y_train[:n])
    return files


def _npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _same(name: str, committed: bytes, exported: bytes,
          inputs: np.ndarray | None = None) -> bool:
    """Equal bytes, or (trained weights move in the last bits with the BLAS a machine
    has) the same model: equal graph structure, integer and string attributes, and floats
    within rtol 1e-4, or the same predictions on `inputs` (the model's stored test inputs);
    equal labels and inputs, close values, for the data files."""
    if committed == exported:
        return True
    if name.endswith(".npz"):
        a, b = np.load(io.BytesIO(committed)), np.load(io.BytesIO(exported))
        if sorted(a.files) != sorted(b.files):
            return False
        return all(a[k].shape == b[k].shape and (
            np.array_equal(a[k], b[k]) if a[k].dtype.kind in "iub" else
            np.allclose(a[k], b[k], rtol=1e-4, atol=1e-6)) for k in a.files)
    import onnx
    from onnx import numpy_helper

    ma, mb = onnx.load_from_string(committed), onnx.load_from_string(exported)
    floats_a, floats_b = [], []

    def strip(model):
        """The model with every float zeroed, and its floats listed in order."""
        out = []
        for t in model.graph.initializer:
            arr = numpy_helper.to_array(t)
            if arr.dtype.kind == "f":
                out.append(arr.reshape(-1))
                t.CopyFrom(numpy_helper.from_array(np.zeros_like(arr), t.name))
        for node in model.graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.FLOATS:
                    out.append(np.array(attr.floats))
                    attr.floats[:] = [0.0] * len(attr.floats)
                elif attr.type == onnx.AttributeProto.FLOAT:
                    out.append(np.array([attr.f]))
                    attr.f = 0.0
        return out

    floats_a, floats_b = strip(ma), strip(mb)
    if ma.SerializeToString(deterministic=True) != mb.SerializeToString(
            deterministic=True) or len(floats_a) != len(floats_b) or any(
            x.shape != y.shape for x, y in zip(floats_a, floats_b)):
        return False
    if all(np.allclose(x, y, rtol=1e-4, atol=1e-6) for x, y in zip(floats_a, floats_b)):
        return True
    # an iterative trainer (lbfgs, adam) ends elsewhere with another CPU's BLAS (measured:
    # logreg_digits' coefficients 0.003 apart on an AVX2 EPYC): the same model if it
    # predicts the same on the stored inputs
    return inputs is not None and _same_predictions(committed, exported, inputs)


def _same_predictions(committed: bytes, exported: bytes, x: np.ndarray) -> bool:
    """onnxruntime's outputs of both models on x (one input each): integer outputs (labels)
    equal, float scores with the same largest class (one score: within 1%)."""
    import onnxruntime as ort

    outs = []
    for model in (committed, exported):
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        shape = [d if isinstance(d, int) else 1 for d in sess.get_inputs()[0].shape]
        outs.append([[np.asarray(v) for v in sess.run(None, {name: xi.reshape(shape).astype(
            np.float32)}) if not isinstance(v, list)] for xi in x])
    for ra, rb in zip(*outs):
        for a, b in zip(ra, rb):
            if a.shape != b.shape:
                return False
            if a.dtype.kind == "f" and a.size > 1:
                a, b = a.reshape(-1, a.shape[-1]).argmax(-1), b.reshape(-1, b.shape[-1]).argmax(-1)
            if not (np.array_equal(a, b) if a.dtype.kind in "iub" else np.allclose(
                    a, b, rtol=1e-2, atol=1e-6)):
                return False
    return True


def _test_inputs(name: str, files: dict[str, bytes]) -> np.ndarray | None:
    """The stored test inputs (`x` of `<model>.npz`) of an exported `.onnx`, if any (the
    torch zoo's `mlp_ts.onnx` and `mlp_dynamo.onnx` share `mlp.npz`)."""
    if not name.endswith(".onnx"):
        return None
    stem = name.removesuffix(".onnx")
    for npz in (stem + ".npz", stem.rsplit("_", 1)[0] + ".npz"):
        if npz in files and "x" in np.load(io.BytesIO(files[npz])).files:
            return np.load(io.BytesIO(files[npz]))["x"]
    return None


def write_or_check(files: dict[str, bytes], out: str, check: bool) -> int:
    """Write each exported file under `out`, or with `check` compare it with the committed
    one (`_same`); the zoo's three export scripts share this. Returns the exit status."""
    stale = []
    for name, data in files.items():
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if check:
            with open(path, "rb") as f:
                if not _same(name, f.read(), data, _test_inputs(name, files)):
                    stale.append(name)
        else:
            with open(path, "wb") as f:
                f.write(data)
    if stale:
        print("differs from the export:", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing")
    args = parser.parse_args(argv)
    return write_or_check(export_all(), OUT, args.check)


if __name__ == "__main__":
    sys.exit(main())
