"""``Scan.info``: a scan node's layout in PyTensor's words (sequences, mit-sot, sit-sot, nit-sot
and untraced states, non-sequences, while loop), with totals that count the node's own inputs
and outputs and the op's inner ones."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.loops.layout import ScanInfo


def _check_totals(node):
    info = node.op.info
    assert isinstance(info, ScanInfo)
    assert info.n_outer_inputs == len(node.inputs)
    assert info.n_outer_outputs == len(node.outputs)
    assert info.n_inner_inputs == len(node.op.inner_inputs)
    assert info.n_inner_outputs == len(node.op.inner_outputs)
    return info


def test_every_kind_of_input_and_output_is_counted():
    xs, h0, w = et.dvector("xs"), et.dvector("h0"), et.dscalar("w")
    total = eg.shared(0.0, "total")

    def step(x_m1, x, past2, past1, prev, w):
        return [past2 + past1 * w + x, prev + x_m1, x * 2], {total: total + x}

    outs, _ = eg.scan(step, sequences=[{"input": xs, "taps": [-1, 0]}],
                      outputs_info=[{"initial": h0, "taps": [-2, -1]}, et.constant(0.0), None],
                      non_sequences=[w])
    info = _check_totals(outs[0].owner)
    assert (info.n_seqs, info.n_mit_sot, info.n_sit_sot, info.n_nit_sot) == (1, 1, 1, 1)
    assert (info.n_untraced_sit_sot, info.n_non_seqs, info.as_while) == (1, 1, False)
    assert info.seq_in_slices == ((-1, 0),) and info.mit_sot_in_slices == ((-2, -1),)
    assert info.sit_sot_in_slices == ((-1,),) and not info.has_n_steps


def test_n_steps_until_and_a_generator_state():
    x = et.dscalar("x")
    rng = eg.shared(np.random.default_rng(0), "rng")
    outs, _ = eg.scan(lambda prev, r: [prev * 2, et.random.normal(0.0, rng=r).owner.outputs[0],
                                       eg.until(prev > 4)],
                      outputs_info=[x, rng], n_steps=5)
    info = _check_totals(outs[0].owner)
    assert info.has_n_steps and info.as_while
    assert (info.n_sit_sot, info.n_untraced_sit_sot, info.n_nit_sot) == (1, 1, 0)


def test_the_info_is_read_only():
    out, _ = eg.scan(lambda v: v + 1, sequences=[et.dvector("x")])
    with pytest.raises(AttributeError):
        out.owner.op.info.n_seqs = 2
