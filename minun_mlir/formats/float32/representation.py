"""float32 representation: the same L2 program with `f32` elements, so that the float
baseline the papers compare against goes through the same lowering and C printer.

Its evaluator kernels compute in float32 (numpy), element by element in the order the
C loops use for sums, so they track the float C closely (bit-exactness is only promised
for integer representations: libm's expf may differ from numpy in the last place).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from minun_mlir.dialects import minun, num
from minun_mlir.numerics import float_eval
from minun_mlir.numerics.convert import L2Converter, shape_of
from minun_mlir.numerics.float_eval import Profile
from minun_mlir.numerics.repr import QuantizeConfig, Representation


def _softmax(x: np.ndarray) -> np.ndarray:
    """float32, as the C computes it: e^(x - max), then each divided by the sum."""
    x = _f(x)
    e = _f(np.exp(_f(x - x.max(axis=-1, keepdims=True))))
    return _f(e / _f(e.sum(axis=-1, keepdims=True)))


def _log_softmax(x: np.ndarray) -> np.ndarray:
    """float32, as the C computes it: d = x - max, the sum of e^d, d - log(sum)."""
    x = _f(x)
    d = _f(x - x.max(axis=-1, keepdims=True))
    return _f(d - _f(np.log(_f(np.exp(d).sum(axis=-1, keepdims=True, dtype=np.float32)))))


class Float32Converter(L2Converter):
    """The float program: every value of one element type, each op rounding once. posit
    and bfloat16 reuse it with their own element (`element`), parameters and exp."""

    representation_name = "float32"
    element: Attribute = f32
    exp_method = num.ExpMethod.FLOAT

    def element_of(self, old: SSAValue) -> Attribute:
        """The element type L1 value `old` gets: one per program here; posits choose it
        per tensor (a bitwidth assignment)."""
        return self.element

    def widest(self, elements: list[Attribute]) -> Attribute:
        """The format an op on operands and a result of these element types computes in."""
        return self.element

    def ty(self, old: SSAValue) -> TensorType:
        return minun.tensor_of(shape_of(old), self.element_of(old))

    def compute(self, kind: type[Operation], operands: list[SSAValue], old: SSAValue,
                attributes: dict[str, Attribute] | None = None) -> SSAValue:
        """`kind` on `operands` for L1 result `old`: computed in the widest format among
        the operands' and the result's (an operand in a narrower one converted first,
        exactly), the result then converted to its own format (MinUn's Procedure 3:
        t2 = posit8(t1 + B1), the sum of two posit16s rounded to posit8)."""
        want = self.element_of(old)
        wide = self.widest([v.type.element_type for v in operands] + [want])
        result = self.emit(kind.create(
            operands=[self.cast(v, wide) for v in operands], attributes=attributes or {},
            result_types=[minun.tensor_of(shape_of(old), wide)]))
        return self.cast(result, want)

    def input(self, op: minun.InputOp) -> SSAValue:
        return self.emit(num.InputOp.create(attributes={"sym_name": op.sym_name},
                                            result_types=[self.ty(op.result)]))

    def param(self, op, values, name, sparse, declared) -> SSAValue:
        ty = minun.tensor_of(values.shape, f32)
        return self.emit(num.ParamOp.build_param(name, values.astype(np.float32), ty, sparse))

    def init_type(self, op, fill) -> Attribute:
        return self.element_of(op.result)

    def add(self, op: Operation, a, b, subtract) -> SSAValue:
        return self.compute(num.SubOp if subtract else num.AddOp, [a, b], op.results[0])

    def mul(self, op: Operation, a, b) -> SSAValue:
        return self.compute(num.MulOp, [a, b], op.results[0])

    def tree_ensemble(self, op, x) -> SSAValue:
        if self.element != f32:  # posit and bfloat16 compare and add otherwise
            return super().tree_ensemble(op, x)
        return self.copy(op, [x])  # f32 thresholds, leaves and sums: the L1 op as it is

    def _attrs(self, **ints) -> dict[str, Attribute]:
        return {"rounding": num.rounding_attr("nearest"),
                **{k: IntegerAttr(v, i64) for k, v in ints.items()}}

    def matmul(self, op, a, b) -> SSAValue:
        return self.compute(num.MatMulOp, [a, b], op.result, self._attrs(halvings=0))

    def sparse_matmul(self, op, a, b) -> SSAValue:
        return self.compute(num.SparseMatMulOp, [a, b], op.result, self._attrs(shift=0))

    def conv2d(self, op: minun.Conv2DOp, x, f) -> SSAValue:
        attrs = {k: op.attributes[k] for k in ("strides", "pads", "dilations", "groups")}
        return self.compute(num.Conv2DOp, [x, f], op.result,
                            {**attrs, **self._attrs(halvings=0)})

    def exp(self, op, x) -> SSAValue:
        return self.compute(num.ExpOp, [x], op.result,
                            {"method": num.ExpMethodAttr(self.exp_method)})

    def table_function(self, op, kind, x) -> SSAValue:
        return self.compute(kind, [x], op.results[0])

    def normalise_l2(self, op, x) -> SSAValue:
        return self.compute(num.NormaliseL2Op, [x], op.results[0])

    def softmax(self, op, x) -> SSAValue:
        return self.compute(num.SoftmaxOp, [x], op.results[0])

    def log_softmax(self, op, x) -> SSAValue:
        return self.compute(num.LogSoftmaxOp, [x], op.results[0])

    def cast(self, value: SSAValue, to: Attribute) -> SSAValue:
        el = to.element_type if isinstance(to, TensorType) else to
        if not isinstance(value.type, TensorType) or value.type.element_type == el:
            return value
        return self.emit(num.ConvertOp.create(operands=[value], result_types=[
            minun.tensor_of(value.type.get_shape(), el)]))

    def unify(self, values):
        wide = self.widest([v.type.element_type for v in values])
        return [self.cast(v, wide) for v in values]

    def _widened(self, types: list[Attribute]) -> Attribute:
        if not isinstance(types[0], TensorType):
            return types[0]  # an index (Bonsai's tree node)
        wide = self.widest([t.element_type for t in types])
        return minun.tensor_of(types[0].get_shape(), wide)

    def carried_type(self, op, index, current, yielded) -> Attribute:
        return current if yielded is None else self._widened([current, yielded])

    def join_type(self, op, types):
        return self._widened(types)

    def sum_types(self, op, body, n):
        return body, body

    def accumulate(self, acc, term) -> SSAValue:
        return self.emit(num.AddOp.create(operands=[acc, term], result_types=[acc.type]))

    def finish_sum(self, op, acc) -> SSAValue:
        return self.cast(acc, self.element_of(op.result))


def _f(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _binary(fn):
    def run(op, a, b):
        return _f(float_eval._binary(fn)(op, _f(a), _f(b)))

    return run


def _sequential_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (B, m, k) @ b (B, k, n) summing k in order, in float32, as the C loop does."""
    out = np.zeros((max(a.shape[0], b.shape[0]), a.shape[1], b.shape[2]), dtype=np.float32)
    for k in range(a.shape[2]):
        out += _f(a[:, :, k:k + 1]) * _f(b[:, k:k + 1, :])
    return out


