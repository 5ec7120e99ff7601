"""The ONNX backend node tests for the supported operators: each imports, runs on the
float evaluator and matches the stored outputs. Tests we cannot pass are listed, with a
reason, in onnx_node_suite.EXCLUDED (never skipped silently), and are checked to be
refused with a diagnostic rather than mis-compiled. conftest.py prints the per-operator
count of passing tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx_node_suite import EXCLUDED, LOOSE_ATOL, load_case, relevant_tests

from minun_mlir.diagnostics import MinunError
from minun_mlir.frontends.onnx import import_model
from minun_mlir.frontends.onnx.batch import unfix_batch
from minun_mlir.numerics.float_eval import evaluate

RTOL, ATOL = 1e-4, 1e-5
RUN = sorted(set(relevant_tests()) - set(EXCLUDED))


@pytest.mark.parametrize("test", RUN)
def test_node(test: str) -> None:
    model, feeds, expected = load_case(test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = unfix_batch(model, None)[1]  # a fixed batch compiles as 1: keep its rows
    module = import_model(model, batched and {k: next(iter(feeds.values())).shape[0]
                                              for k in batched})
    outputs = evaluate(module, {k: v[None] for k, v in feeds.items()}).outputs
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        got = got[0]
        if want.dtype.kind in "iub":  # folded Shape, ArgMax: exact
            np.testing.assert_array_equal(got.reshape(want.shape), want)
            continue
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=LOOSE_ATOL.get(test, ATOL))


@pytest.mark.parametrize("test", sorted(EXCLUDED))
def test_excluded_is_refused(test: str) -> None:
    """An excluded test is refused with a diagnostic (so the list stays honest: a test
    that starts to import must move out of it)."""
    model, _, _ = load_case(test)
    with pytest.raises(MinunError), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fixed batch's note
        import_model(model)


def test_exclusions_name_relevant_tests() -> None:
    stale = set(EXCLUDED) - set(relevant_tests())
    assert not stale, f"exclusions that are not relevant node tests: {sorted(stale)}"


def test_every_operator_has_passing_tests() -> None:
    ops = {op for test, op in relevant_tests().items() if test not in EXCLUDED}
    # The opset-5 TreeEnsemble's two tests use a double input and set membership
    # (EXCLUDED); test_sklearn_zoo.py tests it
    assert ops == set(relevant_tests().values()) - {"ArgMax", "TreeEnsemble"}
