"""ONNX fuzzer: the vendored models (benchmarks/real/*/model.onnx) and small models built
with onnx.helper, damaged at the graph level (a node's input dropped or renamed, outputs
duplicated, wrong input shapes and element types, bad attributes, a changed opset, an
initializer removed or with a wrong shape, tensors in external data files that are
missing, outside the model's folder or too short, conv/pool counts of 0 or negative pads,
sparse initializers, an operator newer than the model's opset, huge input sizes) or at
the byte level (truncation, flips); or the model file is a FIFO, a link to /dev/zero or a
folder. Cases import the model (`minun-opt model.onnx`), sometimes through quantization,
and some run the whole `minun-compile`."""

from __future__ import annotations

import functools
import random

import numpy as np

from minun_mlir.fuzz.cases import ROOT, Case, choose_weighted, damage_bytes, special_file


def _onnx():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    return onnx, TensorProto, helper, numpy_helper


@functools.cache
def real_models() -> list[tuple[str, bytes]]:
    paths = sorted((ROOT / "benchmarks" / "real").glob("*/model.onnx"))
    return [(p.parent.name, p.read_bytes()) for p in paths]


def small_model(rng: random.Random):
    """A small valid model: Gemm/MatMul+Add chains with activations, or a Conv block."""
    onnx, TensorProto, helper, numpy_helper = _onnx()
    gen = np.random.default_rng(rng.randrange(2**32))
    nodes, inits = [], []

    def init(name, shape, scale=1.0):
        inits.append(numpy_helper.from_array(
            gen.uniform(-scale, scale, size=shape).astype(np.float32), name))
        return name

    if rng.random() < 0.3:
        c, h = rng.randint(1, 3), rng.randint(4, 8)
        k = rng.randint(1, 3)
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])
        oc = rng.randint(1, 4)
        nodes.append(helper.make_node("Conv", ["x", init("w", [oc, c, k, k]),
                                               init("b", [oc])], ["c"],
                                      kernel_shape=[k, k], pads=[0, 0, 0, 0]))
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        nodes.append(helper.make_node("Flatten", ["r"], ["f"], axis=1))
        flat = oc * (h - k + 1) ** 2
        n_out = rng.randint(2, 5)
        nodes.append(helper.make_node("Gemm", ["f", init("fw", [flat, n_out]),
                                               init("fb", [n_out])], ["y"]))
    else:
        n = rng.randint(1, 8)
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                          [rng.choice([1, "N"]), n])
        cur, width = "x", n
        for i in range(rng.randint(1, 4)):
            m = rng.randint(1, 8)
            if rng.random() < 0.5:
                nodes.append(helper.make_node("Gemm", [cur, init(f"w{i}", [width, m]),
                                                       init(f"b{i}", [m])], [f"g{i}"]))
            else:
                nodes.append(helper.make_node("MatMul", [cur, init(f"w{i}", [width, m])],
                                              [f"m{i}"]))
                nodes.append(helper.make_node("Add", [f"m{i}", init(f"b{i}", [m])],
                                              [f"g{i}"]))
            cur, width = f"g{i}", m
            act = rng.choice(["Relu", "Sigmoid", "Tanh", None, "Softmax"])
            if act:
                nodes.append(helper.make_node(act, [cur], [f"a{i}"]))
                cur = f"a{i}"
        nodes.append(helper.make_node("Identity", [cur], ["y"]))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "fuzz", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def mutate_graph(rng: random.Random, model, files: dict[str, bytes]) -> str:
    onnx, TensorProto, helper, numpy_helper = _onnx()
    g = model.graph
    kind = rng.choice(["drop-input", "rename-input", "dup-output", "input-shape",
                       "input-dtype", "attribute", "opset", "drop-initializer",
                       "initializer-shape", "external-data", "unknown-op", "no-outputs",
                       "drop-node", "cycle", "output-rename", "empty-name", "window-value",
                       "sparse-initializer", "newer-op", "huge-input"])
    nodes = list(g.node)
    node = rng.choice(nodes) if nodes else None
    if kind == "drop-input" and node is not None and node.input:
        del node.input[rng.randrange(len(node.input))]
        return f"{kind} of {node.op_type}"
    if kind == "rename-input" and node is not None and node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(["nowhere", "", "y", "x"])
        return f"{kind} of {node.op_type}"
    if kind == "dup-output" and g.output:
        g.output.append(g.output[0])
        return kind
    if kind == "output-rename" and g.output:
        g.output[0].name = rng.choice(["nothing", "", "x"])
        return kind
    if kind == "input-shape" and g.input:
        t = g.input[0].type.tensor_type
        if t.shape.dim:
            d = t.shape.dim[rng.randrange(len(t.shape.dim))]
            choice = rng.choice([0, -1, 3, 100000, "M", None])
            if choice is None:
                t.shape.dim.pop()
            elif isinstance(choice, str):
                d.dim_param = choice
            else:
                d.dim_value = choice
        else:
            t.shape.dim.add().dim_value = 2
        return kind
    if kind == "input-dtype" and g.input:
        g.input[0].type.tensor_type.elem_type = rng.choice(
            [TensorProto.INT64, TensorProto.STRING, TensorProto.DOUBLE, TensorProto.FLOAT16,
             TensorProto.BOOL, 0, 99])
        return kind
    if kind == "attribute" and node is not None:
        name = rng.choice(["transA", "transB", "axis", "alpha", "beta", "kernel_shape",
                           "strides", "pads", "group", "dilations", "auto_pad", "bogus"])
        value = rng.choice([0, 1, 5, -3, 99, float("nan"), 1e30, [0, 0], [1], [-1, 2, 3],
                            "SAME_UPPER", "garbage", [1.5]])
        for a in list(node.attribute):
            if a.name == name:
                node.attribute.remove(a)
        node.attribute.append(helper.make_attribute(name, value))
        return f"{kind} {node.op_type}.{name}={value!r}"
    if kind == "opset":
        model.opset_import[0].version = rng.choice([1, 6, 7, 11, 13, 17, 21, 99, 0])
        return f"opset {model.opset_import[0].version}"
    if kind in ("drop-initializer", "initializer-shape", "external-data") and g.initializer:
        t = rng.choice(list(g.initializer))
        if kind == "drop-initializer":
            g.initializer.remove(t)
            return f"{kind} {t.name}"
        if kind == "initializer-shape":
            if t.dims:
                t.dims[rng.randrange(len(t.dims))] += rng.choice([-1, 1, 7])
            else:
                t.dims.append(3)
            return f"{kind} {t.name}"
        if t.data_location == TensorProto.EXTERNAL:
            return "unchanged"
        try:
            arr = numpy_helper.to_array(t)
        except ValueError:  # an earlier mutation broke its shape
            return "unchanged"
        raw = arr.astype(np.float32).tobytes()
        where = rng.choice(["ok", "missing", "outside", "short", "offset", "absolute"])
        location = {"ok": "weights.bin", "missing": "nothere.bin", "outside": "../x.bin",
                    "short": "weights.bin", "offset": "weights.bin",
                    "absolute": "/etc/hostname"}[where]
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        entries = {"location": location}
        if where == "short":
            raw = raw[: len(raw) // 2]
        if where == "offset":
            entries["offset"] = str(len(raw) * 4)
            entries["length"] = str(len(raw))
        for k, v in entries.items():
            e = t.external_data.add()
            e.key, e.value = k, v
        if where in ("ok", "short", "offset"):
            files["weights.bin"] = raw
        return f"external data {t.name}: {where}"
    if kind == "unknown-op" and node is not None:
        node.op_type = rng.choice(["Frobnicate", "LSTM", "If", "Loop", "Resize"])
        if rng.random() < 0.3:
            node.domain = "com.example"
        return f"{kind} {node.op_type}"
    if kind == "window-value":  # a conv/pool count of 0, or a negative pad
        windows = [n for n in nodes if n.op_type in ("Conv", "MaxPool", "AveragePool")]
        if not windows:
            return "unchanged"
        node = rng.choice(windows)
        name, value = rng.choice([("group", 0), ("group", -2), ("strides", [0, 0]),
                                  ("strides", [1, 0]), ("dilations", [0, 1]),
                                  ("kernel_shape", [0, 3]), ("kernel_shape", [2, 2, 2]),
                                  ("pads", [-1, 0, 0, 0]), ("pads", [0, 0, 0, -5]),
                                  ("strides", [1, 1, 1])])
        for a in list(node.attribute):
            if a.name == name:
                node.attribute.remove(a)
        node.attribute.append(helper.make_attribute(name, value))
        return f"{kind} {node.op_type}.{name}={value!r}"
    if kind == "sparse-initializer" and g.initializer:
        t = rng.choice(list(g.initializer))
        try:
            arr = numpy_helper.to_array(t).reshape(-1)
        except ValueError:
            return "unchanged"
        keep = np.flatnonzero(arr)[: rng.randint(1, 4)]
        values = numpy_helper.from_array(arr[keep].astype(np.float32), t.name)
        g.sparse_initializer.append(helper.make_sparse_tensor(
            values, numpy_helper.from_array(keep.astype(np.int64), t.name + "_idx"),
            list(t.dims)))
        g.initializer.remove(t)
        return f"{kind} {t.name}"
    if kind == "newer-op" and node is not None:  # an operator after the model's opset
        op, since = rng.choice([("HardSwish", 14), ("Gelu", 20), ("Mish", 18),
                                ("Celu", 12), ("Shrink", 9)])
        node.op_type = op
        del node.attribute[:]
        model.opset_import[0].version = rng.randint(7, since - 1)
        return f"{kind} {op} at opset {model.opset_import[0].version}"
    if kind == "huge-input" and g.input and g.input[0].type.tensor_type.shape.dim:
        dims = g.input[0].type.tensor_type.shape.dim
        d = dims[rng.randrange(len(dims))]
        d.dim_value = rng.choice([10**8, 2**31, 2**40, 10**18])
        return f"{kind} {d.dim_value}"
    if kind == "no-outputs":
        del g.output[:]
        return kind
    if kind == "drop-node" and node is not None:
        g.node.remove(node)
        return f"{kind} {node.op_type}"
    if kind == "cycle" and len(nodes) > 1 and nodes[0].input and nodes[-1].output:
        nodes[0].input[0] = nodes[-1].output[0]
        return kind
    if kind == "empty-name" and node is not None and node.output:
        node.output[0] = ""
        return kind
    return "unchanged"


def make_case(rng: random.Random, index: int) -> Case:
    onnx, *_ = _onnx()
    source = choose_weighted(rng, [(1, "real"), (3, "small")])
    if source == "real":
        name, data = rng.choice(real_models())
        model = onnx.load_from_string(data)
    else:
        name, model = "small", small_model(rng)
    files: dict[str, bytes] = {}
    damage = choose_weighted(rng, [(6, "graph"), (2, "bytes"), (2, "none"), (0.5, "file")])
    what = name
    if damage == "graph":
        for _ in range(rng.choice([1, 1, 2])):
            what += "; " + mutate_graph(rng, model, files)
    data = model.SerializeToString()
    if damage == "bytes":
        data, how = damage_bytes(rng, data)
        what += "; " + how
    files["model.onnx"] = data
    argv = ["{dir}/model.onnx"]
    if rng.random() < 0.6:
        size = rng.choice([1, 1, 2, 0, 10**8, 10**11])
        argv += ["--dim", f"{rng.choice(['N', 'batch', 'M'])}={size}"]
    tool = "minun-opt"
    if rng.random() < 0.15:  # the whole compile reads the model too (its own reader, once)
        tool = "minun-compile"
        argv += rng.choice([["--scales", "maxscale", "--maxscale", "4"], []])
        what += "; minun-compile"
    elif rng.random() < 0.2:
        argv += ["--input-range", rng.choice(["x=-1,1", "x=0,6", "Input3=0,1",
                                              "dense_2_input=-3,3"])]
    if tool == "minun-opt" and rng.random() < 0.25:
        bits = rng.choice([8, 16])
        argv.append(f"--pass-pipeline=builtin.module(lower-composite-ops,quantize{{bits={bits}}})")
        what += f"; quantize {bits}"
    case = Case("onnx", index, tool, argv, files, what)
    if damage == "file":
        case.what += "; " + special_file(rng, case, "model.onnx")
    return case
