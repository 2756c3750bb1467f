"""Generated Python source (programs, kernels, callers), compiled once per text.

Kernels of the same shape have the same source whatever they compute (the functions they
call are bound by name in the namespace), so a process compiles each text once: compiling
source is a large share of a small graph's compile.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=4096)
def _code(source: str, filename: str):
    return compile(source, filename, "exec")


def define(source: str, filename: str, namespace: dict) -> dict:
    """Run ``source`` (our own generated code) in ``namespace``; return the namespace."""
    exec(_code(source, filename), namespace)  # noqa: S102 (our own source)
    return namespace
