"""Loop and expression recognisers for select-target-kernels (passes/select_target_kernels.py).

Functions of the L4 (`cemit`) IR that return what a kernel needs (the accumulator, the
loads and their strides) or None; they change nothing. The C printer used to run them
while printing; the pass now does, and the printer spells what it made.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_runtime import SHIFTED_DOT_BITS
from minun_mlir.lowering.c_syntax import ctype
from minun_mlir.modules import walk_ops


def narrow16(v: SSAValue) -> SSAValue | None:
    """e when v is `(int32_t)e` of an 8- or 16-bit signed e (exact as an int16_t)."""
    op = v.owner
    if isinstance(op, cemit.CastOp) and ctype(op.result.type) == "int32_t" and \
            ctype(op.input.type) in ("int16_t", "int8_t"):
        return op.input
    return None


def product16(v: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when v is `(int32_t)a * (int32_t)b` of 16-bit a and b (never overflows)."""
    op = v.owner
    if isinstance(op, cemit.BinaryOp) and op.op.data == "*" and \
            ctype(op.result.type) == "int32_t":
        a, b = narrow16(op.lhs), narrow16(op.rhs)
        if a is not None and b is not None:
            return a, b
    return None


def shift_count(op: cemit.BinaryOp) -> int | None:
    rhs = op.rhs.owner
    if op.op.data == ">>" and isinstance(rhs, cemit.LiteralOp) and \
            isinstance(rhs.value, IntegerAttr):
        return rhs.value.value.data
    return None


def uncast(v: SSAValue, spelling: str) -> SSAValue | None:
    op = v.owner
    if isinstance(op, cemit.CastOp) and ctype(op.result.type) == spelling:
        return op.input
    return None


def mac_operands(op: cemit.AssignOp) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when the statement is `acc = acc + (int32_t)a * (int32_t)b` on an int32_t
    acc, exact (nsw) or modular (`(int32_t)((uint32_t)acc + (uint32_t)(...))`)."""
    def is_acc(v: SSAValue) -> bool:
        return isinstance(v.owner, cemit.RefOp) and v.owner.var.data == op.var.data

    return accumulation(op.value, is_acc)


def accumulation(value: SSAValue, is_acc) -> tuple[SSAValue, SSAValue] | None:
    """(a, b) when value is `acc + (int32_t)a * (int32_t)b` of int32_t, exact or modular,
    with is_acc(acc)."""
    wrapped = uncast(value, "int32_t")
    modular = wrapped is not None
    if modular:
        value = wrapped
    add = value.owner
    if not (isinstance(add, cemit.BinaryOp) and add.op.data == "+" and
            ctype(add.result.type) == ("uint32_t" if modular else "int32_t")):
        return None
    lhs, rhs = add.lhs, add.rhs
    if modular:
        lhs, rhs = uncast(lhs, "uint32_t"), uncast(rhs, "uint32_t")
        if lhs is None or rhs is None:
            return None
    for acc, prod in ((lhs, rhs), (rhs, lhs)):
        if ctype(acc.type) == "int32_t" and is_acc(acc):
            factors = product16(prod)
            if factors is not None:
                return factors
    return None


def is_zero(v: SSAValue) -> bool:
    lit = v.owner
    return isinstance(lit, cemit.LiteralOp) and isinstance(lit.value, IntegerAttr) and \
        lit.value.value.data == 0


def literal_int(v: SSAValue) -> int | None:
    op = v.owner
    while isinstance(op, cemit.CastOp):
        op = op.input.owner
    if isinstance(op, cemit.LiteralOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def interval(v: SSAValue, known: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The least and greatest value of an integer expression over the variables' ranges
    in `known` (None for anything else: a load, an unknown variable, a division)."""
    op = v.owner
    c = literal_int(v)
    if c is not None:
        return c, c
    if isinstance(op, cemit.CastOp):
        return interval(op.input, known)
    if isinstance(op, cemit.RefOp):
        return known.get(op.var.data)
    if isinstance(op, cemit.BinaryOp) and op.op.data in "+-*":
        a, b = interval(op.lhs, known), interval(op.rhs, known)
        if a is None or b is None:
            return None
        if op.op.data == "+":
            return a[0] + b[0], a[1] + b[1]
        if op.op.data == "-":
            return a[0] - b[1], a[1] - b[0]
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    return None


_CTYPE_BYTES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                "uint32_t": 4, "int64_t": 8, "float": 4}


def memory(array: str) -> str:
    """The object an array name lives in: the scratch union's members share one."""
    return array.split(".")[0]


def byte_range(array: str, index: SSAValue, known: dict[str, tuple[int, int]], element: str
           ) -> tuple[int, int] | None:
    """The byte range of `array[index]` over the variables' ranges (None: unknown)."""
    span = interval(index, known)
    size = _CTYPE_BYTES.get(element)
    if span is None or size is None:
        return None
    return span[0] * size, span[1] * size + size - 1


