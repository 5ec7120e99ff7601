"""float32: the float program itself as an L2 representation (the baseline)."""
