"""The report figures (reports.figures): inline SVG, deterministic, labelled, with clear shape errors."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import xarray as xr

from bayesclass import data, inference
from bayesclass.inference import SamplerSettings
from bayesclass.inference.criticism.predictive_checks import posterior_predictive_check
from bayesclass.inference.evaluation.parameters import parameter_comparison
from bayesclass.reports import figures

SAMPLER = SamplerSettings(draws=200, tune=200, chains=2, progressbar=False)


def check_svg(svg: str, *labels: str) -> ET.Element:
    """An inline SVG element (no prolog), valid XML, with every label as text."""
    assert isinstance(svg, str) and svg.startswith("<svg")
    assert "<?xml" not in svg and "DOCTYPE" not in svg
    root = ET.fromstring(svg)
    for label in labels:
        assert label in svg, label
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(element.itertext()) for element in root.iter() if element.tag.endswith("text")]


@pytest.fixture(scope="session")
def two_feature():
    return data.load("breast_cancer").select_features(["mean radius", "mean texture"])


@pytest.fixture(scope="session")
def nuts_two_feature(two_feature):
    return inference.fit("logistic", two_feature, method="nuts", sampler=SAMPLER, standardize=True, random_seed=0)


@pytest.fixture(scope="session")
def posterior(nuts_two_feature):
    return nuts_two_feature["posterior"].to_dataset()


@pytest.fixture(scope="session")
def nb_transport():
    return inference.fit(
        "naive_bayes",
        data.load("transport"),
        method="exact",
        sampler=SamplerSettings(draws=200, chains=2),
        random_seed=0,
    )


# -- to_svg ---------------------------------------------------------------------------------------------


def test_to_svg_is_an_inline_deterministic_element_with_text_kept_as_text():
    from matplotlib.figure import Figure

    def draw():
        fig = Figure(figsize=(2, 2))
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label="weights[mean radius]")
        ax.set_xlabel("mean radius")
        return figures.to_svg(fig)

    first = draw()
    root = check_svg(first, "mean radius")
    assert "mean radius" in texts(root)  # a <text> element, not glyph paths
    assert first == draw()
    with pytest.raises(ValueError, match="fig"):
        figures.to_svg("not a figure")


def test_importing_the_module_selects_no_backend():
    import subprocess
    import sys

    code = (
        "import matplotlib, sys; import bayesclass.reports.figures; "
        "sys.exit(1 if 'matplotlib.pyplot' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- rank / trace ---------------------------------------------------------------------------------------


def test_rank_and_trace_plots_label_the_elements_and_are_deterministic(posterior):
    for plot in (figures.rank_plot, figures.trace_plot):
        svg = plot(posterior, ["intercept", "weights"], title="logistic on breast_cancer — check")
        check_svg(
            svg, "intercept", "weights[mean radius]", "weights[mean texture]", "logistic on breast_cancer — check"
        )
        assert svg == plot(posterior, ["intercept", "weights"], title="logistic on breast_cancer — check")
        assert len(svg) < 300_000
    assert "weights[mean texture]" in figures.rank_plot(posterior, ["weights[mean texture]"])
    assert "mean radius" not in figures.trace_plot(posterior, ["weights[mean texture]"])


def _rank_axes(posterior, elements, **kwargs):
    """The figure plot_rank would render (to_svg intercepted), for its axes and texts."""
    from bayesclass.reports.figures import convergence

    drawn = []
    original = convergence.to_svg
    convergence.to_svg = lambda fig, title=None: drawn.append(fig) or ""
    try:
        convergence.rank_plot(posterior, elements, **kwargs)
    finally:
        convergence.to_svg = original
    return drawn[0]


def test_rank_plot_draws_one_panel_per_element_without_p_value_text(posterior):
    fig = _rank_axes(posterior, ["intercept", "weights"])
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["intercept", "weights[mean radius]", "weights[mean texture]"]
    texts = [text.get_text() for ax in fig.axes for text in ax.texts]
    assert not any("p=" in text or "α" in text for text in texts), texts  # ArviZ's "p=1.00(α=0.01)" is gone
    for ax in fig.axes:  # one line per chain, each of the (thinned) draws
        assert len(ax.get_lines()) == posterior.sizes["chain"]
    fig.clf()


def test_rank_plot_thins_the_draws():
    rng = np.random.default_rng(0)
    posterior = xr.Dataset({"a": (("chain", "draw"), rng.normal(size=(2, 1000)))})
    assert figures.rank_thinning(1000) == 4 and figures.rank_thinning(250) == 1 and figures.rank_thinning(251) == 2
    thinned = _rank_axes(posterior, ["a"])
    full = _rank_axes(posterior, ["a"], thin=1)
    # the ECDF has one step per draw: a quarter of the points when every 4th draw is kept
    assert len(thinned.axes[0].get_lines()[0].get_xdata()) * 3 < len(full.axes[0].get_lines()[0].get_xdata())


def test_element_draws_select_labelled_elements_of_any_shape():
    rng = np.random.default_rng(0)
    posterior = xr.Dataset(
        {
            "covariance": (("chain", "draw", "class", "f1", "f2"), rng.normal(size=(2, 50, 2, 2, 2))),
            "scale": (("chain", "draw"), rng.normal(size=(2, 50))),
        },
        coords={"class": ["a", "b"], "f1": ["x1", "x2"], "f2": ["x1", "x2"]},
    )
    labels = figures.element_labels(posterior)
    assert list(labels)[:3] == ["covariance[a, x1, x1]", "covariance[a, x1, x2]", "covariance[a, x2, x1]"]
    assert list(labels)[-1] == "scale"
    selection = figures.element_draws(posterior, ["covariance[b, x2, x1]", "scale"])
    assert list(selection.data_vars) == ["covariance[b, x2, x1]", "scale"]
    np.testing.assert_array_equal(
        selection["covariance[b, x2, x1]"].values, posterior["covariance"].sel({"class": "b", "f1": "x2", "f2": "x1"})
    )
    assert len(figures.element_draws(posterior, ["covariance"]).data_vars) == 8  # a variable: all its elements
    assert "covariance[a, x2, x1]" in figures.rank_plot(posterior, ["covariance[a, x2, x1]"])


def test_elements_whose_labels_hold_a_slash_are_drawn():
    """ArviZ keeps variables in a DataTree, whose names may not hold "/" (wine's od280/od315 feature)."""
    rng = np.random.default_rng(0)
    posterior = xr.Dataset(
        {"weights": (("chain", "draw", "feature"), rng.normal(size=(2, 40, 2)))},
        coords={"feature": ["od280/od315_of_diluted_wines", "ash"]},
    )
    for plot in (figures.rank_plot, figures.trace_plot):
        check_svg(plot(posterior, ["weights"]), "weights[od280/od315_of_diluted_wines]", "weights[ash]")


def test_rank_plot_rejects_bad_inputs(posterior):
    with pytest.raises(ValueError, match="elements: 'nope' is neither"):
        figures.rank_plot(posterior, ["nope"])
    with pytest.raises(ValueError, match="posterior"):
        figures.trace_plot(posterior.isel(chain=0, drop=True), ["intercept"])
    with pytest.raises(ValueError, match="thin"):
        figures.rank_plot(posterior, ["weights"], thin=0)
    with pytest.raises(ValueError, match="non-empty"):
        figures.rank_plot(posterior, "weights")
    many = xr.Dataset({"v": (("chain", "draw", "k"), np.zeros((2, 10, 40)))})
    with pytest.raises(ValueError, match="at most 16"):
        figures.trace_plot(many, ["v"])


# -- forest ---------------------------------------------------------------------------------------------


def test_forest_plot_of_parameter_comparison_rows(nuts_two_feature):
    rows = parameter_comparison(nuts_two_feature)
    svg = figures.forest_plot(rows, markers={"map": "MAP", "mle": "MLE"})
    check_svg(svg, "intercept", "weights[mean radius]", "MAP", "89% ETI")
    assert svg == figures.forest_plot(rows, markers={"map": "MAP", "mle": "MLE"})


def _marker_uses(svg: str) -> int:
    return svg.count("<use ")


def test_forest_plot_draws_no_marker_where_an_estimate_is_none():
    rows = [
        {"parameter": f"w[{i}]", "mean": 0.1 * i, "low": -1.0, "high": 1.0, "map": 0.2, "mle": None} for i in range(4)
    ]
    only_map = figures.forest_plot(rows, markers={"map": "MAP"})
    with_absent = figures.forest_plot(rows, markers={"map": "MAP", "mle": "MLE"})
    assert "MLE (absent)" in with_absent
    # the MLE adds its legend marker only: no data marker where every value is None
    assert _marker_uses(with_absent) == _marker_uses(only_map) + 1
    rows[0]["mle"] = 0.5
    assert _marker_uses(figures.forest_plot(rows, markers={"map": "MAP", "mle": "MLE"})) == _marker_uses(only_map) + 2


def test_forest_plot_without_posterior_and_with_many_rows():
    rows = [{"parameter": f"w[{i}]", "mean": None, "low": None, "high": None, "map": float(i)} for i in range(50)]
    svg = figures.forest_plot(rows, markers={"map": "MAP"}, max_rows=10)
    check_svg(svg, "w[9]")
    # what is left out is the caption's to say: no figure text that could collide with the legend
    assert "w[10]" not in svg and "posterior mean" not in svg and "of 50" not in svg


def _panel(title: str, label: str, variable: str, centre: float, n: int, standardised: bool = False):
    from bayesclass.inference.evaluation.report_data import ParameterPanel

    rows = tuple(
        {
            "parameter": f"{variable}[c{i}]",
            "variable": variable,
            "mean": centre * (1 + 0.1 * i),
            "low": centre * (0.9 + 0.1 * i),
            "high": centre * (1.1 + 0.1 * i),
            "map": centre * (1.02 + 0.1 * i),
            "map_low": centre * (0.95 + 0.1 * i),
            "map_high": centre * (1.09 + 0.1 * i),
        }
        for i in range(n)
    )
    return ParameterPanel(title, label, standardised, rows)


#: the defect of issue 29: class probabilities near 0.3 beside a variance of body mass near 2e5 g^2
PENGUIN_PANELS = (
    _panel("class_prior", "value", "class_prior", 0.3, 3),
    _panel("gaussian_mean, input body_mass_g", "value, on the scale of body_mass_g", "gaussian_mean", 4200.0, 3),
    _panel("gaussian_variance", "value, on the scale of body_mass_g", "gaussian_variance", 2.1e5, 20),
)


def _rendered(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def test_forest_panels_each_have_their_own_axis_unit_label_and_cap():
    from bayesclass.reports.figures.estimates import _forest_figure

    fig = _forest_figure(
        PENGUIN_PANELS, markers={"map": "MAP"}, labels=("89% ETI", "89% Wald"), max_rows=16, title="nb on penguins"
    )
    axes = fig.subfigs[0].axes
    assert [ax.get_xlabel() for ax in axes] == [panel.axis_label for panel in PENGUIN_PANELS]
    assert [ax.get_title(loc="left") for ax in axes] == [panel.title for panel in PENGUIN_PANELS]
    assert [len(ax.get_yticks()) for ax in axes] == [3, 3, 16]  # 20 variances: the first 16 drawn
    assert [tick.get_text() for tick in axes[0].get_yticklabels()] == ["c0", "c1", "c2"]  # the title names it
    # each axis spans its own panel's values: the probabilities are not squeezed beside the variances
    for ax, panel in zip(axes, PENGUIN_PANELS, strict=True):
        low, high = ax.get_xlim()
        shown = [v for row in panel.rows[:16] for v in (row["low"], row["high"], row["map_low"], row["map_high"])]
        assert low <= min(shown) and max(shown) <= high
        assert high - low < 3 * (max(shown) - min(shown)), panel.title
    assert fig._suptitle.get_text() == "nb on penguins"


def test_forest_legend_and_title_overlap_no_panel():
    from bayesclass.reports.figures.estimates import _forest_figure

    fig = _forest_figure(
        PENGUIN_PANELS,
        markers={"map": "MAP", "mle": "MLE"},
        labels=("89% ETI", "89% Wald"),
        max_rows=16,
        title="naive_bayes on penguins[bill_length_mm, bill_depth_mm, flipper_length_mm, body_mass_g]: posterior "
        "vs point estimates",
    )
    renderer = _rendered(fig)
    (legend,) = fig.subfigs[0].legends
    boxes = [ax.get_tightbbox(renderer) for ax in fig.subfigs[0].axes]
    title = fig._suptitle.get_window_extent(renderer)
    for box in boxes:
        assert not legend.get_window_extent(renderer).overlaps(box)
        assert not title.overlaps(box)
    assert not title.overlaps(legend.get_window_extent(renderer))
    assert title.width <= fig.bbox.width  # the long title is wrapped, not widening the figure


def test_forest_plot_of_panels_fits_the_page():
    svg = figures.forest_plot(PENGUIN_PANELS, markers={"map": "MAP"}, title="nb on penguins")
    check_svg(svg, "value, on the scale of body_mass_g", "gaussian_variance", "nb on penguins", "MAP 89% Wald")
    width_pt = float(ET.fromstring(svg).get("width").removesuffix("pt"))
    assert width_pt * 96 / 72 <= 1100  # CSS px: no wider than the page


def test_forest_plot_rejects_bad_panels():
    with pytest.raises(ValueError, match="title must be a string"):
        figures.forest_plot(PENGUIN_PANELS, markers={}, title=3)
    with pytest.raises(ValueError, match=r"panels\[0\] must be a ParameterPanel with non-empty rows"):
        figures.forest_plot([object()], markers={})


def test_forest_plot_rejects_bad_rows():
    with pytest.raises(ValueError, match="rows"):
        figures.forest_plot([], markers={})
    with pytest.raises(ValueError, match=r"rows\[0\]"):
        figures.forest_plot([{"parameter": "a"}], markers={})


# -- scores ---------------------------------------------------------------------------------------------

SCORES = {
    "posterior": {"log_loss": (0.25, 0.02), "accuracy": (0.9, 0.01)},
    "MAP": {"log_loss": (0.26, None), "accuracy": (0.89, 0.01)},
    "MLE": {"log_loss": (math.inf, None), "accuracy": (math.nan, None)},
}
METRICS = [("log_loss", "log loss"), ("accuracy", "accuracy")]


def test_score_bars_keep_inf_and_nan():
    svg = figures.score_bars(SCORES, metrics=METRICS)
    root = check_svg(svg, "posterior", "MAP", "MLE", "log loss", "accuracy")
    words = [text.strip() for text in texts(root)]
    assert "inf" in words and "n/a" in words
    assert svg == figures.score_bars(SCORES, metrics=METRICS)


def test_score_bars_missing_metric_is_na_and_bad_pairs_fail():
    svg = figures.score_bars({"kNN": {"accuracy": (0.8, None)}}, metrics=METRICS)
    assert "n/a" in svg
    with pytest.raises(ValueError, match=r"scores\['a'\]\['log_loss'\]"):
        figures.score_bars({"a": {"log_loss": 0.3}}, metrics=METRICS)
    with pytest.raises(ValueError, match="metrics"):
        figures.score_bars(SCORES, metrics=["log_loss"])


# -- Pareto k -------------------------------------------------------------------------------------------


def test_pareto_k_plot_marks_rows_above_the_threshold():
    k = np.linspace(-0.2, 0.6, 100)
    k[[7, 42]] = [0.9, 1.3]
    svg = figures.pareto_k_plot(k)
    check_svg(svg, "k = 0.7", "k &gt; 0.7: 2 rows", ">42<")
    assert svg == figures.pareto_k_plot(k)
    with pytest.raises(ValueError, match="pareto_k"):
        figures.pareto_k_plot(np.zeros((3, 2)))


# -- reliability ----------------------------------------------------------------------------------------


def test_categorical_replicates_are_stratified_and_seeded():
    rng = np.random.default_rng(1)
    proba = rng.dirichlet(np.ones(3), size=40)
    replicates = figures.categorical_replicates(proba, 100, random_seed=3)
    assert replicates.shape == (100, 40) and replicates.min() >= 0 and replicates.max() <= 2
    shares = np.stack([(replicates == k).mean(axis=0) for k in range(3)], axis=-1)
    assert np.abs(shares - proba).max() <= 2 / 100 + 1e-12  # a middle class: two partial strata
    assert np.abs(shares[:, [0, 2]] - proba[:, [0, 2]]).max() <= 1 / 100 + 1e-12
    assert np.array_equal(replicates, figures.categorical_replicates(proba, 100, random_seed=3))
    assert not np.array_equal(replicates, figures.categorical_replicates(proba, 100, random_seed=4))
    # per-draw probabilities: replicate r uses draw picks[r]; a certain outcome is always drawn
    draws = np.zeros((5, 2, 2))
    draws[..., 0, 1] = 1.0
    draws[..., 1, 0] = 1.0
    assert (figures.categorical_replicates(draws, 7) == [1, 0]).all()


def test_reliability_plot_binary_from_a_fit(nuts_two_feature, two_feature):
    prediction = inference.predict(nuts_two_feature, two_feature.X, return_draws=True)
    draws = np.asarray(prediction["class_proba_draws"]).reshape(-1, two_feature.n_obs, 2)
    proba = {"posterior": draws, "MAP": np.asarray(prediction["class_proba_map"])}
    svg = figures.reliability_plot(proba, two_feature.y, class_names=two_feature.class_names)
    check_svg(svg, "posterior: P(benign)", "MAP: P(benign)", "CEP")
    assert svg == figures.reliability_plot(proba, two_feature.y, class_names=two_feature.class_names)
    assert svg != figures.reliability_plot(proba, two_feature.y, class_names=two_feature.class_names, random_seed=1)


def test_reliability_plot_multiclass_one_vs_others():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), size=120)
    y = np.array([rng.choice(3, p=p) for p in proba])
    svg = figures.reliability_plot({"MLE": proba}, y, class_names=["a", "b", "c"], n_replicates=50)
    check_svg(svg, "MLE: a vs others", "MLE: c vs others")


