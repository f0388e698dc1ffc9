"""The wild bootstrap's quartic roots (perdoc.methods.wild): Ferrari's closed form finds every real
root the companion matrix's eigenvalues find, including the cases it must treat apart."""

import numpy as np

from perdoc.methods import wild


def _from_roots(roots):
    """Rows [a, b, c, d] of the monic quartics with these (complex) roots."""
    coef = np.array([np.poly(r) for r in roots])
    return np.real(coef[:, 1:])


def _eig_real_roots(h):
    C = np.zeros((h.shape[0], 4, 4))
    C[:, 0, :] = -h
    C[:, 1, 0] = C[:, 2, 1] = C[:, 3, 2] = 1.0
    return np.linalg.eigvals(C)


def test_every_real_root_is_a_candidate():
    rng = np.random.default_rng(7)
    n = 20000
    real = rng.normal(size=(n, 4)) * rng.choice([1e-3, 1.0, 1e3], size=(n, 1))
    pair = rng.normal(size=(n, 2)) * rng.choice([1e-3, 1.0, 1e3], size=(n, 1))
    kinds = rng.integers(0, 3, n)           # 4 real roots, 2 real + a complex pair, two complex pairs
    roots = np.where(kinds[:, None] == 0, real + 0j, 0j)
    roots[kinds == 1] = np.column_stack([real[kinds == 1, :2], pair[kinds == 1, 0] + 1j * pair[kinds == 1, 1],
                                         pair[kinds == 1, 0] - 1j * pair[kinds == 1, 1]])
    roots[kinds == 2] = np.column_stack([real[kinds == 2, 0] + 1j * real[kinds == 2, 1],
                                         real[kinds == 2, 0] - 1j * real[kinds == 2, 1],
                                         pair[kinds == 2, 0] + 1j * pair[kinds == 2, 1],
                                         pair[kinds == 2, 0] - 1j * pair[kinds == 2, 1]])
    h = _from_roots(roots)
    got = wild._real_candidates(h)
    assert np.all(np.isfinite(got)) and np.all(np.diff(got, axis=1) >= 0)
    e = _eig_real_roots(h)
    is_real = np.abs(e.imag) <= 1e-9 * (1 + np.abs(e.real))
    for i in range(4):
        gap = np.min(np.abs(got - e.real[:, i:i + 1]), axis=1) / (1 + np.abs(e.real[:, i]))
        assert np.all(gap[is_real[:, i]] < 1e-9), gap[is_real[:, i]].max()


def test_biquadratic_and_repeated_and_overflowing_quartics():
    h = np.array([[0.0, -5.0, 0.0, 4.0],          # (y^2 - 1)(y^2 - 4): q = 0, roots +-1, +-2
                  *_from_roots([[3, 3, 3, 3]]),    # a fourfold root
                  [0.0, 1.0, 0.0, 1.0],           # no real root at all, q = 0
                  [1e200, 1.0, 1.0, 1.0]])         # the closed form overflows: eigenvalues take over
    got = wild._real_candidates(h)
    assert np.allclose(got[0], [-2, -1, 1, 2], atol=1e-12)
    assert np.allclose(got[1], 3.0, atol=1e-3)
    assert np.all(np.isfinite(got))
    assert not np.all(np.isfinite(wild._quartic_roots(h[3:])))   # the fallback was needed there
    assert np.min(np.abs(got[3] + 1e200)) / 1e200 < 1e-12       # and found the root near -a
