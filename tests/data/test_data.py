"""Tests of the data package: Dataset validation, loaders, generators, CSV, splits, check_features."""

from __future__ import annotations

import csv
import pickle

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn import datasets as sk_datasets

from bayesclass import data
from bayesclass.data import Dataset, check_features, load, load_csv, train_validation_test_split


def small_dataset(**overrides) -> Dataset:
    arguments = dict(
        name="toy",
        X=np.array([[0.5, 1.0], [1.5, 0.0], [2.5, 1.0]]),
        y=np.array([0, 1, 1]),
        feature_names=("size", "flag"),
        class_names=("a", "b"),
        feature_kinds=("continuous", "binary"),
    )
    arguments.update(overrides)
    return Dataset(**arguments)


# --------------------------------------------------------------------------- transport (seed 003)


def test_transport_table_shape_and_kinds(transport):
    assert transport.n_obs == 10
    assert transport.feature_names == ("Distance", "Raining", "Flat Tire")
    assert transport.feature_kinds == ("continuous", "binary", "binary")
    assert transport.class_names == ("bike", "bus", "car", "walk")
    assert dict(transport.category_names) == {"Raining": ("no", "yes"), "Flat Tire": ("no", "yes")}
    assert "seed 003, transport table" in transport.provenance


def test_transport_reproduces_seed_mle_tables(transport):
    codes = {name: code for code, name in enumerate(transport.class_names)}
    prior = transport.class_counts / transport.n_obs
    assert {name: prior[code] for name, code in codes.items()} == {"walk": 0.2, "bike": 0.4, "bus": 0.2, "car": 0.2}

    expected = {  # mode: (P(Raining=yes | mode), mean Distance, std Distance ddof=0), seed 003 slides
        "walk": (1.0, 1.5, 0.5),
        "bike": (0.5, 4.0, np.sqrt(13.5)),
        "bus": (0.5, 1.5, 0.5),
        "car": (0.0, 5.5, 4.5),
    }
    distance, raining = transport.X[:, 0], transport.X[:, 1]
    for mode, (p_rain, mean, std) in expected.items():
        rows = transport.y == codes[mode]
        assert raining[rows].mean() == p_rain
        assert distance[rows].mean() == pytest.approx(mean, abs=1e-12)
        assert distance[rows].std(ddof=0) == pytest.approx(std, abs=1e-12)
    assert distance[transport.y == codes["bike"]].std() == pytest.approx(3.674, abs=1e-3)


# --------------------------------------------------------------------------- scikit-learn sets


@pytest.mark.parametrize(
    ("name", "kind"),
    [("iris", "continuous"), ("wine", "continuous"), ("breast_cancer", "continuous"), ("digits", "count")],
)
def test_sklearn_sets_match_sklearn(name, kind):
    bunch = getattr(sk_datasets, f"load_{name}")()
    dataset = load(name)
    assert dataset.X.shape == bunch.data.shape
    np.testing.assert_array_equal(dataset.X, bunch.data)
    np.testing.assert_array_equal(dataset.class_counts, np.bincount(bunch.target))
    assert dataset.class_names == tuple(str(label) for label in bunch.target_names)
    assert set(dataset.feature_kinds) == {kind}
    assert "scikit-learn" in dataset.provenance and "UCI" in dataset.provenance
    info = {info.name: info for info in data.available()}[name]
    assert (info.n_obs, info.n_features, info.n_classes) == (dataset.n_obs, dataset.n_features, dataset.n_classes)
    assert not dataset.X.flags.writeable and not dataset.y.flags.writeable
    assert dataset.X.flags.c_contiguous and dataset.X.dtype == np.float64 and dataset.y.dtype == np.int64
    with pytest.raises(ValueError, match="read-only"):
        dataset.X[0, 0] = 1.0


def test_available_lists_every_loadable_name():
    names = [info.name for info in data.available()]
    assert names == [
        "iris",
        "wine",
        "breast_cancer",
        "digits",
        "digits_binary",
        "transport",
        "penguins",
        "seed001_gaussians",
        "seed000_separable",
        "seed004_gp",
        "logistic_known_weights",
    ]
    for info in data.available():
        if info.name == "penguins":  # 19 blank cells: refused by default, 11 rows dropped on request
            loaded = load(info.name, missing="drop")
            assert loaded.n_obs + loaded.missing.dropped_rows == info.n_obs
            assert (loaded.n_features, loaded.n_classes) == (info.n_features, info.n_classes)
        else:
            assert info.n_obs == "generated" or load(info.name).n_obs == info.n_obs


