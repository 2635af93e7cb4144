"""What drawing TeX costs the GUI thread: loading mathtext once, then each formula.

    .venv/bin/python -m benchmarks.math_render [--rounds 3]

Each of 50 different formulas (inline and display, simple to busy) is drawn from nothing: parsed
by matplotlib's mathtext, coloured, encoded as PNG and wrapped in an ``<img>``; both caches (ours
and mathtext's own) are emptied between rounds. Also timed: loading mathtext (import and fonts,
paid once per run, on a background thread when a streamed formula is on its way), a cache hit, and
the longest formula Cairn draws (longer TeX is shown as code).
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
    math_images.reset()  # waits for the warm-up: import, fonts, a first formula
    load = (time.perf_counter() - started) * 1000

    times: list[float] = []
    failed: set[str] = set()
    for _ in range(args.rounds):
        math_images.reset()  # empties our cache; the new parser starts without mathtext's own
        style = math_images.style_now()
        math_images.formula_html("x", colour="#000000", style=style, display=False)  # load again
        for n, tex in enumerate(FORMULAS):
            elapsed, drawn = draw(tex, style, display=n % 5 == 0)
            times.append(elapsed)
            if not drawn:
                failed.add(tex)
    hits = [draw(tex, style, display=n % 5 == 0)[0] for n, tex in enumerate(FORMULAS)]
    longest = "+".join(["x_{i}"] * (math_images.MAX_TEX // 6))
    worst = []
    for _ in range(5):
        math_images.reset()  # parsed again each time, not found in a cache
        math_images.formula_html("x", colour="#000000", style=style, display=False)
        worst.append(draw(longest, style, display=False)[0])

    def spread(values: list[float], digits: int) -> str:
        return f"median {statistics.median(values):6.{digits}f} ms   p99 {percentile(values, 0.99):6.{digits}f} ms"

    print(f"mathtext, {len(FORMULAS)} formulas x {args.rounds} rounds, {style.pixel_size:.0f} px, dpr {style.dpr}:")
    print(f"  loading mathtext once   {load:7.1f} ms  (on a background thread when a formula is coming)")
    print(f"  one formula, drawn      {spread(times, 2)}")
    print(f"  one formula, cached     {spread(hits, 3)}")
    print(f"  longest drawn ({len(longest)} chars)  median {statistics.median(worst):6.1f} ms")
    print(f"  load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if failed:
        print(f"  shown as code instead: {sorted(failed)}")


if __name__ == "__main__":
    main()
