"""What drawing TeX costs the GUI thread: loading the math engine once, then each formula.

    .venv/bin/python -m benchmarks.math_render [--rounds 3]

Each of 57 different formulas (inline and display, simple to busy, the last seven with the
symbols and environments mathtext could not draw) is drawn from nothing: read, laid out,
rasterised, coloured, encoded as PNG and wrapped in an ``<img>``; the caches are emptied between
rounds. Also timed: loading the engine (import and font, paid once per run, on a background
thread when a streamed formula is on its way), a cache hit, a 197-character formula (the longest
the mathtext version drew) and a fraction nested six deep. The formulas shown as code are
listed at the end. The same file measures the mathtext version (commit b26b4b0): its
``math_images`` has the same functions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QGuiApplication

from ui.message_list import math_images

FORMULAS = [
    r"x^2",
    r"E = mc^2",
    r"a^2 + b^2 = c^2",
    r"\alpha + \beta = \gamma",
    r"\frac{1}{2}",
    r"\frac{a+b}{c-d}",
    r"\sqrt{2}",
    r"\sqrt[3]{x+1}",
    r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}",
    r"\int_0^1 x^2\,dx = \frac{1}{3}",
    r"\int_{-\infty}^{\infty} e^{-x^2}\,dx = \sqrt{\pi}",
    r"\lim_{x \to 0} \frac{\sin x}{x} = 1",
    r"\prod_{k=1}^{n} k = n!",
    r"f(x) = \sum_{n=0}^{\infty} \frac{f^{(n)}(a)}{n!}(x-a)^n",
    r"e^{i\pi} + 1 = 0",
    r"\nabla \cdot \mathbf{E} = \frac{\rho}{\varepsilon_0}",
    r"\nabla \times \mathbf{B} = \mu_0 \mathbf{J}",
    r"\mathcal{O}(n \log n)",
    r"\mathbb{R}^n",
    r"\binom{n}{k} = \frac{n!}{k!(n-k)!}",
    r"p(x) = \frac{1}{\sigma\sqrt{2\pi}} e^{-\frac{(x-\mu)^2}{2\sigma^2}}",
    r"\left( \frac{a}{b} \right)^2",
    r"\left[ x + \frac{1}{y} \right]",
    r"\{ x \in \mathbb{Z} : x > 0 \}",
    r"a \leq b \leq c",
    r"x \neq y",
    r"A \subseteq B \cup C",
    r"\forall x\, \exists y: y > x",
    r"\partial_t u = \Delta u",
    r"\frac{\partial^2 u}{\partial x^2} + \frac{\partial^2 u}{\partial y^2} = 0",
    r"\hat{\theta} = \arg\max_\theta L(\theta)",
    r"\bar{x} = \frac{1}{n}\sum_i x_i",
    r"\vec{v} = (v_1, v_2, v_3)",
    r"\dot{x} = Ax + Bu",
    r"\log_2 1024 = 10",
    r"\cos^2\theta + \sin^2\theta = 1",
    r"\tan\theta = \frac{\sin\theta}{\cos\theta}",
    r"x_{n+1} = x_n - \frac{f(x_n)}{f'(x_n)}",
    r"\sigma^2 = \mathrm{E}[(X-\mu)^2]",
    r"P(A|B) = \frac{P(B|A)P(A)}{P(B)}",
    r"\zeta(s) = \sum_{n=1}^\infty n^{-s}",
    r"\Gamma(n) = (n-1)!",
    r"\oint_C \mathbf{F} \cdot d\mathbf{r}",
    r"\det(A - \lambda I) = 0",
    r"\|x\|_2 = \sqrt{\sum_i x_i^2}",
    r"a \equiv b \; (\mathrm{mod}\; n)",
    r"\lfloor x \rfloor + \lceil y \rceil",
    r"\sum_{k=0}^{n} \binom{n}{k} = 2^n",
    r"\overline{AB} \parallel \overline{CD}",
    r"\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_j e^{z_j}}",
    r"0 \le x \le 1",
    r"y \ge 0 \neq x",
    r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
    r"\begin{bmatrix} a & b \\ c & d \end{bmatrix} \begin{bmatrix} x \\ y \end{bmatrix}",
    r"|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & \text{otherwise} \end{cases}",
    r"\begin{aligned} (a+b)^2 &= a^2 + 2ab + b^2 \\ &\le 2(a^2 + b^2) \end{aligned}",
    r"\det \begin{vmatrix} a & b \\ c & d \end{vmatrix} = ad - bc",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def draw(tex: str, style: math_images.MathStyle, display: bool) -> tuple[float, bool]:
    started = time.perf_counter()
    html = math_images.formula_html(tex, colour="#1f2328", style=style, display=display)
    return (time.perf_counter() - started) * 1000, html is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    _app = QGuiApplication([])
    style = math_images.style_now()

    started = time.perf_counter()
    math_images.prepare()
    math_images.reset()  # waits for the warm-up: import, font, a first formula
    load = (time.perf_counter() - started) * 1000

    times: list[float] = []
    failed: set[str] = set()
    for _ in range(args.rounds):
        math_images.reset()  # empties the caches; the engine is loaded again
        style = math_images.style_now()
        math_images.formula_html("x", colour="#000000", style=style, display=False)  # load again
        for n, tex in enumerate(FORMULAS):
            elapsed, drawn = draw(tex, style, display=n % 5 == 0)
            times.append(elapsed)
            if not drawn:
                failed.add(tex)
    hits = [draw(tex, style, display=n % 5 == 0)[0] for n, tex in enumerate(FORMULAS)]
    longest = "+".join(["x_{i}"] * 33)  # 197 characters: the longest the mathtext version drew
    nested = r"\frac{" * 6 + "x" + "}{y}" * 6  # the deepest of these the layout budget allows

    def worst(tex: str) -> tuple[float, bool]:
        times, drawn = [], True
        for _ in range(5):
            math_images.reset()  # read again each time, not found in a cache
            math_images.formula_html("x", colour="#000000", style=style, display=False)
            elapsed, drawn = draw(tex, style, display=False)
            times.append(elapsed)
        return statistics.median(times), drawn

    def spread(values: list[float], digits: int) -> str:
        return f"median {statistics.median(values):6.{digits}f} ms   p99 {percentile(values, 0.99):6.{digits}f} ms"

    print(f"{len(FORMULAS)} formulas x {args.rounds} rounds, text {style.pixel_size:.0f} px, dpr {style.dpr}:")
    print(f"  loading the engine once {load:7.1f} ms  (on a background thread when a formula is coming)")
    print(f"  one formula, drawn      {spread(times, 2)}")
    print(f"  one formula, cached     {spread(hits, 3)}")
    for name, tex in (("longest", longest), ("most nested", nested)):
        elapsed, drawn = worst(tex)
        print(f"  {name} ({len(tex)} chars)  median {elapsed:6.1f} ms{'' if drawn else ', shown as code'}")
    print(f"  load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if failed:
        print(f"  shown as code instead: {sorted(failed)}")


if __name__ == "__main__":
    main()
