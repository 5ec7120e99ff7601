"""Facts about whole modules that every level needs, stated once: which function is the
model, its class labels, the label rule of a one-value output, the shape of a value, and
how a pass hands back the module a conversion built, and the source location a lowering
passes on to the statements an op became."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, UnitAttr, UnknownLoc
from xdsl.ir import Attribute, Block, Operation, SSAValue

from minun_mlir.diagnostics import error


def main_function(module: ModuleOp | func.FuncOp, stage: str = "the compiler") -> func.FuncOp:
    """The model: the module's one defined func.func, or the one named main (runtime
    helpers may be declared beside it); `stage` names who needs it in the diagnostic."""
    if isinstance(module, func.FuncOp):
        return module
    fns = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if len(fns) > 1:
        fns = [f for f in fns if f.sym_name.data == "main"] or fns
    if len(fns) != 1:
        raise error(f"{stage} expects a module with one func.func (the model), found "
                    f"{len(fns)}")
    return fns[0]


def class_labels(module: ModuleOp | func.FuncOp) -> list[str] | list[int] | None:
    """The labels of a classifier's classes 0..n-1 (`minun.class_labels` on the model's
    function: an ONNX classifier's string labels, or integer labels other than 0..n-1),
    or None."""
    attr = main_function(module).attributes.get("minun.class_labels")
    if attr is None:
        return None
    return [x.value.data if isinstance(x, IntegerAttr) else x.data for x in attr.data]


REGRESSION = "minun.regression"  # on @main: the output is a predicted value, not a score


def mark_regression(module: ModuleOp | func.FuncOp) -> None:
    """Declare the model a regressor (`minun-compile --regression`: a network whose
    operators do not say so)."""
    main_function(module).attributes[REGRESSION] = UnitAttr()


def is_regression(module: ModuleOp | func.FuncOp) -> bool:
    """Whether the model is a regressor (an ONNX LinearRegressor, TreeEnsembleRegressor,
    SVMRegressor, ...): its output is a value, so it has no label and no accuracy."""
    return REGRESSION in main_function(module).attributes


def decision_threshold(module: ModuleOp | func.FuncOp) -> float | None:
    """The label of a program whose output is one real: `value > threshold`, the threshold
    at the decision boundary. 0.5 for a probability, i.e. the output of a sigmoid (a
    logistic model; an ONNX classifier's post_transform LOGISTIC imports as one) or of a
    clip to [0, 1] (ONNX HardSigmoid), else 0
    (a raw score: a logit, a margin, SeeDot's sgn); None for a regressor, which has no
    label (its label is 0). Read at L1 or L2 from the op producing the returned value,
    through ops that only move or re-encode values; the evaluators' predictions
    (data.predictions) and the C's minun_predict (lower-to-loops) both use it."""
    from minun_mlir.dialects import minun, num

    if is_regression(module):
        return None

    carriers = (minun.ReshapeOp, minun.TransposeOp, minun.IndexOp, minun.SpliceOp,
                num.RescaleOp, num.RequantizeOp, num.ConvertOp)
    ret = main_function(module).body.block.last_op
    if ret is None or not ret.operands:
        return 0.0
    value = ret.operands[0]
    while isinstance(value.owner, carriers):
        value = value.owner.operands[0]
    op = value.owner
    hard_sigmoid = isinstance(op, (minun.ClipOp, num.ClipOp)) and \
        (op.lo.value.data, op.hi.value.data) == (0.0, 1.0)  # ONNX HardSigmoid
    return 0.5 if isinstance(op, (minun.SigmoidOp, num.SigmoidOp)) or hard_sigmoid else 0.0


# The dialects each level of the pipeline is made of (docs/architecture.md).
LEVEL_DIALECTS = {
    1: ("builtin", "func", "arith", "minun"),
    2: ("builtin", "func", "arith", "minun", "num"),
    3: ("builtin", "func", "arith", "memref", "scf"),
    4: ("builtin", "cemit"),
}
LEVEL_NAMES = {1: "L1 (minun, float tensors)", 2: "L2 (num types, from quantize)",
               3: "L3 (memref/scf/arith, from lower-to-loops)",
               4: "L4 (cemit, from lower-to-emitc)"}


def walk_ops(root: Operation) -> Iterator[Operation]:
    """`root.walk()`'s ops in its order (root first, then each region's ops, pre-order),
    for a walk that does not change the IR: an explicit stack instead of xDSL's nested
    generators, whose cost grows with the nesting depth of every op (and following the
    ops' and blocks' links instead of xDSL's iterator objects)."""
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        op = pop()
        yield op
        regions = op.regions
        if regions:
            for region in reversed(regions):
                for block in reversed(_chain(region.first_block, "next_block")):
                    extend(reversed(_chain(block.first_op, "next_op")))


def _chain(first, link: str) -> list:
    """`first` and the nodes after it through their `link` attribute (a region's blocks,
    a block's ops), read from the links rather than xDSL's iterator objects."""
    nodes = []
    while first is not None:
        nodes.append(first)
        first = getattr(first, link)
    return nodes


def require_level(module: ModuleOp, stage: str, level: int) -> None:
    """A conversion's input must be the level it converts from: anything else is named in
    a diagnostic (instead of failing somewhere inside the conversion)."""
    allowed = LEVEL_DIALECTS[level]
    stray = next((op for op in walk_ops(module) if op.dialect_name() not in allowed), None)
    if stray is None and level == 2 and not any(op.dialect_name() == "num"
                                                for op in walk_ops(module)):
        stray = next((op for op in walk_ops(module) if op.dialect_name() == "minun"), None)
    if stray is not None:
        raise error(f"{stage} takes {LEVEL_NAMES[level]} IR, but the module holds "
                    f"'{stray.name}': run the pipeline's stages in order (minun-compile "
                    "--print-pipeline shows them)", at=stray)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """A tensor value's shape; () for a scalar."""
    ty = value.type
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else ()


def replace_module_body(module: ModuleOp, new: ModuleOp) -> None:
    """Give `module` the contents of `new`: a pass works on the module it is given, while
    the conversions between levels build a new one."""
    for old in list(module.ops):
        old.detach()
        old.erase()
    for op in list(new.ops):
        op.detach()
        module.body.block.add_op(op)


def locate_after(block: Block, last: Operation | None, location: Attribute) -> None:
    """Give the ops of `block` after `last` (all of them if None) `location` where they
    have none: the statements one op of the level above became keep its source line or
    ONNX node through lower-to-loops and lower-to-emitc (a per-layer profile's names,
    minun_mlir/profile.py). Locations are not printed, so the IR text is unchanged."""
    op = block.first_op if last is None else last.next_op
    while op is not None:
        if isinstance(op.location, UnknownLoc):
            op.location = location
        op = op.next_op
