"""InsertSync's planner (pypto/passes/insert_sync.py has the overview and the pass):

- `model`: the kernel tree the planner walks (instructions, loops, ifs, scopes) and the small
  records it keeps (instruction info, placements).
- `plan`: the synchronizations decided so far and their operations by position.
- `dataflow`: the forward dataflow walk over the kernel tree that checks a plan and grows it.
- `emit`: event ids for the flags and the statements a plan becomes.

Everything here is private to InsertSync (hence the underscored names).
"""