def mentions(v: SSAValue, var: str) -> bool:
    op = v.owner
    if isinstance(op, cemit.RefOp):
        return op.var.data == var
    return isinstance(op, cemit.ExpressionOp) and any(mentions(o, var) for o in op.operands)


def coefficient(v: SSAValue, var: str) -> int | None:
    """k when the index expression v is e + k * var with e free of var, else None."""
    op = v.owner
    if not mentions(v, var):
        return 0
    if isinstance(op, cemit.RefOp):
        return 1
    if isinstance(op, cemit.BinaryOp) and op.op.data in "+-":
        a, b = coefficient(op.lhs, var), coefficient(op.rhs, var)
        if a is None or b is None:
            return None
        return a + b if op.op.data == "+" else a - b
    if isinstance(op, cemit.BinaryOp) and op.op.data == "*":
        for k, e in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            lit = k.owner
            if isinstance(lit, cemit.LiteralOp) and isinstance(lit.value, IntegerAttr):
                c = coefficient(e, var)
                return None if c is None else lit.value.value.data * c
    return None


def strided16(v: SSAValue, var: str) -> tuple[cemit.LoadOp, int] | None:
    """(load, k) when v loads an int16_t array at e + k * var (e free of var)."""
    load = v.owner
    if not (isinstance(load, cemit.LoadOp) and ctype(load.result.type) == "int16_t"):
        return None
    k = coefficient(load.index, var)
    return None if k is None else (load, k)


def dot_loop(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[tuple[cemit.LoadOp, int]]] | None:
    """A loop whose body is one `acc = acc + (int32_t)a[...] * (int32_t)b[...]` over
    int16_t arrays indexed affinely in the loop variable: the statement, the two loads
    and their strides."""
    body = cemit.statements(op.body)
    if len(body) != 1 or not isinstance(body[0], cemit.AssignOp):
        return None
    stmt, v = body[0], op.var.data
    factors = mac_operands(stmt)
    if factors is None or stmt.var.data == v:
        return None
    loads = [strided16(f, v) for f in factors]
    if any(x is None for x in loads):
        return None
    return stmt, loads  # type: ignore[return-value]


def offset_load(f: SSAValue, v: str) -> tuple[cemit.LoadOp, int] | None:
    """(load, k) when f is, under casts to wider or same-width integers, `(int16_t)a[e +
    v] - z` of an int8_t array with a literal zero point z in [-128, 127], k = -z (so
    a[..] + k is within [-255, 255]); k = 0 for a bare `a[e + v]`."""
    def strip(x: SSAValue) -> SSAValue:
        while isinstance(x.owner, cemit.CastOp) and \
                ctype(x.type) in ("int16_t", "int32_t", "int", "unsigned"):
            x = x.owner.input
        return x

    f = strip(f)
    k = 0
    sub = f.owner
    if isinstance(sub, cemit.BinaryOp) and sub.op.data == "-" and \
            ctype(sub.result.type) == "int16_t":
        z = literal_int(sub.rhs)
        if z is None or not -128 <= z <= 127:
            return None
        k, f = -z, strip(sub.lhs)
    load = f.owner
    if not (isinstance(load, cemit.LoadOp) and ctype(load.result.type) == "int8_t"
            and coefficient(load.index, v) == 1):
        return None
    return load, k


def offset_dot(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp], int] | None:
    """(statement, loads, k) when the loop's body is one zero-skew term summed modulo 2^32,
    `acc = acc + (int16_t)((a[e + i] + k) * b[f + i])` over int8_t arrays (stride 1), k
    a nonzero literal (minus the zero point of a): the product is exact in 16 bits (at
    most 255 * 128), the load carrying k first."""
    body = cemit.statements(op.body)
    if len(body) != 1 or not isinstance(body[0], cemit.AssignOp):
        return None
    stmt, v = body[0], op.var.data
    if stmt.var.data == v or ctype(stmt.value.type) != "int32_t":
        return None
    add = uncast(stmt.value, "int32_t")
    if add is None or not (isinstance(add.owner, cemit.BinaryOp) and add.owner.op.data == "+"
                           and ctype(add.type) == "uint32_t"):
        return None
    terms = [uncast(t, "uint32_t") for t in (add.owner.lhs, add.owner.rhs)]
    if any(t is None for t in terms):
        return None
    for acc, prod in (terms, terms[::-1]):
        if not (isinstance(acc.owner, cemit.RefOp) and acc.owner.var.data == stmt.var.data):
            continue
        if ctype(prod.type) != "int32_t":
            return None
        while isinstance(prod.owner, cemit.CastOp) and \
                ctype(prod.type) in ("int16_t", "int32_t", "int", "unsigned"):
            prod = prod.owner.input
        mul = prod.owner
        if not (isinstance(mul, cemit.BinaryOp) and mul.op.data == "*"):
            return None
        found = [offset_load(f, v) for f in (mul.lhs, mul.rhs)]
        if any(x is None for x in found):
            return None
        (la, ka), (lb, kb) = found
        if ka == 0:
            (la, ka), (lb, kb) = (lb, kb), (la, ka)
        if ka == 0 or kb != 0:
            return None
        return stmt, [la, lb], ka
    return None


