"""Regenerate the explorer screenshots in docs/images/ (docs/explorer.md shows them).

    PYTHONPATH=. python docs/explorer_screenshots.py [--chromium /usr/bin/chromium]

Each case compiles a small graph, writes its explorer page, opens it in headless Chromium
(Playwright), clicks the e-class the case is about and saves the window as a PNG. Needs
``pip install -e .[browser]`` and a Chromium binary (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import eqgraph as eg
import eqgraph.tensor as et

IMAGES = Path(__file__).resolve().parent / "images"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def rule_firing():
    """sqrt(x * x) + w: algebra/mul-self makes x * x a square, algebra/sqrt-sqr then makes
    sqrt(x**2) an abs: the chosen member of the sqrt's e-class is |x|."""
    x, w = et.dvector("x"), et.dvector("w")
    return eg.function([x, w], et.sqrt(x * x) + w), "Abs"


def stability():
    """log(1 + exp(x * w)): the stability rules add log1p(exp(..)) and softplus(..); the
    first two are declared unstable, so softplus is chosen whatever the cost."""
    x, w = et.dvector("x"), et.dvector("w")
    return eg.function([x, w], et.log(1 + et.exp(x * w))), "Softplus"


def matmul_chain():
    """A @ B @ v with A, B 1000 x 1000: the matmul rules reassociate it to A @ (B @ v), two
    matrix-vector products instead of a matrix product."""
    A, B = (et.TensorType("float64", (1000, 1000))(name) for name in "AB")
    v = et.TensorType("float64", (1000,))("v")
    return eg.function([A, B, v], A @ B @ v), None  # None: the output's e-class


CASES = {"rule-firing": rule_firing, "stability": stability, "matmul-chain": matmul_chain}


def shoot(browser, name: str, case, folder: Path) -> Path:
    f, op = case()
    page = f.stages.egraph.explore(folder / f"{name}.html", title=f"eqgraph explorer: {name}")
    tab = browser.new_page(viewport={"width": 1500, "height": 860})
    tab.goto(page.path.as_uri())
    tab.wait_for_function("window.eqgraphExplorer && window.eqgraphExplorer.ready")
    # the e-class to open: the one holding an `op` member, or the first output's
    eclass = tab.evaluate("""op => { const D = window.eqgraphExplorer.data;
        return op ? D.nodes.find(n => n.op === op).cls : D.outputs[0].cls; }""", op)
    x, y = tab.evaluate("""c => { const cy = window.eqgraphExplorer.cy, p = cy.$id('c' + c).renderedPosition();
        const r = cy.container().getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; }""", eclass)
    tab.mouse.click(x, y)
    tab.wait_for_selector("#class-title")
    tab.mouse.move(2, 300)  # off the graph: no tooltip in the picture
    tab.wait_for_timeout(400)  # a centring animation, if the e-class was out of view
    out = IMAGES / f"explorer-{name}.png"
    tab.screenshot(path=str(out))
    tab.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    IMAGES.mkdir(exist_ok=True)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=ARGS)
        for name, case in CASES.items():
            print(shoot(browser, name, case, Path(folder)))
        browser.close()


if __name__ == "__main__":
    main()
