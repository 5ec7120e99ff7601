"""The `c` target of minun-opt: `minun-opt -t 'c{profile=avr file=source}'` prints the C
files of an L4 module (lowering/c_printer.py), after select-target-kernels for the profile
when the module has not been through it, so that it prints what the compile writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from minun_mlir.diagnostics import error
from minun_mlir.dialects import cemit
from minun_mlir.lowering.c_printer import FILES, print_c
from minun_mlir.lowering.c_runtime import PROFILES
from minun_mlir.passes.select_target_kernels import select_target_kernels

FILE_OPTION = {"header": "model.h", "source": "model.c", "runtime": "minun_runtime.h"}


@dataclass(frozen=True)
class CTarget(Target):
    """`minun-opt -t 'c{profile=avr file=source}'`: the C files of an L4 module (all three,
    each after a `// ----- name -----` line, or one: file=header|source|runtime). The
    input is the output of the pipeline's last stage, lower-to-emitc."""

    name = "c"

    profile: str = "x86"
    file: str = "all"
    model: str = "model"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.file != "all" and self.file not in FILE_OPTION:
            raise error(f"-t c: file must be all, {', '.join(FILE_OPTION)}")
        stray = next((op for op in module.ops if not op.name.startswith("cemit.")), None)
        if stray is not None:
            raise error(f"-t c prints L4 (cemit) IR, but the module holds "
                             f"'{stray.name}': run the pipeline through lower-to-emitc first, "
                             "e.g. -p lower-to-loops,memory-plan,lower-to-emitc")
        if self.profile not in PROFILES:
            raise error(f"unknown C profile '{self.profile}' (known: {', '.join(PROFILES)})")
        if cemit.KERNELS_MARK not in module.attributes:
            module = select_target_kernels(module.clone(), self.profile)
        files = print_c(module, self.profile, self.model)
        if self.file == "all":
            for name in FILES:
                output.write(f"// ----- {name} -----\n{files[name]}")
        else:
            output.write(files[FILE_OPTION[self.file]])