def shifted(v: SSAValue) -> tuple[str, int] | None:
    """(x, s) when v is `(x + ((x >> 15) & (2^s - 1))) >> s` of an int16_t x (s in
    SHIFTED_DOT_BITS): x / 2^s rounded toward zero (a fixed-point input s bits down,
    truncating)."""
    def ref_of(e: SSAValue) -> str | None:
        o = e.owner
        return o.var.data if isinstance(o, cemit.RefOp) and ctype(e.type) == "int16_t" \
            else None

    shr = v.owner
    s = shift_count(shr) if isinstance(shr, cemit.BinaryOp) else None
    if s not in SHIFTED_DOT_BITS:
        return None
    add = shr.lhs.owner
    if not (isinstance(add, cemit.BinaryOp) and add.op.data == "+"):
        return None
    x = ref_of(add.lhs)
    mask = add.rhs.owner
    if x is None or not (isinstance(mask, cemit.BinaryOp) and mask.op.data == "&" and
                         literal_int(mask.rhs) == (1 << s) - 1):
        return None
    sign = mask.lhs.owner
    if not (isinstance(sign, cemit.BinaryOp) and shift_count(sign) == 15 and
            ref_of(sign.lhs) == x):
        return None
    return x, s


def shifted_dot(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp], str] | None:
    """(statement, [input load, filter load], "minun_dot16_shr{s}_dsp") when the loop's
    body is `const int16_t x = a[e + i]; acc = acc + (int32_t)((x + ((x >> 15) & (2^s -
    1))) >> s) * (int32_t)b[f + i]` (int16_t arrays, stride 1, an int32_t sum exact or
    modular): a dot product whose input is divided by 2^s toward zero term by term (a
    rescale the lazy value model left inside the loop)."""
    body = cemit.statements(op.body)
    if len(body) != 2 or not isinstance(body[0], cemit.DeclOp) or \
            not isinstance(body[1], cemit.AssignOp):
        return None
    d, stmt, v = body[0], body[1], op.var.data
    if d.is_const is None or stmt.var.data in (v, d.var.data):
        return None
    x = strided16(d.init, v)
    factors = mac_operands(stmt)
    if x is None or x[1] != 1 or factors is None:
        return None
    for h, w in (factors, factors[::-1]):
        found = shifted(h)
        if found is not None and found[0] == d.var.data:
            other = strided16(w, v)
            if other is None or other[1] != 1 or mentions(w, d.var.data):
                return None
            return stmt, [x[0], other[0]], f"minun_dot16_shr{found[1]}_dsp"
    return None


def dsp_dot(op: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp], str] | None:
    """(statement, loads, kernel) when the loop's body is one `acc = acc + a[e + i] *
    b[f + i]` (stride 1): int16_t arrays with an int32_t sum (exact or modular), or
    int8_t arrays whose exact product is added to an int32_t or int16_t sum modulo its
    width."""
    dot = dot_loop(op)
    if dot is not None:
        if all(k == 1 for _, k in dot[1]):
            return dot[0], [load for load, _ in dot[1]], "minun_dot16_dsp"
        return None
    body = cemit.statements(op.body)
    if len(body) != 1 or not isinstance(body[0], cemit.AssignOp):
        return None
    stmt, v = body[0], op.var.data
    acc_t = ctype(stmt.value.type)
    if stmt.var.data == v or acc_t not in ("int32_t", "int16_t"):
        return None
    add = uncast(stmt.value, acc_t)
    if add is None or not (isinstance(add.owner, cemit.BinaryOp) and add.owner.op.data == "+"):
        return None
    wide = ctype(add.type)
    if wide not in ("unsigned", "uint32_t"):
        return None
    terms = [uncast(t, wide) for t in (add.owner.lhs, add.owner.rhs)]
    if any(t is None for t in terms):
        return None
    for acc, prod in (terms, terms[::-1]):
        if not (isinstance(acc.owner, cemit.RefOp) and acc.owner.var.data == stmt.var.data):
            continue
        mul = prod.owner
        # an int16_t product of two int8_t loads (exact: |a b| <= 2^14) widened to int32_t
        if isinstance(mul, cemit.CastOp) and ctype(mul.result.type) == "int32_t" and \
                isinstance(mul.input.owner, cemit.BinaryOp) and \
                ctype(mul.input.type) == "int16_t":
            mul = mul.input.owner
        if not (isinstance(mul, cemit.BinaryOp) and mul.op.data == "*" and
                ctype(mul.result.type) in ("int16_t", "int32_t", "int")):
            return None
        loads = []
        for f in (mul.lhs, mul.rhs):
            while isinstance(f.owner, cemit.CastOp) and \
                    ctype(f.type) in ("int16_t", "int32_t", "int"):
                f = f.owner.input
            load = f.owner
            if not (isinstance(load, cemit.LoadOp) and ctype(load.result.type) == "int8_t"
                    and coefficient(load.index, v) == 1):
                return None
            loads.append(load)
        return stmt, loads, "minun_dot8_dsp"
    return None


