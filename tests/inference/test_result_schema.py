"""The typed result schema (bayesclass.inference.result): one reader of a result's attrs, checked as user input.

- every attr a fit writes parses into ``ResultInfo`` and writes back unchanged;
- results written by the previous release (format 1, ``tests/inference/format1/``, made with bayesclass at
  commit 3d0022f) still load, with their structured origin recovered, and predict exactly as a refit today;
- tampered attrs are one-line errors naming the attr, through the same validators as a user's input;
- while the package predicts, diagnoses, checks, scores, reports and saves a result, no module but
  ``inference/result.py`` reads its attrs (a recording attrs mapping), and no package module touches a
  ``.attrs`` but the schema's and the few non-result tables listed below.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import bayesclass as bc
from bayesclass.inference.result import FORMAT_VERSION, ResultInfo, check_result, result_info, write_info

ROOT = Path(__file__).resolve().parents[2]
FORMAT1 = Path(__file__).parent / "format1"
SMALL = bc.SamplerSettings(draws=100, chains=2, progressbar=False)


@pytest.fixture(scope="module")
def split():
    return bc.train_validation_test_split(bc.load("seed001_gaussians", n=150, random_seed=3), random_seed=1)


@pytest.fixture(scope="module")
def exact(split):
    model = bc.GaussianClassConditional(prior=bc.GaussianClassConditionalPrior(covariance_prior="inverse_wishart"))
    return bc.fit(model, split[0], method="exact", sampler=SMALL, random_seed=0)


def test_the_attrs_a_fit_writes_parse_and_write_back_unchanged(exact):
    info = result_info(exact)
    assert isinstance(info, ResultInfo) and info.format_version == FORMAT_VERSION
    assert info.method == "exact" and info.has_draws and info.random_seed == 0
    assert info.data.origin.source == "seed001_gaussians"
    assert dict(info.data.origin.arguments) == {"n": 150, "random_seed": 3}
    assert info.data.origin.split.part == "train" and info.data.origin.split.random_seed == 1
    assert info.sampler_settings == {"draws": 100, "chains": 2}
    copy = exact.copy()
    write_info(copy, info)
    assert dict(copy.attrs) == dict(exact.attrs)


@pytest.mark.parametrize("path", sorted(FORMAT1.glob("*.nc")), ids=lambda path: path.stem)
def test_results_of_the_previous_format_load_and_predict_as_a_refit(path):
    old = bc.load_result(path)
    info = result_info(old)
    assert info.format_version == 1
    origin = info.data.origin
    data = bc.load(origin.source, **dict(origin.arguments))
    if origin.split is not None:
        parts = bc.train_validation_test_split(
            data, fractions=origin.split.fractions, random_seed=origin.split.random_seed, stratify=origin.split.stratify
        )
        data = parts[("train", "validation", "test").index(origin.split.part)]
    assert data.fingerprint() == info.data.fingerprint  # the structured origin makes the rows again
    standardize = {"none": False, "continuous": True, "all": "all"}[info.standardize_mode]
    settings = bc.SamplerSettings(**info.sampler_settings, progressbar=False)
    new = bc.fit(info.model, data, method=info.method, sampler=settings, standardize=standardize, random_seed=0)
    rows = data.X[:5]
    # The GP's type-II maximum likelihood stops on a tighter rule since issue 39 (gradient 1e-12, not SciPy's
    # default 1e-5), so a refit finds the same optimum a few 1e-6 closer; every other method refits to 1e-9.
    atol = 1e-5 if info.model.name == "gp" and info.method == "map" else 1e-9
    np.testing.assert_allclose(
        bc.predict(old, rows)["class_proba"].values, bc.predict(new, rows)["class_proba"].values, rtol=0, atol=atol
    )


@pytest.mark.parametrize(
    ("attr", "value", "message"),
    [
        ("bayesclass_format", 99, "newer than this bayesclass reads"),
        ("method", "bogus", "attr method 'bogus' is not one of"),
        ("random_seed", -1, "attr random_seed = '-1' is not a seed"),
        ("sampler_settings", json.dumps({"draws": -5, "chains": 2}), "attr sampler_settings has draws = -5"),
        ("sampler_settings", json.dumps({"draws": 10, "chains": 2, "warp": 9}), "unknown settings ['warp']"),
        ("data_origin", json.dumps({"source": "iris"}), "attr data_origin: a data origin has the keys"),
        ("feature_kinds", json.dumps(["continuous", "imaginary"]), "unknown kinds ['imaginary']"),
        ("partial", 2, "attr partial = '2' should be 0 or 1"),
        ("sampling_seconds", float("inf"), "not a plausible duration"),
        ("model_hyperparameters", json.dumps({"model": "gcc", "covariance": "diagonal"}), "not describe a valid model"),
    ],
)
def test_tampered_attrs_are_one_line_errors_naming_the_attr(exact, attr, value, message):
    tampered = exact.copy()
    tampered.attrs[attr] = value
    with pytest.raises(ValueError, match="^[^\n]*$") as error:
        check_result(tampered)
    assert message in str(error.value)


def test_a_tampered_gp_jitter_is_refused_by_the_familys_own_constraint(tmp_path):
    path = Path(__file__).parent / "format1" / "gp_map_seed004.nc"
    result = bc.load_result(path)
    hyperparameters = json.loads(result.attrs["model_hyperparameters"])
    hyperparameters["jitter"] = 1e300
    result.attrs["model_hyperparameters"] = json.dumps(hyperparameters)
    with pytest.raises(ValueError, match=r"jitter must be a number in \(0, 0.01\], got 1e\+300"):
        result_info(result)
    bc.save_result(result, tmp_path / "tampered.nc")
    with pytest.raises(ValueError, match="not a readable bayesclass result.*jitter"):
        bc.load_result(tmp_path / "tampered.nc")


def test_a_tampered_prior_fails_the_priors_own_constraint(exact):
    tampered = exact.copy()
    hyperparameters = json.loads(tampered.attrs["model_hyperparameters"])
    hyperparameters["prior"]["wishart_scale"] = -1.0
    tampered.attrs["model_hyperparameters"] = json.dumps(hyperparameters)
    with pytest.raises(ValueError, match="wishart_scale must be"):
        result_info(tampered)


class _RecordingAttrs(dict):
    """A result's attrs that note the source file of every code that reads them."""

    readers: set[str]

    def _note(self) -> None:
        self.readers.add(sys._getframe(2).f_code.co_filename)

    def __getitem__(self, key):
        self._note()
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._note()
        return super().get(key, default)

    def __contains__(self, key):
        self._note()
        return super().__contains__(key)

    def __iter__(self):
        self._note()
        return super().__iter__()

    def items(self):
        self._note()
        return super().items()

    def keys(self):
        self._note()
        return super().keys()

    def values(self):
        self._note()
        return super().values()


