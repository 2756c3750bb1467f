"""`function(..., profile=True)`: time per node and per op, flops and output sizes."""

from __future__ import annotations

import io
from collections import defaultdict

from eqgraph.exec.link import NodeStats


class ProfileStats:
    """Collected while a profiled function runs; ``summary()`` prints a table."""

    def __init__(self, program, name=None):
        self.program = program
        self.programs = [program]  # one per thread that called the function
        self.name = name
        self.calls = 0

    def add_program(self, program):
        """Another thread's program (the same nodes, in the same order)."""
        self.programs.append(program)

    @property
    def nodes(self):
        """Per-node statistics, summed over the threads that called the function."""
        if len(self.programs) == 1:
            return self.program.stats
        merged = [NodeStats(s.node) for s in self.program.stats]
        for program in self.programs:
            for total, s in zip(merged, program.stats):
                total.calls += s.calls
                total.seconds += s.seconds
                total.flops = total.flops if total.flops is not None else s.flops
                total.output_bytes = total.output_bytes if total.output_bytes is not None else s.output_bytes
        return merged

    def op_totals(self) -> dict:
        """{op: (seconds, node calls, number of nodes)}"""
        totals = defaultdict(lambda: [0.0, 0, 0])
        for s in self.nodes:
            t = totals[str(s.node.op)]
            t[0] += s.seconds
            t[1] += s.calls
            t[2] += 1
        return {op: tuple(v) for op, v in totals.items()}

    def summary(self, file=None, n_nodes: int = 20) -> str:
        out = io.StringIO()
        total = sum(s.seconds for s in self.nodes) or 1e-12
        out.write(f"Function profile{f' {self.name!r}' if self.name else ''}: {self.calls} calls, "
                  f"{total:.6f} s in {len(self.nodes)} nodes\n\n")
        out.write(f"{'op':<40} {'time (s)':>12} {'%':>6} {'calls':>8} {'nodes':>6}\n")
        for op, (secs, calls, count) in sorted(self.op_totals().items(), key=lambda kv: -kv[1][0]):
            out.write(f"{op[:40]:<40} {secs:>12.6f} {100 * secs / total:>6.1f} {calls:>8} {count:>6}\n")
        out.write(f"\n{'node':<50} {'time (s)':>12} {'calls':>7} {'MFLOP/s':>10} {'out bytes':>11}\n")
        for s in sorted(self.nodes, key=lambda s: -s.seconds)[:n_nodes]:
            rate = (f"{s.flops * s.calls / s.seconds / 1e6:10.1f}"
                    if s.flops and s.seconds > 0 else f"{'-':>10}")
            size = f"{s.output_bytes:>11}" if s.output_bytes is not None else f"{'-':>11}"
            out.write(f"{str(s.node)[:50]:<50} {s.seconds:>12.6f} {s.calls:>7} {rate} {size}\n")
        text = out.getvalue()
        if file is not None:
            file.write(text)
        return text

    def __str__(self):
        return self.summary()
