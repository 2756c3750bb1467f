"""eqgraph end to end: logistic regression trained by SGD on random data.

The model is a symbolic graph; ``eg.function`` compiles one training step whose
shared weights are updated in place after each call.
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

p = et.sigmoid(x @ w + b)                                   # P(y = 1 | x)
loss = -(y * et.log(p) + (1 - y) * et.log1p(-p)).mean()     # cross-entropy
error = p - y                                               # d loss / d logits, times n
grad_w = x.T @ error / x.shape[0]
grad_b = error.mean()

lr = 0.5
train = eg.function([x, y], loss, updates={w: w - lr * grad_w, b: b - lr * grad_b}, name="train")
predict = eg.function([x], p > 0.5, name="predict")

print("The loss graph, as eqgraph sees it:")
eg.dprint(loss)
for step in range(101):
    value = train(X_data, y_data)
    if step % 25 == 0:
        print(f"step {step:3d}  loss {value:.4f}")
accuracy = (predict(X_data) == y_data.astype(bool)).mean()
print(f"training accuracy {accuracy:.3f}; weight direction cosine "
      f"{w.get_value() @ true_w / np.linalg.norm(w.get_value()) / np.linalg.norm(true_w):.3f}")
