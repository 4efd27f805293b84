"""Every public function, class and method of the package has a numpydoc docstring with its Parameters and Returns.

"Public" is what a module lists in ``__all__`` (and the public methods of those classes), in every module of
the namespace whose path has no private (``_``) part. The checks are numpydoc's own validator
(``numpydoc.validate``): GL08 (no docstring), PR01 (a parameter not documented), PR02 (a documented parameter
that does not exist), RT01 (no Returns section where something is returned), SS01 (no summary).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

validate = pytest.importorskip("numpydoc.validate").validate

CHECKED = ("GL08", "PR01", "PR02", "RT01", "SS01")
SUBPACKAGES = ("data", "models", "inference", "reports")


def _public_modules() -> list[str]:
    names = ["bayesclass", "bayesclass.cli", "bayesclass.study"]
    for sub in SUBPACKAGES:
        package = importlib.import_module(f"bayesclass.{sub}")
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not any(part.startswith("_") for part in info.name.split(".")[1:]):
                names.append(info.name)
    return names


def _public_objects() -> list[str]:
    targets = []
    for name in _public_modules():
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            value = getattr(module, attribute, None)
            if getattr(value, "__module__", None) != name:
                continue  # a re-export: checked where it is defined
            if not (inspect.isfunction(value) or inspect.isclass(value)):
                continue
            targets.append(f"{name}.{attribute}")
            if inspect.isclass(value):
                targets += [
                    f"{name}.{attribute}.{member}"
                    for member, function in vars(value).items()
                    if not member.startswith("_") and inspect.isfunction(function)
                ]
    return targets


PUBLIC = _public_objects()


def test_the_public_api_is_found():
    assert len(PUBLIC) > 200
    assert "bayesclass.inference.engines.fit.fit" in PUBLIC
    assert "bayesclass.inference.result.result_info" in PUBLIC


@pytest.mark.parametrize("qualified_name", PUBLIC)
def test_public_docstring_has_parameters_and_returns(qualified_name):
    errors = [f"{code}: {message}" for code, message in validate(qualified_name)["errors"] if code in CHECKED]
    assert not errors, f"{qualified_name}: " + "; ".join(errors)
