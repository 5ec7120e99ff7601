"""bfloat16: float32 arithmetic rounded to bfloat16 after each operation."""
