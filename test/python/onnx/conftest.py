"""Prints how many relevant ONNX backend node tests pass, per operator, and how many
are excluded (with the reasons listed in onnx_node_suite.EXCLUDED)."""

from __future__ import annotations

import re
from collections import Counter

from onnx_node_suite import EXCLUDED, relevant_tests


def pytest_terminal_summary(terminalreporter) -> None:
    passed: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    ran = False
    for kind, counter in (("passed", passed), ("failed", failed)):
        for report in terminalreporter.stats.get(kind, []):
            m = re.search(r"test_onnx_node_tests\.py::test_node\[(.+)\]$", report.nodeid)
            if m and report.when == "call":
                ran = True
                counter[relevant_tests()[m.group(1)]] += 1
    if not ran:
        return
    excluded = Counter(relevant_tests()[t] for t in EXCLUDED)
    write = terminalreporter.write_line
    write("")
    write(f"ONNX node tests: {sum(passed.values())} passed, {sum(failed.values())} failed, "
          f"{len(EXCLUDED)} excluded, of {len(relevant_tests())} relevant")
    for op in sorted(set(relevant_tests().values())):
        write(f"  {op:<20} {passed[op]:>3} passed  {failed[op]:>3} failed  "
              f"{excluded[op]:>3} excluded")
