"""The result of a protection run: :class:`ProtectResult` holds the assessed problem, the
pattern, the audit, the parameters and run times, and builds from them the analyst table,
the publication, the information loss and the files (:meth:`ProtectResult.write`).

It decides nothing: every status comes from the rules, the user or the suppression
method, and every verdict from the audit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.audit import all_protected, verdict_line
from tablesafe.errors import InputError
from tablesafe.problem import EMPTY, MANUAL, PROTECTED, SAFE, SECONDARY, Pattern, Problem


@dataclass(frozen=True, repr=False)
class ProtectResult:
    """Everything a protection run produced.

    The attributes cannot be reassigned (:func:`dataclasses.replace` makes a changed
    copy); the views below are computed once, on first use. ``timings`` is the one
    record that grows: :meth:`write` adds the time it took.

    Attributes:
        problem: the assessed problem (statuses before suppression, levels, bounds).
        pattern: the withheld cells chosen by the method (primaries included).
        audit: the audit of the pattern (arrays ``lower``, ``upper``, ``verdict``), or
            None when no audit ran (``method="none"`` without the audit stage).
        response: name of the value column of the publication.
        method: the protection method used.
        params: the run's parameters (rules included: confidential, analyst use only).
        timings: seconds per stage.
        marker: text written for withheld cells in the publication (None: empty).
        empty_marker: text written for empty cells (None: 0).
        adjustment: for an adjustment method (CTA, rounding), the checked
            :class:`~tablesafe.adjust.Adjustment`: the publication then holds every cell
            with its adjusted value, and nothing is withheld.
        intervals: for interval publication (``method="intervals"``), the checked
            :class:`~tablesafe.interval_publication.PublishedIntervals`: the publication
            then adds columns ``low`` and ``high`` holding each withheld cell's interval.
        contributions: the contribution-level audit
            (:class:`~tablesafe.uncertainty.ContributionAudit`) when the run asked for it
            (``uncertainty=True``): the analyst table then adds, per sensitive cell, the
            most exposed attacker's interval of the largest contribution.
        noise: for method ``noise``, the :class:`~tablesafe.noise.Noise` (true and noisy
            values; ``problem`` is then the noisy table, whose values are published).
    """

    problem: Problem
    pattern: Pattern
    audit: Any | None
    response: str = "value"
    method: str = "auto"
    params: dict = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    marker: str | None = None
    empty_marker: str | None = None
    adjustment: Any | None = None
    intervals: Any | None = None
    contributions: Any | None = None
    noise: Any | None = None

    # ------------------------------------------------------------------ views
    @property
    def withheld(self) -> np.ndarray:
        """Boolean mask of withheld cells (primary and secondary)."""
        return np.asarray(self.pattern.withheld, dtype=bool)

    @cached_property
    def status(self) -> np.ndarray:
        """Final statuses: the problem's, with complements marked ``M``."""
        return self.pattern.statuses(self.problem)

    @cached_property
    def cells(self) -> pd.DataFrame:
        """The analyst table (confidential): codes, value, contributors, status, rule,
        protection levels, audit interval and verdict."""
        from tablesafe.io.analyst import analyst_frame
        from tablesafe.io.publication import stable_values

        frame = analyst_frame(self.problem, self.status, self.audit)
        if self.intervals is not None:
            frame["published_low"] = stable_values(self.intervals.low)
            frame["published_high"] = stable_values(self.intervals.high)
        if self.adjustment is not None:
            frame["adjusted"] = stable_values(self.adjustment.values)
            frame["deviation"] = stable_values(self.adjustment.deviation)
            frame["direction"] = np.select([self.adjustment.direction > 0, self.adjustment.direction < 0],
                                           ["up", "down"], "")
        if self.noise is not None:
            frame["true_value"] = stable_values(self.noise.true)
            frame["noise"] = stable_values(self.noise.deviation)
            frame["protected_by_noise"] = self.noise.by_noise
        if self.contributions is not None:
            worst = self.contributions.most_exposed()
            names = pd.Index(np.asarray(self.problem.names, dtype=object))
            for col, src in (("x1_attacker", "attacker"), ("x1_low", "ui_low"), ("x1_high", "ui_high"),
                             ("x1_midpoint", "midpoint"), ("x1_need_left", "need_left"),
                             ("x1_need_right", "need_right"), ("x1_need_sliding", "need_sliding"),
                             ("x1_verdict", "verdict"), ("x1_midpoint_close", "midpoint_close")):
                vals = worst[src].reindex(names).to_numpy()
                frame[col] = stable_values(vals.astype(float)) if worst[src].dtype.kind == "f" else vals
        return frame

    @cached_property
    def publication(self) -> pd.DataFrame:
        """The publication table: codes then the response column, withheld cells empty
        (after an adjustment: every cell, with its adjusted value; after interval
        publication: columns ``low`` and ``high`` with the interval of each withheld cell,
        empty for the others). A declared missing
        code that no record carries is no category of the published table: its rows are
        left out (the analyst table keeps them)."""
        from tablesafe.io.analyst import codes_of
        from tablesafe.io.publication import publication_frame, unlisted_cells

        frame = publication_frame(
            codes_of(self.problem),
            self.problem.value if self.adjustment is None else self.adjustment.values,
            self.withheld,
            self.response,
            empty=self.problem.status == EMPTY,
            marker=self.marker,
            empty_marker=self.empty_marker,
        )
        if self.intervals is not None:
            from tablesafe.io.publication import interval_columns

            frame = interval_columns(frame, self.intervals.low, self.intervals.high, self.response)
        unlisted = unlisted_cells(self.problem)
        return frame[~unlisted].reset_index(drop=True) if unlisted.any() else frame

    @property
    def certificates(self) -> pd.DataFrame | None:
        """Protection certificates of the pattern (None when not requested)."""
        return self.pattern.certificates

    @property
    def ok(self) -> bool:
        """True when an audit ran and every sensitive cell is protected against the
        default attacker (insider findings are reported by :meth:`summary`); after an
        adjustment, True (its check passed, or the run raised)."""
        if self.adjustment is not None:
            return True
        return self.audit is not None and all_protected(self.audit)

    @cached_property
    def counts(self) -> dict[str, int]:
        """Number of cells per final status letter (S U A P M Z)."""
        letters, n = np.unique(self.status, return_counts=True)
        out = {s: 0 for s in (SAFE, "U", MANUAL, PROTECTED, SECONDARY, EMPTY)}
        out.update({str(a): int(b) for a, b in zip(letters, n)})
        return out

    @cached_property
    def information_loss(self) -> pd.DataFrame:
        """Withheld cells and value, overall and per level of each dimension.

        Columns: ``scope`` (``all`` or a dimension name), ``level`` (hierarchy depth, 0 for
        the total; -1 for the overall row), ``cells``, ``withheld``, ``primary``,
        ``secondary``, ``value`` (sum of absolute values), ``withheld_value``,
        ``secondary_value``, ``withheld_pct`` and ``withheld_value_pct``.
        """
        return information_loss(self.problem, self.withheld)

    @property
    def method_text(self) -> str:
        """The method as run: for ``auto``, the method it chose and why."""
        stats = self.pattern.stats or {}
        chosen = stats.get("method_chosen")
        if self.method == "auto" and chosen:
            return f"auto: {chosen} ({stats.get('method_reason', '')})"
        if self.intervals is not None and chosen:
            return f"{self.method}: suppression by {chosen}, withheld cells published as intervals"
        if self.noise is not None:
            return (f"noise: multipliers {self.noise.options.percent:g} ± {self.noise.options.spread:g} % from 1 per "
                    f"company; sensitive cells the noise does not protect withheld, complements by "
                    f"{chosen or 'auto'}")
        return str(self.method)

    def parameters(self) -> dict[str, Any]:
        """The run's parameters as the report lists them: every option as given (None:
        not given), the method as run (:attr:`method_text`) and the time limit the
        suppression had, given or chosen from the table size."""
        out = dict(self.params)
        stats = self.pattern.stats or {}
        if (self.method == "auto" or self.intervals is not None) and stats.get("method_chosen"):
            out["method"] = self.method_text
        if "time_limit" in stats:
            how = "given" if stats.get("time_limit_given") else "chosen from the table size"
            out["time_limit"] = f"{stats['time_limit']:g} s ({how})"
            if _quick(stats):
                out["time_limit"] += f"; reached: {_chain_text(stats)}"
        return out

    def suppression_steps(self) -> dict[str, str]:
        """How the pattern was built, step by step, as the report lists it: the HiTaS
        subtables, the full-table repair (what tau-ARGUS's Modular leaves out) or the
        certificates that completed the pattern, with the cells and value each added,
        and the cleanup with what it gave back. Empty for a run with none of these."""
        st = self.pattern.stats or {}
        out: dict[str, str] = {}
        if st.get("copies_merged"):
            out["copies merged"] = (f"{_count(st['copies_merged'], 'cell')} copy another cell (a code that is its "
                                    "parent's only child): each set of copies was protected as one cell, "
                                    f"{_count(st.get('cells_solved', 0), 'cell')} in all, and the pattern proved "
                                    "on the whole table; the counts below are of the smaller table")
        if st.get("subtables"):
            out["subtables"] = (f"{_count(st['subtables'], 'subtable')}, {_count(st.get('subtables_solved', 0), 'solve')} "
                                f"by {st.get('subtable_model', 'cuts')} (a subtable without a withheld cell needs none; "
                                "one is solved again when a later one withholds a cell it published), "
                                f"{st.get('subtable_failures', 0):,} left to the repair, "
                                f"{st.get('seconds_modular', 0.0):.1f} s")
        if st.get("outsiders_first"):
            out["second try, outsiders first"] = "; then ".join(st.get("outsiders_first_tries") or
                                                                [st["outsiders_first"]])
        if "repair_added" in st:
            out["full-table repair"] = (f"added {_count(st['repair_added'], 'cell')} worth "
                                        f"{st.get('repair_added_value', 0.0):,.2f}"
                                        + (f", {st['repair_seconds']:.1f} s" if "repair_seconds" in st else "")
                                        + (f", {_count(st['repair_rounds'], 'round')}" if "repair_rounds" in st else ""))
        if "start_check_skipped" in st:
            out["search skipped"] = st["start_check_skipped"]
        if "repair_skipped" in st:
            out["repair skipped"] = st["repair_skipped"]
        if "repair_chosen" in st:
            out["repair chosen"] = st["repair_chosen"]
        if "completion_chosen" in st:
            out["completion chosen"] = st["completion_chosen"]
        if "repair_timed_out" in st:
            out["repair stopped"] = (f"{st['repair_timed_out']} out of time after adding "
                                     f"{_count(st.get('repair_added_before_timeout', 0), 'cell')}"
                                     + ("; the tables that proved the search's pattern prove it"
                                        if st.get("repair_by_search_tables") else ""))
        if "certificate_repair_added" in st:
            out["certificates completing the pattern"] = (
                f"added {_count(st['certificate_repair_added'], 'cell')} worth "
                f"{st.get('certificate_repair_added_value', 0.0):,.2f}, {st.get('certificate_repair_seconds', 0.0):.1f} s"
                + (f"; of these, {_count(st['certificate_repair_insider_added'], 'cell')} worth "
                   f"{st.get('certificate_repair_insider_added_value', 0.0):,.2f} first withheld by "
                   "single respondents' insider certificates" if st.get("certificate_repair_insider_added") else "")
                + _settled_text(st))
        if st.get("insider_added") and "certificate_repair_added" not in st:
            out["insider certificates"] = (
                f"{_count(st['insider_added'], 'cell')} worth {st.get('insider_added_value', 0.0):,.2f} "
                "first withheld by the certificates against single respondents' insiders (later targets' "
                "own certificates may use them too)")
        if st.get("clock_decided"):
            out["ended by the clock"] = ("; ".join(st["clock_decided"]) + ": another run, on a machine "
                                         "more or less loaded, may give another pattern")
        if "cleanup_seconds" in st:
            out["cleanup"] = (f"gave back {_count(st.get('cleanup_removed', 0), 'cell')} worth "
                              f"{st.get('cleanup_removed_value', 0.0):,.2f}, {st['cleanup_seconds']:.1f} s"
                              + {"work": "; stopped at its bound on LP work (the same in every run)",
                                 "clock": "; stopped at its share of the time limit"}.get(
                                  st.get("cleanup_stopped_by", ""), ""))
        return out

    # ---------------------------------------------------------------- summary
    def __repr__(self) -> str:
        first = self.summary().splitlines()
        return f"<ProtectResult method={self.method!r}: {first[0]}; {first[2] if len(first) > 2 else ''}>"

    def summary(self) -> str:
        """A few lines for the terminal: cells per status, information loss, audit, time.

        Names no rule parameter, but does count primary and secondary cells: for the
        analyst, not for the public.
        """
        c = self.counts
        loss = self.information_loss.iloc[0]
        lines = [
            (
                f"{self.problem.n} cells: {c['S']} safe, {c['U'] + c['A']} primary, {c['M']} secondary, "
                f"{c['P']} protected, {c['Z']} empty"
            ),
            (
                f"withheld {int(loss['withheld'])} cells ({loss['withheld_pct']:.1f}%), "
                f"value {loss['withheld_value']:,.2f} ({loss['withheld_value_pct']:.2f}% of the sum of all cell values, totals included)"
            ),
        ]
        if self.adjustment is not None:
            lines[1:] = [_adjustment_line(self.adjustment)]
        if self.intervals is not None:
            lines.append(f"published as intervals (rounded outward to multiples of {self.intervals.base:g}): "
                         f"{int(self.intervals.withheld.sum())} withheld cells; the audit passed again "
                         "with the intervals known")
        if self.noise is not None:
            ns = self.noise.stats
            lines.append(f"noise added to the microdata: {ns['published']:,} of {ns['cells']:,} cells published "
                         f"with noisy values (mean relative error {100 * ns['mean_relative_error']:.2f}%); "
                         f"{ns['sensitive_published_by_noise']:,} of {ns['sensitive']:,} sensitive cells protected "
                         "by their noise")
        if self.contributions is not None:
            lines.append(self.contributions.summary())
        if _quick(self.pattern.stats or {}):
            lines.append(f"time limit reached: {_chain_text(self.pattern.stats)}")
        ended = (self.pattern.stats or {}).get("clock_decided")
        if ended:
            lines.append(f"ended by the clock: {'; '.join(ended)}; another run may give another pattern "
                         "(a longer time limit avoids it)")
        if self.audit is not None:
            lines.append("audit: " + verdict_line(self.audit))
        elif self.method == "none":
            lines.append("audit: not run (method none: primary suppression only, no safety claim)")
        total = sum(self.timings.values())
        lines.append(
            f"time {total:.2f} s ("
            + ", ".join(f"{k} {v:.2f}" for k, v in self.timings.items())
            + ")"
        )
        return "\n".join(lines)

    # ------------------------------------------------------------------ files
    def write(
        self,
        out: str | Path | None = None,
        cells: str | Path | None = None,
        report: str | Path | None = None,
        certificates: str | Path | None = None,
        jj: str | Path | None = None,
        apriori: str | Path | None = None,
        contributions: str | Path | None = None,
    ) -> None:
        """Write the requested files, all or nothing.

        Args:
            out: publication file (``.csv``, ``.parquet`` or ``.xlsx``).
            cells: analyst file (same formats).
            report: HTML report.
            certificates: Parquet file of protection certificates (columns ``target``,
                ``direction``, ``cell``, ``value``).
            jj: the protected problem as a JJ file (complements marked).
            apriori: the pattern as a tau-ARGUS a priori file (:meth:`apriori_frame`).
            contributions: the contribution-level audit, one row per sensitive cell and
                attacker (``.csv``, ``.parquet`` or ``.xlsx``; confidential); needs a run
                with ``uncertainty=True``.

        Every file is first written under a temporary name beside its target; only when
        all are complete are they renamed into place. On any error no target is touched.
        """
        from tablesafe.io.publication import staged_files, write_frame_to, write_publication_to

        if certificates is not None and self.certificates is None:
            raise InputError(
                "no certificates to write: run with certificates=True (--certificates) and a "
                "suppression method that produces them"
            )
        if contributions is not None and self.contributions is None:
            raise InputError(
                "no contribution-level audit to write: run with uncertainty=True (--uncertainty)"
            )
        t0 = time.perf_counter()
        targets = {"out": out, "cells": cells, "report": report, "certificates": certificates, "jj": jj,
                   "apriori": apriori, "contributions": contributions}
        with staged_files(targets) as tmp:
            if "out" in tmp:
                write_publication_to(self.publication, self.response, tmp["out"], out)
            if "cells" in tmp:
                write_frame_to(self.cells, tmp["cells"], cells, sheet="cells")
            if "certificates" in tmp:
                self.certificates.to_parquet(tmp["certificates"], index=False)
            if "contributions" in tmp:
                write_frame_to(self.contributions.table, tmp["contributions"], contributions, sheet="contributions")
            if "jj" in tmp:
                from tablesafe.io.jj import write_jj

                write_jj(self.protected_problem(), tmp["jj"], secondary="m")
            if "apriori" in tmp:
                from tablesafe.io.hst import hst_text

                tmp["apriori"].write_text(hst_text(self.apriori_frame(), list(self.problem.codes.columns)), encoding="utf-8")
            if "report" in tmp:
                from tablesafe.report import render_report

                tmp["report"].write_text(render_report(self), encoding="utf-8")
        self.timings["write"] = self.timings.get("write", 0.0) + time.perf_counter() - t0

    def report(self, path: str | Path) -> None:
        """Write the self-contained HTML report to ``path``."""
        self.write(report=path)

    def apriori_frame(self, *, safe: str = "p", withheld: str = "u") -> pd.DataFrame:
        """The pattern as tau-ARGUS a priori requests (see :mod:`tablesafe.io.hst`), so a
        later run (of this or a linked table) keeps it: withheld cells (primary and
        secondary) get ``withheld`` (default ``u``), published non-empty cells ``safe``
        (default ``p``: must stay published); empty cells are left out."""
        if self.problem.codes is None:
            raise InputError("a priori files name cells by their codes; this table has none")
        keep = self.problem.status != EMPTY
        frame = self.problem.codes.loc[keep].reset_index(drop=True).astype(str)
        kind = np.where(self.withheld[keep], withheld, safe)
        return frame.assign(kind=kind, a=np.nan, b=np.nan)

    def protected_problem(self) -> Problem:
        """The problem with the final statuses (complements as ``M``)."""
        return self.problem.copy(status=self.status.copy())