def guarded_dot(op: cemit.ForOp):
    """A dot product whose every product is guarded by one condition that does not
    change in the loop (a convolution's padding test on the channel loop):
    `{ const int v = ...; int32_t r = 0; if (c) { r = a[..] * b[..]; } else { r = 0; }
    acc = acc + r; }`: (invariant declarations, the if, r's declaration, the product, the
    accumulation, the int16_t loads with their strides or None), or None. When c is false
    every product is 0 and acc is unchanged, so the test can be made once, before the
    loop."""
    body = cemit.statements(op.body)
    v = op.var.data
    if len(body) < 3 or not isinstance(body[-1], cemit.AssignOp) or \
            not isinstance(body[-2], cemit.IfOp) or not isinstance(body[-3], cemit.DeclOp):
        return None
    decls, r_decl, guard, acc_stmt = body[:-3], body[-3], body[-2], body[-1]
    if not all(isinstance(d, cemit.DeclOp) and d.is_const is not None and
               not mentions(d.init, v) for d in decls):
        return None
    r = r_decl.var.data
    if not is_zero(r_decl.init) or mentions(guard.cond, v) or r == v:
        return None
    then, other = cemit.statements(guard.then), cemit.statements(guard.other)
    if len(then) != 1 or not isinstance(then[0], cemit.AssignOp) or \
            then[0].var.data != r or len(other) > 1:
        return None
    if other and not (isinstance(other[0], cemit.AssignOp) and other[0].var.data == r
                      and is_zero(other[0].value)):
        return None
    product = then[0].value
    acc = acc_stmt.var.data
    if acc in (r, v):
        return None
    wrapped = uncast(acc_stmt.value, ctype(acc_stmt.value.type))
    add = (wrapped or acc_stmt.value).owner
    if not isinstance(add, cemit.BinaryOp) or add.op.data != "+":
        return None
    operands = [uncast(x, ctype(add.result.type)) if wrapped is not None else x
                for x in (add.lhs, add.rhs)]
    refs = [x.owner.var.data for x in operands
            if x is not None and isinstance(x.owner, cemit.RefOp)]
    if sorted(refs) != sorted([acc, r]):
        return None
    factors = product16(product)
    loads = None if factors is None or ctype(acc_stmt.value.type) != "int32_t" else \
        [strided16(f, v) for f in factors]
    if loads is not None and any(x is None for x in loads):
        loads = None
    return decls, guard, r_decl, product, acc_stmt, loads


def scatter(op: cemit.ForOp, spell):
    """A column of a sparse matrix (compressed) times one input, as lower-to-loops writes
    it: `{ const int r = rows[e + i]; y[r + f] = y[r + f] + vals[g + i] * xv; }` with rows
    (int8_t) and vals (int16_t) in program memory, y int32_t: (the store, the rows load,
    the vals load, xv, f or None), or None. `spell` writes an expression as C (the
    accumulator is the element the store writes when both indices read the same)."""
    body = cemit.statements(op.body)
    if len(body) != 2 or not isinstance(body[0], cemit.DeclOp) or \
            not isinstance(body[1], cemit.StoreOp):
        return None
    decl, store = body
    v, r = op.var.data, decl.var.data
    rows = decl.init
    while isinstance(rows.owner, cemit.CastOp) and \
            ctype(rows.type) in ("int", "int16_t", "int32_t"):
        rows = rows.owner.input
    load = rows.owner
    if not (isinstance(load, cemit.LoadOp) and load.flash is not None and
            ctype(load.result.type) == "int8_t" and coefficient(load.index, v) == 1):
        return None
    if ctype(store.value.type) != "int32_t" or coefficient(store.index, r) != 1 or \
            mentions(store.index, v):
        return None
    y_index = spell(store.index)

    def is_acc(x: SSAValue) -> bool:
        acc = x.owner
        return isinstance(acc, cemit.LoadOp) and acc.array.data == store.array.data \
            and spell(acc.index) == y_index

    factors = accumulation(store.value, is_acc)
    if factors is None:
        return None
    vals = [f for f in factors if strided16(f, v) is not None and
            f.owner.flash is not None and strided16(f, v)[1] == 1]
    if not vals:
        return None
    xv = factors[1] if factors[0] is vals[0] else factors[0]
    if mentions(xv, v) or mentions(xv, r) or ctype(xv.type) not in ("int16_t", "int8_t"):
        return None
    index = store.index.owner
    free = None
    if isinstance(index, cemit.BinaryOp):
        free = index.rhs if mentions(index.lhs, r) else index.lhs
    return store, load, vals[0].owner, xv, free


