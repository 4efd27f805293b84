"""How a message names an argument, in Python and on the command line (:mod:`bayesclass.data.arguments`)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from bayesclass.data.arguments import FLAG_NAMES, flag_of, interface, speaking, spelled

#: (arguments of spelled, from Python, on the command line)
SPELLINGS = [
    (("missing", "drop"), {}, "missing='drop'", "--missing drop"),
    (("max_levels", np.int64(80)), {}, "max_levels=80", "--max-levels 80"),
    (("standardize", False), {}, "standardize=False", "--no-standardize"),
    (("standardize", True), {}, "standardize=True", "--standardize"),
    (("kind", "map"), {}, "kind='map'", "--method map"),
    (("random_seed", 6), {}, "random_seed=6", "--seed 6"),
    (("progressbar", False), {}, "progressbar=False", "--no-progress"),
    (
        ("covariance_prior", "inverse_wishart"),
        {"owner": "GaussianClassConditionalPrior"},
        "GaussianClassConditionalPrior(covariance_prior='inverse_wishart')",
        "--covariance-prior inverse_wishart",
    ),
    (("draws", 1000), {"owner": "SamplerSettings"}, "SamplerSettings(draws=1000)", "--draws 1000"),
    (("features", ["bill length", "mass"]), {}, "features=['bill length', 'mass']", "--features 'bill length,mass'"),
    (("variance_alpha",), {}, "variance_alpha", "--variance-alpha"),
    (("features",), {"metavar": "..."}, "features=...", "--features ..."),
    (("wishart_dof_offset",), {"owner": "P"}, "P(wishart_dof_offset=...)", "--wishart-dof-offset"),
    (("target",), {"metavar": "COLUMN"}, "target=COLUMN", "--target COLUMN"),
    (("decimal", ","), {"owner": "CsvFormat"}, "CsvFormat(decimal=',')", "--decimal ','"),
    (("delimiter", ";"), {"owner": "CsvFormat"}, "CsvFormat(delimiter=';')", "--delimiter ';'"),
]


@pytest.mark.parametrize(("args", "kwargs", "python", "cli"), SPELLINGS, ids=[row[2] for row in SPELLINGS])
def test_an_argument_is_spelled_in_the_language_of_the_interface(args, kwargs, python, cli):
    assert interface() == "python"
    assert spelled(*args, **kwargs) == python
    with speaking("cli"):
        assert spelled(*args, **kwargs) == cli
    assert spelled(*args, **kwargs) == python


def test_speaking_restores_the_interface_after_an_error_and_nests():
    with pytest.raises(RuntimeError), speaking("cli"):
        assert interface() == "cli"
        with speaking("python"):
            assert spelled("missing", "drop") == "missing='drop'"
        assert interface() == "cli"
        raise RuntimeError
    assert interface() == "python"


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its subcommands."""
    found = set()
    for action in parser._actions:
        found |= set(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found |= _options(command)
    return found


def test_every_flag_named_otherwise_is_a_flag_of_the_command_line():
    """The exceptions to ``--`` + the name are real flags; so are the derived flags of the family fields."""
    from bayesclass._flags import hyperparameter_flags
    from bayesclass.cli import _parser
    from bayesclass.models import REGISTRY

    options = _options(_parser())
    for name in FLAG_NAMES:
        with speaking("cli"):
            assert spelled(name, False) in options or flag_of(name) in options, name
    generated = {flag.field: flag.flag for flag in hyperparameter_flags(REGISTRY)}
    assert generated["covariance_prior"] == flag_of("covariance_prior") == "--covariance-prior"
    assert set(generated.values()) <= options
    for name in ("missing", "max_levels", "features", "target", "decimal", "delimiter", "encoding", "draws", "chains"):
        assert flag_of(name) in options, name
