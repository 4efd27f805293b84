"""Comparison studies: the TOML spec, its grid of cells, and the Dask runner with one atomic record per cell."""
