"""No undefined behaviour in the generated C (architecture property 3: no signed overflow;
no out-of-bounds access): one model per family, several configurations, every test input,
built with -fsanitize=undefined,address, still equal to the evaluator."""

from __future__ import annotations

import os

import pytest
from codegen_support import build_host, expected_for, quantized, run_host
from test_crosscheck import assert_same

from minun_mlir.codegen import emit_c

SANITIZE = ("-O1", "-g", "-fsanitize=undefined,address", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer")
CASES = [("protonn", "fixed16"), ("bonsai", "maxscale16"), ("fastgrnn", "fixed8"),
         ("fastgrnn_lr_usps", "mixed16-8"), ("lenet", "fixed16"), ("lenet", "maxscale16"),
         ("rnnpool", "fixed16"), ("rnnpool", "fixed8-floor-sat"),
         ("fastgrnn", "fixed16-nearest-sat"),
         # normaliseL2 at 32 bits: the sum of squares once overflowed int64 (C: UB;
         # evaluator: sqrt of a negative), 26 of 32 labels wrong
         ("rnnpool", "fixed32")]


@pytest.mark.parametrize("model,config", CASES)
def test_sanitized_build_equals_evaluator(model, config, tmp_path):
    l2, _ = quantized(model, config)
    exp = expected_for(model, config)
    emit_c(l2, "x86", tmp_path)
    exe = build_host(tmp_path, tmp_path / "host", cflags=SANITIZE)
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               ASAN_OPTIONS="detect_leaks=0")
    labels, scores = run_host(exe, exp.inputs, exp.scores.dtype, exp.scores.shape[1],
                              env=env)
    assert_same(labels, scores, exp)