def dot_rows(op: cemit.ForOp):
    """A loop over the rows of a convolution's window whose body is one SMLAD dot product
    (dsp_dot, shifted_dot's shifted input, or offset_dot's zero-skew terms) over a count and
    start that do not depend on the row, each array advancing by a constant stride per
    row: `{ acc2 = acc;
    [invariant declarations] for (j...) acc2 = acc2 + a[e + k*ky + j] * b[f + l*ky + j];
    acc = acc2; }`: (the first
    declaration, the invariant declarations, the inner loop, its statement, the loads,
    the row kernel's name, the strides, offset_dot's k or None), or None."""
    body = cemit.statements(op.body)
    if len(body) < 3:
        return None
    first, decls, inner, last = body[0], body[1:-2], body[-2], body[-1]
    ky = op.var.data
    if not (isinstance(first, cemit.DeclOp) and first.is_const is None and
            isinstance(first.init.owner, cemit.RefOp) and isinstance(inner, cemit.ForOp)
            and isinstance(last, cemit.AssignOp) and
            isinstance(last.value.owner, cemit.RefOp)):
        return None
    outer, acc = first.init.owner.var.data, first.var.data
    if last.var.data != outer or last.value.owner.var.data != acc:
        return None
    if not all(isinstance(d, cemit.DeclOp) and d.is_const is not None and
               not mentions(d.init, ky) for d in decls):
        return None
    found = dsp_dot(inner) or shifted_dot(inner)
    k = None
    if found is None:
        off = offset_dot(inner)
        if off is not None:
            found, k = (off[0], off[1], "minun_dot8_off_dsp"), off[2]
    if found is None or found[0].var.data != acc or mentions(inner.lower, ky) or \
            mentions(inner.upper, ky):
        return None
    stmt, loads, name = found
    strides = [coefficient(load.index, ky) for load in loads]
    if any(s is None for s in strides):
        return None
    return first, decls, inner, stmt, loads, name.replace("_dsp", "_rows_dsp"), strides, k


def stride1_dot(loop: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp]] | None:
    """dot_loop's statement and loads when every stride is 1 (x86's SSE2 dot product)."""
    dot = dot_loop(loop)
    if dot is None or any(k != 1 for _, k in dot[1]):
        return None
    return dot[0], [load for load, _ in dot[1]]


def split_rows(op: cemit.ForOp, dot=stride1_dot):
    """x86: a loop over rows whose body computes dot products (`acc = 0;` then a stride-1
    dot loop into acc) and then uses them (rescales, stores): (lo, hi, [(the declaration,
    the dot loop)], the other statements) when it can run as two loops (every row's dot
    products into local arrays, then the rest, which the compiler can vectorise across
    rows), or None. Only with constant bounds, a flat body (declarations, stores,
    assignments), dot loops that read no variable the rest declares or assigns, and no
    element a dot product reads stored by the rest (interval test on the affine
    indices), so every value is the same."""
    bounds = literal_int(op.lower), literal_int(op.upper)
    if None in bounds or not 2 <= bounds[1] - bounds[0] <= 4096:
        return None
    lo, hi = bounds
    v = op.var.data
    body = cemit.statements(op.body)
    pairs, rest = [], []
    k = 0
    while k < len(body):
        s = body[k]
        nxt = body[k + 1] if k + 1 < len(body) else None
        if (isinstance(s, cemit.DeclOp) and s.is_const is None
                and literal_int(s.init) == 0 and isinstance(nxt, cemit.ForOp)):
            found = dot(nxt)
            if found is not None and found[0].var.data == s.var.data:
                pairs.append((s, nxt, found[1]))
                k += 2
                continue
        if not isinstance(s, (cemit.DeclOp, cemit.StoreOp, cemit.AssignOp)):
            return None
        rest.append(s)
        k += 1
    if not pairs:
        return None
    accs = {d.var.data for d, _, _ in pairs}
    local = {s.var.data for s in rest if isinstance(s, (cemit.DeclOp, cemit.AssignOp))}
    if accs & {s.var.data for s in rest if isinstance(s, cemit.AssignOp)}:
        return None
    known = {v: (lo, hi - 1)}
    reads = []
    for _, loop, loads in pairs:
        if any(mentions(x, name) for name in local
               for x in (loop.lower, loop.upper, *(ld.index for ld in loads))):
            return None
        first, last = interval(loop.lower, known), interval(loop.upper, known)
        inner = {**known, loop.var.data: (first[0], last[1] - 1)} \
            if first is not None and last is not None else known
        reads += [(ld.array.data, ld.index, inner, ctype(ld.result.type))
                  for ld in loads]
    writes = [(st.array.data, st.index, known, ctype(st.value.type))
              for st in rest if isinstance(st, cemit.StoreOp)]
    for wa, wi, wk, wt in writes:
        for ra, ri, rk, rt in reads:
            if memory(wa) != memory(ra):
                continue
            w, r = byte_range(wa, wi, wk, wt), byte_range(ra, ri, rk, rt)
            if w is None or r is None or not (w[1] < r[0] or r[1] < w[0]):
                return None
    return lo, hi, [(d, loop) for d, loop, _ in pairs], rest


