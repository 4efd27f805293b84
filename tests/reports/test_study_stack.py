"""A study that stacks families: every cell records the stack, each member's posterior and the weights; the stack's
held-out log loss is that of the weighted mixture of the members' posterior means, recomputed here from fits made
independently of the runner; the summary picks the best single family per size; the page draws the stack's curve.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
import bayesclass.study as bs
from bayesclass.inference.engines.sampling import SamplerSettings
from bayesclass.inference.evaluation.heldout import result_codes
from bayesclass.inference.studies.runner import cell_data
from bayesclass.inference.studies.stack_summary import stack_summary, stack_weight_summary
from bayesclass.reports.study_report import stack_conclusion

#: two families (naive Bayes by exact draws, logistic by Laplace draws: no compilation) on generated Gaussians,
#: where their LOO stacking weights are strictly between 0 and 1 in some cells
STACK_STUDY = """
name = "tiny stack"
seed = 0
training_sizes = [20, 60]
repeats = 2
metrics = ["log_loss", "accuracy"]

[sampler]
draws = 200
chains = 2

[[models]]
family = "naive_bayes"
method = "exact"

[[models]]
family = "logistic"
method = "laplace"

[[models]]
family = "stack"
members = ["logistic", "naive_bayes"]

[[datasets]]
name = "seed001_gaussians"
generator = { n = 300, random_seed = 1 }
models = ["stack"]
"""
STACK = "stack (stacking)"
MEMBERS = {"logistic": "member: logistic", "naive_bayes": "member: naive_bayes"}


@pytest.fixture(scope="module")
def stacked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stack")
    (folder / "spec.toml").write_text(STACK_STUDY, encoding="utf-8")
    spec = bs.read_spec(folder / "spec.toml")
    started = time.perf_counter()
    table = bs.run(spec, folder / "out", serial=True, progress=False)
    return folder, spec, table, time.perf_counter() - started


def test_every_cell_records_the_stack_its_members_and_their_weights(stacked):
    _, spec, table, seconds = stacked
    assert seconds < 45, seconds
    assert (table["status"] == "ok").all(), table["error"].dropna().unique()
    assert table["key"].nunique() == 4 and set(table["model"]) == {"stack"} and set(table["method"]) == {"stacking"}
    for _, cell in table.groupby("key"):
        scored = cell[cell["metric"] == "log_loss"].set_index("estimate")
        assert set(scored.index) == {STACK, *MEMBERS.values()}
        assert scored.loc[STACK, "kind"] == "stack" and set(scored.loc[list(MEMBERS.values()), "kind"]) == {"member"}
        weights = cell[cell["metric"] == "stack_weight"].set_index("estimate")["value"]
        assert set(weights.index) == set(MEMBERS.values())
        assert ((weights >= 0) & (weights <= 1)).all() and weights.sum() == pytest.approx(1.0, abs=1e-9)
    interior = table[(table["metric"] == "stack_weight") & table["value"].between(0.05, 0.95)]
    assert not interior.empty  # some cell mixes both families: the mixture check below is not trivial


def test_the_stacks_log_loss_is_the_weighted_mixture_of_the_members_posterior_means(stacked):
    """The members refitted here from the cell's rows and settings (bc.fit, not the runner), their posterior
    means mixed with the recorded weights: the recorded log losses of the members and of the stack."""
    _, spec, table, _ = stacked
    for cell in bs.cells(spec):
        rows = table[table["key"] == cell.key()]
        recorded = rows[rows["metric"] == "log_loss"].set_index("estimate")["value"]
        weights = rows[rows["metric"] == "stack_weight"].set_index("estimate")["value"]
        train, test = cell_data(cell)
        mixture, losses = 0.0, {}
        for member in cell.model.members:
            result = bc.fit(
                member.family,
                train,
                method=member.method,
                sampler=SamplerSettings(draws=200, chains=2, progressbar=False),
                standardize=True,
                random_seed=cell.fit_seed(),
            )
            proba = bc.predict(result, test)["class_proba"].values
            y, _ = result_codes(result, test)
            losses[member.label] = -np.mean(np.log(proba[np.arange(y.size), y]))
            assert losses[member.label] == pytest.approx(recorded[MEMBERS[member.label]], rel=1e-9)
            mixture = mixture + weights[MEMBERS[member.label]] * proba
        stack_loss = -np.mean(np.log(mixture[np.arange(y.size), y]))
        assert recorded[STACK] == pytest.approx(stack_loss, rel=1e-9)
        # the log loss is convex: a mixture never scores worse than its worst member
        assert stack_loss <= max(losses.values()) + 1e-12


def test_the_summary_compares_the_stack_with_the_best_family_at_each_size(stacked):
    _, _, table, _ = stacked
    summary = stack_summary(table)
    assert list(summary["size"]) == [20, 60] and (summary["cells"] == 2).all()
    scored = table[table["metric"] == "log_loss"]
    for row in summary.itertuples():
        at = scored[scored["size"] == row.size]
        means = at[at["kind"] == "member"].groupby("estimate")["value"].mean()
        assert row.best_member == means.idxmin() and row.best_member_mean == pytest.approx(means.min())
        stack = at[at["estimate"] == STACK].set_index("key")["value"]
        best = at[at["estimate"] == row.best_member].set_index("key")["value"]
        assert row.difference_mean == pytest.approx((stack - best).mean())
        assert row.stack_better == int(((stack - best) < -1e-9).sum())
    weights = stack_weight_summary(table)
    assert set(weights["estimate"]) == set(MEMBERS.values())
    assert weights.groupby("size")["mean"].sum().to_numpy() == pytest.approx([1.0, 1.0])
    (paragraph,) = stack_conclusion(summary)
    assert "at n = 20 the best was" in paragraph and "at n = 60" in paragraph


def test_the_page_draws_the_stack_beside_its_members(stacked, monkeypatch):
    """The learning curves of the stack's figure have a line for the stack and one per member, per size."""
    from bayesclass.reports import figures

    folder, _, table, _ = stacked
    drawn = []
    original = figures.learning_curve_plot

    def spy(panels, **options):
        drawn.append(panels)
        return original(panels, **options)

    monkeypatch.setattr(figures, "learning_curve_plot", spy)
    page = bs.report(folder / "out")
    lines = drawn[0]["held-out log loss"]  # the first figure: the learning curves of the stack model
    assert set(lines) == {STACK, *MEMBERS.values()}
    sizes, mean, low, high = lines[STACK]
    assert list(sizes) == [20, 60] and np.all(low <= mean) and np.all(mean <= high)
    stack_rows = table[(table["estimate"] == STACK) & (table["metric"] == "log_loss")]
    assert mean == pytest.approx(stack_rows.groupby("size")["value"].mean().to_numpy())
    section = page[page.index('id="stack"') :]
    assert "Stack vs the best single family" in section and "the best was member: " in section
    assert "weight in the stack" in section


