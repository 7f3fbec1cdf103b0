"""Cells of two linked tables whose common part is no cell of either: the single
respondent of one is not an attacker of the other when the smallest cell containing
both has that one respondent only (found on the scaled-down linked pair with
holdings, where protection then failed: a respondent 'attacking' its own cell)."""

from __future__ import annotations

import numpy as np

from tablesafe.structure.insiders import InsiderModel
from tablesafe.synthetic import problem_from_data, synthetic_preset


def test_linked_cells_of_one_respondent_overlap():
    p = problem_from_data(synthetic_preset("linked3k", seed=1, holding_cohesion=0.7), p=15, use_holdings=True)
    names = list(p.names.astype(str))
    k = names.index("I2.1|R2.2|Total|L2")  # industry x region x legal form
    s = names.index("I2.1|R2.2|S2|Total")  # industry x region x size
    join = names.index("I2.1|R2.2|Total|Total")
    assert p.contributors[join] == 1 and p.contributors[k] >= 1 and p.contributors[s] >= 1
    model = InsiderModel.of(p)
    assert model.overlaps(np.array([s]), k)[0]
    assert len(model.attackers(k, np.array([s]))) == 0
    # a cell of the other table under a join with several respondents stays an attacker
    # candidate (whether it shares a respondent with the target is unknown)
    many = [i for i, n in enumerate(names)
            if n.endswith("|Total") and n.split("|")[2] != "Total" and n.split("|")[0] != "Total"
            and p.contributors[names.index("|".join(n.split("|")[:2] + ["Total", "Total"]))] > 1]
    assert many
    i = many[0]
    parts = names[i].split("|")
    other = [j for j, n in enumerate(names) if n.split("|")[:2] == parts[:2] and n.split("|")[2] == "Total"
             and n.split("|")[3] != "Total"]
    assert other
    assert not model.overlaps(np.array([i]), other[0])[0]