def m4_dot(loop: cemit.ForOp) -> tuple[cemit.AssignOp, list[cemit.LoadOp], str, int | None] | None:
    """The Cortex-M dot loop: dsp_dot's (statement, loads, kernel) with None, or
    offset_dot's zero-skew terms as minun_dot8_off_dsp with their offset k (added to
    loads[0])."""
    found = dsp_dot(loop)
    if found is not None:
        return (*found, None)
    off = offset_dot(loop)
    if off is None:
        return None
    return off[0], list(off[1]), "minun_dot8_off_dsp", off[2]


MAT_VEC_ROWS = 128  # the row sums go to a local int32_t array: at most 512 bytes of stack


def mat_vec(op: cemit.ForOp):
    """A loop over the rows of a matrix times a vector (split_rows with one Cortex-M dot
    product a row, started at 0): the matrix operand advancing by a constant stride per
    row, the vector (the zero-skew offset's operand) the same for every row, the dot's
    bounds independent of the row: (lo, hi, the declaration, the dot loop, its
    statement, matrix load, stride, vector load, the blocked kernel's name, k or None,
    the other statements), or None."""
    found = split_rows(op, dot=m4_dot)
    if found is None or len(found[2]) != 1 or found[1] - found[0] > MAT_VEC_ROWS:
        return None
    lo, hi, [(d, loop)], rest = found
    stmt, loads, name, k = m4_dot(loop)
    v = op.var.data
    if mentions(loop.lower, v) or mentions(loop.upper, v):
        return None
    strides = [coefficient(ld.index, v) for ld in loads]
    if None in strides:
        return None
    if strides[0] == 0 and strides[1] != 0:
        vec, mat, stride = loads[0], loads[1], strides[1]
    elif strides[1] == 0 and strides[0] != 0 and k is None:
        vec, mat, stride = loads[1], loads[0], strides[0]
    else:
        return None
    return (lo, hi, d, loop, stmt, mat, stride, vec, name.replace("_dsp", "_mv_dsp"), k,
            rest)


CONV_SUMS = 256  # the window sums of CONV_GROUP channels go to a local int32_t array
CONV_GROUP = 8  # channels a group: the array (stack) does not grow with the channels
CONV_CHANNELS = 4  # fewer output channels are left to the one-channel kernel


def _refs(v: SSAValue) -> set[str]:
    op = v.owner
    if isinstance(op, cemit.RefOp):
        return {op.var.data}
    if isinstance(op, cemit.ExpressionOp):
        return set().union(*(_refs(o) for o in op.operands))
    return set()