def test_reliability_plot_draws_the_classes_it_is_given_and_refuses_other_codes():
    """A 10-class fit's figure would ask arviz_plots for 50 panels (it allows 40): the record picks the classes
    (:func:`calibration_classes`) and the figure draws those only, one-vs-others, in the categorical fit's terms."""
    from bayesclass.inference.evaluation.report_data import MAX_CALIBRATION_PANELS, calibration_classes

    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(10), size=200)
    y = np.array([rng.choice(10, p=p) for p in proba])
    names = [f"digit{k}" for k in range(10)]
    estimates = {label: proba for label in ("posterior", "MLE", "MAP", "posterior mean", "unbiased")}
    classes = calibration_classes(y, 10, len(estimates))
    counts = np.bincount(y, minlength=10)
    assert len(classes) * len(estimates) <= MAX_CALIBRATION_PANELS and len(classes) == 6
    assert min(counts[list(classes)]) >= max(np.delete(counts, classes))  # the most frequent classes
    assert calibration_classes(y, 10, 1) == tuple(range(10)) and calibration_classes(y[:5] % 2, 2, 5) == (1,)
    svg = figures.reliability_plot(estimates, y, class_names=names, n_replicates=20, classes=classes)
    shown = [k for k in range(10) if f"MAP: digit{k} vs others" in svg]
    assert shown == list(classes)
    with pytest.raises(ValueError, match=r"classes must be class codes in 0\.\.9; got \(3, 10\)"):
        figures.reliability_plot(estimates, y, class_names=names, classes=(3, 10))


