"""Extraction: pick one e-node per needed e-class by cost, and rebuild a FunctionGraph.

1. Types: every e-class gets a static type: the type of the user's variable it
   holds, else what ``make_node`` infers for one of its e-nodes from its children's
   types (cached per op and input types).  An e-node that ``make_node`` rejects cannot
   be extracted.  Why not take the types.egg analyses' facts and let ``make_node``
   only validate the chosen e-nodes: that variant makes this step several times faster,
   but the step is a small share of a compile, and the variant needs a retry loop (choose
   again whenever ``make_node`` refuses a chosen e-node) and a cost model fed the analyses'
   sizes, which know less than ``make_node`` for the ops types.egg types partly or not at all. Asking ``make_node`` is right by
   construction, so it stays; the analyses guard rules and narrow the outputs.
2. Costs, cheapest first: an e-node costs its own cost plus its children's,
   where a child used by several nodes of the user's graph is shared among
   them (a common subterm is paid about once).  An e-node is priced only
   once all the e-classes it uses are settled, so the choice is acyclic.
   Numerical stability comes first: a term is ranked by how many unstable
   e-nodes it holds (``extract/unstable.py``: compositions the rule files
   declare, such as ``log(1 + x)``), then by cost.  After this pass each
   unstable e-node's price gets a weight larger than the cost of the whole
   e-graph, so the later searches keep that order exactly: no amount of
   sharing or of work saved buys an unstable form when a stable one exists.
3. Sharing, exactly: a local search switches e-classes to other e-nodes while
   that lowers the cost of the whole extracted DAG, each node paid once (an
   e-node that reuses a class the graph computes anyway costs only itself).
   It stops at a deadline (what is left of ``Limits.seconds``) or a work
   budget, keeping the switches made so far on top of step 2's choice, and
   ``Extraction.stopped`` says so.
4. Decode the chosen nodes, without recursion, into Variables; each output is
   filtered through the user's output type, so it is at least as narrow.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from eqgraph.egraph.snapshot import LEAVES, EGraphData, ENode
from eqgraph.extract.costs import Bounded, CostModel
from eqgraph.extract.exact import exact_choice
from eqgraph.extract.unstable import UnstablePattern, unstable_nodes, unstable_patterns
from eqgraph.tensor.basic import constant
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph

INF = math.inf
_MISSING = object()
clock = time.perf_counter  # the deadline's clock (tests replace it to run out of time)
EXACT_SECONDS = 10.0       # the integer program's own limit, when Limits.seconds leaves more


@dataclass
class Extraction:
    """The chosen e-node per e-class, with costs, and the rebuilt graph."""

    data: EGraphData
    choice: dict[str, str]                 # e-class -> e-node id
    cost: dict[str, float]                 # e-class -> cost of its best e-node (amortized)
    node_cost: dict[str, float]            # e-node -> its own cost
    types: dict[str, object]               # e-class -> TensorType
    fgraph: FunctionGraph | None = None
    dag_cost: float = 0.0                  # cost of the extracted graph, each node once
    #: the unstable compositions left in the extracted graph (e-class, pattern): those
    #: whose e-class had no stable form
    unstable: list = field(default_factory=list)
    variables: dict[str, Variable] = field(default_factory=dict)   # e-class -> decoded variable
    shared: set = field(default_factory=set)  # e-classes switched to an e-node that reuses work
    exact: str | None = None                  # how exact extraction ended, when it was asked for
    stopped: str | None = None                # why the search for a cheaper DAG was cut short, if it was


class _Decoder:
    """Turns e-nodes into ops and Variables (with caches)."""

    def __init__(self, data: EGraphData):
        self.data = data
        self.fgraph = data.fgraph
        self._ops: dict = {}       # (constructor, props) -> op
        self._node_ops: dict = {}  # e-node id -> op
        self._original = {}  # e-class -> an encoded variable of the user's graph
        for var, k in data.ids.items():
            eclass = data.class_of_id.get(k)
            if eclass is not None:
                self._original.setdefault(eclass, var)

    def op(self, enode: ENode):
        op = self._node_ops.get(enode.id, _MISSING)  # asked for again and again while pricing
        if op is _MISSING:
            op = self._node_ops[enode.id] = self._op(enode)
        return op

    def _op(self, enode: ENode):
        ctor = self.data.constructors.get(enode.op)
        if ctor is None:
            return None
        key = (enode.op, tuple(map(repr, enode.args)))
        if key not in self._ops:
            encoded_props = tuple(c.encode_read(v) for c, v in zip(ctor.codecs, enode.args))
            op = self.data.ops.get((enode.op, encoded_props))  # the user's own op, when it was encoded
            if op is None:
                op = ctor.make_op([c.decode(v) for c, v in zip(ctor.codecs, enode.args)])
            self._ops[key] = op
        return self._ops[key]

    def leaf(self, enode: ENode, eclass: str):
        """The Variable of a Var/Scalar/Array e-node."""
        original = self._original.get(eclass)
        if enode.op == "Var":
            return self.fgraph.inputs[enode.args[0]]
        if isinstance(original, Constant):
            # a weak (Python-number) constant took its dtype from its partner in the user's
            # graph; in the chosen graph it may stand alone, where make_node would promote
            # it again (-1.0 of a float32 e-class becoming float64): its dtype is now fixed
            return _strong(original) if getattr(original, "weak", False) else original
        if enode.op == "Scalar":
            value, dtype, ndim = enode.args
            return constant(np.full((1,) * ndim, value, dtype=dtype))
        if enode.op == "Ints":
            values, dtype = enode.args
            return constant(np.asarray(values, dtype=dtype))
        return self.data.constants[enode.args[0]]

    def original(self, eclass: str):
        return self._original.get(eclass)


Decoder = _Decoder  # public for debug mode (exec/debugmode.py), which evaluates e-nodes


def infer_types(data: EGraphData, decoder: _Decoder) -> tuple[dict, dict]:
    """(class -> TensorType, node -> TensorType or None if it cannot be built)."""
    types: dict[str, object] = {}
    node_types: dict[str, object] = {}
    cache: dict = {}
    for eclass in data.classes:
        original = decoder.original(eclass)
        if original is not None:
            types[eclass] = original.type
    work = [n.id for n in data.nodes.values()]
    while work:
        node = data.nodes[work.pop()]
        if node.id in node_types or any(c not in types for c in node.children):
            continue
        node_types[node.id] = ttype = _node_type(node, data, decoder, types, cache)
        if ttype is not None and node.eclass not in types:
            types[node.eclass] = ttype
            work.extend(data.parents[node.eclass])
    for node in data.nodes.values():
        node_types.setdefault(node.id, None)
    return types, node_types


def _node_type(node: ENode, data, decoder, types, cache):
    if node.op == "Var":
        return decoder.fgraph.inputs[node.args[0]].type
    if node.op in LEAVES:
        return decoder.leaf(node, node.eclass).type
    if node.op == "Out":
        return types.get(node.eclass)
    op = decoder.op(node)
    if op is None:
        return None
    child_types = tuple(types[c] for c in node.children)
    key = (id(op), child_types)  # the decoder keeps one op per constructor and props, alive
    if key not in cache:
        try:
            out = op.make_node(*[t() for t in child_types])
            if len(out.outputs) != 1:  # a multi-output node: its class is not a variable
                cache[key] = "node"
            else:
                cache[key] = out.outputs[0].type
        except Exception:  # noqa: BLE001  (a term make_node rejects is simply not extractable)
            cache[key] = None
    result = cache[key]
    if result is None or isinstance(result, str):  # rejected, or "node"
        return result
    known = types.get(node.eclass)
    if known is not None and known != result and isinstance(known, TensorType) and isinstance(result, TensorType):
        if known.meet(result) is None:
            return None  # this term does not have the class's type: never extract it
    return result


def priced_types(data: EGraphData, types: dict) -> dict:
    """What the cost model prices each e-class by: its type, or where unknown sizes are
    bounded, the type with its bounds (``costs.Bounded``): numbers (``x[:10]``: at most 10),
    then axes of other e-classes (``m[0]``: no longer than a row of ``m``), those read
    with their numbers only, so that no bound leads to itself."""
    def unknown(ttype, bounds) -> bool:
        return any(b is not None and s is None for s, b in zip(ttype.shape, bounds))

    numbers = dict(types)
    for eclass, ttype in types.items():
        bounds = data.size_bounds(eclass) if isinstance(ttype, TensorType) else None
        if bounds and unknown(ttype, bounds):
            numbers[eclass] = Bounded(ttype, tuple(() if b is None else (b,) for b in bounds))
    priced = dict(numbers)
    for eclass, ttype in types.items():
        within = data.size_within(eclass) if isinstance(ttype, TensorType) else None
        if not within or not unknown(ttype, within):
            continue
        own = getattr(numbers[eclass], "bounds", ((),) * ttype.ndim)
        limits = [tuple(mine) + tuple((numbers[c], k) for c, k in (axes or ()) if isinstance(types.get(c), TensorType))
                  for mine, axes in zip(own, within)]
        priced[eclass] = Bounded(ttype, tuple(limits))
    return priced


class _Pricer:
    """Prices e-nodes with the cost model, given the e-nodes chosen for their children.

    An unstable e-node (``unstable``) costs ``weight`` more.  Why a weight and not a
    penalty of the cost model: a fixed penalty is a number of nanoseconds, and the
    stable form's extra work grows with the tensors (``log(1 - sigmoid(z))`` beside a
    gradient that computes ``1 - sigmoid(z)`` anyway: the stable ``-softplus(z)`` is a
    pass more over z), so at some size the unstable form won.  ``weight`` is set, after
    the cheapest-first pass, to more than every e-node's cost together: then one unstable
    e-node more outweighs any saving (a lexicographic order, stability first), and the
    e-node pays it however many parents share it, so sharing cannot make it cheap.
    """

    def __init__(self, data: EGraphData, decoder: _Decoder, cost_model, unstable: dict):
        self.data, self.decoder = data, decoder
        self.types, self.node_types = infer_types(data, decoder)
        # one guess for the unknown sizes of the whole graph (costs.CostModel.for_graph)
        fit = getattr(cost_model, "for_graph", None)
        self.cost_model = fit([var.type for var in data.fgraph.variables]) if callable(fit) else cost_model
        self.priced = priced_types(data, self.types)
        self.unstable: dict[str, UnstablePattern] = unstable  # e-node id -> the pattern it matches
        self.weight = 0.0  # the cheapest-first pass ranks by unstable count itself

    def extractable(self, node: ENode) -> bool:
        return node.op in LEAVES or self.node_types.get(node.id) is not None  # make_node accepts it

    def price(self, node: ENode, choice: dict) -> float:
        child_ops = tuple(self.data.nodes[choice[c]].op for c in node.children)
        in_types = [self.priced.get(c) for c in node.children]
        op = self.decoder.op(node) if node.op not in LEAVES and node.op != "Out" else None
        cost = self.cost_model.node_cost(node, op, in_types, self.priced.get(node.eclass), child_ops)
        return cost + self.weight if node.id in self.unstable else cost

    def weigh_instability(self, own: dict) -> None:
        """Set ``weight`` above the cost of every priced e-node together, and add it to the
        unstable ones in ``own`` (the prices so far)."""
        self.weight = 1.0 + math.fsum(c for c in own.values() if c < INF)
        for node_id in own:
            if node_id in self.unstable:
                own[node_id] += self.weight


def choose(data: EGraphData, pricer: _Pricer, shares: dict) -> Extraction:
    """Settle e-classes cheapest first (Knuth's generalization of Dijkstra to AND/OR graphs).

    An e-node is priced once, when every e-class it uses has been settled, so
    the chosen e-nodes are acyclic by construction and each is costed once.
    A term's rank is (its unstable e-nodes, its cost): the count is not shared out
    among parents as the cost is, so a shared unstable subterm stays one per use.
    """
    waiting = {node.id: len(set(node.children)) for node in data.nodes.values()}
    cost: dict[str, float] = {c: INF for c in data.classes}
    unstable: dict[str, int] = {}  # e-class -> unstable e-nodes in its chosen term
    choice: dict[str, str] = {}
    own: dict[str, float] = {}
    heap: list = []

    def push(node: ENode) -> None:
        if not pricer.extractable(node):
            return  # a term make_node rejects is never extracted
        own[node.id] = mine = pricer.price(node, choice)
        total = mine + sum(cost[c] / shares.get(c, 1) for c in set(node.children))
        count = (node.id in pricer.unstable) + sum(unstable[c] for c in set(node.children))
        heapq.heappush(heap, (count, total, node.id))

    for node in data.nodes.values():
        if not node.children:
            push(node)
    while heap:
        count, total, node_id = heapq.heappop(heap)
        node = data.nodes[node_id]
        if node.eclass in choice:
            continue
        choice[node.eclass], cost[node.eclass], unstable[node.eclass] = node_id, total, count
        for parent_id in data.parents[node.eclass]:
            waiting[parent_id] -= 1
            if waiting[parent_id] == 0:
                push(data.nodes[parent_id])
    pricer.weigh_instability(own)
    return Extraction(data, choice, cost, own, pricer.types)


class _SharingRefiner:
    """Lowers the cost of the extracted DAG, each chosen e-node paid once, by switching
    single e-classes to another e-node while that helps (a local search after
    ``choose``, whose cheapest-first prices share a common child only approximately).

    ``refs`` counts, for each e-class, the chosen e-nodes (and roots) that use it; a
    switch adds the new e-node's children and drops the old one's, and what becomes
    reachable or unreachable is exactly what the switch adds or saves. Parents are
    re-priced (a cost model may price a node by its children's ops, ``child_ops``).
    """

    def __init__(self, extraction: Extraction, pricer: _Pricer, roots: list[str], budget: int,
                 deadline: float = INF):
        self.x, self.pricer, self.budget, self.deadline = extraction, pricer, budget, deadline
        self.nodes, self.choice, self.own = extraction.data.nodes, extraction.choice, extraction.node_cost
        self.alternatives: dict[str, list] = defaultdict(list)  # e-class -> its priced e-nodes
        # one e-node per operand order: a commutativity rule adds y * x beside x * y, which costs
        # the same and would multiply the tries wherever commute.egg made such pairs
        chosen = set(self.choice.values())
        forms = {_unordered(self.nodes[node_id]) for node_id in chosen}
        for node_id in sorted(self.own):
            form = _unordered(self.nodes[node_id])
            if form not in forms or node_id in chosen:
                forms.add(form)
                self.alternatives[self.nodes[node_id].eclass].append(node_id)
        self.alternatives = {c: ids for c, ids in self.alternatives.items() if len(ids) > 1}
        if not self.alternatives:
            return  # nothing to switch (no rewrite gave an e-class a second form)
        self.refs: dict[str, int] = defaultdict(int)
        self.users: dict[str, set] = defaultdict(set)   # e-class -> chosen e-nodes using it
        self.heights: dict[str, int] = {}  # e-class -> longest chosen path to a leaf, until a switch
        for node_id in self.choice.values():
            for child in set(self.nodes[node_id].children):
                self.users[child].add(node_id)
        for root in roots:
            self._add(root, [])

    def run(self, passes: int = 3) -> str | None:
        """Improve the choice; return why it stopped early, or None when it finished."""
        for _ in range(passes if self.alternatives else 0):
            improved = False
            for eclass, candidates in self.alternatives.items():
                for node_id in candidates:
                    if self.budget <= 0:
                        return "the local search used its work budget (20 steps per e-node)"
                    if clock() > self.deadline:
                        return "Limits.seconds ran out during the local search"
                    if self.refs.get(eclass) and node_id != self.choice[eclass]:
                        improved |= self._try(eclass, node_id)
            if not improved:
                return None
        return None

    def _add(self, eclass: str, log: list) -> float:
        added, stack = 0.0, [eclass]
        while stack:
            c = stack.pop()
            self.refs[c] += 1
            log.append(c)
            if self.refs[c] == 1:  # newly needed: pay for its node, and it needs its children
                node_id = self.choice[c]
                added += self.own.get(node_id, 0.0)
                stack.extend(set(self.nodes[node_id].children))
                self.budget -= 1
        return added

    def _drop(self, eclass: str, log: list) -> float:
        freed, stack = 0.0, [eclass]
        while stack:
            c = stack.pop()
            self.refs[c] -= 1
            log.append(c)
            if self.refs[c] == 0:  # no longer needed
                node_id = self.choice[c]
                freed += self.own.get(node_id, 0.0)
                stack.extend(set(self.nodes[node_id].children))
                self.budget -= 1
        return freed

    def _height(self, eclass: str) -> int | None:
        """The longest path of chosen e-nodes from ``eclass`` down to a leaf (memoized until
        the next switch; iterative, as chains run thousands deep), or None where the chosen
        e-nodes below it loop (classes no root needs may choose in a circle)."""
        heights, stack, open_ = self.heights, [eclass], set()
        while stack:
            c = stack[-1]
            if c in heights:
                stack.pop()
                continue
            children = self.nodes[self.choice[c]].children
            below = [k for k in children if k not in heights]
            if below:
                if c in open_ or any(k in open_ for k in below):
                    return None
                open_.add(c)
                stack.extend(below)
                continue
            stack.pop()
            open_.discard(c)
            heights[c] = 1 + max((heights[k] for k in children), default=0)
            self.budget -= 1
        return heights[eclass]

    def _reaches(self, start, target: str) -> bool:
        """Whether the chosen e-nodes lead from the classes ``start`` to ``target`` (a cycle).
        A class lower than ``target`` cannot lead to it (nor be it): that answers most tries at
        once (a walk of the DAG below each candidate is a large share of a big graph's compile)."""
        height = self._height(target)
        if height is not None and all((self._height(c) or INF) < height for c in start):
            return False
        seen, stack = set(), list(start)
        while stack:
            c = stack.pop()
            if c == target:
                return True
            if c not in seen:
                seen.add(c)
                self.budget -= 1
                stack.extend(self.nodes[self.choice[c]].children)
        return False

    def _try(self, eclass: str, new_id: str) -> bool:
        old_id, new = self.choice[eclass], self.nodes[new_id]
        if self._reaches(set(new.children), eclass):
            return False
        added_log, dropped_log = [], []
        added = sum(self._add(c, added_log) for c in set(new.children))
        self.choice[eclass] = new_id
        dropped = sum(self._drop(c, dropped_log) for c in set(self.nodes[old_id].children))
        new_price = self.pricer.price(new, self.choice)
        repriced = {u: self.pricer.price(self.nodes[u], self.choice) for u in self.users[eclass]
                    if self.refs.get(self.nodes[u].eclass)}
        delta = (new_price - self.own[old_id] + added - dropped
                 + sum(p - self.own[u] for u, p in repriced.items()))
        if delta < -1e-9:
            self.heights.clear()
            self.own[new_id] = new_price
            self.own.update(repriced)
            self.x.shared.add(eclass)
            for c in set(self.nodes[old_id].children):
                self.users[c].discard(old_id)
            for c in set(new.children):
                self.users[c].add(new_id)
            return True
        self.choice[eclass] = old_id  # undo, counts and all
        for c in dropped_log:
            self.refs[c] += 1
        for c in added_log:
            self.refs[c] -= 1
        return False


def _unordered(node) -> tuple:
    """An e-node up to the order of its operands."""
    return node.eclass, node.op, tuple(sorted(node.children)), node.args


def decode(extraction: Extraction, decoder: _Decoder, roots: list[str]) -> list[Variable]:
    """Variables for ``roots`` built from the chosen e-nodes, children first (no recursion)."""
    data, choice, built = extraction.data, extraction.choice, extraction.variables
    applies: dict[str, Apply] = {}
    for root in roots:
        stack = [(root, False)]
        while stack:
            eclass, ready = stack.pop()
            if eclass in built or eclass in applies:
                continue
            if eclass not in choice:
                raise RuntimeError(f"e-class {eclass} ({data.describe_class(eclass)}) has no extractable term")
            node = data.nodes[choice[eclass]]
            if not ready:
                stack.append((eclass, True))
                stack.extend((c, False) for c in node.children if c not in built and c not in applies)
                continue
            if node.op in LEAVES:
                built[eclass] = decoder.leaf(node, eclass)
            elif node.op == "Out":
                built[eclass] = applies[node.children[0]].outputs[node.args[0]]
            else:
                apply = decoder.op(node).make_node(*[built[c] for c in node.children])
                if len(apply.outputs) == 1:
                    var = apply.outputs[0]
                    original = decoder.original(eclass)
                    if original is not None and original.name:
                        var.name = original.name
                    built[eclass] = var
                else:
                    applies[eclass] = apply
    return [built[r] for r in roots]


def _needed(extraction: Extraction, roots: list[str]) -> list[str]:
    """The e-classes the chosen e-nodes of ``roots`` use, each once."""
    seen, stack, order = set(), list(roots), []
    while stack:
        eclass = stack.pop()
        if eclass in seen:
            continue
        seen.add(eclass)
        order.append(eclass)
        stack.extend(extraction.data.nodes[extraction.choice[eclass]].children)
    return order


def dag_cost(extraction: Extraction, roots: list[str]) -> float:
    """The price of the extracted DAG, each chosen e-node once (stability weights included)."""
    return math.fsum(extraction.node_cost.get(extraction.choice[c], 0.0) for c in _needed(extraction, roots))


def extract(data: EGraphData, cost_model=None, exact: bool = False, deadline: float = INF,
            unstable=None) -> Extraction:
    """Choose the cheapest graph for the encoded outputs and rebuild it as a FunctionGraph.

    ``exact=True`` solves for the cheapest DAG as an integer program (SciPy; see
    exact.py) instead of the local search; it raises ExactExtractionUnavailable
    where it cannot run. ``deadline`` (a ``clock()`` time) bounds the searches
    after the cheapest-first choice, which is always made and is the fallback.
    ``unstable``: the ``UnstablePattern``s to avoid (default: those the built-in
    rule files declare)."""
    cost_model = cost_model or CostModel()
    decoder = _Decoder(data)
    patterns = unstable_patterns() if unstable is None else unstable
    pricer = _Pricer(data, decoder, cost_model, unstable_nodes(data, patterns))
    extraction = choose(data, pricer, _shares(data))
    roots = [data.class_of_id[k] for k in data.output_ids]
    # a local search, visiting classes within a budget proportional to the e-graph
    refiner = _SharingRefiner(extraction, pricer, roots, budget=20 * len(data.nodes) + 10_000, deadline=deadline)
    extraction.stopped = refiner.run()
    if exact:
        _use_exact_choice(extraction, roots, deadline)
    outputs = decode(extraction, decoder, roots)
    outputs = [_at_least_as_narrow(orig, new, data, root)
               for orig, new, root in zip(data.fgraph.outputs, outputs, roots)]
    extraction.fgraph = FunctionGraph(data.fgraph.inputs, outputs, clone=False)
    extraction.unstable = [(c, pricer.unstable[extraction.choice[c]]) for c in _needed(extraction, roots)
                           if extraction.choice[c] in pricer.unstable]
    # the estimated run time: the stability weight ranks DAGs, it is no time
    extraction.dag_cost = dag_cost(extraction, roots) - pricer.weight * len(extraction.unstable)
    return extraction


def _use_exact_choice(extraction: Extraction, roots: list[str], deadline: float = INF) -> None:
    """Switch to the integer program's DAG, unless a time limit left it dearer than ours."""
    seconds = min(EXACT_SECONDS, deadline - clock())
    if seconds <= 0:
        extraction.exact = "skipped: Limits.seconds ran out before it could start"
        extraction.stopped = extraction.stopped or "Limits.seconds ran out before exact extraction"
        return
    ours = dict(extraction.choice)
    local_cost = dag_cost(extraction, roots)
    choice, optimal = exact_choice(extraction, roots, seconds=seconds)
    extraction.choice.update(choice)
    extraction.exact = "optimal" if optimal else "time limit"
    if not optimal and dag_cost(extraction, roots) > local_cost:
        extraction.choice.update(ours)
        extraction.exact = "time limit: kept the local search's cheaper DAG"


def _shares(data: EGraphData) -> dict[str, int]:
    """For each e-class of the user's graph, how many of its nodes use it (at least 1)."""
    shares: dict[str, int] = {}
    for var, clients in data.fgraph.clients.items():
        k = data.ids.get(var)
        eclass = data.class_of_id.get(k) if k is not None else None
        if eclass is not None:
            shares[eclass] = max(shares.get(eclass, 1), len([c for c in clients if c != "output"]))
    return shares


def _at_least_as_narrow(original: Variable, new: Variable, data: EGraphData, eclass: str) -> Variable:
    """``new`` with a type at least as narrow as the user's output and the e-class's facts."""
    if new.owner is None and not isinstance(new, Constant) and new not in data.fgraph.inputs:
        raise RuntimeError(f"extraction produced a free variable {new}")
    out = original.type.filter_variable(new)
    dtype, shape = data.static_type(eclass)
    if isinstance(out.type, TensorType) and shape is not None and len(shape) == out.ndim:
        narrowed = out.type.meet(TensorType(out.dtype, shape))
        if narrowed is not None and narrowed != out.type:
            out = narrowed.filter_variable(out)
    return out


def _strong(const: Constant) -> Constant:
    """``const`` with its dtype fixed: no longer a weak Python number."""
    strong = const.clone()
    strong.weak = False
    return strong