def _recording(result):
    copy = result.copy()
    attrs = _RecordingAttrs(copy.attrs)
    attrs.readers = set()
    copy._attrs = attrs  # DataTree keeps its attrs dict in _attrs (xarray.DataTree.attrs)
    return copy, attrs.readers


def test_no_module_but_the_schema_reads_a_results_attrs(exact, split, tmp_path):
    result, readers = _recording(exact)
    _, validation, _ = split
    bc.predict(result, validation.X[:5])
    bc.diagnose(result)
    bc.posterior_predictive_check(result, n_replicates=20, random_seed=0)
    from bayesclass.inference.criticism.loo import loo
    from bayesclass.inference.evaluation.heldout import evaluate

    loo(result)
    evaluate(result, validation)
    bc.report(result, validation)
    bc.format_comparison(result, {"validation": validation})
    bc.save_result(result, tmp_path / "r.nc")
    package = [str(ROOT / folder) for folder in ("bayesclass", "data", "models", "inference", "reports")]
    ours = {reader for reader in readers if reader.startswith(tuple(package))}
    assert ours == {str(ROOT / "inference" / "result.py")}, sorted(ours)


#: package modules that touch the ``.attrs`` of objects that are not results (each such object is named): tables,
#: checks and predictions they build or read back themselves, and the sample stats a NUTS library returns
NOT_RESULTS = {
    "bayesclass/cli.py": {"table"},
    "models/approximation.py": {"dataset"},
    "models/base.py": {"estimate"},
    "models/logistic.py": {"estimate"},
    "inference/evaluation/heldout.py": {"table"},
    "inference/evaluation/report_evaluation.py": {"table", "check"},
    "inference/evaluation/scores.py": {"table"},
    "inference/engines/sampling.py": {"stats"},
    "inference/prediction/predict.py": {"dataset"},
    "inference/studies/runner.py": {"table"},
    "reports/text.py": {"check"},
}


def test_no_package_module_touches_attrs_but_the_schema():
    found = {}
    for folder in ("bayesclass", "data", "models", "inference", "reports"):
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative == "inference/result.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "attrs":
                    owner = node.value.id if isinstance(node.value, ast.Name) else ast.unparse(node.value)
                    if owner not in NOT_RESULTS.get(relative, ()):
                        found.setdefault(relative, []).append(f"{owner}.attrs (line {node.lineno})")
    assert not found, found