def _adjustment_line(adjustment: Any) -> str:
    """One line on an adjusted table: what changed, and the check it passed."""
    q = adjustment.quality
    freed = ("; the totals asked to be kept could not all be kept, so they were left free"
             if adjustment.stats.get("totals_released") else "")
    return (f"adjusted ({adjustment.method}): {q.cells_changed} cells changed, {q.totals_moved} totals moved; "
            f"sum of absolute deviations {q.abs_deviation:,.2f}, of relative deviations {q.rel_deviation:.4g}; "
            f"largest relative change of a non-sensitive cell {100 * q.max_rel_change_safe:.2f}%{freed}; "
            "check passed")


def information_loss(problem: Problem, withheld: np.ndarray) -> pd.DataFrame:
    """Withheld cells and value, overall and per hierarchy level of each dimension."""
    withheld = np.asarray(withheld, dtype=bool)
    sens = problem.sensitive
    absval = np.abs(np.asarray(problem.value, dtype=float))
    rows = []

    def row(scope: str, level: int, mask: np.ndarray) -> None:
        w = withheld & mask
        total = float(absval[mask].sum())
        wv = float(absval[w].sum())
        rows.append(
            {
                "scope": scope,
                "level": level,
                "cells": int(mask.sum()),
                "withheld": int(w.sum()),
                "primary": int((w & sens).sum()),
                "secondary": int((w & ~sens).sum()),
                "value": total,
                "withheld_value": wv,
                "secondary_value": float(absval[w & ~sens].sum()),
                "withheld_pct": 100.0 * w.sum() / max(mask.sum(), 1),
                "withheld_value_pct": 100.0 * wv / total if total > 0 else 0.0,
            }
        )

    row("all", -1, np.ones(problem.n, dtype=bool))
    model = problem.model
    if model is not None and problem.codes is not None:
        for dim in model.dims:
            h = dim.hierarchy
            pos = pd.Categorical(problem.codes[dim.name].astype(str), categories=list(h.codes)).codes
            col = np.where(pos >= 0, np.asarray(h.depths)[pos], -1)
            for level in np.unique(col[col >= 0]):
                row(dim.name, int(level), col == level)
    return pd.DataFrame(rows)