def test_fingerprint_stable_and_sensitive(transport):
    assert transport.fingerprint() == load("transport").fingerprint()
    assert len(transport.fingerprint()) == 64
    changed_x = Dataset(**{**_fields(transport), "X": transport.X + np.eye(10, 3) * [1, 0, 0]})
    changed_y = Dataset(**{**_fields(transport), "y": np.roll(transport.y, 1)})
    assert len({transport.fingerprint(), changed_x.fingerprint(), changed_y.fingerprint()}) == 3


def _fields(dataset: Dataset) -> dict:
    names = ("name", "X", "y", "feature_names", "class_names", "feature_kinds", "description", "provenance")
    return {name: getattr(dataset, name) for name in names} | {"category_names": dict(dataset.category_names)}


def test_pickle_round_trip_keeps_arrays_read_only(transport):
    copy = pickle.loads(pickle.dumps(transport))
    assert copy.fingerprint() == transport.fingerprint()
    assert not copy.X.flags.writeable
    assert dict(copy.category_names) == dict(transport.category_names)


# --------------------------------------------------------------------------- generators


def test_seed001_gaussians_matches_generative_model():
    n = 20_000
    dataset = data.seed001_gaussians(n=n, random_seed=1)
    assert dataset.class_names == ("C1", "C2") and dataset.feature_names == ("x1", "x2")
    fraction_c1 = np.mean(dataset.y == 0)
    assert abs(fraction_c1 - 0.7) < 3 * np.sqrt(0.7 * 0.3 / n)
    for code, truth in enumerate([[2.0, 1.0], [1.0, 2.0]]):
        rows = dataset.X[dataset.y == code]
        standard_error = 1.0 / np.sqrt(len(rows))  # identity covariance
        assert np.all(np.abs(rows.mean(axis=0) - truth) < 3 * standard_error)
    same = load("seed001_gaussians", n=50, random_seed=3)
    np.testing.assert_array_equal(data.seed001_gaussians(n=50, random_seed=3).X, same.X)
    assert (
        data.seed001_gaussians(n=50, random_seed=3).fingerprint()
        != data.seed001_gaussians(n=50, random_seed=4).fingerprint()
    )


def hard_margin_feasible(X: np.ndarray, y: np.ndarray) -> bool:
    """Is there (w, b) with t_i (w . x_i + b) >= 1 for all i (t = +-1)? A linear feasibility problem."""
    t = np.where(y == 1, 1.0, -1.0)
    A_ub = -t[:, None] * np.column_stack([X, np.ones(len(X))])
    result = linprog(np.zeros(X.shape[1] + 1), A_ub=A_ub, b_ub=-np.ones(len(X)), bounds=(None, None), method="highs")
    return result.status == 0


@pytest.mark.parametrize("random_seed", [0, 1, 2, 3, 4])
def test_seed000_separable_is_linearly_separable(random_seed):
    dataset = data.seed000_separable(n=200, random_seed=random_seed)
    assert hard_margin_feasible(dataset.X, dataset.y)
    np.testing.assert_array_equal(dataset.class_counts, [40, 160])
    small, large = dataset.X[dataset.y == 0], dataset.X[dataset.y == 1]
    assert small[:, 0].max() <= -0.25 and large[:, 0].min() >= 0.25  # margin around x1 = 0
    assert np.ptp(np.linalg.eigvalsh(np.cov(large.T))) > 10 * np.ptp(np.linalg.eigvalsh(np.cov(small.T)))


def test_seed000_separable_defeats_least_squares_like_figure_9_1():
    """Least squares on +-1 labels (seed 000 eq 9.1) misclassifies some of the separable points."""
    errors = []
    for random_seed in range(5):
        dataset = data.seed000_separable(n=200, random_seed=random_seed)
        design = np.column_stack([dataset.X, np.ones(dataset.n_obs)])
        t = np.where(dataset.y == 1, 1.0, -1.0)
        weights = np.linalg.lstsq(design, t, rcond=None)[0]
        errors.append(int(np.sum(np.sign(design @ weights) != t)))
    assert all(error > 0 for error in errors), errors


