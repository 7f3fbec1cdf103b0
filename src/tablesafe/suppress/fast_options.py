"""The tuning knobs of ``fast`` (:class:`FastOptions`) and how their defaults depend on
the table's size."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tablesafe.parallel import worker_count
from tablesafe.suppress.local import SearchOptions

__all__ = ["FastOptions"]


@dataclass(frozen=True)
class FastOptions:
    """Tuning knobs of :func:`tablesafe.suppress.fast.fast_pattern` (the defaults are the
    measured choice).

    Attributes:
        max_hops: largest neighbourhood radius (relation hops) tried before the target's
            whole connected block is used.
        max_cells: neighbourhood size above which growth jumps to the whole block.
        withheld_weight: weight factor for cells already withheld (relative to their
            normal weight); small so that free cells are preferred.
        tol: relative deviation below which a cell is considered not to move.
        singleton_penalty: weight factor for single-respondent cells (with singleton
            protection): large, so that a certificate moves one only where no local
            alternative exists.
        inner_hops: reach (relation hops) of the search among the cells already
            withheld when it does not use boxes (``inner="hops"`` or no table
            structure), and of the second pass's search around a target without a
            table structure.
        box_levels: box levels (1 to 6, see
            :func:`tablesafe.suppress.local.geometry.code_sets`) in order of preference,
            largest first; the first within ``max_box`` code combinations is used.
            Default: up to the whole dimension, ``(6, 5, 4, 2, 1, 3)``, for tables of at
            most ``wide_table`` cells, else ``(1, 3)``. Measured: on the 2-D 1k table
            the large boxes cut the withheld value from 3.75M to 1.49M (without
            singleton protection); on the sparse 1M table they withheld 28 % more
            cells. On tables of about 13,000 cells they matter once ``max_box`` lets
            the whole table be a box (see ``wide_max_box``).
        inner: how the search among the cells already withheld chooses them: ``"box"``
            (within the first box, with a table structure) or ``"hops"`` (within
            ``inner_hops`` relation hops).
        inner_first: box levels the search among the cells already withheld tries
            before the first box, where their box is smaller (``()``: the first box
            alone). A certificate from a smaller box takes a smaller LP and moves fewer
            cells, so its target leans on fewer single respondents, whose own
            certificates follow. Measured with singleton protection and holdings
            (generated tables, p% rule, `fast`, one run each): the 13,851-cell three-way
            table 144.5 -> 122.3 s and 62.96 -> 61.70 M (its first box is the whole
            table); the 13,167-cell two-way table 29.4 -> 15.6 s, 7.08 -> 7.10 M; the
            1,872-cell three-way table 14.2 -> 14.1 s, 8.31 -> 8.20 M.
        strict_hops: with ``strict_adds``, reach (relation hops) of the search that
            keeps single respondents fixed on problems without a table structure (with
            one it stays within the first box).
        strict_whole_max: on problems without a table structure and at most this many
            cells, that search may also use the target's whole block.
        log_every: print a line to standard error every this many targets (0: never).
        max_box: most code combinations of a box in the first attempts. Default:
            ``wide_max_box`` for tables of at most ``wide_table`` cells, 4,000 above.
        wide_table: size (cells) up to which the large boxes are tried first (see
            ``box_levels``).
        wide_max_box: ``max_box`` for tables of at most ``wide_table`` cells.
            Measured with singleton protection and holdings (generated tables, p%
            rule): on the 13,851-cell three-way table ``fast`` withheld 89.0 M instead
            of 249.1 M (19 s instead of 2 s), and seeded with ``modular``'s pattern it
            added 47 M instead of 218 M; on the 13,167-cell two-way table 10.9 M instead
            of 47.6 M (14 s instead of 1.3 s); on the 61,215-cell two-way table, where
            no whole-table box fits, 224.4 M instead of 247.4 M. Tables of at most
            ``small_table`` cells had 4,000 until the forty-second session, which on
            most of them is the whole table already; on small tables of more code
            combinations (sparse, or of irregular hierarchies) ``fast`` withheld far
            more: the generated deep 4,345-cell two-way table 150.1 M -> 14.9 M (4.2 ->
            21.8 s), an irregular 4,588-cell two-way one 60.7 M -> 17.5 M (5.0 ->
            27.3 s), and ``modular`` on an irregular 4,340-cell three-way table, whose
            attacker-LP repair ran out of time, was completed by the certificates with
            65.8 M instead of 14.8 M (``benchmarks/irregular_shapes.py``).
        max_wide_box: most code combinations of a box tried (last) before relation hops.
        cleanup_effort: local LPs the second pass (releasing complements the
            certificates can do without, most expensive first) may spend, as a multiple
            of the first pass's (at least ``cleanup_min_lps``); 0 turns it off.
            Default: 1 for tables of at most ``small_table`` cells, else 0 (measured:
            on the 1k table it cut the withheld value by a further 25 %, on the 13k
            table by 5 % at five times the first pass's time, on the 1M table by
            almost nothing).
        small_table: size (cells) up to which the defaults above favour less withheld
            value over speed.
        cleanup_min_lps: the least number of local LPs the second pass's budget is
            computed from (see ``cleanup_effort``).
        cleanup_swap: in that pass, also release a cell when new cells that cost less,
            together, can take its place in the certificates.
        share: let a certificate's direction protect the later targets it moves far
            enough (no LP for them).
        strict_adds: let the search that moves no single respondent's cell add new
            complements (within the first box, or ``strict_hops`` hops and the whole
            block up to ``strict_whole_max`` cells). Off (the default), a target that
            has no such certificate among the cells already withheld gets the cheapest
            one that may move singletons' cells (penalised), and a certificate keeping
            each of them fixed for its respondent. Measured with holdings (singleton
            protection): the 13,851-cell three-way table 89.0 M -> 69.4 M withheld
            (21 -> 64 s), the 13,167-cell two-way table 10.9 M -> 7.4 M (14 -> 18 s);
            completing `modular`'s three-way pattern added 22 M instead of 47 M.
            Default: off on tables with a table structure of up to ``wide_table``
            cells (the linked pair of 65,416 cells: 674.5 M -> 551.9 M, 93 -> 145 s
            with a CI run beside it); on above (off, the first pass of the
            1,036,350-cell table had not finished after 15 minutes, against 7.6
            minutes on) and without a table structure, where the search that may move
            singletons would grow by relation hops up to whole blocks (not measured:
            Castro's JJ files have no respondents).
        insider_hops: reach (relation hops, never the whole block) of the search for a
            certificate that keeps one single respondent's cell fixed; pairs it cannot
            cover are reported in ``stats["insider_unprotected"]``.
        insider_inner_hops: reach (relation hops) of a first search among the cells
            already withheld for an insider's certificate, before the first box, where
            the cells withheld in that box are more than
            :data:`tablesafe.suppress.local.search.INSIDER_HOPS_FROM` (with a table
            structure; 0: never). Such a certificate adds no cell, so any one that is
            found serves as well as the box's; a smaller LP finds it. Measured with
            ``suppress(problem, "auto")`` (``fast``) on the generated 13,851-cell
            three-way table with holdings (fifty-eighth session; its first box is the
            whole table, the LP there about 6,000 withheld cells): the same 61.70 M in
            76.6 s instead of 94-99 s; reaches 2, 3 and 4 found none, 6 found 1,385 of
            2,919, 7 1,866, 8 2,040 and 9 (fewer tried, its region often half the box)
            1,942 (83.2 s). Since the sixty-first session the regions tried grow hop
            by hop from :data:`~tablesafe.suppress.local.search.INSIDER_LADDER_MIN`
            cells up to half the box, and every insider's LP among withheld cells has no
            cost (any certificate there will do): on the 12,180-cell three-way table
            (fan-outs 4x6, 3x8 and 2x6), whose 8-hop region is more than half its first
            box, 5 hops found 71 of the box's 197 insiders' certificates, 6 hops 60 more
            and 7 hops 31, at 1-15 ms an LP against 155 ms for the box's.
            The search for the target's own certificate keeps the box: with this reach
            there too, 70.5 s but 62.47 M (the certificates it finds lean on other
            single respondents, whose certificates then add cells).
        parallel_from: number of targets from which the targets are split into
            ``max_workers`` groups (see ``groups``) and ``workers`` defaults to the CPUs.
            Default: :data:`PARALLEL_FROM` with a table structure,
            :data:`PARALLEL_FROM_RELATIONS_ONLY` without one.
        max_workers: most worker processes by default, and the default number of groups
            from ``parallel_from`` targets on.
        order: the order in which the targets are protected: ``"value"`` (smallest
            absolute value first), ``"need"`` (largest protection level first, the
            sequential approach of seed 003 B.2.b) or ``"both"`` (the two, one after the
            other, and the cheaper pattern is kept; with a time limit the second only
            when the first ended within ``fast.BOTH_ORDERS_SHARE`` of it). Default:
            ``"both"`` for tables of at most ``small_table`` cells, ``"value"`` up to
            ``wide_table`` cells, else ``"need"``. ``stats["order"]`` says which order
            gave the pattern. Measured with singleton protection
            and holdings (generated tables, p% rule, one worker): the smallest targets
            first withheld 69.35 M -> 62.96 M on the 13,851-cell three-way table
            (79 -> 193 s), 7.44 M -> 7.08 M on the 13,167-cell two-way table (33 -> 44
            s), 9.60 M -> 8.88 M on the 1,872-cell three-way table and 1.35 M -> 1.16 M
            on a one-level 14 x 14 x 14 table (19 -> 32 s); a seeded random order fell
            in between. The largest first share more certificates (a large target's
            direction protects smaller ones without an LP), hence the speed, but their
            certificates route large amounts through large cells; the smallest first
            withhold small cells that later targets reuse. Not everywhere: on Castro's
            TOYSARAH (2,890 cells, values from units to 1e11) the smallest first
            withheld 7.36e11 against 3.53e11, and on three of eight generated tables of
            1,000-2,400 cells 1 % more after the second pass; hence both on small
            tables.
        groups: groups of targets protected independently of each other (the union of
            their patterns is proved by the union of their certificates). The pattern
            depends on this number, never on the processes that run the groups
            (``fast_pattern``'s ``workers``). Default (``None``): 1 below
            ``parallel_from`` targets, else ``max_workers``, whatever the CPUs and the
            workers (before, the number of workers, so a machine with one CPU, or a
            caller asking for one worker, got another pattern).
    """

    max_hops: int = 6
    max_cells: int = 20_000
    withheld_weight: float = 1e-4
    tol: float = 1e-7
    singleton_penalty: float = 1e3
    inner_hops: int = 4
    box_levels: tuple[int, ...] | None = None
    inner: str = "box"
    inner_first: tuple[int, ...] = (4,)
    strict_hops: int = 4
    strict_whole_max: int = 20_000
    strict_adds: bool | None = None
    log_every: int = 0
    max_box: int | None = None
    max_wide_box: int = 40_000
    cleanup_effort: float | None = None
    small_table: int = 5_000
    wide_table: int = 100_000
    wide_max_box: int = 20_000
    cleanup_min_lps: int = 2_000
    cleanup_swap: bool = True
    share: bool = True
    insider_hops: int = 3
    insider_inner_hops: int = 8
    parallel_from: int | None = None
    max_workers: int = 2
    groups: int | None = None
    order: str | None = None

    def __post_init__(self) -> None:
        if self.order not in (None, "value", "need", "both"):
            raise ValueError(f"FastOptions.order must be 'value', 'need' or 'both', not {self.order!r}")

    def for_table(self, cells: int, structured: bool = True) -> FastOptions:
        """These options with the size-dependent defaults (``box_levels``, ``max_box``,
        ``cleanup_effort``, ``strict_adds``, ``order``) settled for a table of ``cells`` cells
        (``structured``: with a table structure, hence boxes)."""
        small = cells <= self.small_table
        wide = cells <= self.wide_table
        return replace(
            self,
            box_levels=self.box_levels if self.box_levels is not None
            else ((6, 5, 4, 2, 1, 3) if wide else (1, 3)),
            max_box=self.max_box if self.max_box is not None
            else (self.wide_max_box if wide else 4_000),
            cleanup_effort=self.cleanup_effort if self.cleanup_effort is not None
            else (1.0 if small else 0.0),
            strict_adds=self.strict_adds if self.strict_adds is not None else not (wide and structured),
            order=self.order if self.order is not None
            else ("both" if small else "value" if wide else "need"),
            parallel_from=self.parallel_from if self.parallel_from is not None
            else (PARALLEL_FROM if structured else PARALLEL_FROM_RELATIONS_ONLY),
        )

    def search_options(self) -> SearchOptions:
        """The local search's part of these options (after :meth:`for_table`)."""
        assert self.box_levels is not None and self.max_box is not None and self.strict_adds is not None, \
            "call for_table first"
        return SearchOptions(
            max_hops=self.max_hops, max_cells=self.max_cells, withheld_weight=self.withheld_weight,
            inner_hops=self.inner_hops, inner=self.inner, strict_hops=self.strict_hops,
            strict_whole_max=self.strict_whole_max, strict_adds=self.strict_adds, max_box=self.max_box,
            max_wide_box=self.max_wide_box, box_levels=self.box_levels, inner_first=tuple(self.inner_first),
            insider_inner_hops=self.insider_inner_hops,
        )

    def default_groups(self, n_targets: int) -> int:
        """``groups`` when given, else 1 below ``parallel_from`` targets and
        ``max_workers`` from there on (the pattern depends on this, not on the CPUs)."""
        if self.groups is not None:
            return int(self.groups)
        return 1 if n_targets < self._parallel_from() else int(self.max_workers)

    def _parallel_from(self) -> int:
        return self.parallel_from if self.parallel_from is not None else PARALLEL_FROM

    def default_workers(self, n_targets: int) -> int:
        """One process below ``parallel_from`` targets, else the CPUs this process may
        use (at most ``max_workers``)."""
        if n_targets < self._parallel_from():
            return 1
        return worker_count(self.max_workers)


PARALLEL_FROM = 20_000
"""Default ``FastOptions.parallel_from`` with a table structure: two groups share fewer
complements than one, whose boxes reuse the cells earlier targets withheld. Measured with
groups from 1,000 targets instead (forty-fourth session, automatic limits, two workers):
the generated 13,167-cell two-way table 15.1 -> 8.2 s but 7.10 -> 7.39 M; ``auto``
(``fast``) on the 13,851-cell three-way table 132 s / 61.7 M -> 83.5 s / 68.3 M."""

PARALLEL_FROM_RELATIONS_ONLY = 2_000
"""Default ``FastOptions.parallel_from`` without a table structure. Measured on Castro's
instances with more than 1,000 sensitive cells (forty-fourth session, two workers), two
groups instead of one: DALE (4,923) 19.1 -> 9.2 s and CBS (2,467) 4.6 -> 2.5 s, each at
the same withheld value (256 and 403); JJTABEL3 (1,054) 6.4 -> 5.1 s but 1.147e9 ->
1.187e9, and ``optimal`` there, which starts from ``fast``'s pattern, 6.54e8 -> 6.67e8
at a 30 s limit. Hence from 2,000 targets."""