def test_reliability_plot_rejects_bad_shapes():
    proba = np.full((10, 2), 0.5)
    with pytest.raises(ValueError, match=r"proba\['MAP'\]"):
        figures.reliability_plot({"MAP": proba[:, :1]}, np.zeros(10, int), class_names=["a", "b"])
    with pytest.raises(ValueError, match=r"proba\['MAP'\]"):
        figures.reliability_plot({"MAP": np.full((10, 2), np.nan)}, np.zeros(10, int), class_names=["a", "b"])
    with pytest.raises(ValueError, match=r"len\(y\) = 9"):
        figures.reliability_plot({"MAP": proba}, np.zeros(9, int), class_names=["a", "b"])
    with pytest.raises(ValueError, match="y must hold integer class codes"):
        figures.reliability_plot({"MAP": proba}, np.full(10, 2), class_names=["a", "b"])


# -- decision boundary ----------------------------------------------------------------------------------


def _grid_proba(weights: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Softmax of linear scores on the grid: weights (S, K, 3) -> (S, ny, nx, K)."""
    xx, yy = np.meshgrid(gx, gy)
    features = np.stack([np.ones_like(xx), xx, yy], axis=-1)
    scores = np.einsum("ijf,skf->sijk", features, weights)
    scores -= scores.max(axis=-1, keepdims=True)
    return np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)


def test_boundary_band_is_empty_when_all_draws_agree():
    gx, gy = np.linspace(-2, 2, 21), np.linspace(-2, 2, 17)
    for n_classes in (2, 3):
        weights = np.random.default_rng(0).normal(size=(1, n_classes, 3)) + 0.01  # off the 0.5 grid points
        identical = np.repeat(_grid_proba(weights, gx, gy), 30, axis=0)
        band = figures.boundary_band(identical)
        assert band.shape == (17, 21) and not band.any()


def test_boundary_band_binary_is_where_the_interval_contains_one_half():
    gx, gy = np.linspace(-2, 2, 41), np.linspace(-1, 1, 5)
    weights = np.zeros((400, 2, 3))
    weights[:, 1, 1] = 3.0
    weights[:, 1, 0] = np.random.default_rng(1).normal(0, 1.0, 400)  # boundary x = -intercept / 3 varies
    band = figures.boundary_band(_grid_proba(weights, gx, gy), interval_prob=0.89)
    low, high = np.quantile(-weights[:, 1, 0] / 3.0, [0.055, 0.945])
    inside = (gx >= low) & (gx <= high)
    assert (band == inside[np.newaxis, :]).all()


def test_boundary_plot_binary_and_multiclass(nuts_two_feature, two_feature):
    X = two_feature.X
    gx = np.linspace(X[:, 0].min(), X[:, 0].max(), 40)
    gy = np.linspace(X[:, 1].min(), X[:, 1].max(), 30)
    points = np.stack(np.meshgrid(gx, gy), axis=-1).reshape(-1, 2)
    prediction = inference.predict(nuts_two_feature, points, return_draws=True)
    draws = np.asarray(prediction["class_proba_draws"]).reshape(-1, 30, 40, 2)
    point = {"MAP": np.asarray(prediction["class_proba_map"]).reshape(30, 40, 2)}
    kwargs = dict(point_proba=point, X=X, y=two_feature.y, class_names=two_feature.class_names)
    svg = figures.boundary_plot((gx, gy), draws, feature_names=("mean radius", "mean texture"), **kwargs)
    check_svg(svg, "mean radius", "mean texture", "MAP boundary", "malignant", "benign", "89% band")
    assert svg == figures.boundary_plot((gx, gy), draws, feature_names=("mean radius", "mean texture"), **kwargs)
    assert len(svg) < 300_000
    with pytest.raises(ValueError, match="proba_draws"):
        figures.boundary_plot((gx, gy), draws[:, :, :-1], feature_names=("a", "b"), **kwargs)
    with pytest.raises(ValueError, match=r"point_proba\['MAP'\]"):
        figures.boundary_plot(
            (gx, gy), draws, feature_names=("a", "b"), **{**kwargs, "point_proba": {"MAP": point["MAP"][0]}}
        )
    with pytest.raises(ValueError, match="X"):
        figures.boundary_plot((gx, gy), draws, feature_names=("a", "b"), **{**kwargs, "X": X[:, :1]})
    gx3, gy3 = np.linspace(-2, 2, 30), np.linspace(-2, 2, 25)
    weights = np.random.default_rng(2).normal(size=(1, 3, 3)) + np.random.default_rng(3).normal(0, 0.3, (50, 3, 3))
    rng = np.random.default_rng(4)
    svg3 = figures.boundary_plot(
        (gx3, gy3),
        _grid_proba(weights, gx3, gy3),
        point_proba={"MLE": _grid_proba(weights[:1], gx3, gy3)[0]},
        X=rng.normal(size=(3000, 2)),  # subsampled to 2,000 points
        y=rng.integers(0, 3, 3000),
        class_names=["setosa", "versicolor", "virginica"],
        feature_names=("petal length (cm)", "petal width (cm)"),
    )
    check_svg(svg3, "setosa", "virginica", "MLE boundary", "petal width (cm)")


# -- latent curve ---------------------------------------------------------------------------------------


def test_latent_curve_plot():
    truth = data.seed004_gp_truth(60, random_seed=1)
    order = np.argsort(truth["x"])
    x, latent = truth["x"][order], truth["latent"][order]
    draws = latent + np.random.default_rng(0).normal(0, 0.4, (100, x.size))
    proba = 1 / (1 + np.exp(-draws))
    kwargs = dict(
        X=truth["x"],
        y=truth["y"],
        true_latent=latent,
        point_latent={"MAP": 0.8 * latent},
        point_proba={"MAP": 1 / (1 + np.exp(-0.8 * latent))},
        feature_name="x",
        class_names=["0", "1"],
    )
    svg = figures.latent_curve_plot(x, draws, proba, **kwargs)
    check_svg(svg, "latent f", "true latent", "MAP", "P(1 | x)", "posterior mean")
    assert svg == figures.latent_curve_plot(x, draws, np.stack([1 - proba, proba], axis=-1), **kwargs)
    with pytest.raises(ValueError, match="latent_draws"):
        figures.latent_curve_plot(x, draws[:, 1:], proba, **kwargs)
    with pytest.raises(ValueError, match=r"point_proba\['MAP'\]"):
        figures.latent_curve_plot(x, draws, proba, **{**kwargs, "point_proba": {"MAP": proba}})


# -- generative checks ----------------------------------------------------------------------------------


def test_check_panels_order_by_extremeness():
    p_value = np.array([[0.5, 0.01, np.nan], [0.97, 0.2, 0.6]])
    rng = np.random.default_rng(0)
    check = xr.Dataset(
        {
            "observed_mean": (("class", "feature"), np.zeros((2, 3))),
            "replicated_mean": (("replicate", "class", "feature"), rng.normal(size=(30, 2, 3))),
            "p_value_mean": (("class", "feature"), p_value),
        },
        coords={"class": ["c0", "c1"], "feature": ["f0", "f1", "f2"]},
    )
    panels = figures.check_panels(check, max_panels=3)
    assert [(panel["class"], panel["element"]) for panel in panels] == [("c0", "f1"), ("c1", "f0"), ("c1", "f1")]
    assert panels[0]["total"] == 5 and panels[0]["replicated"].shape == (30,)
    svg = figures.generative_check_plot(check, max_panels=3)
    check_svg(svg, "f1:", "mean | c0", "3 of 5 statistics shown")
    with pytest.raises(ValueError, match="check"):
        figures.generative_check_plot(check.drop_vars("p_value_mean"))


def test_generative_check_plot_of_naive_bayes(nb_transport):
    check = posterior_predictive_check(nb_transport, n_replicates=100)
    svg = figures.generative_check_plot(check, max_panels=6)
    check_svg(svg, "Distance", "p = ")
    assert svg == figures.generative_check_plot(check, max_panels=6)


@pytest.mark.slow
def test_generative_check_plot_of_per_class_gaussian_nuts():
    from bayesclass.models import get_model

    wine = data.load("wine")
    result = inference.fit(
        get_model("gcc", covariance="per-class"), wine, method="nuts", sampler=SAMPLER, standardize=True, random_seed=0
    )
    svg = figures.generative_check_plot(posterior_predictive_check(result))
    check_svg(svg, "skewness", "12 of ")
    assert len(svg) < 300_000


def test_latent_curve_draws_true_points_and_checks_their_lengths():
    x = np.linspace(0, 1, 20)
    draws = np.tile(np.sin(x), (5, 1))
    proba = 1 / (1 + np.exp(-draws))
    inputs, labels = np.array([0.1, 0.5, 0.9]), np.array([0, 1, 1])
    common = dict(X=inputs, y=labels, feature_name="x", class_names=("0", "1"))
    svg = figures.latent_curve_plot(x, draws, proba, true_points=(inputs, np.array([0.2, 0.4, 0.8])), **common)
    assert "true latent (training inputs)" in svg
    with pytest.raises(ValueError, match="true_points"):
        figures.latent_curve_plot(x, draws, proba, true_points=(inputs, np.array([0.2, 0.4])), **common)


def test_learning_curves_mark_infinite_means_and_keep_colours():
    x = np.array([10.0, 20.0, 50.0])
    panels = {
        "log loss": {
            "posterior": (x, np.array([0.6, 0.5, 0.4]), np.array([0.5, 0.4, 0.35]), np.array([0.7, 0.6, 0.45])),
            "MLE plug-in": (x, np.array([np.inf, 0.7, 0.45]), np.full(3, np.nan), np.full(3, np.nan)),
        },
        "difference": {"posterior - MLE plug-in": (x, np.array([-np.inf, -0.2, -0.05]), x * 0, x * 0)},
    }
    svg = figures.learning_curve_plot(panels, colors={"posterior": "#123456"})
    ET.fromstring(svg)
    assert ">inf<" in svg and ">-inf<" in svg  # both infinities labelled, not dropped
    assert "#123456" in svg  # the given colour
    assert svg == figures.learning_curve_plot(panels, colors={"posterior": "#123456"})
    with pytest.raises(ValueError, match="1-d of one length"):
        figures.learning_curve_plot({"p": {"a": (x, x[:2], x, x)}})


def test_user_text_with_dollar_signs_is_text_not_math():
    rows = [{"parameter": r"price $\frac$ usd", "mean": 0.1, "low": -0.2, "high": 0.4, "map": 0.05}]
    svg = figures.forest_plot(rows, markers={"map": "MAP"})
    assert "price $" in svg and "usd" in svg
