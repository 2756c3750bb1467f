"""Pages the explorer tests share."""

import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.fixture(scope="module")
def softplus_page(tmp_path_factory):
    """log(1 + exp(x * w)): the stability rules add log1p and softplus forms beside it."""
    x, w = et.dvector("x"), et.dvector("w")
    f = eg.function([x, w], et.log(1 + et.exp(x * w)).sum())
    return f.stages.egraph.explore(tmp_path_factory.mktemp("explorer") / "softplus.html")
