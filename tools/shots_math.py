"""Screenshots of a reply with math, for ``tools/screenshots.py``: inline formulas and fractions
in running text, then display formulas with ``\\le``, ``\\ge``, ``\\neq``, ``pmatrix``,
``bmatrix``, ``cases`` and ``aligned``, and one formula Cairn cannot read, shown as code; light
and dark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["MATH_REPLY", "math_shots"]

MATH_REPLY = r"""For $0 \le x \le 1$ and $y \ge 0$ with $x \neq y$, half of it is $\frac{x}{2}$, and
$\frac{a+b}{c}$ reads as well as $a_n^2 + \sqrt{b}$ in the middle of a line of text.

$$
A = \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}, \quad I = \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}
$$

$$
|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & \text{otherwise} \end{cases}
$$

$$
\begin{aligned}
(a+b)^2 &= a^2 + 2ab + b^2 \\
&\le 2(a^2 + b^2)
\end{aligned}
$$

$$\sum_{i=1}^{n} i = \frac{n(n+1)}{2} \neq n^2$$

A formula that cannot be read stays as it was written: $\frac{1}{$."""


def math_shots(run: Any, provider: Any, out: Path, *, settle: Any, wait_for: Any) -> None:
    """``math.png`` and ``math-dark.png``: the reply above, whole, in a window of the usual size."""
    from desktop.loopback import Reply

    window = run.window
    window.new_session()
    wait_for(lambda: not window.chat.model_rows().messages)
    provider.script(Reply(text=MATH_REPLY))
    window.controller.send("Show me some math.")
    wait_for(lambda: bool(window.chat.model_rows().messages) and not window.turns.busy)
    settle(800)
    window.chat.jump_to_bottom()
    settle()
    window.grab().save(str(out / "math.png"))
    run.shell.set_theme("dark")
    settle()
    window.grab().save(str(out / "math-dark.png"))
    run.shell.set_theme("light")
