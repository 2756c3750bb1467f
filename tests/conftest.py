"""Every property test draws the same examples on every run (hypothesis' derandomize), so
the default run cannot pass on one machine and fail on the next by chance: a test that
draws ``verify_grad`` points at random once met ``abs``'s kink at 0. Long runs that explore
more are marked ``slow``."""

import os

from hypothesis import settings

settings.register_profile("eqgraph", derandomize=True, database=None)
settings.load_profile("eqgraph")

# Numba forms are compiled when a test asks (``f.wait_compiled()``, ``compile="eager"``), never
# behind its back: no test's values depend on how fast a compile went, and no compile outlives it
import eqgraph as eg  # noqa: E402

eg.config.compile = "deferred"

# every compile runs the whole pipeline, so that its stages (the e-graph, the report) are there to
# inspect; tests/test_graph_cache.py turns the on-disk cache of optimized graphs on where it tests it.
# The variable reaches the compiles that tests run in subprocesses: a second compile of the same
# graph there would otherwise load it from the cache and have no e-graph report to check
eg.config.graph_cache = ""
os.environ["EQGRAPH_GRAPH_CACHE"] = ""
