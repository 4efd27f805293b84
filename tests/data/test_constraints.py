"""The declarative field constraints (bayesclass.data.constraints) and the renamed fields they keep readable."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Literal

import numpy as np
import pytest

from bayesclass.data.constraints import (
    Constrained,
    Each,
    Finite,
    InRange,
    Integer,
    InvalidValueError,
    NumericArray,
    Positive,
    check_field,
    check_finite,
    renamed_fields,
    renamed_from,
    rule_of,
)


def refused(constraint, value, *, argument="x"):
    with pytest.raises(InvalidValueError) as caught:
        constraint.check(value, argument=argument)
    return str(caught.value)


@pytest.mark.parametrize("value", [1e-300, 1, 2.5, np.float32(0.5), np.int64(3)])
def test_positive_accepts_positive_numbers_as_floats(value):
    result = Positive().check(value, argument="scale")
    assert result == float(value) and type(result) is float


@pytest.mark.parametrize("value", [0, 0.0, -1e-300, -2, math.nan, math.inf, -math.inf])
def test_positive_refuses_boundary_and_non_finite_values_naming_argument_value_and_fix(value):
    message = refused(Positive(fix="e.g. 1.0"), value, argument="scale")
    assert message.startswith("scale must be a positive finite number, got ")
    assert repr(value) in message and message.endswith("; e.g. 1.0")


def test_positive_allow_inf_admits_infinity_only():
    assert Positive(allow_inf=True).check(math.inf, argument="s") == math.inf
    assert "or inf for a flat prior" in refused(Positive(allow_inf=True), 0.0, argument="s")


@pytest.mark.parametrize("value", [True, False, np.bool_(True), "1", None, [1.0], 1 + 0j])
def test_a_boolean_or_a_string_is_no_number(value):
    for constraint in (Positive(), Finite(), InRange(0, 1), Integer()):
        message = refused(constraint, value, argument="arg")
        assert message.startswith("arg must be ") and repr(value) in message


def test_finite_refuses_nan_and_infinities():
    assert Finite().check(-3, argument="c") == -3.0
    for value in (math.nan, math.inf, -math.inf):
        assert refused(Finite(), value, argument="c") == f"c must be a finite number, got {value!r}"


@pytest.mark.parametrize(
    ("closed", "admitted", "refused_values", "text"),
    [
        ("neither", [1e-12, 0.5, 1 - 1e-12], [0, 1, -0.1, math.nan], "a number in (0, 1)"),
        ("both", [0, 0.5, 1], [-1e-12, 1 + 1e-12, math.nan], "a number in [0, 1]"),
        ("left", [0, 0.999], [1, -0.1], "a number in [0, 1)"),
        ("right", [1, 1e-9], [0, 1.1], "a number in (0, 1]"),
    ],
)
def test_in_range_bounds(closed, admitted, refused_values, text):
    constraint = InRange(0, 1, closed=closed, fix="e.g. 0.5")
    for value in admitted:
        assert constraint.check(value, argument="p") == float(value)
    for value in refused_values:
        assert refused(constraint, value, argument="p") == f"p must be {text}, got {value!r}; e.g. 0.5"


def test_one_sided_range():
    assert InRange(1, None, closed="neither").check(1.5, argument="c") == 1.5
    assert refused(InRange(1, None, closed="neither"), 1.0, argument="c") == "c must be > 1, got 1.0"
    assert refused(InRange(None, 0), 0.5, argument="c") == "c must be <= 0, got 0.5"


def test_integer_bounds_and_types():
    constraint = Integer(minimum=1, maximum=3)
    assert [constraint.check(v, argument="k") for v in (1, np.int32(3))] == [1, 3]
    assert refused(constraint, 0, argument="k") == "k must be an integer in 1..3, got 0"
    assert refused(constraint, 4, argument="k") == "k must be an integer in 1..3, got 4"
    assert refused(Integer(minimum=2), 2.0, argument="k").startswith("k must be an integer >= 2, got 2.0; pass")
    assert refused(Integer(minimum=0), True, argument="seed").startswith("seed must be an integer >= 0, got True")


def test_each_names_the_item():
    assert Each(Integer(minimum=2)).check([2, 3], argument="sizes") == (2, 3)
    assert refused(Each(Integer(minimum=2)), [2, 1], argument="sizes") == "sizes[1] must be an integer >= 2, got 1"


def test_numeric_array_is_read_only_float():
    array = NumericArray(ndim=2).check([[1, 2], [3, 4]], argument="values")
    assert array.dtype == float and not array.flags.writeable
    assert "values must be a 2-D array of numbers" in refused(NumericArray(ndim=2), [1, 2], argument="values")


def test_one_check_finite_for_numbers_and_tables():
    assert check_finite(2, argument="c") == 2.0
    with pytest.raises(ValueError, match=r"c must be a finite number, got nan"):
        check_finite(math.nan, argument="c")
    table = np.array([[0.0, 1.0], [2.0, np.inf]])
    with pytest.raises(ValueError, match=r"X contains inf at row 1, column 'b'; remove or impute .* before fitting"):
        check_finite(table, argument="X", feature_names=("a", "b"), when="fitting")


# -- a dataclass declaring its constraints -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Settings(Constrained):
    scale: Annotated[float, Positive()] = 1.0
    center: Annotated[float, Finite()] = 0.0
    fraction: Annotated[float, InRange(0, 1, closed="neither")] = 0.5
    basis: Annotated[int | None, Integer(minimum=2)] = None
    link: Literal["logit", "probit"] = "logit"
    autoscale: bool = True
    renamed: Annotated[float, Positive()] = field(default=1.0, metadata=renamed_from("old_name"))


def test_a_dataclass_is_checked_on_construction_and_stores_converted_values():
    settings = Settings(scale=2, basis=np.int64(5), autoscale=np.bool_(False))
    assert type(settings.scale) is float and type(settings.basis) is int and settings.autoscale is False
    assert Settings(basis=None).basis is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scale": 0}, "scale must be a positive finite number, got 0"),
        ({"scale": True}, "scale must be a positive number, got True (bool)"),
        ({"center": math.inf}, "center must be a finite number, got inf"),
        ({"fraction": 1.0}, "fraction must be a number in (0, 1), got 1.0"),
        ({"basis": 1}, "basis must be an integer >= 2 or None, got 1"),
        ({"link": "cauchit"}, "link must be 'logit' or 'probit', got 'cauchit'"),
        ({"link": 1}, "link must be 'logit' or 'probit', got 1"),
        ({"autoscale": "yes"}, "autoscale must be True or False, got 'yes'"),
        ({"autoscale": 1}, "autoscale must be True or False, got 1"),
    ],
)
def test_a_dataclass_refuses_each_bad_field(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Settings(**options)
    with pytest.raises(TypeError):  # also a TypeError, as scikit-learn's InvalidParameterError
        Settings(**options)


def test_fields_are_checked_in_declaration_order():
    with pytest.raises(ValueError, match="^scale must"):
        Settings(link="bad", scale=-1.0)


def test_rules_read_by_the_command_line():
    rule = rule_of(Annotated[int | None, Integer(minimum=2)])
    assert rule.optional and rule.base is int and rule.describe() == "integer >= 2"
    assert rule_of(Literal["a", "b"]).choices == ("a", "b")
    assert rule_of(Annotated[float, Positive()]).describe() == "> 0"
    assert check_field(Settings, "fraction", 0.25) == 0.25
    assert renamed_fields(Settings) == {"old_name": "renamed"}


def test_flag_help_shows_the_constraints():
    from bayesclass._flags import hyperparameter_flags
    from bayesclass.models import REGISTRY

    flags = {flag.dest: flag for flag in hyperparameter_flags(REGISTRY)}
    assert flags["weight_sigma"].help.endswith("(> 0)")
    assert "(integer >= 2)" in flags["hsgp_basis"].help
    assert flags["link"].choices == ("logit", "probit")
    assert "--gaussian-mean-strength" in flags["mean_strength"].aliases
    assert set(flags["mean_strength"].families) == {"naive_bayes", "gcc"}


# -- the renamed fields of the families: results written before the rename keep loading --------------------------


OLD_NAMES = {
    "naive_bayes": {
        "gaussian_mean_strength": ("mean_strength", 0.5),
        "gaussian_variance_shape": ("variance_alpha", 2.0),
        "gaussian_variance_scale": ("variance_beta", 0.3),
        "gaussian_mean_center": ("mean_center", 1.5),
        "gaussian_autoscale": ("autoscale", False),
    },
    "gcc": {"mean_scale": ("mean_sigma", 3.0), "sd_scale": ("sd_sigma", 1.5)},
}


@pytest.mark.parametrize("family", sorted(OLD_NAMES))
def test_model_from_dict_reads_the_old_prior_field_names(family):
    from bayesclass.models import get_model, model_from_dict

    old = {name: value for name, (_, value) in OLD_NAMES[family].items()}
    model = model_from_dict({"model": family, "prior": old})
    for new, value in OLD_NAMES[family].values():
        assert getattr(model.prior, new) == value
    assert model == get_model(family, prior={new: value for new, value in OLD_NAMES[family].values()})


def test_a_result_saved_with_old_names_loads_and_predicts(tmp_path):
    from bayesclass import data, inference
    from bayesclass.inference.engines.fit import model_of
    from bayesclass.models import NaiveBayes

    training = data.seed001_gaussians(n=60, random_seed=3)
    result = inference.fit(NaiveBayes(prior={"mean_strength": 0.5, "autoscale": False}), training, method="map")
    hyperparameters = json.loads(result.attrs["model_hyperparameters"])
    prior = hyperparameters["prior"]
    prior["gaussian_mean_strength"] = prior.pop("mean_strength")  # as the previous version wrote it
    prior["gaussian_autoscale"] = prior.pop("autoscale")
    result.attrs["model_hyperparameters"] = json.dumps(hyperparameters)
    path = inference.save(result, tmp_path / "old.nc")
    loaded = inference.load(path)
    model = model_of(loaded)
    assert model.prior.mean_strength == 0.5 and model.prior.autoscale is False
    assert dataclasses.asdict(model) == dataclasses.asdict(NaiveBayes(prior={"mean_strength": 0.5, "autoscale": False}))


def test_data_containers_are_named_x_and_y_in_every_family():
    from bayesclass import data
    from bayesclass.models import get_model

    training = data.seed001_gaussians(n=40, random_seed=1)
    builds = {
        "logistic": (get_model("logistic").build(training), {"X", "y"}),
        "gcc": (get_model("gcc").build(training, likelihood="per_observation"), {"y"}),
        "gp": (get_model("gp").build(data.seed004_gp(20, random_seed=1)), {"X", "y"}),
    }
    for name, (model, expected) in builds.items():
        containers = {variable.name for variable in model.data_vars}
        assert expected <= containers, (name, containers)
        assert not containers & {"training_input", "training_label", "class_code"}, name
