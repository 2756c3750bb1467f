"""PyTensor's special-function namespace (``pt.special``, ``pt.math``) as far as eqgraph has it: the
registry's special functions as ops (``et.special.gammaln is et.gammaln``). Their array forms are
tensor/special_functions.py."""

from eqgraph.tensor.elemwise import ELEMWISE_OPS

#: the names of PyTensor's special-function namespace (``pt.special``, ``pt.math``) eqgraph has,
#: as ``eqgraph.tensor.special.<name>``: the registry's ops, and digamma for psi
OPS = {"gammaln": "gammaln", "psi": "psi", "digamma": "psi", "tri_gamma": "tri_gamma", "erfc": "erfc",
       "erfcx": "erfcx", "erfinv": "erfinv", "erfcinv": "erfcinv", "logit": "logit", "xlogx": "xlogx",
       "xlogy0": "xlogy0", "gamma": "gamma", "betaln": "betaln", "beta": "beta", "i0": "i0", "i1": "i1",
       "ive": "ive", "gammainc": "gammainc", "gammaincc": "gammaincc", "gammaincinv": "gammaincinv",
       "gammainccinv": "gammainccinv", "logdiffexp": "logdiffexp", "polygamma": "polygamma",
       "betainc": "betainc"}


def __getattr__(name: str):
    if name in OPS:
        return ELEMWISE_OPS[OPS[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
