"""What every stage object with one entry per cell shares."""

from __future__ import annotations

import numpy as np


class PerCell:
    """Base of the stage objects that hold one value per cell (``CellTable``, ``Problem``)."""

    value: np.ndarray

    @property
    def n(self) -> int:
        """Number of cells."""
        return len(self.value)
