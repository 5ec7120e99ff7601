"""Write deterministic weights for every parameter a SeeDot program declares.

usage: weights.py PROGRAM.sd OUT.npz
Values are 0.25, 0.5, ... cycling through [lo, hi] of each declaration, so the IR of a
lit test does not depend on a random generator.
"""

import math
import sys

import numpy as np

from minun_mlir.frontends.seedot import ast
from minun_mlir.frontends.seedot.parser import parse


def declarations(node):
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Let) and isinstance(node.value, ast.Decl) and node.name != "X":
            yield node.name, node.value
        stack.extend(ast.children(node))


def main(program: str, out: str) -> None:
    with open(program) as f:
        root = parse(f.read(), program)
    arrays = {}
    for name, decl in declarations(root):
        n = math.prod(decl.shape)
        steps = np.arange(n) % 4 + 1
        arrays[name] = (decl.lo + (decl.hi - decl.lo) * steps / 4).reshape(decl.shape)
    np.savez(out, **arrays)


if __name__ == "__main__":
    main(*sys.argv[1:])
