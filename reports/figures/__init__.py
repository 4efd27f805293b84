"""Figures of the HTML reports, each returned as an inline SVG string.

Every public function takes plain inputs (NumPy arrays, xarray Datasets, dicts), draws one
matplotlib figure and returns it through :func:`to_svg`: the ``<svg ...>...</svg>`` element only
(no XML prolog or DOCTYPE), ready to paste into an HTML page, byte-identical for the same inputs
(fixed ``svg.hashsalt``, no date or creator metadata) and with text kept as text
(``svg.fonttype = "none"``), so labels stay searchable and the files small.

Conventions:

* Labels are the variable names as given (the PyMC variable = xarray variable = report label);
  vector elements read ``name[coord, ...]`` as in
  :func:`bayesclass.inference.evaluation.parameters.parameter_comparison`.
* The numbers behind a figure (intervals, masks, replicates, panel order) come from small pure
  functions (:func:`boundary_band`, :func:`categorical_replicates`, :func:`check_panels`,
  :func:`element_draws`) that the tests check numerically; the drawing functions are thin wrappers.
* Dense layers (rank and trace lines, more than :data:`MAX_VECTOR_POINTS` scatter points) are rasterized
  inside the SVG (an embedded PNG, still byte-deterministic); training points are subsampled to at most
  :data:`MAX_POINTS` (a seeded, fixed choice).
* Nothing here selects a matplotlib backend: figures are either ``matplotlib.figure.Figure`` objects
  (never registered with pyplot) or, for the ArviZ plots, created by ``arviz_plots`` with pyplot's
  interactive mode off and closed by :func:`to_svg`.
* Wrong shapes raise ``ValueError`` naming the argument, the shape received and the shape expected.

One module per figure topic: :mod:`._svg` (the shared style, :func:`to_svg`, colours, input checks),
:mod:`.convergence` (rank and trace plots), :mod:`.estimates` (forest plot), :mod:`.performance` (score bars,
Pareto k), :mod:`.calibration` (reliability diagrams), :mod:`.boundary` (decision boundaries), :mod:`.latent`
(latent curves), :mod:`.generative` (posterior predictive checks) and :mod:`.study` (learning curves); this
package re-exports their public functions.
"""

from bayesclass.reports.figures._svg import MAX_POINTS, figure_title, inspect_figures, to_svg
from bayesclass.reports.figures.boundary import boundary_band, boundary_plot
from bayesclass.reports.figures.calibration import categorical_replicates, reliability_plot
from bayesclass.reports.figures.convergence import (
    RANK_ALPHA,
    element_draws,
    element_labels,
    rank_plot,
    rank_thinning,
    trace_plot,
)
from bayesclass.reports.figures.estimates import forest_plot
from bayesclass.reports.figures.generative import check_panels, generative_check_plot
from bayesclass.reports.figures.latent import latent_curve_plot
from bayesclass.reports.figures.performance import pareto_k_plot, score_bars
from bayesclass.reports.figures.study import learning_curve_plot

__all__ = [
    "MAX_POINTS",
    "RANK_ALPHA",
    "boundary_band",
    "boundary_plot",
    "categorical_replicates",
    "check_panels",
    "element_draws",
    "element_labels",
    "figure_title",
    "forest_plot",
    "generative_check_plot",
    "inspect_figures",
    "latent_curve_plot",
    "learning_curve_plot",
    "pareto_k_plot",
    "rank_plot",
    "rank_thinning",
    "reliability_plot",
    "score_bars",
    "to_svg",
    "trace_plot",
]
