"""Adjustment methods: a table published with changed values instead of withheld ones.

- :mod:`~tablesafe.adjust.cta`: controlled tabular adjustment (seed 003 B.3).
- :mod:`~tablesafe.adjust.rounding`: controlled rounding to a base (seed 003 A.1).
- :mod:`~tablesafe.adjust.random_rounding`: unbiased random rounding (frequency tables).
- :mod:`~tablesafe.adjust.check`: the gate every adjusted table passes before it is written.
- :mod:`~tablesafe.adjust.stage`: the stage the pipeline calls (:func:`adjust_checked`).
"""

from tablesafe.adjust.methods import ADJUST_METHODS, ADJUST_REGISTRY
from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.result import Adjustment, Quality
from tablesafe.adjust.stage import adjust, adjust_checked, adjustment_options

__all__ = ["ADJUST_METHODS", "ADJUST_REGISTRY", "AdjustOptions", "Adjustment", "Quality", "adjust",
           "adjust_checked", "adjustment_options"]
