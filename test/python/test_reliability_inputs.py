"""Regression tests for damaged or impossible inputs (the reliability issue's input,
resource and frontend items): each input here once gave an internal error, blocked a
tool forever, read a device without end or ran out of memory. Now each is refused with
one located diagnostic, before any large allocation or long computation."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_tools import tool as cli_tool
from onnx import TensorProto, helper, numpy_helper

from minun_mlir.tools import minun_compile, minun_opt

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]


def run(main, argv) -> tuple[int, str]:
    """A tool's main in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def refused(main, argv, message: str) -> str:
    """The tool exits 1 with one diagnostic that holds `message`; no internal error."""
    rc, err = run(main, argv)
    assert rc == 1, err
    assert message in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    return err


def _limited() -> None:  # a child that misbehaves must not take the machine with it
    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))


def tool(name: str, *args, timeout: float = 30) -> subprocess.CompletedProcess:
    """A tool in a child process with 2 GB of address space and a time limit: the old
    code blocked on a FIFO or read /dev/zero without end."""
    return subprocess.run([cli_tool(name), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_limited)


def mlp(hidden: int = 3, n_in: int = 4, opset: int = 13) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, hidden])
    w = numpy_helper.from_array(np.linspace(-1, 1, n_in * hidden, dtype=np.float32)
                                .reshape(n_in, hidden), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
                              "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.fixture
def onnx_case(tmp_path):
    """A small ONNX model, training data for it, and its test data folder."""
    model = tmp_path / "model.onnx"
    onnx.save(mlp(), model)
    rng = np.random.default_rng(0)
    train = tmp_path / "train.npy"
    np.save(train, np.concatenate([rng.integers(0, 3, (20, 1)), rng.uniform(-1, 1, (20, 4))],
                                  axis=1))
    folder = tmp_path / "test_data" / "test_data_set_0"
    folder.mkdir(parents=True)
    (folder / "input_0.pb").write_bytes(numpy_helper.from_array(
        rng.uniform(-1, 1, (1, 4)).astype(np.float32)).SerializeToString())
    (folder / "output_0.pb").write_bytes(numpy_helper.from_array(
        np.array([[0.1, 0.5, 0.2]], np.float32)).SerializeToString())
    return model, train, tmp_path / "test_data"


# -- 11: damaged inputs -------------------------------------------------------------------

def test_damaged_onnx_is_one_diagnostic_in_minun_compile_as_in_minun_opt(onnx_case):
    """minun-compile read the model with onnx.load: a DecodeError (internal error)."""
    model, train, _ = onnx_case
    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 2] + b"\xff\xff\xff")
    for main in (minun_compile.main, minun_opt.main):
        args = [model, "--train", train] if main is minun_compile.main else [model]
        err = refused(main, args, f"{model}: error: not a valid ONNX model file")
        assert len(err.strip().splitlines()) == 1


def test_npz_labels_that_are_not_one_per_example(onnx_case, tmp_path):
    """A 2-D 'y' (one-hot rows): ValueError in np.concatenate (internal error)."""
    model, _, _ = onnx_case
    train = tmp_path / "onehot.npz"
    np.savez(train, x=np.zeros((10, 4)), y=np.eye(10)[:, :3])
    refused(minun_compile.main, [model, "--train", train],
            f"{train}: error: 'y' holds the labels, one number per example (shape (10,)); "
            "it has shape (10, 3)")
    np.savez(train, x=np.float64(1.0))  # a 0-d 'x': len() of it raised TypeError
    refused(minun_compile.main, [model, "--train", train], f"{train}: error: 'x' is a single")


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "input_0.pb").write_bytes(b"garbage\xff"),
     "input_0.pb: error: not a serialized ONNX TensorProto"),
    (lambda d: (d / "output_0.pb").write_bytes(b"\x08"),
     "output_0.pb: error: not a serialized ONNX TensorProto"),
    (lambda d: (d / "input_0.pb").write_bytes(helper.make_tensor(
        "s", TensorProto.STRING, [1], [b"a"]).SerializeToString()),
     "input_0.pb: error: holds 1 object values; test data are numbers"),
    (lambda d: (d.parent / "test_data_set_1").mkdir() or (
        d.parent / "test_data_set_1" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.zeros((1, 5), np.float32)).SerializeToString()),
     "error: the test data sets hold inputs of different sizes"),
])
def test_damaged_onnx_test_data_folder(onnx_case, damage, message):
    """A damaged input_0.pb / output_0.pb: DecodeError from protobuf (internal error)."""
    model, train, test = onnx_case
    damage(test / "test_data_set_0")
    refused(minun_compile.main, [model, "--train", train, "--test", test], message)


