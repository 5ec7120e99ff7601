"""Placement algorithms of `memory-plan`, one module each: a function from the buffers'
byte sizes, live ranges and alignments to byte offsets in the scratch array (greedy first
fit lives in passes/memory_plan.py beside the pass)."""
