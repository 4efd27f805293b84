"""The forest plot's panels (:func:`parameter_panels`): one per model variable and unit, standardised by need.

Fitted on the Palmer penguins (a variance of body mass in g^2 is about 2e5, a class probability about 0.3: on one
axis every other parameter collapses to a point), by conjugate draws and by MAP, so the module runs in seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.inference.evaluation.parameters import (
    MAX_FOREST_PARAMETERS,
    MAX_UNIT_PANELS,
    forest_rows,
    parameter_comparison,
    parameter_panels,
)

_SAMPLER = bc.SamplerSettings(draws=200, chains=2, progressbar=False)


@pytest.fixture(scope="module")
def penguins():
    return bc.load("penguins", missing="drop")


def _fit(penguins, method: str, standardize: bool):
    sampler = _SAMPLER if method == "exact" else None
    return bc.fit("naive_bayes", penguins, method=method, sampler=sampler, standardize=standardize, random_seed=0)


@pytest.fixture(scope="module")
def standardised(penguins):
    return _fit(penguins, "exact", True)


@pytest.fixture(scope="module")
def raw(penguins):
    return _fit(penguins, "exact", False)


def _width_ratio(rows) -> float:
    """Largest over smallest extent of the rows' posterior intervals and point estimates."""
    spans = []
    for row in rows:
        values = [row[key] for key in ("low", "high", "mle", "map") if row.get(key) is not None]
        spans.append(max(abs(v) for v in values) + (row["high"] - row["low"]))
    return max(spans) / min(spans)


def test_each_panel_holds_one_variable_and_means_and_variances_are_apart(standardised):
    rows = parameter_comparison(standardised)
    panels = parameter_panels(standardised, rows)
    assert [panel.title for panel in panels] == [
        "class_prior",
        "binary_proba",
        "category_proba",
        "gaussian_mean",
        "gaussian_variance",
    ]
    for panel in panels:
        assert len({row["variable"] for row in panel.rows}) == 1, panel.title
    assert sum(len(panel.rows) for panel in panels) == len(rows)  # nothing lost, nothing doubled
    by_title = {panel.title: panel for panel in panels}
    assert {row["variable"] for row in by_title["gaussian_mean"].rows} == {"gaussian_mean"}
    assert {row["variable"] for row in by_title["gaussian_variance"].rows} == {"gaussian_variance"}
    # the inputs were standardised: one unit, said in the label, values untouched
    assert "standardised input units" in by_title["gaussian_mean"].axis_label
    assert not by_title["gaussian_variance"].standardised
    assert by_title["gaussian_variance"].rows == tuple(row for row in rows if row["variable"] == "gaussian_variance")
    assert by_title["class_prior"].axis_label == "value"


def test_inputs_in_different_units_are_standardised_by_the_posterior(raw):
    rows = parameter_comparison(raw)
    # the defect: on one axis, the body mass variance (g^2) dwarfs everything else
    assert _width_ratio(rows) > 1e4
    panels = {panel.title: panel for panel in parameter_panels(raw, rows)}
    variance = panels["gaussian_variance"]
    assert variance.standardised and "posterior sd" in variance.axis_label and "different units" in variance.axis_label
    original = {row["parameter"]: row for row in rows}
    for row in variance.rows:
        source = original[row["parameter"]]
        assert row["mean"] == 0.0 and row["sd"] == 1.0
        for key in ("low", "high", "mle", "map", "map_low", "mle_high"):
            assert row[key] == pytest.approx((source[key] - source["mean"]) / source["sd"])
        assert row["map_se"] == pytest.approx(source["map_se"] / source["sd"])
    for panel in panels.values():  # no panel's axis is dominated by one element any more
        assert _width_ratio(panel.rows) < 100, panel.title


def test_without_draws_a_variable_is_split_by_input_with_the_input_in_the_label(penguins):
    fitted = _fit(penguins, "map", False)
    panels = parameter_panels(fitted, parameter_comparison(fitted))
    variance = [panel for panel in panels if panel.title.startswith("gaussian_variance")]
    names = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year")
    assert len(variance) == len(names) > MAX_UNIT_PANELS  # no posterior sd to standardise by: one panel per input
    for panel, name in zip(variance, names, strict=True):
        assert name in panel.title and name in panel.axis_label and not panel.standardised
        assert all(row["features"] == (name,) for row in panel.rows)