def test_reversed_declared_range_with_synthetic_weights(tmp_path):
    """`W = (2, 4) in [-0.3, -0.5]`: the type error was reported for X but W's weights were
    still drawn, and numpy's uniform(-0.3, -0.5) raised ValueError (internal error)."""
    src = tmp_path / "rev.sd"
    src.write_text("let X = (4, 1) in [-1.0, 1.0] in\nlet W = (2, 4) in [-0.3, -0.5] in\nW * X\n")
    err = refused(minun_compile.main, [src, "--synthetic-weights", "1"],
                  f"{src}:2:9: error: empty range [-0.3, -0.5]: the lower bound is above")
    assert err.count("error:") == 1


# -- 12: resources ------------------------------------------------------------------------

class _Unblock:
    """On code that opened a FIFO, the open blocked until a writer came: after `seconds`,
    open it for writing once (the reader then sees an empty file and the test fails
    instead of hanging)."""

    def __init__(self, fifo: Path, seconds: float = 5.0):
        import threading

        self.fifo, self.done = fifo, threading.Event()
        self.thread = threading.Thread(target=self._run, args=(seconds,), daemon=True)

    def _run(self, seconds: float) -> None:
        if self.done.wait(seconds):
            return
        while not self.done.is_set():
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader yet
                self.done.wait(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def _special(tmp_path: Path, kind: str, name: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:  # a never-ending stream
        path.symlink_to("/dev/zero")
    return path


WHAT = {"fifo": "is a FIFO (named pipe), not a regular file",
        "directory": "is a directory, not a regular file",
        "zero": "is a device, not a regular file"}


# A folder is a valid weights directory (--weights) or ONNX test-data folder (--train,
# --test, data=): those roles take only the FIFO.
ROLES = ["onnx", "sd", "weights-npy", "weights-npz", "train", "test", "assign", "opt-input",
         "opt-data", "test-data-pb"]
FOLDER_IS_VALID = {"weights-npz", "train", "test", "opt-data"}


@pytest.mark.parametrize("role, kind", [(r, k) for r in ROLES for k in ("fifo", "directory")
                                        if not (k == "directory" and r in FOLDER_IS_VALID)])
def test_non_regular_input_files_are_refused_unread(onnx_case, tmp_path, role, kind):
    """A FIFO as a model, weights or data file blocked the tools forever; a folder gave
    IsADirectoryError (internal error). Every reader now checks first (minun_mlir/inputs.py)."""
    model, train, test = onnx_case
    sd = tmp_path / "prog.sd"
    sd.write_text("let X = (4, 1) in [-1.0, 1.0] in\nlet W = (2, 4) in [-0.5, 0.5] in\nW * X\n")
    weights = tmp_path / "w"
    weights.mkdir()
    np.save(weights / "W.npy", np.zeros((2, 4), np.float32))
    if role == "onnx":
        bad = _special(tmp_path, kind, "bad.onnx")
        argv, main, what = [bad, "--train", train], minun_compile.main, "the model"
    elif role == "sd":
        bad = _special(tmp_path, kind, "bad.sd")
        argv, main, what = [bad, "--synthetic-weights", "1"], minun_compile.main, "the program"
    elif role == "weights-npy":
        (weights / "W.npy").unlink()
        bad = _special(weights, kind, "W.npy")
        argv, main, what = [sd, "--weights", weights, "--scales", "maxscale", "--maxscale",
                            "4"], minun_compile.main, str(bad)
    elif role == "weights-npz":
        bad = _special(tmp_path, kind, "w.npz")
        argv, main, what = [sd, "--weights", bad, "--scales", "maxscale", "--maxscale", "4"], \
            minun_compile.main, "the weights"
    elif role in ("train", "test"):
        bad = _special(tmp_path, kind, "data.npy")
        argv = [model, "--train", bad] if role == "train" else \
            [model, "--train", train, "--test", bad]
        main, what = minun_compile.main, "the dataset"
    elif role == "assign":
        bad = _special(tmp_path, kind, "assignment.json")
        argv, main, what = [model, "--train", train, "--assign", bad], minun_compile.main, \
            "the assignment"
    elif role == "opt-input":
        bad = _special(tmp_path, kind, "bad.onnx")
        argv, main, what = [bad], minun_opt.main, "the input"
    elif role == "opt-data":
        bad = _special(tmp_path, kind, "data.npy")
        argv, main, what = [model, "-p", f'quantize{{data="{bad}"}}'], minun_opt.main, \
            "the dataset"
    else:
        pb = test / "test_data_set_0" / "input_0.pb"
        pb.unlink()
        bad = _special(pb.parent, kind, "input_0.pb")
        argv, main, what = [model, "--train", train, "--test", test], minun_compile.main, \
            "the test data"
    expected = WHAT[kind] + (" or a directory" if role in ("train", "test", "weights-npz",
                                                           "opt-data") else "")
    with _Unblock(bad) if kind == "fifo" else contextlib.nullcontext():
        where = f"{sd}:2:5" if role == "weights-npy" else bad  # at W's declaration
        refused(main, argv, f"{where}: error: {what} {expected}")


@pytest.mark.parametrize("tool_name, args", [
    ("minun-compile", ["{zero}.onnx"]),
    ("minun-opt", ["{zero}.onnx"]),
    ("minun-compile", ["{model}", "--train", "{zero}.npy"]),
])
def test_a_never_ending_stream_is_refused_unread(onnx_case, tmp_path, tool_name, args):
    """A symbolic link to /dev/zero as the model was read without end (8-12 GB of RSS in
    20 s). Run in a child with 2 GB of address space, so old code fails, not the machine."""
    model, _, _ = onnx_case
    zero = tmp_path / "zero"
    for ext in (".onnx", ".npy"):
        Path(f"{zero}{ext}").symlink_to("/dev/zero")
    r = tool(tool_name, *(a.format(zero=zero, model=model) for a in args), timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().endswith(f"{WHAT['zero']}" + (
        " or a directory" if "--train" in args else "")), r.stderr


@contextlib.contextmanager
def memory_cap(extra: int = 1 << 30):
    """At most `extra` bytes of address space more than this process has now: a refusal
    that comes after the allocation fails the test (MemoryError) instead of taking GBs."""
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize"))
    # the tool runs on a thread with a 512 MB stack (minun_mlir/tools/errors.py)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (size + extra + (512 << 20), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


SD_HUGE = [
    ("let X = (10000, 10000) in [-1.0, 1.0] in\nlet W = (2, 10000) in [-0.5, 0.5] in\nW * X\n",
     "1:9: error: the input 'X' of shape 10000x10000 has 100,000,000 values, more than fit "
     "any supported board (the RAM of the largest supported board, cortex-m4-mps2, holds "
     "4,194,304 bytes"),
    ("let X = (4, 1) in [-1.0, 1.0] in\nlet W = (2147483648, 4) in [-0.5, 0.5] in\nW * X\n",
     "2:9: error: the parameter 'W': 8,589,934,592 values, more than any supported target "
     "takes (the flash of the largest board, cortex-m4-mps2, holds 4,194,304 bytes; the "
     "host build takes at most 67,108,864 values)"),
    ("let X = (10000, 1) in [-1.0, 1.0] in\nlet W = (10000, 10000) in [-0.5, 0.5] in\nW * X\n",
     "2:9: error: the parameter 'W': 100,000,000 values"),
    ("let X = (4, 1) in [-1.0, 1.0] in\nlet A = (6000, 6000) in [-0.5, 0.5] in\n"
     "let B = (6000, 6000) in [-0.5, 0.5] in\nX\n",
     "3:9: error: the parameters declared up to 'B' (36,000,000 in it): 72,000,000 values"),
    ("let X = (4, 1) in [-1.0, 1.0] in\nlet Y = init([3000, 3000], 1.0) in\nY\n",
     "2:9: error: this value of shape 3000x3000 has 9,000,000 values"),
]


@pytest.mark.parametrize("program, message", SD_HUGE)
def test_huge_declared_sizes_are_refused_before_allocation(tmp_path, program, message):
    """A 10000x10000 input, a dimension of 2^31, 10000x10000 synthetic weights: an
    internal MemoryError, or 3-7 GB of RAM, before. Now refused at the declaration."""
    src = tmp_path / "big.sd"
    src.write_text(program)
    with memory_cap():
        err = refused(minun_compile.main, [src, "--synthetic-weights", "1"],
                      f"{src}:{message}")
    assert err.count("error:") == 1


def test_huge_onnx_inputs_are_refused_before_allocation(tmp_path):
    """An ONNX input [1, 1e8], or `--dim N=100000000000`: MemoryError in quantize."""
    for name, dims, extra, message in [
            ("big.onnx", [1, 100_000_000], [], "graph input 'x' of shape 1x100000000 has "
             "100,000,000 values, more than fit any supported board"),
            ("sym.onnx", ["N", 4], ["--dim", "N=100000000000"], "graph input 'x' of shape "
             "100000000000x4 has 400,000,000,000 values")]:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                                  [x], [y])
        path = tmp_path / name
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        with memory_cap():
            refused(minun_compile.main, [path, *extra], f"{path}: error: {message}")


@pytest.mark.parametrize("body, message", [
    ("let H0 = init([4, 1], 0.0) in\nloop(i = [0:100000000], H0) (H0 + W * X)\n",
     "4:1: error: profiling would execute 300,000,005 operations per input (limit "
     "100,000,000, about 30 times the largest realistic model); the body of this minun.loop "
     "runs 100,000,000 times per input"),
    ("$(i = [0:100000000]) (W * X)\n", "3:1: error: profiling would execute 200,000,004 "
     "operations per input"),
])
def test_loops_of_1e8_iterations_are_refused_before_profiling(tmp_path, body, message):
    """They profiled for minutes (the old code: no cap). A child process with a time
    limit, so that the old code fails the test instead of holding it."""
    src = tmp_path / "loop.sd"
    src.write_text("let X = (4, 1) in [-1.0, 1.0] in\nlet W = (4, 4) in [-0.5, 0.5] in\n" + body)
    r = tool("minun-compile", src, "--synthetic-weights", "1", timeout=30)
    assert r.returncode == 1 and f"{src}:{message}" in r.stderr, r.stderr


def test_the_largest_realistic_model_is_within_the_limits():
    """face-4 (benchmarks/real/edgeml-rnnpool-face-4), profiled on 405 images as the
    benchmark does (benchmarks/face.json), is far inside every limit; ten times its work
    per input is too."""
    from minun_mlir import limits
    from minun_mlir.driver import load_model

    l1 = load_model(ROOT / "benchmarks" / "real" / "edgeml-rnnpool-face-4" / "input.sd",
                    synthetic=1)
    limits.check_work(l1, 405)
    work = limits.work_per_input(l1)
    assert 3e6 < work.steps < limits.MAX_STEPS_PER_INPUT / 10
    assert 1e8 < work.values * 405 < limits.MAX_VALUES / 10
    from minun_mlir.native import values_per_example

    assert values_per_example(l1) == work.values  # the auto evaluator's measure



def test_the_largest_onnx_model_the_benchmark_compiles_is_within_the_limits():
    """ONNX's light ResNet-50 (benchmarks/face.json, compiled for the host on 8 images):
    25.6 million parameters, beyond every board's flash, but the host build takes it."""
    from minun_mlir import limits
    from minun_mlir.dialects import minun
    from minun_mlir.frontends.onnx import import_model

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    l1 = import_model(light / "light_resnet50.onnx")
    params = sum(int(np.prod(op.result.type.get_shape())) for op in l1.walk()
                 if isinstance(op, minun.ParamOp))
    assert limits.FLASH_BYTES < params < limits.MAX_PARAM_VALUES
    limits.check_work(l1, 8)


# -- 13: frontend -------------------------------------------------------------------------

def _conv_model(tmp_path: Path, op: str = "Conv", opset: int = 13, **attrs) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")] \
        if op == "Conv" else []
    inputs = ["x", "w"] if op == "Conv" else ["x"]
    graph = helper.make_graph([helper.make_node(op, inputs, ["y"], name="n", **attrs)], "g",
                              [x], [y], inits)
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


@pytest.mark.parametrize("op, attrs, message", [
    ("Conv", {"group": 0}, "attribute 'group' must be at least 1, got 0"),
    ("Conv", {"strides": [0, 0]}, "strides [0, 0]: every value must be at least 1"),
    ("Conv", {"dilations": [0, 1]}, "dilations [0, 1]: every value must be at least 1"),
    ("Conv", {"kernel_shape": [0, 3]}, "kernel_shape [0, 3]: every value must be at least 1"),
    ("Conv", {"kernel_shape": [2, 2]}, "kernel_shape [2, 2] does not match the filter"),
    ("Conv", {"pads": [-1, 0, 0, 0]}, "pads [-1, 0, 0, 0]: every value must be at least 0"),
    ("Conv", {"strides": [1, 1, 1]}, "strides [1, 1, 1] has 3 values; a 2-D Conv takes 2"),
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [0, 1]}, "strides [0, 1]: every value"),
    ("MaxPool", {"kernel_shape": [0, 2]}, "kernel_shape [0, 2]: every value must be at least"),
    ("AveragePool", {"kernel_shape": [2, 2, 2]}, "kernel_shape [2, 2, 2] has 3 values"),
    ("AveragePool", {"kernel_shape": [2, 2], "pads": [0, 0, -1, 0]}, "pads [0, 0, -1, 0]"),
])
def test_conv_and_pool_attribute_values(tmp_path, op, attrs, message):
    """group=0 or strides=0: ZeroDivisionError in the handler; dilations 0, negative pads
    or a kernel_shape of the wrong length: 'the imported IR does not verify' (internal)."""
    path = _conv_model(tmp_path, op, **attrs)
    refused(minun_opt.main, [path], f"{path}: error: node 'n' ({op}): {message}")


