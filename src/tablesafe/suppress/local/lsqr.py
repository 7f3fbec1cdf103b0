"""A lean LSQR for the guided regions' ranking (:mod:`~tablesafe.suppress.local.guided`).

LSQR (Paige and Saunders, "LSQR: an algorithm for sparse linear equations and sparse
least squares", ACM TOMS 8(1), 1982) by Golub-Kahan bidiagonalisation: each iteration
one product with ``A`` and one with its transpose, a plane rotation and two vector
updates; it stops when the residual is small (``||r|| <= btol ||b|| + atol ||A|| ||x||``)
or the normal equations hold (``||A'r|| <= atol ||A|| ||r||``), as the paper's first two
tests, with its running estimates of ``||r||``, ``||A'r||`` and ``||A||``.

scipy's ``lsqr`` computes the same iterates through a linear operator whose Python
layers, and the norms and conditions it also estimates, cost more than the products
themselves on the block matrices the ranking meets: on 30 of them from Castro's NINE5D
(up to 10,732 columns, 58,115 entries, 100 iterations) 0.36-0.39 s with scipy against
0.20-0.22 s here, the 400 best-ranked cells the same in all but a few of 12,000. The
products add into the vectors in place (scipy's compiled CSR product, when this scipy
has it where it is looked for; else ``a @ x``, the same values by another path).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["lsqr_weighted"]


def _compiled_product() -> Callable[..., None] | None:
    """The compiled kernel behind ``csr_matrix @ vector``, which adds into its output
    (None in a scipy that keeps it elsewhere)."""
    try:
        from scipy.sparse._sparsetools import csr_matvec
    except ImportError:  # pragma: no cover - another scipy layout: the public product
        return None
    return csr_matvec  # type: ignore[no-any-return]


_product_into = _compiled_product()


def _add_product(a: sp.csr_matrix, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a @ x``, in place."""
    if _product_into is not None:
        _product_into(a.shape[0], a.shape[1], a.indptr, a.indices, a.data, x, y)
    else:  # pragma: no cover - see the module text
        y += a @ x


def lsqr_weighted(m: sp.csc_matrix, weight: np.ndarray, b: np.ndarray, iterations: int,
                  atol: float = 1e-6, btol: float = 1e-6) -> np.ndarray:
    """After at most ``iterations`` LSQR steps, ``y`` with ``m @ (weight * y)`` nearest
    ``b`` (least squares, and of least norm when many are): the columns of weight 0 get
    ``y`` 0.

    Args:
        m: the matrix (rows by columns).
        weight: per column, a non-negative weight.
        b: the right-hand side (one entry per row).
        iterations: the most iterations.
        atol, btol: the stopping tolerances (see the module text).
    """
    a = (m @ sp.diags(np.asarray(weight, dtype=np.float64))).tocsr()
    a.sort_indices()
    at = a.T.tocsr()
    a.data = a.data.astype(np.float64, copy=False)
    at.data = at.data.astype(np.float64, copy=False)
    k = a.shape[1]
    x = np.zeros(k)
    u = np.array(b, dtype=np.float64)
    beta = float(np.sqrt(u @ u))
    if beta == 0.0:
        return x
    u /= beta
    v = np.zeros(k)
    _add_product(at, u, v)
    alfa = float(np.sqrt(v @ v))
    if alfa == 0.0:
        return x
    v /= alfa
    d = v.copy()
    phibar, rhobar, bnorm, anorm2 = beta, alfa, beta, 0.0
    for _ in range(iterations):
        # the next bidiagonalisation step: beta u = A v - alfa u, alfa v = A'u - beta v
        u *= -alfa
        _add_product(a, v, u)
        beta = float(np.sqrt(u @ u))
        if beta > 0.0:
            u /= beta
        anorm2 += alfa * alfa + beta * beta
        v *= -beta
        _add_product(at, u, v)
        alfa = float(np.sqrt(v @ v))
        if alfa > 0.0:
            v /= alfa
        # the plane rotation that keeps the bidiagonal system upper triangular
        rho = float(np.hypot(rhobar, beta))
        c, s = rhobar / rho, beta / rho
        theta, rhobar = s * alfa, -c * alfa
        phi, phibar = c * phibar, s * phibar
        x += (phi / rho) * d
        d *= -theta / rho
        d += v
        anorm = float(np.sqrt(anorm2))
        if phibar <= btol * bnorm + atol * anorm * float(np.sqrt(x @ x)):
            break  # the residual is small
        if alfa == 0.0 or (anorm * phibar > 0.0 and alfa * abs(s * phi) <= atol * anorm * phibar):
            break  # the normal equations hold
    return x