def test_a_member_that_cannot_take_the_data_is_recorded_and_the_study_goes_on(tmp_path):
    """gcc models continuous features only: on penguins (island, sex) its cells fail, naming it; the other cells run."""
    text = STACK_STUDY.replace('members = ["logistic", "naive_bayes"]', 'members = ["naive_bayes", "gcc"]')
    text = text.replace('name = "seed001_gaussians"\ngenerator = { n = 300, random_seed = 1 }',
                        'name = "penguins"\nmissing = "drop"')  # fmt: skip
    text = text.replace("training_sizes = [20, 60]", "training_sizes = [30]").replace("repeats = 2", "repeats = 1")
    (tmp_path / "spec.toml").write_text(text, encoding="utf-8")
    table = bs.run(bs.read_spec(tmp_path / "spec.toml"), tmp_path / "out", serial=True, progress=False)
    (error,) = table["error"].dropna().unique()
    assert "stack member 'gcc' (gcc, nuts) could not be fitted on 30 training rows" in error
    assert "continuous features" in error
    assert "failed" in bs.report(tmp_path / "out")


def test_a_cell_that_failed_the_convergence_verdict_is_left_out_of_the_stack_comparison(stacked):
    _, _, table, _ = stacked
    first = table.loc[table["size"] == 20, "key"].iloc[0]
    failed = table.assign(converged=table["key"].eq(first).map({True: False, False: None}))
    summary = stack_summary(failed)
    assert list(summary["cells"]) == [1, 2]
    assert summary.equals(stack_summary(table[table["key"] != first]))


@pytest.mark.slow
def test_the_stack_example_spec_runs_a_small_grid_with_its_default_samplers(tmp_path):
    """The example's members with their samplers and settings (NUTS for logistic and gcc), one size and repeat per
    data set: its cells pass the convergence verdict (else they would be left out of the stack's comparison)."""
    text = bs.STACK_EXAMPLE_SPEC.replace("training_sizes = [10, 20, 50, 150]", "training_sizes = [30]")
    text = text.replace("repeats = 3", "repeats = 1")
    (tmp_path / "stack.toml").write_text(text, encoding="utf-8")
    table = bs.run(bs.read_spec(tmp_path / "stack.toml"), tmp_path / "out", serial=True, progress=False)
    assert (table["status"] == "ok").all(), table["error"].dropna().unique()
    assert table["converged"].eq(True).all(), table[["dataset", "max_r_hat", "min_ess_bulk", "divergences"]]
    summary = stack_summary(table)
    assert set(summary["dataset"]) == {"seed001_gaussians", "penguins"}
    assert set(summary["best_member"]) <= {"member: logistic", "member: naive_bayes", "member: gcc"}
    assert "Stack vs the best single family" in bs.report(tmp_path / "out")


def test_the_example_specs_are_valid(tmp_path):
    for name, text in bs.EXAMPLES.items():
        path = bs.write_example(tmp_path / f"{name}.toml", example=name)
        assert path.read_text(encoding="utf-8") == text
        assert len(bs.cells(bs.read_spec(path))) > 0
    stack = bs.read_spec(tmp_path / "stack.toml").models[-1]
    assert [member.label for member in stack.members] == ["logistic", "naive_bayes", "gcc"]
    assert [member.method for member in stack.members] == ["nuts", "exact", "nuts"]
    assert Path(tmp_path / "plugin.toml").read_text() == bs.EXAMPLE_SPEC
