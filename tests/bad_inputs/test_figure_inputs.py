"""Bad inputs of the convergence figures, the figure titles and the overlap check (issue 29, items 2 and 6).

Each row: a call -> the exception type and a fragment of its message, which names the argument, the value and
what to pass instead. The rank and trace figures take parameter elements as the convergence table names them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import xarray as xr
from matplotlib.figure import Figure

from bayesclass.reports import figures
from bayesclass.reports.figures.overlaps import text_overlaps

_RNG = np.random.default_rng(0)
POSTERIOR = xr.Dataset(
    {
        "intercept": (("chain", "draw"), _RNG.normal(size=(2, 40))),
        "weights": (("chain", "draw", "feature"), _RNG.normal(size=(2, 40, 2))),
        "latent": (("chain", "draw", "obs"), _RNG.normal(size=(2, 40, 30))),
    },
    coords={"feature": ["x1", "x2"]},
)


def _title_block(title) -> None:
    with figures.figure_title(title):
        pass


FIGURE_CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    (
        "an element that is not in the posterior",
        lambda: figures.rank_plot(POSTERIOR, ["weights[x3]"]),
        ValueError,
        "elements: 'weights[x3]' is neither an element nor a variable of posterior; it has intercept, weights[x1]",
    ),
    (
        "elements given as one string",
        lambda: figures.trace_plot(POSTERIOR, "weights"),
        ValueError,
        "elements must be a non-empty sequence of element labels, got 'weights'",
    ),
    ("no elements", lambda: figures.rank_plot(POSTERIOR, []), ValueError, "non-empty sequence"),
    (
        "more elements than a figure draws",
        lambda: figures.rank_plot(POSTERIOR, ["latent"]),
        ValueError,
        "elements come to 30 parameter elements; a figure draws at most 16: pass the worst ones",
    ),
    (
        "a posterior without a chain dim",
        lambda: figures.rank_plot(POSTERIOR.isel(chain=0, drop=True), ["intercept"]),
        ValueError,
        "posterior must have dims chain and draw",
    ),
    (
        "a posterior that is not a Dataset",
        lambda: figures.trace_plot(POSTERIOR["intercept"], ["intercept"]),
        ValueError,
        "posterior must be an xarray.Dataset with dims chain and draw, got DataArray",
    ),
    (
        "a thinning step of 0",
        lambda: figures.rank_plot(POSTERIOR, ["intercept"], thin=0),
        ValueError,
        "thin must be a positive integer (keep every thin-th draw), got 0",
    ),
    ("a thinning step of True", lambda: figures.rank_plot(POSTERIOR, ["intercept"], thin=True), ValueError, "thin"),
    (
        "an empty figure title",
        lambda: _title_block("  "),
        ValueError,
        "title must be a non-empty string, got '  '",
    ),
    (
        "a figure title that is not text",
        lambda: figures.to_svg(Figure(), title=3),
        ValueError,
        "title must be a non-empty string or None, got 3",
    ),
    (
        "an overlap check of a file name",
        lambda: text_overlaps("figure.png"),
        ValueError,
        "fig must be a matplotlib.figure.Figure, got str",
    ),
    (
        "a negative overlap tolerance",
        lambda: text_overlaps(Figure(), tolerance=-2),
        ValueError,
        "tolerance must be a number of pixels >= 0, got -2",
    ),
    (
        "a figure inspector that is not callable",
        lambda: figures.inspect_figures("print").__enter__(),
        ValueError,
        "callback must be callable, got str",
    ),
]


@pytest.mark.parametrize(("name", "call", "error", "fragment"), FIGURE_CASES, ids=[row[0] for row in FIGURE_CASES])
def test_bad_figure_input_gets_a_clear_error(name, call, error, fragment):
    with pytest.raises(error) as caught:
        call()
    assert fragment in str(caught.value), (name, str(caught.value))
