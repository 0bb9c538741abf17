# The engine defines over a hundred dataclasses; their generated methods are compiled once and kept
# (dataclass_code.py), which saves `manage.py allocate` a third of its start-up.
from allocator.engine import dataclass_code

dataclass_code.install()
