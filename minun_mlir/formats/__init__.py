"""One package per number format: its L2 representation (the `Representation` its
registration line in numerics/formats.py names), its arithmetic, and its lowering
handlers where it has its own. docs/numerics.md, "Adding a number format"."""
