"""No overlapping text in the report's figures (issue 29, item 6), and every figure titled with model and data.

:func:`bayesclass.reports.figures.overlaps.text_overlaps` finds legends and texts that cover each other in a laid-out
matplotlib figure; first on hand-built figures (it must find a planted overlap and pass a clean figure), then on
every figure the run report of each family renders (collected by ``inspect_figures`` before ``to_svg``).
"""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from bayesclass import data, inference, report
from bayesclass.inference import SamplerSettings
from bayesclass.inference.result import result_info
from bayesclass.models import LatentGaussianProcess
from bayesclass.reports.figures import inspect_figures
from bayesclass.reports.figures.overlaps import Overlap, text_overlaps

SAMPLER = SamplerSettings(draws=100, tune=150, chains=2, progressbar=False)


def _two_panels(layout=None) -> tuple[Figure, object, object]:
    fig = Figure(figsize=(6, 3), layout=layout)
    left, right = fig.subplots(1, 2)
    left.plot([0, 1], [0, 1], label="posterior mean of a long parameter name")
    left.plot([0, 1], [1, 0], label="MAP estimate of the same parameter")
    right.plot([0, 1], [10, 2000])
    right.set_ylabel("value")
    return fig, left, right


def test_a_legend_over_another_axes_tick_labels_is_found():
    fig, left, _ = _two_panels()
    left.legend(loc="center left", bbox_to_anchor=(0.9, 0.5))  # out of its axes, over the right one's y labels
    found = text_overlaps(fig)
    assert found and all(isinstance(overlap, Overlap) for overlap in found)
    pairs = [(overlap.first, overlap.second) for overlap in found]
    assert ("legend of axes 0", "data area of axes 1") in pairs
    assert any(first == "legend of axes 0" and second.startswith("y tick label") for first, second in pairs), pairs
    assert "legend of axes 0 overlaps" in str(found[0])


def test_a_clean_figure_has_no_overlaps():
    fig, left, right = _two_panels(layout="constrained")
    left.legend(loc="upper left", frameon=False)
    left.set_title("left panel")
    right.set_title("right panel")
    fig.suptitle("logistic on penguins — check")
    assert text_overlaps(fig) == []


def test_a_legend_above_its_axes_over_a_note_in_the_title_row_is_found():
    """The pattern reported on the forest plot: legend above the axes, "first 40 of 45 parameters" at the right."""
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.add_subplot()
    for label in ("posterior 89% ETI", "posterior mean", "MAP", "MLE"):
        ax.plot([0, 1], [0, 1], label=label)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=4, frameon=False)
    ax.set_title("first 40 of 45 parameters", loc="right", fontsize=8)
    found = [(overlap.first, overlap.second) for overlap in text_overlaps(fig)]
    assert ("legend of axes 0", "right title 'first 40 of 45 parameters' of axes 0") in found


def test_titles_of_neighbouring_panels_that_run_into_each_other_are_found():
    fig = Figure(figsize=(3, 2))
    left, right = fig.subplots(1, 2)
    left.set_title("island=Torgersen: level_frequency | Gentoo")
    right.set_title("island=Dream: level_frequency | Chinstrap")
    found = [(overlap.first, overlap.second) for overlap in text_overlaps(fig)]
    assert any(first.startswith("title 'island=Torgersen") and "axes 1" in second for first, second in found), found


def test_text_overlaps_rejects_bad_input():
    with pytest.raises(ValueError, match="fig must be a matplotlib.figure.Figure"):
        text_overlaps("figure.png")
    with pytest.raises(ValueError, match="tolerance"):
        text_overlaps(Figure(), tolerance=-1)


# -- every figure of each family's report ------------------------------------------------------------------------


def _fit(family: str):
    if family == "gp":
        dataset = data.seed004_gp(40, random_seed=2)
        return inference.fit(LatentGaussianProcess(), dataset, method="nuts", sampler=SAMPLER, random_seed=4), None
    if family == "logistic":
        dataset = data.load("breast_cancer")  # 30 features: the report the trace complaint came from
        method = "nuts"
    elif family == "naive_bayes":
        dataset = data.load("penguins", missing="drop")  # binary, categorical and continuous features
        method = "exact"
    else:
        numeric = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
        dataset = data.load("penguins", missing="drop").select_features(numeric)
        method = "nuts"
    train, validation, _ = data.train_validation_test_split(dataset, random_seed=0)
    return inference.fit(family, train, method=method, sampler=SAMPLER, standardize=True, random_seed=0), validation


@pytest.fixture(scope="module", params=["logistic", "naive_bayes", "gcc", "gp"])
def rendered(request):
    """The family, its data's name and ``(title, overlaps)`` of every figure its report rendered."""
    result, validation = _fit(request.param)
    figures: list[tuple[str, list[Overlap]]] = []

    def collect(fig) -> None:
        title = " ".join(fig.get_suptitle().split("\n"))  # the title, wrapped to the width, and any note
        figures.append((title, text_overlaps(fig)))

    with inspect_figures(collect):
        page = report(result, validation) if validation is not None else report(result)
    assert page.count("<img ") == len(figures)  # every figure on the page went through to_svg
    return request.param, result_info(result).data.name, figures


def test_no_figure_of_a_report_has_overlapping_text(rendered):
    family, _, figures = rendered
    assert len(figures) >= 4, family  # rank, trace, forest, calibration at least
    problems = {title: [str(o) for o in overlaps] for title, overlaps in figures}
    assert not any(problems.values()), {title: found for title, found in problems.items() if found}


def test_every_figure_of_a_report_is_titled_with_model_and_data(rendered):
    family, data_name, figures = rendered
    for title, _ in figures:
        assert title.startswith(f"{family} on {data_name} — "), title
    assert any(title.endswith("rank plots") for title, _ in figures)
    assert any(title.endswith("traces") for title, _ in figures)
