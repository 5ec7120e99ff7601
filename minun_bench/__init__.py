"""`make bench` (tools/bench.py): the benchmark suite and its report sections. Not part of
the installed compiler: nothing in minun_mlir imports it (a test checks), and it is not
installed; tools/bench.py and the tests put the repository root on the path."""
