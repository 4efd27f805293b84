"""Bad input to the grouped forest plot (issue 29): ``forest_plot``'s panels, title, cap and markers.

Each row of :data:`FOREST_CASES` calls :func:`bayesclass.reports.figures.forest_plot` and expects the exception
type and a fragment of its message naming the argument and what it must be.
"""

from __future__ import annotations

import pytest

from bayesclass.inference.evaluation.report_data import ParameterPanel
from bayesclass.reports import figures

_ROW = {"parameter": "w[a]", "variable": "w", "mean": 0.0, "low": -1.0, "high": 1.0, "map": 0.1}
_PANEL = ParameterPanel("w", "value", False, (_ROW,))

#: (first argument, keyword arguments, exception type, fragment of its message)
FOREST_CASES = [
    ([], {}, ValueError, "rows must be a non-empty sequence of dicts (parameter_comparison(result)) or of panels"),
    ({"w": _PANEL}, {}, ValueError, "rows must be a non-empty sequence"),
    ([object()], {}, ValueError, "panels[0] must be a ParameterPanel with non-empty rows"),
    ([_PANEL, ParameterPanel("v", "value", False, ())], {}, ValueError, "panels[1] must be a ParameterPanel"),
    (
        [ParameterPanel("v", "value", False, ({"parameter": "v"},))],
        {},
        ValueError,
        "panel 'v' rows[0] must be a mapping with keys parameter, mean, low, high",
    ),
    ([_PANEL], {"title": 3}, ValueError, "title must be a string (the model and data) or None, got 3"),
    ([_PANEL], {"max_rows": 0}, ValueError, "max_rows must be a positive integer, got 0"),
    ([_PANEL], {"max_rows": True}, ValueError, "max_rows must be a positive integer, got True"),
    ([_PANEL], {"markers": ["map"]}, ValueError, "markers must be a mapping point-estimate key -> legend label"),
]


@pytest.mark.parametrize(("panels", "kwargs", "error", "fragment"), FOREST_CASES)
def test_forest_plot_refuses_with_the_argument_named(panels, kwargs, error, fragment):
    arguments = {"markers": {"map": "MAP"}, **kwargs}
    with pytest.raises(error) as raised:
        figures.forest_plot(panels, **arguments)
    assert fragment in str(raised.value)
