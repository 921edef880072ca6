"""Streaming and sharding: subset analyses block by block (``stream``) or over devices (``shard``).

One job per module: :mod:`.sources` (where the points come from), :mod:`.buffers` (page
release, the aligned buffer pool, halo windows, read-ahead), :mod:`.plan` (every subset as a
global index range, with the resolver's rules), :mod:`.kernels` (the compiled per-block
kernels), :mod:`.assembly` (results home), :mod:`.pieces` (sliding windows from chunks),
:mod:`.driver` (:func:`jaxsubset.stream`) and :mod:`.shard` (:func:`jaxsubset.shard`).
"""
