"""Flash of the zoo's random forest (rf_digits: 10 trees, depth 6) on the Arduino Uno as
minun compiles it (node table and branch code, 16 and 8 bits) and as the peers do:
emlearn (node array "loadable" and "inline" if-else) and m2cgen (nested if/else in
double). Each is linked with the same minimal main (read 64 volatile inputs, predict,
store the label) by `avr-gcc -Os -mmcu=atmega328p`; sizes are avr-size's text and data
(data is RAM on the AVR: a `static const` table lands there unless it is PROGMEM). What
does not link for the Uno is linked for the ATmega2560 to report its size. Also reports
how often each agrees with scikit-learn's own predict on the 540 test-split inputs.

Needs the peers, which are not test dependencies:

    .venv/bin/pip install emlearn==0.23.2 m2cgen==0.10.0
    .venv/bin/python tools/zoo/compare_tree_peers.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import export_sklearn  # noqa: E402

MAIN_INT16 = """#include <stdint.h>
#include "{header}"
volatile int16_t in[64]; volatile int32_t out;
int main(void) {{ int16_t x[64]; for (int i = 0; i < 64; i++) x[i] = in[i];
  out = {call}; return 0; }}
"""
MAIN_M2CGEN = """#include <stdint.h>
void score(double *input, double *output);
volatile double in[64]; volatile int32_t out;
int main(void) { double x[64], y[10]; for (int i = 0; i < 64; i++) x[i] = in[i];
  score(x, y); int b = 0; for (int k = 1; k < 10; k++) if (y[k] > y[b]) b = k;
  out = b; return 0; }
"""
MAIN_MINUN = """#include <stdint.h>
#include "model.h"
volatile minun_input_t in[64]; volatile int32_t out;
int main(void) { minun_input_t x[64]; minun_output_t y[10];
  for (int i = 0; i < 64; i++) x[i] = in[i]; out = minun_predict(x, y); return 0; }
"""


def avr_size(sources: list[Path], includes: list[Path], work: Path) -> str:
    for mcu in ("atmega328p", "atmega2560"):
        elf = work / f"a-{mcu}.elf"
        cmd = ["avr-gcc", "-Os", f"-mmcu={mcu}", *[f"-I{i}" for i in includes],
               *map(str, sources), "-o", str(elf), "-lm"]
        if subprocess.run(cmd, capture_output=True).returncode == 0:
            text, data = subprocess.run(["avr-size", str(elf)], capture_output=True,
                                        text=True).stdout.splitlines()[-1].split()[:2]
            where = "Uno" if mcu == "atmega328p" else "does not fit the Uno; ATmega2560"
            return (f"flash {int(text) + int(data):,} B (text {int(text):,}, data "
                    f"{int(data):,}), {where}")
    sizes = []
    for src in sources:  # its objects' sizes, then
        obj = work / (src.stem + ".o")
        subprocess.run(["avr-gcc", "-Os", "-mmcu=atmega328p", *[f"-I{i}" for i in includes],
                        "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
        text, data, bss = subprocess.run(["avr-size", str(obj)], capture_output=True,
                                         text=True).stdout.splitlines()[-1].split()[:3]
        sizes.append(f"{src.name}: text {int(text):,}, data {int(data):,}, bss {int(bss):,}")
    return f"does not link even for the ATmega2560 (objects: {'; '.join(sizes)})"


def main() -> int:
    import emlearn
    import m2cgen
    import onnx
    from sklearn.ensemble import RandomForestClassifier
    from xdsl.dialects.builtin import StringAttr

    from minun_mlir.codegen import emit_c
    from minun_mlir.dialects import minun
    from minun_mlir.frontends.onnx import import_model
    from minun_mlir.numerics.float_eval import evaluate
    from minun_mlir.numerics.l2_eval import decode_outputs, evaluate_l2
    from minun_mlir.pipeline import lower_to_l2

    x_train, x_test, y_train, _ = export_sklearn._data("digits")
    est = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0)
    est.fit(x_train, y_train)
    sk = est.predict(x_test)
    work = Path(tempfile.mkdtemp(prefix="tree_peers_"))
    eml_dir = Path(emlearn.__file__).parent
    os.chdir(work)  # emlearn builds its Python wrapper under ./tmp
    for method in ("loadable", "inline"):
        conv = emlearn.convert(est, method=method)
        (work / f"rf_{method}.h").write_text(conv.save(name="rf", format="c"))
        main_c = work / f"eml_{method}.c"
        main_c.write_text(MAIN_INT16.format(header=f"rf_{method}.h", call="rf_predict(x, 64)"))
        agree = np.mean(conv.predict(x_test) == sk)
        print(f"emlearn {method}: {avr_size([main_c], [eml_dir, work], work)}; "
              f"agrees with sklearn on {agree:.1%}")
    (work / "m2c.c").write_text(m2cgen.export_to_c(est))
    (work / "m2c_main.c").write_text(MAIN_M2CGEN)
    print(f"m2cgen: {avr_size([work / 'm2c_main.c', work / 'm2c.c'], [], work)}")

    model = onnx.load(str(ROOT / "test" / "zoo" / "sklearn" / "rf_digits.onnx"))
    keep = model.graph.output[-1]
    del model.graph.output[:]
    model.graph.output.append(keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        l1 = import_model(model)
    data = str(ROOT / "test" / "zoo" / "sklearn" / "data" / "digits-train.npz")
    rows = x_test.reshape(len(x_test), 1, -1)
    for bits in (16, 8):
        l2 = lower_to_l2(l1, data=data, bits=bits)
        pred = decode_outputs(l2, evaluate_l2(l2, rows).outputs)[0].reshape(len(rows), -1)
        agree = np.mean(pred.argmax(1) == sk)
        for lowering in ("table", "branches"):
            out = work / f"minun{bits}_{lowering}"
            l2c = l2.clone()
            for op in l2c.walk():
                if isinstance(op, minun.TreeEnsembleOp):
                    op.attributes["lowering"] = StringAttr(lowering)
            emit_c(l2c, "avr", out)
            (out / "main.c").write_text(MAIN_MINUN)
            print(f"minun fixed{bits} {lowering}: "
                  f"{avr_size([out / 'main.c', out / 'model.c'], [out], out)}; "
                  f"agrees with sklearn on {agree:.1%}")
    float_pred = evaluate(l1, rows).outputs[0].reshape(len(rows), -1).argmax(1)
    print(f"(minun's float evaluator agrees with sklearn on {np.mean(float_pred == sk):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