def test_generators_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"n must be an integer >= 2, got 1"):
        data.seed001_gaussians(n=1)
    with pytest.raises(ValueError, match=r"n must be an integer >= 2, got 10\.0"):
        data.seed001_gaussians(n=10.0)
    with pytest.raises(ValueError, match=r"random_seed must be an integer"):
        data.seed000_separable(random_seed="a")
    with pytest.raises(ValueError, match=r"produced no rows of class 'small_isotropic'; pass a larger n"):
        data.seed000_separable(n=4)
    with pytest.raises(ValueError, match=r"unexpected keyword arguments \['sigma'\].*accepts \['n', 'random_seed'\]"):
        load("seed001_gaussians", sigma=2)
    with pytest.raises(ValueError, match=r"load\('iris'\) got unexpected keyword arguments \['n'\]"):
        load("iris", n=10)
    with pytest.raises(ValueError, match=r"unknown dataset name 'irises'; choose one of .*'iris'"):
        load("irises")


# --------------------------------------------------------------------------- CSV


def write(tmp_path, text: str, name: str = "table.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_round_trip(tmp_path):
    path = write(
        tmp_path,
        "colour,rain,weight,score,label\n"
        "red,yes,1.5,1,10\n"
        "blue,no,2.5,0,2\n"
        "green,yes,3.0,1,10\n"
        "red,no,4.0,0,2\n"
        "blue,no,0.5,1,3\n",
    )
    dataset = load(str(path), target="label")
    assert dataset.name == "table"
    assert dataset.feature_names == ("colour", "rain", "weight", "score")
    assert dataset.feature_kinds == ("categorical", "binary", "continuous", "binary")
    assert dict(dataset.category_names) == {"colour": ("blue", "green", "red"), "rain": ("no", "yes")}
    np.testing.assert_array_equal(dataset.X[:, 0], [2, 0, 1, 2, 0])
    np.testing.assert_array_equal(dataset.X[:, 1], [1, 0, 1, 0, 0])
    np.testing.assert_array_equal(dataset.X[:, 2], [1.5, 2.5, 3.0, 4.0, 0.5])
    assert dataset.class_names == ("2", "3", "10")  # numeric labels sorted numerically
    np.testing.assert_array_equal(dataset.y, [2, 0, 2, 0, 1])
    assert dataset.provenance.startswith(f"CSV file {path.resolve()} (sha256 ")
    assert load_csv(path, target="label", name="other").fingerprint() == dataset.fingerprint()


def test_csv_errors(tmp_path):
    good = write(tmp_path, "a,b\n1,x\n2,y\n")
    with pytest.raises(ValueError, match=r"target column 'label' is not in CSV file .*\['a', 'b'\]"):
        load_csv(good, target="label")
    with pytest.raises(ValueError, match=r"pass target=COLUMN$"):
        load(str(good))
    with pytest.raises(ValueError, match=r"is not an existing file"):
        load_csv(tmp_path / "absent.csv", target="b")
    missing = write(tmp_path, "a,c,b\n1,u,x\n,u,y\n", "missing.csv")
    with pytest.raises(ValueError, match=r"column 'a' 1 \(first: blank cell at line 3\).*missing='drop'"):
        load_csv(missing, target="b")
    not_available = write(tmp_path, "a,c,b\n1,u,x\n2,NA,y\n", "na.csv")
    with pytest.raises(ValueError, match=r"column 'c' 1 \(first: blank cell 'NA' at line 3\)"):
        load_csv(not_available, target="b")
    mixed = write(tmp_path, "a,b\n1,x\nfive,y\n", "mixed.csv")
    with pytest.raises(ValueError, match=r"column 'a' mixes text and numbers"):
        load_csv(mixed, target="b")
    ragged = write(tmp_path, "a,b\n1,x\n2\n", "ragged.csv")
    with pytest.raises(ValueError, match=r"line 3 has 1 cells but the header has 2"):
        load_csv(ragged, target="b")


# --------------------------------------------------------------------------- split


def test_split_sizes_disjoint_stratified_reproducible():
    iris = load("iris")
    tagged = Dataset(**{**_fields(iris), "X": np.column_stack([iris.X[:, :3], np.arange(150.0)])})  # row ids
    train, validation, test = train_validation_test_split(tagged, fractions=(0.6, 0.2, 0.2), random_seed=7)
    assert (train.name, validation.name, test.name) == ("iris[train]", "iris[validation]", "iris[test]")
    assert (train.n_obs, validation.n_obs, test.n_obs) == (90, 30, 30)
    ids = [part.X[:, 3] for part in (train, validation, test)]
    np.testing.assert_array_equal(np.sort(np.concatenate(ids)), np.arange(150))  # disjoint and covering
    np.testing.assert_array_equal(train.class_counts, [30, 30, 30])
    np.testing.assert_array_equal(test.class_counts, [10, 10, 10])
    again = train_validation_test_split(tagged, fractions=(0.6, 0.2, 0.2), random_seed=7)
    assert [part.fingerprint() for part in again] == [part.fingerprint() for part in (train, validation, test)]
    other = train_validation_test_split(tagged, random_seed=8)
    assert other[0].fingerprint() != train.fingerprint()


def test_split_errors(transport):
    with pytest.raises(ValueError, match=r"fractions must be 3 positive numbers .* got \(0\.8, 0, 0\.2\)"):
        train_validation_test_split(transport, fractions=(0.8, 0, 0.2), random_seed=0)
    with pytest.raises(ValueError, match=r"fractions must be 3 positive numbers .* summing to 1"):
        train_validation_test_split(transport, fractions=(0.5, 0.2, 0.2), random_seed=0)
    with pytest.raises(ValueError, match=r"every part needs at least one row"):
        train_validation_test_split(transport, fractions=(0.9, 0.04, 0.06), random_seed=0)
    with pytest.raises(ValueError, match=r"cannot split 'transport' stratified by class.*stratify=False"):
        train_validation_test_split(transport, random_seed=0)
    parts = train_validation_test_split(transport, random_seed=0, stratify=False)
    assert [part.n_obs for part in parts] == [6, 2, 2]


# --------------------------------------------------------------------------- check_features


def test_check_features():
    names = ("a", "b", "c", "d")
    row = check_features([1, 2, 3, 4], n_features=4, feature_names=names)
    assert row.shape == (1, 4) and row.dtype == np.float64 and row.flags.c_contiguous
    with pytest.raises(
        ValueError,
        match=r"X has 3 columns but the model was fitted on 4 features \('a', 'b', 'c', 'd'\); "
        r"pass the same columns in the same order",
    ):
        check_features(np.ones((2, 3)), n_features=4, feature_names=names)
    with pytest.raises(ValueError, match=r"X contains NaN at row 1, column 'c'"):
        check_features([[1, 2, 3, 4], [1, 2, np.nan, 4]], n_features=4, feature_names=names)
    with pytest.raises(ValueError, match=r"X_new contains inf at row 0, column 3"):
        check_features([[1, 2, 3, np.inf]], n_features=4, argument="X_new")
    with pytest.raises(ValueError, match=r"X has 0 rows"):
        check_features(np.empty((0, 4)), n_features=4)
    with pytest.raises(ValueError, match=r"X must be numeric"):
        check_features([["a", "b", "c", "d"]], n_features=4)
    dataset = small_dataset()
    np.testing.assert_array_equal(check_features(dataset, n_features=2), dataset.X)
    with pytest.raises(ValueError, match=r"Dataset 'toy' with features \('size', 'flag'\)"):
        check_features(dataset, n_features=2, feature_names=("flag", "size"))


# --------------------------------------------------------------------------- Dataset validation


def test_dataset_validation_errors():
    with pytest.raises(ValueError, match=r"X contains NaN at row 1, column 'size'; remove or impute"):
        small_dataset(X=np.array([[0.5, 1.0], [np.nan, 0.0], [2.5, 1.0]]))
    with pytest.raises(ValueError, match=r"X has 3 rows but y has 2 entries"):
        small_dataset(y=np.array([0, 1]))
    with pytest.raises(ValueError, match=r"y\[2\] = 2 is not a class code in range\(2\)"):
        small_dataset(y=np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"X\[1, 1\] = 0.5 in binary column 'flag' must be 0 or 1"):
        small_dataset(X=np.array([[0.5, 1.0], [1.5, 0.5], [2.5, 1.0]]))
    with pytest.raises(ValueError, match=r"y must hold integer class codes, got dtype float64"):
        small_dataset(y=np.array([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"feature_kinds contains 'real'"):
        small_dataset(feature_kinds=("real", "binary"))
    with pytest.raises(ValueError, match=r"feature_names must be unique"):
        small_dataset(feature_names=("size", "size"))
    with pytest.raises(ValueError, match=r"X has 0 rows"):
        small_dataset(X=np.empty((0, 2)), y=np.empty(0, dtype=int))


def test_subset_and_standardized():
    dataset = small_dataset()
    subset = dataset.subset([2, 0])
    assert subset.name == "toy[subset]" and subset.class_names == dataset.class_names
    np.testing.assert_array_equal(subset.y, [1, 0])
    single_class = dataset.subset(np.array([False, True, True]), name="bees")
    np.testing.assert_array_equal(single_class.class_counts, [0, 2])  # allowed; models reject it
    scaled = dataset.standardized()
    np.testing.assert_allclose(scaled.X[:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(scaled.X[:, 0].std(), 1.0)
    np.testing.assert_array_equal(scaled.X[:, 1], dataset.X[:, 1])  # binary untouched
    expected = (np.array([2.5, 0.5]) - 1.5) / np.std([0.5, 1.5, 2.5])  # scaled with the full set's mean/std
    np.testing.assert_allclose(subset.standardized(reference=dataset).X[:, 0], expected)
    assert "standardized" in scaled.provenance
    with pytest.raises(ValueError, match=r"continuous column 'size' is constant in 'toy\[subset\]'"):
        dataset.subset([0, 0]).standardized()


def test_discretized_codes_bins_like_numpy_digitize(transport):
    """Seed 003's transport Distance as a 3-level categorical feature (the issue's "once discretised")."""
    coded = transport.discretized("Distance", edges=[1.5, 5.0], level_names=("short", "medium", "long"))
    column = transport.feature_names.index("Distance")
    np.testing.assert_array_equal(coded.X[:, column], np.digitize(transport.X[:, column], [1.5, 5.0]))
    np.testing.assert_array_equal(np.delete(coded.X, column, axis=1), np.delete(transport.X, column, axis=1))
    assert coded.feature_kinds[column] == "categorical"
    assert coded.category_names["Distance"] == ("short", "medium", "long")
    assert coded.category_names["Raining"] == transport.category_names["Raining"]
    assert "discretized at [1.5, 5.0]" in coded.provenance
    default = transport.discretized("Distance", edges=[2.0])
    assert default.category_names["Distance"] == ("<2", ">=2")
    np.testing.assert_array_equal(default.X[:, column], (transport.X[:, column] >= 2.0).astype(float))


@pytest.mark.parametrize(
    ("feature", "edges", "level_names", "message"),
    [
        ("Speed", [1.0], None, "feature 'Speed' is not a column"),
        ("Raining", [0.5], None, "'Raining' is 'binary'; only continuous or count"),
        ("Distance", [], None, "edges must be a non-empty, strictly increasing"),
        ("Distance", [5.0, 1.0], None, "edges must be a non-empty, strictly increasing"),
        ("Distance", [1.0, float("nan")], None, "edges must be a non-empty, strictly increasing"),
        ("Distance", [1.0, 2.0], ("a", "b"), "level_names must name len\\(edges\\) \\+ 1 = 3 levels"),
        ("Distance", [1.0], ("a", "a"), "level_names must be unique"),
    ],
)
def test_discretized_rejects_bad_arguments(transport, feature, edges, level_names, message):
    with pytest.raises(ValueError, match=message):
        transport.discretized(feature, edges=edges, level_names=level_names)


# --------------------------------------------------------------------------- select_features


def test_select_features_keeps_the_named_columns_in_the_given_order(transport):
    chosen = transport.select_features(["Flat Tire", "Distance"])
    assert chosen.feature_names == ("Flat Tire", "Distance")
    np.testing.assert_array_equal(chosen.X, transport.X[:, [2, 0]])
    assert chosen.feature_kinds == ("binary", "continuous")
    assert dict(chosen.category_names) == {"Flat Tire": ("no", "yes")}  # 'Raining' was dropped with its column
    np.testing.assert_array_equal(chosen.y, transport.y)
    assert chosen.class_names == transport.class_names
    assert chosen.name == "transport[Flat Tire, Distance]"
    assert chosen.provenance == f"{transport.provenance}; features Flat Tire, Distance"
    assert chosen.description == transport.description
    assert not chosen.X.flags.writeable and chosen.X.flags.c_contiguous
    assert chosen.fingerprint() != transport.fingerprint()
    assert transport.feature_names == ("Distance", "Raining", "Flat Tire")  # the original is unchanged


def test_select_features_accepts_a_comma_separated_string_and_a_name(transport):
    from_list = transport.select_features(["Raining", "Distance"])
    from_string = transport.select_features("Raining, Distance")  # spaces around the commas are ignored
    assert from_string.feature_names == ("Raining", "Distance")
    assert from_string.fingerprint() == from_list.fingerprint()
    assert from_string.name == from_list.name == "transport[Raining, Distance]"
    assert transport.select_features(("Distance",)).feature_names == ("Distance",)
    renamed = transport.select_features("Distance", name="distance only")
    assert renamed.name == "distance only" and renamed.feature_names == ("Distance",)
    assert dict(renamed.category_names) == {}
    every = transport.select_features(transport.feature_names)
    np.testing.assert_array_equal(every.X, transport.X)
    assert dict(every.category_names) == dict(transport.category_names)


def test_select_features_on_breast_cancer_slices_two_inputs():
    full = load("breast_cancer")
    chosen = full.select_features("mean radius,mean texture")
    assert chosen.name == "breast_cancer[mean radius, mean texture]"
    assert chosen.X.shape == (569, 2) and chosen.n_features == 2
    np.testing.assert_array_equal(chosen.X, full.X[:, :2])
    assert chosen.feature_kinds == ("continuous", "continuous")
    np.testing.assert_array_equal(chosen.class_counts, full.class_counts)
    # the slice composes with the other transforms
    assert chosen.standardized().feature_names == chosen.feature_names


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            ["Distance", "Speed"],
            r"feature\(s\) 'Speed' are not in 'transport'; its features are 'Distance', 'Raining', 'Flat Tire'",
        ),
        ("Speed, Colour", r"feature\(s\) 'Speed', 'Colour' are not in 'transport'"),
        ([], r"names selects no features; give at least one feature name"),
        ((), r"names selects no features"),
        (["Distance", "Raining", "Distance"], r"names repeats a feature: \('Distance', 'Raining', 'Distance'\)"),
        ("Raining,Raining", r"names repeats a feature"),
    ],
)
def test_select_features_rejects_bad_names(transport, names, message):
    with pytest.raises(ValueError, match=message):
        transport.select_features(names)


# --------------------------------------------------------------------------- seed004_gp (built in)


def test_seed004_gp_is_listed_and_loadable_by_name():
    info = {info.name: info for info in data.available()}["seed004_gp"]
    assert (info.n_obs, info.n_features, info.n_classes) == ("generated", 1, 2)
    assert "seed 004" in info.source
    loaded = load("seed004_gp", n=50, random_seed=1)
    direct = data.seed004_gp(50, random_seed=1)
    np.testing.assert_array_equal(loaded.X, direct.X)
    np.testing.assert_array_equal(loaded.y, direct.y)
    assert loaded.fingerprint() == direct.fingerprint()
    assert loaded.X.shape == (50, 1) and loaded.feature_names == ("x",) and loaded.class_names == ("0", "1")
    assert loaded.feature_kinds == ("continuous",)
    assert "seed004_gp(n=50, random_seed=1, link='logit')" in loaded.provenance
    assert np.all((loaded.X >= 0.0) & (loaded.X <= 1.0))
    assert load("seed004_gp").n_obs == 100  # default n
    assert load("seed004_gp").fingerprint() == data.seed004_gp().fingerprint()
    assert load("seed004_gp", n=50, random_seed=2).fingerprint() != loaded.fingerprint()


def test_seed004_gp_link_keyword_through_load():
    probit = load("seed004_gp", n=60, random_seed=3, link="probit")
    direct = data.seed004_gp(60, random_seed=3, link="probit")
    np.testing.assert_array_equal(probit.y, direct.y)
    truth = data.seed004_gp_truth(60, random_seed=3, link="probit")
    np.testing.assert_array_equal(probit.X[:, 0], truth["x"])
    np.testing.assert_array_equal(probit.y, truth["y"])
    # same inputs and latent draw; only the link (and so some labels) differs
    np.testing.assert_array_equal(load("seed004_gp", n=60, random_seed=3).X, probit.X)
    with pytest.raises(ValueError, match=r"link must be 'logit' or 'probit', got 'cauchit'"):
        load("seed004_gp", link="cauchit")
    with pytest.raises(
        ValueError,
        match=r"load\('seed004_gp'\) got unexpected keyword arguments \['sigma'\]; "
        r"'seed004_gp' accepts \['n', 'random_seed', 'link'\]",
    ):
        load("seed004_gp", sigma=2)


# -- declared feature kinds -----------------------------------------------------------------------------------


def _dummy_csv(path):
    """age (continuous), smoker and owner (0/1 dummies), colour (text, 3 levels), region (text, 2 levels)."""
    rng = np.random.default_rng(11)
    n = 60
    rows = zip(
        rng.normal(40, 10, n).round(2),
        rng.integers(0, 2, n),
        rng.integers(0, 2, n),
        rng.choice(["red", "green", "blue"], n),
        rng.choice(["north", "south"], n),
        rng.choice(["bad", "good"], n),
        strict=True,
    )
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["age", "smoker", "owner", "colour", "region", "default"])
        writer.writerows(rows)
    return path


def test_load_csv_declared_kinds_override_the_inferred_ones(tmp_path):
    path = _dummy_csv(tmp_path / "credit.csv")
    inferred = data.load_csv(path, target="default")
    assert inferred.feature_kinds == ("continuous", "binary", "binary", "categorical", "binary")
    declared = data.load_csv(path, target="default", feature_kinds={"smoker": "continuous", "region": "categorical"})
    assert declared.feature_kinds == ("continuous", "continuous", "binary", "categorical", "categorical")
    np.testing.assert_array_equal(declared.X, inferred.X)  # the values are the same, only the kinds differ
    assert declared.category_names["region"] == ("north", "south")
    assert "feature kinds declared: smoker=continuous, region=categorical" in declared.provenance
    assert data.load(path, target="default", feature_kinds={"owner": "continuous"}).feature_kinds[2] == "continuous"
    assert inferred.with_feature_kinds({"smoker": "binary"}) is inferred  # nothing changes: the same object


@pytest.mark.parametrize(
    ("kinds", "message"),
    [
        (
            {"smokr": "continuous"},
            r"names column\(s\) 'smokr' that 'credit' does not have as features; its feature columns are 'age'",
        ),
        ({"smoker": "dummy"}, r"feature_kinds\['smoker'\] = 'dummy' is not a feature kind; use one of \('continuous'"),
        (
            {"colour": "continuous"},
            r"column 'colour' holds text levels \('blue', 'green', 'red'\).*declare it 'categorical'",
        ),
        ({"region": "count"}, r"column 'region' holds text levels"),
        ({"age": "binary"}, r"in binary column 'age' must be 0 or 1; fix the value or declare the column with another"),
        ({"age": "count"}, r"in categorical/count column 'age' must be a non-negative integer"),
        ({"colour": "binary"}, r"'colour'\] = 'binary', but column 'colour' has 3 level\(s\).*declare it 'categ"),
    ],
)
def test_declared_kinds_the_values_cannot_have_are_refused(tmp_path, kinds, message):
    path = _dummy_csv(tmp_path / "credit.csv")
    with pytest.raises(ValueError, match=message):
        data.load_csv(path, target="default", feature_kinds=kinds)


def test_feature_kinds_of_a_built_in_are_checked_like_a_files():
    # a built-in data set takes feature_kinds too, checked against its values as with_feature_kinds does
    with pytest.raises(ValueError, match=r"X\[0, 0\] = 5.1 in categorical/count column 'sepal length \(cm\)'"):
        data.load("iris", feature_kinds={"sepal length (cm)": "count"})
    assert data.load("iris", feature_kinds={"sepal length (cm)": "count"}.__class__()).feature_kinds == (
        data.load("iris").feature_kinds
    )
    with pytest.raises(ValueError, match="must map column names to feature kinds"):
        data.load("iris").with_feature_kinds(["continuous"])


# -- the CSV reader: delimiters, decimal marks, encodings, long fields, label spelling -------------------------


def test_semicolon_files_with_decimal_commas(tmp_path):
    path = write(tmp_path, "size;colour;label\n0,5;red;a\n1,25;blue;b\n-0,3;red;a\n", "semi.csv")
    with pytest.raises(ValueError, match=r"the decimal mark ','.*pass CsvFormat\(decimal=','\)$"):
        load_csv(path, target="label")
    dataset = load_csv(path, target="label", csv_format=data.CsvFormat(decimal=","))
    np.testing.assert_array_equal(dataset.X[:, 0], [0.5, 1.25, -0.3])
    assert dataset.feature_kinds == ("continuous", "binary")
    explicit = load_csv(path, target="label", csv_format=data.CsvFormat(delimiter=";", decimal=","))
    np.testing.assert_array_equal(explicit.X, dataset.X)
    with pytest.raises(ValueError, match=r"target column 'label' is not in .*the file seems delimited by ';'"):
        load_csv(path, target="label", csv_format=data.CsvFormat(delimiter="\t", decimal=","))


def test_encodings_are_named_in_errors_and_honoured(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("x,drink,label\n1,caf\xe9,a\n2,tea,b\n3,caf\xe9,a\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"is not utf-8 text \(byte 19.*CsvFormat\(encoding='latin-1'\)$"):
        load_csv(path, target="label")
    dataset = load_csv(path, target="label", csv_format=data.CsvFormat(encoding="latin-1"))
    assert dataset.category_names["drink"] == ("café", "tea")
    with pytest.raises(ValueError, match=r"encoding 'klingon' is not a known text encoding"):
        load_csv(path, target="label", csv_format=data.CsvFormat(encoding="klingon"))
    with pytest.raises(ValueError, match=r"decimal must be '.' or ','"):
        data.CsvFormat(decimal=";")


def test_fields_longer_than_the_csv_modules_limit(tmp_path):
    long_text = "x" * 200_000
    path = write(tmp_path, f"a,note,label\n1,{long_text},p\n2,short,q\n", "long.csv")
    dataset = load_csv(path, target="label", features=["a"])  # the field is read; a result holds no such level
    assert dataset.feature_names == ("a",) and dataset.class_names == ("p", "q")
    with pytest.raises(ValueError, match=r"category_names take 200,023 characters, more than the 100,000 it holds"):
        load_csv(path, target="label")


def test_a_text_column_with_a_level_per_row_warns(tmp_path):
    rows = "\n".join(f"{i},id{i},{'ab'[i % 2]}" for i in range(12))
    path = write(tmp_path, "x,customer,label\n" + rows + "\n", "ids.csv")
    with pytest.warns(UserWarning, match=r"text column 'customer' has a different value in every one of its 12 rows"):
        load_csv(path, target="label")


def test_numeric_labels_keep_their_spelling_and_match_by_value(tmp_path):
    path = write(tmp_path, "x,label\n0.5,1.0\n1.5,2.0\n2.5,1.0\n3.5,10.0\n", "labels.csv")
    dataset = load_csv(path, target="label")
    assert dataset.class_names == ("1.0", "2.0", "10.0")  # as written, in numeric order
    np.testing.assert_array_equal(dataset.y, [0, 1, 0, 2])
    again = load_csv(path, target="label", class_names=dataset.class_names)
    np.testing.assert_array_equal(again.y, dataset.y)
    respelled = write(tmp_path, "x,label\n0.5,1\n1.5,2\n", "respelled.csv")
    np.testing.assert_array_equal(load_csv(respelled, target="label", class_names=dataset.class_names).y, [0, 1])


def test_bundled_scikit_learn_sets_are_cached_and_read_back_identically(monkeypatch, tmp_path):
    """The first load keeps scikit-learn's arrays in the cache folder; later loads read them without importing
    scikit-learn and give the same data set (same fingerprint)."""
    from sklearn.datasets import load_wine

    monkeypatch.setenv("BAYESCLASS_CACHE_DIR", str(tmp_path))
    first = data.load("wine")
    (stored,) = (tmp_path / "datasets").glob("wine-scikit-learn-*.npz")
    again = data.load("wine")
    reference = load_wine()
    for dataset in (first, again):
        np.testing.assert_array_equal(dataset.X, reference.data)
        np.testing.assert_array_equal(dataset.y, reference.target)
        assert dataset.feature_names == tuple(reference.feature_names)
        assert dataset.class_names == tuple(str(name) for name in reference.target_names)
    assert again.fingerprint() == first.fingerprint()
    stored.write_bytes(b"not an npz file")  # a damaged cache entry is rebuilt, never an error
    assert data.load("wine").fingerprint() == first.fingerprint()
    assert list(tmp_path.glob("datasets/.*.tmp")) == []


def test_generators_carry_the_true_class_probabilities_through_subsets_and_splits():
    gaussians = data.seed001_gaussians(300, random_seed=2)
    log_odds = np.log(7 / 3) + gaussians.X[:, 0] - gaussians.X[:, 1]  # seed 001: equal identity covariances
    np.testing.assert_allclose(gaussians.true_class_proba[:, 0], 1 / (1 + np.exp(-log_odds)), atol=1e-14)
    separable = data.seed000_separable(50, random_seed=1)
    np.testing.assert_array_equal(separable.true_class_proba, np.eye(2)[separable.y])  # disjoint supports
    gp = data.seed004_gp(40, random_seed=3)
    np.testing.assert_allclose(gp.true_class_proba[:, 1], data.seed004_gp_truth(40, random_seed=3)["proba"])
    train, _, test = train_validation_test_split(gaussians, random_seed=0)
    for part in (train, test, gaussians.subset([5, 1, 5])):
        rows = [int(np.flatnonzero((gaussians.X == row).all(axis=1))[0]) for row in part.X]
        np.testing.assert_array_equal(part.true_class_proba, gaussians.true_class_proba[rows])
    assert gaussians.select_features(["x1"]).true_class_proba is None  # P(class | x1) is another function
    assert gaussians.select_features(["x2", "x1"]).true_class_proba is not None
    assert data.load("wine").true_class_proba is None
    with pytest.raises(ValueError, match=r"true_class_proba has shape \(2, 2\); it must be \(300, 2\)"):
        Dataset(**{**_fields(gaussians), "true_class_proba": np.full((2, 2), 0.5)})


def _fields(dataset: Dataset) -> dict:
    import dataclasses

    return {field.name: getattr(dataset, field.name) for field in dataclasses.fields(dataset)}
