"""NUTS backends (inference.sampling): blackjax on JAX agrees with nutpie, the compile cache is keyed by structure
and shape, runs are reproducible, the family's default is recorded, and the command line starts without PyMC."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import arviz_stats as azs
import numpy as np
import pytest

from bayesclass import data
from bayesclass._cache import cache_directory
from bayesclass.inference import SamplerSettings, fit
from bayesclass.inference.engines.nuts import nuts_backend
from bayesclass.models import REGISTRY, GaussianClassConditional, LogisticRegression, NaiveBayes, get_model

SAMPLER = {"draws": 1000, "tune": 500, "chains": 2, "progressbar": False}
#: the families blackjax samples, on small data: (model, data)
CASES = {
    "logistic": (LogisticRegression(), lambda: data.seed001_gaussians(200, random_seed=1)),
    "naive_bayes": (NaiveBayes(), lambda: data.seed001_gaussians(200, random_seed=2)),
    "gcc shared": (GaussianClassConditional(covariance="shared"), lambda: data.seed001_gaussians(200, random_seed=3)),
    "gcc per-class": (
        GaussianClassConditional(covariance="per-class"),
        lambda: data.seed001_gaussians(200, random_seed=4),
    ),
}


@pytest.fixture(  # gcc per-class is slow: gcc (shared) and the other families keep the check in the default run
    scope="module",
    params=[pytest.param(name, marks=[pytest.mark.slow] if name == "gcc per-class" else []) for name in CASES],
)
def both_backends(request):
    model, make = CASES[request.param]
    dataset = make()
    runs = {
        backend: fit(model, dataset, sampler=SamplerSettings(backend=backend, **SAMPLER), random_seed=seed)
        for backend, seed in (("blackjax", 11), ("nutpie", 12))
    }
    return request.param, runs


def test_blackjax_and_nutpie_sample_the_same_posterior(both_backends):
    """Every element's posterior mean agrees within 4 combined Monte-Carlo standard errors, with the same
    variables, dims and coordinates."""
    case, runs = both_backends
    ours, reference = (runs[name]["posterior"].to_dataset() for name in ("blackjax", "nutpie"))
    assert set(ours.data_vars) == set(reference.data_vars)
    mcse_ours, mcse_reference = azs.mcse(ours, method="mean"), azs.mcse(reference, method="mean")
    for name in ours.data_vars:
        assert ours[name].dims == reference[name].dims, name
        for dim in ours[name].dims[2:]:
            np.testing.assert_array_equal(ours[dim].values, reference[dim].values)
        difference = np.abs(ours[name].mean(("chain", "draw")) - reference[name].mean(("chain", "draw")))
        bound = 4 * np.sqrt(mcse_ours[name] ** 2 + mcse_reference[name] ** 2)
        constant = (bound == 0) & (difference < 1e-12)  # e.g. a covariance's mirrored zero-width element
        assert (constant | (difference <= bound)).all(), (case, name, float((difference / bound).max()))


def test_each_run_records_its_backend_and_the_sample_stats_arviz_reads(both_backends):
    _, runs = both_backends
    for backend, result in runs.items():
        assert result.attrs["sampler_backend"] == backend
        assert json.loads(result.attrs["sampler_settings"])["backend"] == backend
        stats = result["sample_stats"]
        assert stats["diverging"].dtype == bool and stats["diverging"].shape == (2, 1000)
    stats = runs["blackjax"]["sample_stats"]
    assert stats.attrs["inference_library"] == "blackjax"
    assert {"energy", "acceptance_rate", "n_steps", "tree_depth", "reached_max_treedepth", "lp", "step_size"} <= set(
        stats.data_vars
    )
    assert (stats["n_steps"] >= 1).all() and (stats["step_size"] > 0).all()
    assert ((stats["acceptance_rate"] >= 0) & (stats["acceptance_rate"] <= 1 + 1e-12)).all()  # a mean of min(1, .)
    assert (2 ** stats["tree_depth"] - 1 >= stats["n_steps"]).all()  # a depth-j tree has at most 2^j - 1 steps


def test_the_default_backend_is_the_familys_and_a_named_one_is_never_switched():
    assert {name: nuts_backend(family(), SamplerSettings()) for name, family in REGISTRY.items()} == {
        "logistic": "blackjax",
        "naive_bayes": "blackjax",
        "gcc": "blackjax",
        "gp": "nutpie",
    }
    assert nuts_backend(get_model("gp"), SamplerSettings(backend="pymc")) == "pymc"
    with pytest.raises(ValueError, match=r"backend='blackjax' cannot sample the 'gp' model; choose one of 'nutpie'"):
        fit("gp", data.seed004_gp(n=30), sampler=SamplerSettings(backend="blackjax"), random_seed=0)


def test_repeated_fits_pick_each_familys_refit_backend_and_never_switch_a_named_one():
    from bayesclass.inference.engines.nuts import repeated_fits

    for name, family in REGISTRY.items():
        model = family()
        refits = model.repeated_fits_backend()
        assert refits is None or refits[0] in model.nuts_backends, name  # one the family can run
        with repeated_fits():
            chosen = nuts_backend(model, SamplerSettings())
            assert nuts_backend(model, SamplerSettings(backend="pymc")) == "pymc"
        assert chosen == (refits[0] if refits else model.nuts_backends[0]), name
        assert nuts_backend(model, SamplerSettings()) == model.nuts_backends[0], name  # the context is left
        assert nuts_backend(model, SamplerSettings(), fits=math.inf) == chosen
        if refits is not None:  # too few fits to pay for the refit backend's compile
            few = max(2, refits[1]) - 1
            assert nuts_backend(model, SamplerSettings(), fits=few) == model.nuts_backends[0], name


def test_a_study_pins_only_the_cells_whose_backend_compiles_per_shape(tmp_path):
    import bayesclass.study as bs
    from bayesclass.inference.engines.sampling import SHAPE_SPECIALISED_BACKENDS
    from bayesclass.inference.studies.runner import _compiles_per_shape

    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(
        'name = "pins"\nseed = 0\ntraining_sizes = [20]\nrepeats = 1\n'
        '[[models]]\nfamily = "logistic"\nmethod = "nuts"\n'
        '[[models]]\nfamily = "naive_bayes"\nmethod = "exact"\n'
        '[[datasets]]\nname = "seed001_gaussians"\ngenerator = { n = 100, random_seed = 1 }\n'
    )
    cells = {cell.model.family: cell for cell in bs.cells(bs.read_spec(spec_path))}
    logistic = REGISTRY["logistic"]()
    for fits in (1, math.inf):
        backend = nuts_backend(logistic, SamplerSettings(), fits=fits)
        assert _compiles_per_shape(cells["logistic"], fits) is (backend in SHAPE_SPECIALISED_BACKENDS)
        assert _compiles_per_shape(cells["naive_bayes"], fits) is False  # exact draws compile nothing


def test_same_seed_same_draws_and_stats_on_blackjax():
    dataset = data.seed001_gaussians(100, random_seed=5)
    settings = SamplerSettings(backend="blackjax", draws=150, tune=200, chains=2, progressbar=False)
    first, again, other = (fit(LogisticRegression(), dataset, sampler=settings, random_seed=seed) for seed in (3, 3, 4))
    for group in ("posterior", "sample_stats"):
        for name, value in first[group].to_dataset().data_vars.items():
            np.testing.assert_array_equal(value.values, again[group][name].values)
    assert not np.allclose(first["posterior"]["weights"].values, other["posterior"]["weights"].values)
    assert first["posterior"].sizes["draw"] == 150  # segments of 100 draws, the last one trimmed


def test_the_compile_cache_is_keyed_by_structure_and_shape():
    settings = SamplerSettings(backend="blackjax", draws=100, tune=150, chains=2, progressbar=False)

    def hit(model, dataset) -> int:
        return int(fit(model, dataset, sampler=settings, random_seed=0).attrs["compile_cache_hit"])

    first = data.seed001_gaussians(120, random_seed=6)
    hit(LogisticRegression(), first)
    assert hit(LogisticRegression(), data.seed001_gaussians(120, random_seed=7)) == 1  # new data, same shapes
    assert hit(LogisticRegression(prior={"weight_sigma": 2.0}), first) == 0  # another prior is another graph
    assert hit(LogisticRegression(), data.seed001_gaussians(90, random_seed=7)) == 0  # rows are a shape in JAX
    assert hit(LogisticRegression(), data.seed001_gaussians(90, random_seed=8)) == 1
    # generative families see sufficient statistics: any number of rows reuses the compiled model
    hit(NaiveBayes(), first)
    assert hit(NaiveBayes(), data.seed001_gaussians(300, random_seed=9)) == 1


def test_the_persistent_cache_lives_where_the_environment_says(monkeypatch, tmp_path):
    monkeypatch.setenv("BAYESCLASS_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_directory() == tmp_path / "mine"
    monkeypatch.delenv("BAYESCLASS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "bayesclass"


def test_the_command_line_parser_and_the_package_import_no_heavy_library():
    """``bayesclass --help`` must answer at once: building the parser (flags from every family's dataclasses)
    and ``import bayesclass`` load none of PyMC, PyTensor, JAX, xarray, pandas, ArviZ or scikit-learn."""
    code = (
        "import sys, bayesclass, bayesclass.cli as cli; cli._parser(); bayesclass.REGISTRY; "
        "heavy = ('pymc', 'pytensor', 'jax', 'xarray', 'pandas', 'arviz_stats', 'sklearn', 'scipy.optimize'); "
        "print(sorted(name for name in heavy if name in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_lazy_modules_become_the_real_module(monkeypatch):
    from bayesclass._lazy import lazy_import

    assert lazy_import("json") is json  # imported already: the module itself
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    stand_in = lazy_import("colorsys")
    assert "colorsys" not in sys.modules and "rgb_to_hsv" not in vars(stand_in)  # nothing imported yet
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert "colorsys" in sys.modules and "rgb_to_hsv" in vars(stand_in)  # imported, its namespace taken on


@pytest.mark.parametrize("name", list(CASES))
def test_the_initial_point_without_pytensors_c_linker_is_pymcs(name):
    """The blackjax path evaluates PyMC's initial-point expression with the Python linker (no C build on a fresh
    machine); the values are PyMC's own."""
    from bayesclass.inference.engines._blackjax import initial_point

    model, make = CASES[name]
    pymc_model = model.build(make())
    expected = pymc_model.initial_point()
    found = initial_point(pymc_model)
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        np.testing.assert_array_equal(found[key], value)


