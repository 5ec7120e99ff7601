"""The pieces of `lower-to-loops` (lowering/lower_to_loops.py is the pass and its driver):
`builder` builds L3 IR, `values` is the lazy value model of L2 tensors, and each family
module (`sources`, `elementwise`, `movement`, `linear`, `functions`, `regions`) exports
`HANDLERS`, {op class: handler(driver, op)}, merged by the driver into one table."""