def _conv2d(op, x, f):
    from minun_mlir.numerics.float_eval import _conv2d as conv

    b, n = x.shape[:2]
    y = conv(_f(x).reshape(b * n, *x.shape[2:]), _f(f[0]), minun.ints(op.strides),
             minun.ints(op.pads), minun.ints(op.dilations), op.groups.value.data)
    return _f(y).reshape(b, n, *y.shape[1:])


def _normalise(op, x):
    norm = np.sqrt((x * x).sum(axis=-1, keepdims=True, dtype=np.float32))
    return _f(np.where(norm > 0, x / np.where(norm > 0, norm, 1), 0))


def _maxpool(op, x):
    from minun_mlir.numerics.float_eval import _maxpool_op

    return _f(_maxpool_op(op, x))


_KERNELS = {
    "num.param": lambda op: _f(op.array())[None],
    "num.add": _binary(np.add),
    "num.sub": _binary(np.subtract),
    "num.mul": _binary(np.multiply),
    "num.matmul": lambda op, a, b: _sequential_dot(a, b),
    "num.sparse_matmul": lambda op, a, b: _sequential_dot(a, b),
    "num.conv2d": _conv2d,
    "num.exp": lambda op, x: _f(np.exp(_f(x))),
    "num.sigmoid": lambda op, x: _f(1.0 / (1.0 + np.exp(-_f(x)))),
    "num.tanh": lambda op, x: _f(np.tanh(_f(x))),
    "num.normalise_l2": _normalise,
    "num.softmax": lambda op, x: _softmax(x),
    "num.log_softmax": lambda op, x: _log_softmax(x),
    "num.relu": lambda op, x: _f(np.maximum(x, 0)),
    "num.relu6": lambda op, x: _f(np.clip(x, 0, 6)),
    "num.clip": lambda op, x: _f(np.clip(x, np.float32(op.lo.value.data),
                                         np.float32(op.hi.value.data))),
    "num.neg": lambda op, x: _f(-_f(x)),
    "num.max": _binary(np.maximum),
    "num.min": _binary(np.minimum),
    "num.maxpool": _maxpool,
    "num.argmax": float_eval._argmax,
    "num.sgn": float_eval._sgn,
    "minun.init": lambda op: np.full((1, *op.result.type.get_shape()),
                                     np.float32(op.fill.value.data), dtype=np.float32),
}


class Float32Representation(Representation):
    name = "float32"
    default_bits = 32

    def owns(self, element: Attribute) -> bool:
        return element == f32

    def quantize(self, module: ModuleOp, config: QuantizeConfig, profile: Profile | None
                 ) -> ModuleOp:
        return Float32Converter(config, profile).run(module)

    def encode(self, values: np.ndarray, element: Attribute, rounding: str) -> np.ndarray:
        return _f(values)

    def c_encode(self, element: Attribute, rounding: str) -> str:
        return "return (float)v;"  # round to nearest even, as numpy's astype

    def decode(self, stored: np.ndarray, element: Attribute) -> np.ndarray:
        return np.asarray(stored, dtype=np.float64)

    def kernels(self):
        return _KERNELS
