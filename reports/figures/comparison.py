"""Model comparison: the elpd differences of several families to the best, with their intervals."""

from __future__ import annotations

import math
from collections.abc import Mapping

from bayesclass.reports.figures._svg import _style, to_svg

__all__ = ["elpd_difference_plot"]


def elpd_difference_plot(differences: Mapping[str, tuple[float, float]], *, multiple: float = 2.0) -> str:
    """Each family's elpd_loo difference to the best, with a bar of ``multiple`` standard errors either side.

    Drawn by ``arviz_plots.plot_compare`` (the ``arviz_stats.compare`` plot, ``relative_scale``), its error bars
    being ``multiple * dse`` instead of one ``dse``: with ``multiple`` the noise bar of the conclusion, a bar
    that crosses the best's line (0) is a difference within its noise.

    Parameters
    ----------
    differences : mapping of str to (float, float)
        Label -> ``(elpd_diff, dse)``, best first: the difference of its ``elpd_loo`` to the best's (0 or
        negative; a positive value is drawn as its negative, as ``arviz_stats.compare`` reports the size of the
        gap) and its standard error (0 for the best).
    multiple : float, default 2.0
        Standard errors either side of each point.

    Returns
    -------
    str
        The SVG element (:func:`to_svg`).

    Raises
    ------
    ValueError
        ``differences`` empty or not a mapping, a value not a pair of finite numbers, a negative ``dse`` or a
        ``multiple`` that is not positive.
    """
    import arviz_plots as azp
    import pandas as pd

    if not isinstance(differences, Mapping) or not differences:
        raise ValueError("differences must be a non-empty mapping: label -> (elpd_diff, dse), best first")
    if isinstance(multiple, bool) or not isinstance(multiple, int | float) or not multiple > 0:
        raise ValueError(f"multiple must be a positive number of standard errors, got {multiple!r}")
    points, errors = [], []
    for label, pair in differences.items():
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"differences[{label!r}] must be an (elpd_diff, dse) pair; got {pair!r}")
        difference, dse = float(pair[0]), float(pair[1])
        if not (math.isfinite(difference) and math.isfinite(dse)) or dse < 0:
            raise ValueError(f"differences[{label!r}] must hold a finite elpd_diff and dse >= 0; got {pair!r}")
        points.append(-abs(difference))
        errors.append(multiple * dse)
    table = pd.DataFrame({"elpd_diff": points, "dse": errors}, index=[str(label) for label in differences])
    with _style():
        collection = azp.plot_compare(
            table,
            backend="matplotlib",
            figure_kwargs={
                "figsize": (7.5, 1.0 + 0.45 * len(table)),
                "figsize_units": "inches",
                "layout": "constrained",
            },
            visuals={"title": False},
        )
        fig = collection.get_viz("figure")
        axes = fig.axes[0]
        axes.set_xlabel(f"elpd_loo difference to the best (bars: +-{multiple:g} dse)")
    return to_svg(fig)
