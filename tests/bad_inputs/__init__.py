"""The bad-input table, one module per area (reports, studies, interrupts, input tables, memory, ...).

Every module-level list whose name ends in ``_CASES`` is one part of the table; ``tests/test_bad_inputs.py``
counts them all. Each row is one input and what must come of it: an exit code (or exception type) and a
message fragment, never a traceback on the command line.
"""