def test_a_study_expects_each_worker_to_fit_its_share_of_a_structures_cells(tmp_path, monkeypatch):
    import bayesclass.study as bs
    from bayesclass.inference.studies import runner

    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(
        'name = "shares"\nseed = 0\ntraining_sizes = [20, 30, 40]\nrepeats = 2\n'
        '[[models]]\nfamily = "gcc"\nmethod = "nuts"\n'
        '[[datasets]]\nname = "seed001_gaussians"\ngenerator = { n = 100, random_seed = 1 }\n'
    )
    seen = []

    def record_backend(cell, out):  # what backend "auto" resolves to inside the cell, instead of fitting it
        seen.append(nuts_backend(cell.model.build(), SamplerSettings()))
        return {"status": "ok", "key": cell.key()}

    monkeypatch.setattr(runner, "run_cell", record_backend)
    monkeypatch.setattr(runner, "load", lambda out, keys=None: __import__("pandas").DataFrame())
    shared = get_model("gcc")
    refit_backend, break_even = shared.repeated_fits_backend()
    for threshold, expected in ((6, refit_backend), (7, shared.nuts_backends[0])):  # 3 sizes x 2 repeats = 6 fits
        monkeypatch.setattr(type(shared), "repeated_fits_backend", lambda self, t=threshold: (refit_backend, t))
        seen.clear()
        bs.run(bs.read_spec(spec_path), tmp_path / f"out{threshold}", serial=True, progress=False)
        assert seen == [expected] * 6, threshold
    assert break_even >= 2


def test_chains_run_one_at_a_time_where_the_environment_says_so_with_the_same_draws(monkeypatch):
    from bayesclass.inference.engines.sampling import CHAIN_THREADS_ENV, chain_threads

    dataset = data.seed001_gaussians(80, random_seed=2)
    settings = SamplerSettings(backend="blackjax", draws=60, tune=60, chains=2, progressbar=False)
    together = fit(LogisticRegression(), dataset, sampler=settings, random_seed=1)
    monkeypatch.setenv(CHAIN_THREADS_ENV, "1")  # a study's single-threaded worker
    assert chain_threads() == 1
    in_turn = fit(LogisticRegression(), dataset, sampler=settings, random_seed=1)
    np.testing.assert_array_equal(together["posterior"]["weights"].values, in_turn["posterior"]["weights"].values)
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(CHAIN_THREADS_ENV, bad)
        with pytest.raises(ValueError, match=rf"{CHAIN_THREADS_ENV}='{bad}': it must be a positive whole number"):
            chain_threads()
    monkeypatch.setenv(CHAIN_THREADS_ENV, "")
    assert chain_threads() is None
