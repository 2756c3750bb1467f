"""The Dask back end: the compiled program on chunked, lazy Dask arrays."""