def conv_channels(op: cemit.ForOp, bounds):
    """A loop over a convolution's output channels (at least CONV_CHANNELS, constant
    bounds) holding, under loops with constant bounds (a fused pool's window), one
    dot_rows window of int16_t or int8_t (a zero-skew offset on the input only) started
    at 0 (`acc = 0;` then only declarations before it), whose input does not depend on
    the channel and whose filter advances by a constant stride per channel:
    (lo, hi, the window loops, the rows loop, dot_rows' result, the accumulator's
    declaration, the input load, the filter load, the filter's channel stride, the
    declarations the window's bounds and addresses need, in order), or None.

    Every window's sums of a group of channels can then be computed first, the group's
    channel loop after them: only when the window's count, bounds and addresses read
    nothing the loop declares (but those declarations, copied) or assigns, and no store
    in the loop can write a byte a window reads (`bounds`, an index_bounds.Scope of the
    function, proves it), no other statement of the loop writing memory."""
    lo, hi = literal_int(op.lower), literal_int(op.upper)
    if lo is None or hi is None or hi - lo < CONV_CHANNELS:
        return None
    c = op.var.data
    found = [f for f in walk_ops(op) if isinstance(f, cemit.ForOp) and f is not op and
             dot_rows(f) is not None]
    if len(found) != 1:
        return None
    rows = found[0]
    chain, p = [], rows.parent_op()
    while p is not op:
        if not isinstance(p, cemit.ForOp) or literal_int(p.lower) is None or \
                literal_int(p.upper) is None:
            return None
        chain.insert(0, p)
        p = p.parent_op()
    sums = min(hi - lo, CONV_GROUP)
    for w in chain:
        sums *= literal_int(w.upper) - literal_int(w.lower)
    if sums > CONV_SUMS:
        return None
    dot = dot_rows(rows)
    first, decls, inner, stmt, loads, name, strides, k = dot
    if name not in ("minun_dot16_rows_dsp", "minun_dot8_rows_dsp", "minun_dot8_off_rows_dsp") \
            or ctype(stmt.value.type) not in ("int32_t", "int16_t"):
        return None
    acc = first.init.owner.var.data
    before = list(rows.parent_block().ops)
    before = [s for s in before[:before.index(rows)] if not isinstance(s, cemit.ExpressionOp)]
    acc_decl = [s for s in before if isinstance(s, cemit.DeclOp) and s.var.data == acc]
    if len(acc_decl) != 1 or not is_zero(acc_decl[0].init) or \
            not all(isinstance(s, cemit.DeclOp) for s in before[before.index(acc_decl[0]):]):
        return None
    per_channel = [coefficient(ld.index, c) for ld in loads]
    if sorted(x != 0 for x in per_channel if x is not None) != [False, True]:
        return None
    x_load, w_load = loads if per_channel[0] == 0 else loads[::-1]
    if k is not None and x_load is not loads[0]:  # the zero-skew offset is the filter's
        return None
    stride = coefficient(w_load.index, c)
    # what the window's count, bounds and addresses read, and the declarations giving it
    need = set().union(*(_refs(v) for v in (rows.lower, rows.upper, inner.lower,
                                            inner.upper, x_load.index, w_load.index)),
                       *(_refs(d.init) for d in decls))
    need -= {rows.var.data, inner.var.data} | {d.var.data for d in decls}
    path = [op, *chain]
    visible: list[cemit.DeclOp] = []
    for level, nxt in zip(path, [*chain, rows]):
        stmts = cemit.statements(level.body)
        visible += [s for s in stmts[:stmts.index(nxt)] if isinstance(s, cemit.DeclOp)]
    declared = {d.var.data for d in walk_ops(op) if isinstance(d, cemit.DeclOp)} | \
        {f.var.data for f in walk_ops(op) if isinstance(f, cemit.ForOp)}
    copies = []
    for d in reversed(visible):
        if d.var.data in need:
            if d.is_const is None or mentions(d.init, c):
                return None
            copies.insert(0, d)
            need |= _refs(d.init)
    need -= {d.var.data for d in copies} | {w.var.data for w in chain}
    assigned = {a.var.data for a in walk_ops(op) if isinstance(a, cemit.AssignOp)}
    if (need - {c}) & (declared | assigned):  # set in the loop: not yet at the windows
        return None
    if any(mentions(v, c) for v in (rows.lower, rows.upper, inner.lower, inner.upper,
                                    *(d.init for d in decls))):
        return None
    # the stores of the loop must not write what any window reads
    span = bounds.span(x_load.index)
    for s in walk_ops(op):
        if isinstance(s, (cemit.KernelStmtOp, cemit.LocalArrayOp)):
            return None
        if not isinstance(s, cemit.StoreOp):
            continue
        if memory(s.array.data) == memory(w_load.array.data):
            return None
        if memory(s.array.data) != memory(x_load.array.data):
            continue
        put = bounds.span(s.index)
        if span is None or put is None:
            return None
        size_r, size_w = _CTYPE_BYTES.get(ctype(x_load.result.type)), \
            _CTYPE_BYTES.get(ctype(s.value.type))
        if size_r is None or size_w is None:
            return None
        r = (span[0] * size_r, span[1] * size_r + size_r - 1)
        w = (put[0] * size_w, put[1] * size_w + size_w - 1)
        if not (w[1] < r[0] or r[1] < w[0]):
            return None
    return lo, hi, chain, rows, dot, acc_decl[0], x_load, w_load, stride, copies


SPARSE_DENSE_ELEMENTS = 4096  # a sparse matrix densified for SMLAD: at most 8 KB of flash


def _strip_int_casts(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, cemit.CastOp) and ctype(v.type) in ("int", "int16_t", "int32_t"):
        v = v.owner.input
    return v


def _flash_at(v: SSAValue, var: str, offset: int) -> str | None:
    """The array name when v is (under integer casts) `a[var + offset]` of a flash array."""
    load = _strip_int_casts(v).owner
    if not (isinstance(load, cemit.LoadOp) and load.flash is not None):
        return None
    if coefficient(load.index, var) != 1 or interval(load.index, {var: (0, 0)}) != (offset,
                                                                                 offset):
        return None
    return load.array.data


