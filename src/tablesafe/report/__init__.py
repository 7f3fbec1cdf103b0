"""The HTML report: one self-contained file (inline CSS, images embedded as base64 PNG).

:func:`render_report` turns a :class:`~tablesafe.api.ProtectResult` into HTML;
``ProtectResult.report(path)`` writes it atomically.
"""

from tablesafe.report.html import render_report

__all__ = ["render_report"]
