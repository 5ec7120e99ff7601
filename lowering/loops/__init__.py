"""The pieces of `lower-to-loops` (lowering/lower_to_loops.py is the pass and its driver):
`builder` builds L3 IR and `values` is the lazy value model of L2 tensors."""
