"""minun-mlir: compile trained ML models to integer C for microcontrollers.

The import namespace also holds the top-level ``dialects/``, ``passes/`` and
``lowering/`` folders of the source tree (see pyproject.toml's package-dir).
"""

__version__ = "0.1.0"
