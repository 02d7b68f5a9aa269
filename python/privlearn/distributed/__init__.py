"""Fits on data beyond one machine: Dask.distributed back-ends of the private estimators.

The estimators accept ``dask.array`` / ``dask.dataframe`` input and run on the workers that hold
the data; the result equals the single-machine fit bit for bit for any chunking and worker count.
The driver (the process that calls ``fit``) is trusted: it sees the noiseless partial sums of
the workers and adds the noise once (sites that do not trust it need secure aggregation, which
is out of scope).
"""

from __future__ import annotations