def test_an_operator_newer_than_the_models_opset(tmp_path):
    """HardSwish at opset 13 (it exists from 14): onnx's SchemaError (internal error)."""
    path = _conv_model(tmp_path, "HardSwish", opset=13)
    for main in (minun_opt.main, minun_compile.main):
        refused(main, [path], f"{path}: error: node 'n' (HardSwish): HardSwish is not in "
                "opset 13 of domain 'ai.onnx'; it was introduced in opset 14")
    assert run(minun_opt.main, [_conv_model(tmp_path, "HardSwish", opset=14)])[0] == 0


def test_sparse_initializers_are_refused(tmp_path):
    """A sparse initializer: ValueError from numpy_helper (internal error)."""
    values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "s")
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(
        np.array([0, 3], np.int64), "i"), [4, 1])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "s"], ["y"], name="mm")], "g",
                              [x], [y], sparse_initializer=[sparse])
    path = tmp_path / "sparse.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    refused(minun_opt.main, [path], f"{path}: error: sparse initializers are not supported")


def test_output_names_too_long_for_the_file_system(onnx_case, tmp_path):
    """--out with a 300-character name: OSError ENAMETOOLONG (internal error); --json:
    'error: cannot write to .' after the whole compile."""
    model, train, _ = onnx_case
    long = tmp_path / ("a" * 300)
    refused(minun_compile.main, [model, "--train", train, "--out", long],
            f"{long}: error: --out: a name in this path is too long for the file system")
    refused(minun_compile.main, [model, "--train", train, "--json", f"{long}.json"],
            f"{long}.json: error: --json: a name in this path is too long for the file "
            "system")
    refused(minun_opt.main, [model, "-o", f"{long}.mlir"],
            f"{long}.mlir: error: -o: a name in this path is too long for the file system")
    from minun_mlir.targets.errors import TargetError
    from minun_mlir.targets.run import _work_dir

    with pytest.raises(TargetError, match="cannot create the work directory .*: File name "
                       "too long"), _work_dir(long):
        pass


