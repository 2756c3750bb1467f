"""``eqgraph.pytensor`` without PyTensor: the package imports, and using it is one clear error
naming the extra to install (PyTensor is hidden from a child process to check this anywhere)."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import sys
sys.modules["pytensor"] = None  # from here `import pytensor` raises ImportError, as where it is not installed
import eqgraph.pytensor as ep
print(sorted(ep.__all__))
try:
    ep.from_pytensor
except ImportError as error:
    print(error)
"""


def test_the_package_imports_and_names_the_extra_when_pytensor_is_missing():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    names, error = out.strip().split("\n")
    assert "from_pytensor" in names and "mode" in names
    assert error == "eqgraph.pytensor.from_pytensor needs pytensor: pip install 'eqgraph[pytensor]'"
