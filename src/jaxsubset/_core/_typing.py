"""Shape-annotated array types: jaxtyping's when it is installed, plain ``jax.Array`` otherwise.

The runtime dependencies are only ``jax`` and ``numpy``; jaxtyping (installed with the ``test``
extra) makes the annotations checkable, and without it they degrade to ``jax.Array``.
"""

from typing import Any

import jax


try:  # pragma: no cover - exercised by whichever environment runs the tests
    from jaxtyping import Array, ArrayLike, Bool, Float, Int, Shaped
except ImportError:  # pragma: no cover
    Array = jax.Array  # type: ignore[misc]
    ArrayLike = jax.typing.ArrayLike  # type: ignore[misc]

    class Dtyped:
        def __getitem__(self, item: Any) -> Any:
            return jax.Array

    Bool = Float = Int = Shaped = Dtyped()  # type: ignore[assignment]

__all__ = ["Array", "ArrayLike", "Bool", "Float", "Int", "Shaped"]
