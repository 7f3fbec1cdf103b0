"""Which steps of a suppression run the clock ended, read from the run's stats.

Most steps stop on a bound in LP work (:mod:`tablesafe.suppress.work_clock`) or on
counts, at the same point in every run. A step the clock ended may end elsewhere in
another run on the same input (a loaded machine gets less done), so the stats and the
report name those steps.
"""

from __future__ import annotations

from tablesafe.suppress.outsiders_first import CERTIFICATES_ASKED

CLOCK_KEYS = ("hurried_after_targets", "hurried_by", "chain_certificates", "box_certificates", "lp_capped",
              "other_order_skipped", "other_order_skipped_by", "second_pass_clock_stopped")
"""``fast``'s stats that say where the clock decided its pattern, which a completion of
another method's pattern by certificates keeps (:func:`clock_decided` reads them)."""


def clock_decided(stats: dict) -> list[str]:
    """The steps of a run that the clock ended, from its stats: where it did, another run
    on the same input may give another pattern (a loaded machine gets less done). Steps
    bounded by LP work (:mod:`tablesafe.suppress.work_clock`) or by counts are not
    listed: they stop at the same point in every run."""
    out = []
    if stats.get("clock_guarded"):
        out.append("the search (its guard on the clock, not its work bound)")
    if stats.get("subtables_skipped"):
        out.append("the subtables (some left to the repair)")
    if stats.get("subtables_clock_guarded"):
        out.append("the subtables (a solve ended by its guard on the clock)")
    if stats.get("repair_timed_out"):
        out.append(str(stats["repair_timed_out"]))
    if stats.get("completion_hurried"):
        out.append("the certificates' search (hurried from its start on the search's estimate)")
    if stats.get("hurried_after_targets") is not None and stats.get("hurried_by") != "work":
        out.append("the certificates' search (hurried)")
    if stats.get("lp_capped"):
        out.append("the certificates' search (an LP stopped by its cap on the time left)")
    if stats.get("chain_certificates") or stats.get("box_certificates"):
        out.append("the certificates' search (chains without an LP)")
    if stats.get("other_order_skipped") and stats.get("other_order_skipped_by") != "work":
        out.append("the certificates' second order of targets (left out)")
    if stats.get("second_pass_clock_stopped"):
        out.append("the certificates' second pass (releasing cells)")
    if stats.get("cleanup_stopped_by") == "clock":
        out.append("the cleanup")
    if stats.get("outsiders_first") and stats["outsiders_first"] != CERTIFICATES_ASKED:
        # whether it starts is read off the time left, and it must end by the deadline
        out.append("fast's second try, outsiders first (whether it started, and ended in time)")
    return out