def sparse_columns(op: cemit.ForOp, spell, scope, values):
    """Cortex-M: the loop over the columns of a compressed sparse matrix times a vector
    (lower_sparse_matmul with one output column and no shift), as lower-to-loops writes
    it: `for (c = lo; c < hi; c++) { const int a = (int)col[c]; const int b =
    (int)col[c + 1]; for (p = a; p < b; p++) { const int r = (int)row[p];
    y[r + f] = (int32_t)((uint32_t)y[r + f] + (uint32_t)((int32_t)val[p] * (int32_t)x[g
    + s * c])); } }` with col, row, val constant flash arrays (`values(name)` gives
    their integers, None when unknown), val and x int16_t, f and g free of c, p and r,
    s > 0 (x's stride). The sum
    modulo 2^32 of a row's products does not depend on their order, so a dense row-major
    copy of the matrix times x (SMLAD) gives the same y, when the y elements written
    cannot overlap the x elements read (`scope`, an index_bounds.Scope, bounds g and f).
    Returns (lo, hi, the dense matrix as a rows x (hi - lo) list of lists, the store, the
    product expression, the x load, the row variable, x's stride), or None."""
    lo, hi = literal_int(op.lower), literal_int(op.upper)
    if lo is None or hi is None or hi <= lo:
        return None
    body = cemit.statements(op.body)
    if len(body) != 3 or not isinstance(body[0], cemit.DeclOp) or \
            not isinstance(body[1], cemit.DeclOp) or not isinstance(body[2], cemit.ForOp):
        return None
    c, inner = op.var.data, body[2]
    col = _flash_at(body[0].init, c, 0)
    if col is None or _flash_at(body[1].init, c, 1) != col:
        return None
    for bound, d in ((inner.lower, body[0]), (inner.upper, body[1])):
        if not (isinstance(bound.owner, cemit.RefOp) and bound.owner.var.data == d.var.data):
            return None
    found = scatter(inner, spell)
    if found is None:
        return None
    store, row_load, val_load, xv, free = found
    p = inner.var.data
    r = cemit.statements(inner.body)[0].var.data
    if interval(row_load.index, {p: (0, 0)}) != (0, 0) or \
            interval(val_load.index, {p: (0, 0)}) != (0, 0):
        return None
    x = xv.owner
    stride = coefficient(x.index, c) if isinstance(x, cemit.LoadOp) else None
    if not (ctype(x.result.type) == "int16_t" and stride is not None and stride > 0) or \
            mentions(x.index, p):
        return None
    local = (c, p, body[0].var.data, body[1].var.data)
    if free is not None and any(mentions(free, n) for n in local) or \
            any(mentions(x.index, n) for n in local[1:]):
        return None
    if free is None and not (isinstance(store.index.owner, cemit.RefOp)):
        return None
    product = None
    for o in _tree_ops(store.value):
        if isinstance(o, cemit.BinaryOp) and o.op.data == "*" and \
                {_strip_int_casts(o.lhs).owner, _strip_int_casts(o.rhs).owner} == {val_load, x}:
            product = o.result
    if product is None:
        return None
    cols, rows, vals = (values(n) for n in (col, row_load.array.data, val_load.array.data))
    if cols is None or rows is None or vals is None or len(cols) <= hi:
        return None
    entries = {}
    for k in range(lo, hi):
        for q in range(cols[k], cols[k + 1]):
            if not 0 <= q < min(len(rows), len(vals)) or (rows[q], k) in entries or rows[q] < 0:
                return None
            entries[rows[q], k] = vals[q]
    if not entries:
        return None
    nrows = max(rr for rr, _ in entries) + 1
    if nrows * (hi - lo) > SPARSE_DENSE_ELEMENTS:
        return None
    dense = [[entries.get((rr, k), 0) for k in range(lo, hi)] for rr in range(nrows)]
    if memory(store.array.data) == memory(x.array.data):
        fs = (0, 0) if free is None else scope.span(free)
        xs = scope.span(x.index)
        if fs is None or xs is None:
            return None
        w = fs[0] * 4, (fs[1] + nrows - 1) * 4 + 3
        rd = xs[0] * 2, xs[1] * 2 + 1
        if not (w[1] < rd[0] or rd[1] < w[0]):
            return None
    return lo, hi, dense, store, product, x, r, stride


def _tree_ops(v: SSAValue) -> list[Operation]:
    op = v.owner
    if not isinstance(op, cemit.ExpressionOp):
        return []
    return [op] + [o for x in op.operands for o in _tree_ops(x)]


def zeroed_before(op: cemit.ForOp, array: str, free: SSAValue | None, nrows: int
                  ) -> tuple[cemit.ForOp, bool] | None:
    """(the loop, exact) when the statement before `op` is `for (i = lo; i < hi; i++)
    array[i + c] = 0;` (literals) covering array[f .. f + nrows - 1], f the literal
    `free` (0 when None): a sparse product's freshly zeroed sums, which the dense kernel
    may then write; exact when it zeroes nothing else (the kernel's writes replace it)."""
    f = 0 if free is None else literal_int(free)
    block = op.parent_block()
    body = [] if block is None else \
        [s for s in block.ops if not isinstance(s, cemit.ExpressionOp)]
    k = next((i for i, s in enumerate(body) if s is op), None)
    if f is None or not k:
        return None
    prev = body[k - 1]
    if not isinstance(prev, cemit.ForOp):
        return None
    lo, hi = literal_int(prev.lower), literal_int(prev.upper)
    inner = cemit.statements(prev.body)
    if lo is None or hi is None or len(inner) != 1 or not isinstance(inner[0], cemit.StoreOp):
        return None
    store = inner[0]
    if store.array.data != array or literal_int(store.value) != 0 or \
            coefficient(store.index, prev.var.data) != 1:
        return None
    span = interval(store.index, {prev.var.data: (lo, hi - 1)})
    if span is None or span[1] - span[0] != hi - 1 - lo or \
            not (span[0] <= f and f + nrows - 1 <= span[1]):
        return None
    return prev, span == (f, f + nrows - 1)


def sparse_free(store: cemit.StoreOp, r: str) -> SSAValue | None:
    """f of a sparse product's store `y[r + f]` (None: the index is r)."""
    index = store.index.owner
    if isinstance(index, cemit.BinaryOp):
        return index.rhs if mentions(index.lhs, r) else index.lhs
    return None
