"""Data sets for bayesclass: the :class:`Dataset` container, loaders, the seeds' example data, splits.

Everything a model or the CLI needs from this package is re-exported here.
"""

from bayesclass.data.csvfile import CsvChunk, CsvFormat, count_csv_rows, features_from_csv, load_csv, read_csv_chunks
from bayesclass.data.dataset import Dataset, FeatureKind, check_features
from bayesclass.data.loaders import DatasetInfo, available, load, load_parquet, load_test
from bayesclass.data.origin import DataOrigin, MissingRecord, SplitOrigin
from bayesclass.data.split import split_row_indices, train_validation_test_split
from bayesclass.data.synthetic import (
    logistic_known_weights,
    seed000_separable,
    seed001_gaussians,
    seed004_gp,
    seed004_gp_truth,
    true_log_odds,
)

__all__ = [
    "CsvChunk",
    "CsvFormat",
    "DataOrigin",
    "Dataset",
    "DatasetInfo",
    "FeatureKind",
    "available",
    "count_csv_rows",
    "check_features",
    "load",
    "load_parquet",
    "load_test",
    "logistic_known_weights",
    "MissingRecord",
    "features_from_csv",
    "load_csv",
    "read_csv_chunks",
    "SplitOrigin",
    "seed000_separable",
    "seed001_gaussians",
    "seed004_gp",
    "seed004_gp_truth",
    "split_row_indices",
    "train_validation_test_split",
    "true_log_odds",
]
