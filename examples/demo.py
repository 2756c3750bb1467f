"""eqgraph end to end: logistic regression trained by SGD on random data.

The model is a symbolic graph; ``eg.grad`` derives its gradients; ``eg.function``
compiles one training step through the e-graph (encode, saturate with the
rulesets in rulesets/, extract by cost) and updates the shared weights after
each call.
"""

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et

rng = np.random.default_rng(0)
n, d = 500, 5
true_w = rng.normal(size=d)
X_data = rng.normal(size=(n, d))
y_data = (X_data @ true_w + 0.1 * rng.normal(size=n) > 0).astype("float64")

x = et.dmatrix("x")
y = et.dvector("y")
w = eg.shared(np.zeros(d), name="w")
b = eg.shared(0.0, name="b")

p = et.sigmoid(x @ w + b)                                  # P(y = 1 | x)
loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()   # cross-entropy
grad_w, grad_b = eg.grad(loss, [w, b])                     # symbolic gradients

lr = 0.5
train = eg.function([x, y], loss, updates={w: w - lr * grad_w, b: b - lr * grad_b}, name="train")
predict = eg.function([x], p > 0.5, name="predict")

stages = train.stages
print(f"graph: {len(stages.graph.apply_nodes)} nodes -> compiled: {len(stages.optimized.apply_nodes)} nodes")
print(f"saturation: {stages.report.stop_reason} after {stages.report.iterations} iterations; rewrites that fired:")
for rule, count in stages.report.fired().items():
    if not rule.startswith(("types/", "fold/")):
        print(f"  {rule:<28} {count} matches")
print("\nThe compiled prediction function:")
eg.dprint(predict)

for step in range(101):
    value = train(X_data, y_data)
    if step % 25 == 0:
        print(f"step {step:3d}  loss {value:.4f}")
accuracy = (predict(X_data) == y_data.astype(bool)).mean()
cosine = w.get_value() @ true_w / np.linalg.norm(w.get_value()) / np.linalg.norm(true_w)
print(f"training accuracy {accuracy:.3f}; cosine(w, true w) {cosine:.3f}")

# -- a small recurrent model: eg.scan + eg.grad -------------------------------------------------
# h[t] = tanh(x[t] W + h[t-1] U + b) reads a noisy sine wave; h[t] V + c predicts the next value.
# The loop is one Scan node: its step is compiled by the same e-graph compiler, and eg.grad
# differentiates through it (back through every step).
print("\nA recurrent network predicting the next value of a sine wave:")
t = np.linspace(0, 8 * np.pi, 201)
wave = (np.sin(t) + 0.05 * rng.normal(size=t.size)).reshape(-1, 1)
hidden = 8
# initial weights drawn by a compiled function of eqgraph's RandomStream (seeded: repeatable)
srng = eg.RandomStream(seed=1)
init = eg.function([], [0.5 * srng.normal(size=(1, hidden)), 0.3 * srng.normal(size=(hidden, hidden)),
                        0.3 * srng.normal(size=(hidden, 1))])
W0, U0, V0 = init()
W = eg.shared(W0, name="W")
U = eg.shared(U0, name="U")
bh = eg.shared(np.zeros(hidden), name="bh")
V = eg.shared(V0, name="V")
c = eg.shared(np.zeros(1), name="c")

seq = et.dmatrix("seq")                                   # (time, 1)
states, _ = eg.scan(lambda x_t, h: et.tanh(x_t @ W + h @ U + bh),
                    sequences=seq[:-1], outputs_info=et.zeros(hidden))
prediction = states @ V + c                               # (time - 1, 1)
rnn_loss = ((prediction - seq[1:]) ** 2).mean()
params = [W, U, bh, V, c]
grads = eg.grad(rnn_loss, params)
rnn_train = eg.function([seq], rnn_loss, updates={p: p - 0.1 * g for p, g in zip(params, grads)},
                        name="rnn_train")
for step in range(41):
    value = rnn_train(wave)
    if step % 10 == 0:
        print(f"step {step:3d}  loss {value:.4f}")