def _settled_text(st: dict) -> str:
    """What the repair (or the subtables) had proved already, which the certificates
    completing the pattern kept."""
    parts = []
    if st.get("settled_targets"):
        parts.append(f"{_count(st['settled_targets'], 'sensitive cell')} proved already by the tables of "
                     "the repair's or the subtables' attacks, which serve as their certificates")
    if st.get("settled_by_audit"):
        parts.append(f"{_count(st['settled_by_audit'], 'sensitive cell')} proved by the repair's last audit "
                     "(the pattern audited again for what changed since"
                     + (f", {st['completion_audit_seconds']:.1f} s)" if "completion_audit_seconds" in st else ")"))
    if not parts:
        return ""
    searched = st.get("certificate_repair_targets")
    return ("; " + " and ".join(parts)
            + ("" if searched is None else f"; the certificates searched for the other {searched:,}"))


def _quick(stats: dict) -> int:
    """Sensitive cells protected without a search because the time limit was reached."""
    return int(stats.get("box_certificates") or 0) + int(stats.get("chain_certificates") or 0)


def _chain_text(stats: dict) -> str:
    """What the certificates found without a search (time limit reached) mean to the user."""
    boxes, chains = int(stats.get("box_certificates") or 0), int(stats.get("chain_certificates") or 0)
    return (f"{boxes + chains:,} sensitive cells were protected without a search for cheap complements "
            f"({boxes:,} by a box of cells around them, {chains:,} by withholding the totals that "
            "contain them); a longer time limit gives a pattern that withholds less")


def _count(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1 ("1 cell", "3 cells")."""
    return f"{int(n):,} {noun}{'' if int(n) == 1 else 's'}"