def test_a_few_units_make_a_few_panels_in_their_own_units(penguins):
    fitted = bc.fit("logistic", penguins, method="map", standardize=True, random_seed=0)
    panels = {panel.title: panel for panel in parameter_panels(fitted, parameter_comparison(fitted))}
    assert set(panels) == {"intercept", "weights, 0/1-coded inputs", "weights, standardised inputs"}
    coded = {feature for row in panels["weights, 0/1-coded inputs"].rows for feature in row["features"]}
    assert coded == {"island=Dream", "island=Torgersen", "sex=male"}
    assert "0/1-coded" in panels["weights, 0/1-coded inputs"].axis_label
    scaled = panels["weights, standardised inputs"]
    assert not scaled.standardised and "sd = 1" in scaled.axis_label
    assert np.isfinite([row["map"] for row in scaled.rows]).all()


def test_one_draw_has_no_posterior_sd_to_standardise_by_so_each_input_gets_its_panel(penguins):
    one = bc.fit(
        "naive_bayes",
        penguins,
        method="exact",
        sampler=bc.SamplerSettings(draws=1, chains=1, progressbar=False),
        standardize=False,
        random_seed=0,
    )
    panels = parameter_panels(one, parameter_comparison(one))
    assert not any(panel.standardised for panel in panels)
    assert any(panel.title == "gaussian_variance, input body_mass_g" for panel in panels)


def _rows(n: int) -> list[dict]:
    """``n`` rows whose posterior mean lies ``i / 10`` posterior sds from 0 (sd varies, so the raw means do not)."""
    sd = np.linspace(0.5, 3.0, n)
    distance = np.random.default_rng(0).permutation(n) / 10
    return [{"parameter": f"w[{i}]", "mean": float(-distance[i] * sd[i]), "sd": float(sd[i])} for i in range(n)]


def test_the_forest_draws_every_parameter_of_a_model_with_up_to_60():
    rows = _rows(30)
    drawn, left_out = forest_rows(rows)
    assert list(drawn) == rows and left_out == 0
    assert forest_rows(_rows(MAX_FOREST_PARAMETERS))[1] == 0


def test_beyond_60_the_forest_draws_those_furthest_from_0_in_their_order_and_counts_the_rest():
    rows = _rows(100)
    drawn, left_out = forest_rows(rows)
    assert (len(drawn), left_out) == (60, 40)
    z = np.array([abs(row["mean"]) / row["sd"] for row in rows])
    assert sorted(z[[rows.index(row) for row in drawn]]) == sorted(z)[40:]  # the 60 largest |mean| / sd
    assert [rows.index(row) for row in drawn] == sorted(rows.index(row) for row in drawn)  # in their order
    # without a posterior: the point estimate over its SE
    plain = [{"parameter": f"w[{i}]", "mean": None, "sd": None, "map": float(i), "map_se": 1.0} for i in range(70)]
    drawn, left_out = forest_rows(plain, ("map",))
    assert left_out == 10 and [row["map"] for row in drawn] == list(range(10, 70))


def test_the_estimates_caption_states_how_many_parameters_the_forest_leaves_out():
    from bayesclass.inference.evaluation import report_data as rd
    from bayesclass.reports.sections import _forest_panels_note

    rows = _rows(100)
    drawn, left_out = forest_rows(rows)
    panel = rd.ParameterPanel("w", "value", False, tuple(drawn))
    estimates = rd.Estimates(tuple(rows), (), (), True, panels=(panel,), forest_left_out=left_out)
    note = _forest_panels_note(estimates)
    assert "60 of the 100 parameters are drawn, those furthest from 0" in note
    assert "the other 40 are left out of the figure, not of the table" in note
    assert "left out" not in _forest_panels_note(rd.Estimates(tuple(rows[:30]), (), (), True, panels=(panel,)))
