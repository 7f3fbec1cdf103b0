"""The compiled core of :mod:`tablesafe.suppress.flow_attacks`: successive shortest paths.

One function, :func:`shortest_paths_flow`, compiled by numba on first use (and cached
beside this file): a min-cost flow from a source node to a sink node over edges that may
carry flow either way, forward up to ``up`` and backward up to ``dn``, each unit of
movement costing the edge's weight whichever way it goes. Paths are augmented cheapest
first (Bellman-Ford with a queue: the residual graph has arcs of negative cost), so the
flow after each augmentation is the cheapest of its value (Ahuja, Magnanti and Orlin,
*Network Flows*, ch. 9). When no path is left the flow is a maximum flow, and the nodes
still reachable from the source in the residual graph are the source side of a minimum
cut.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NO_EDGE = -(2**62)
"""Marks a node not reached by the current path search."""


@njit(cache=True, nogil=True)
def shortest_paths_flow(nn: int, tail: np.ndarray, head: np.ndarray, up: np.ndarray, dn: np.ndarray,
                        w: np.ndarray, adj_ptr: np.ndarray, adj_edge: np.ndarray, src: int, snk: int,
                        required: float, full: bool, eps: float, cert: np.ndarray,
                        side: np.ndarray) -> tuple[float, int, int, int]:  # pragma: no cover - compiled
    """Augment cheapest paths from ``src`` to ``snk`` until the flow reaches ``required``
    (and, with ``full``, on to the maximum flow).

    Nodes are ``0 .. nn-1``; edge ``e`` runs from ``tail[e]`` to ``head[e]``, the edges at
    node ``u`` are ``adj_edge[adj_ptr[u]:adj_ptr[u + 1]]``. Residual capacities at or
    below ``eps`` count as none.

    Returns ``(total, reached, cut, scans)``: the flow's value (``inf`` when a path of unbounded
    capacity was found with ``full``), 1 when it reached ``required`` (``cert`` then holds
    the cheapest flow of value ``required``, per edge, positive forward), else 0 (``cert``
    holds the maximum flow); ``cut`` is 1 when the search ended with no path left, and
    ``side`` then marks the nodes reachable from ``src`` in the residual graph; ``scans``
    counts the arcs looked at (the run's work).
    """
    ne = tail.shape[0]
    f = np.zeros(ne)
    dist = np.empty(nn)
    pe = np.empty(nn, np.int64)
    inq = np.zeros(nn, np.bool_)
    queue = np.empty(nn + 1, np.int64)
    total = 0.0
    got = False
    ended = False
    scans = 0
    if required <= eps:
        got = True
        for e in range(ne):
            cert[e] = 0.0
        if not full:
            return total, 1, 0, scans
    while True:
        for i in range(nn):
            dist[i] = np.inf
            pe[i] = NO_EDGE
        dist[src] = 0.0
        qh = 0
        qt = 1
        queue[0] = src
        inq[src] = True
        cnt = 1
        while cnt > 0:
            u = queue[qh]
            qh = (qh + 1) % (nn + 1)
            cnt -= 1
            inq[u] = False
            du = dist[u]
            scans += adj_ptr[u + 1] - adj_ptr[u]
            for a in range(adj_ptr[u], adj_ptr[u + 1]):
                e = adj_edge[a]
                fe = f[e]
                if tail[e] == u:
                    v = head[e]
                    if fe < -eps:
                        c = -w[e]
                    elif up[e] - fe > eps:
                        c = w[e]
                    else:
                        continue
                    code = e
                else:
                    v = tail[e]
                    if fe > eps:
                        c = -w[e]
                    elif dn[e] + fe > eps:
                        c = w[e]
                    else:
                        continue
                    code = -e - 1
                nd = du + c
                if nd < dist[v] - 1e-12 * (1.0 + abs(nd)):
                    dist[v] = nd
                    pe[v] = code
                    if not inq[v]:
                        queue[qt] = v
                        qt = (qt + 1) % (nn + 1)
                        cnt += 1
                        inq[v] = True
        if pe[snk] == NO_EDGE:
            ended = True
            break
        b = np.inf
        v = snk
        while v != src:
            code = pe[v]
            if code >= 0:
                fe = f[code]
                cap = -fe if fe < -eps else up[code] - fe
                v = tail[code]
            else:
                e = -code - 1
                fe = f[e]
                cap = fe if fe > eps else dn[e] + fe
                v = head[e]
            if cap < b:
                b = cap
        push = b
        if not got and required - total < push:
            push = required - total
        if push == np.inf:
            total = np.inf
            break
        v = snk
        while v != src:
            code = pe[v]
            if code >= 0:
                f[code] += push
                v = tail[code]
            else:
                e = -code - 1
                f[e] -= push
                v = head[e]
        total += push
        if not got and total >= required - eps:
            got = True
            for e in range(ne):
                cert[e] = f[e]
            if not full:
                break
    if not got:
        for e in range(ne):
            cert[e] = f[e]
    if not ended:
        return total, 1 if got else 0, 0, scans
    for i in range(nn):
        side[i] = False
    side[src] = True
    queue[0] = src
    qh = 0
    qt = 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for a in range(adj_ptr[u], adj_ptr[u + 1]):
            e = adj_edge[a]
            if tail[e] == u:
                v = head[e]
                ok = up[e] - f[e] > eps
            else:
                v = tail[e]
                ok = dn[e] + f[e] > eps
            if ok and not side[v]:
                side[v] = True
                queue[qt] = v
                qt += 1
    return total, 1 if got else 0, 1, scans
