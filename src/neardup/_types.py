"""The numpy array aliases of the package, defined once: ``U64`` is a uint64 array, and so on."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["BOOL", "F64", "I8", "I32", "I64", "U8", "U16", "U32", "U64"]

BOOL = npt.NDArray[np.bool_]
F64 = npt.NDArray[np.float64]
I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