def test_evaluating_too_many_inputs_at_once_is_refused_before_allocation():
    """The evaluators hold each tensor for every input at once: 600 inputs of a 1000x1000
    input would take 4.5 GiB in one float64 array; refused with the numbers, unallocated."""
    from minun_mlir import limits
    from minun_mlir.frontends.seedot import compile_source

    l1 = compile_source("let X = (1000, 1000) in [-1.0, 1.0] in\nrelu(X)\n", "wide.sd")
    limits.check_work(l1, 500)
    with pytest.raises(Exception, match=r"profiling on 600 inputs would hold 4\.5 GiB in one "
                       r"tensor \(1,000,000 values x 600 inputs x 8 bytes; limit 4 GiB\)"):
        limits.check_work(l1, 600)


def test_minun_run_refuses_a_fifo_as_its_inputs(tmp_path):
    """minun-run's --inputs went to np.load: a FIFO blocked it."""
    from minun_mlir.targets.cli import _load
    from minun_mlir.targets.errors import TargetError

    fifo = _special(tmp_path, "fifo", "inputs.npy")
    with _Unblock(fifo), pytest.raises(TargetError, match="is a FIFO"):
        _load(fifo, "inputs")


def test_a_huge_constant_is_refused_before_folding(tmp_path):
    """ConstantOfShape [30000, 30000]: the reference evaluator filled 3.6 GB (or raised
    MemoryError) while folding it; its shape is known from ONNX shape inference first."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    shape = numpy_helper.from_array(np.array([30000, 30000], np.int64), "shape")
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="cos",
                              value=numpy_helper.from_array(np.array([1.0], np.float32))),
             helper.make_node("ReduceSum", ["c"], ["s"], name="rs", keepdims=0),
             helper.make_node("Add", ["x", "s"], ["y"], name="add")]
    path = tmp_path / "cos.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [shape]),
                                opset_imports=[helper.make_opsetid("", 13)]), path)
    with memory_cap():
        refused(minun_opt.main, [path], f"{path}: error: node 'cos' (ConstantOfShape): the "
                "constant 'c' of shape 30000x30000: 900,000,000 values, more than any "
                "supported target takes")


def test_external_data_that_is_a_fifo_is_named_as_such(tmp_path):
    """A FIFO as an initializer's external data file was reported 'missing'."""
    model = mlp()
    w = model.graph.initializer[0]
    w.ClearField("raw_data")
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    fifo = _special(tmp_path, "fifo", "weights.bin")
    with _Unblock(fifo):
        refused(minun_opt.main, [path], f"{path}: error: initializer 'W': external data file "
                "'weights.bin' is a FIFO (named pipe), not a regular file")
