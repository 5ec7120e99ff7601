"""An independent exact reference for posit<n, es>, written from the definition with
Python integers and fractions.Fraction (bit strings, no numpy, nothing shared with
minun_mlir.formats.posit.arith): decode a pattern to its exact value, and round an exact real
to a pattern (round to nearest even on the unbounded pattern; never to 0 or NaR)."""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext
from fractions import Fraction


def decode(p: int, n: int, es: int) -> Fraction | None:
    """The exact value of pattern p (None for NaR)."""
    p &= (1 << n) - 1
    if p == 0:
        return Fraction(0)
    if p == 1 << (n - 1):
        return None
    negative = p >> (n - 1) == 1
    if negative:
        p = (1 << n) - p
    bits = format(p, f"0{n}b")[1:]  # after the sign bit
    first = bits[0]
    run = len(bits) - len(bits.lstrip(first))
    k = run - 1 if first == "1" else -run
    rest = bits[run + 1:]  # past the regime's terminating bit (if any)
    e_bits = rest[:es].ljust(es, "0")  # exponent bits cut off by the end count as 0
    f_bits = rest[es:]
    e = int(e_bits, 2) if es else 0
    m = (1 << len(f_bits)) + (int(f_bits, 2) if f_bits else 0)  # 1.F as m / 2^len(f_bits)
    power = k * 2**es + e - len(f_bits)
    value = Fraction(m << power) if power >= 0 else Fraction(m, 1 << -power)
    return -value if negative else value


def encode(x: Fraction, n: int, es: int) -> int:
    """Round the exact real x to posit<n, es>: write out sign, regime, exponent and n + 2
    fraction bits of x, then round the string to n bits (nearest, ties to even; a
    remainder beyond the written bits counts as sticky)."""
    if x == 0:
        return 0
    negative = x < 0
    num, den = abs(x.numerator), x.denominator
    scale = num.bit_length() - den.bit_length()  # 2^scale <= x < 2^(scale + 1) after:
    if (num << max(-scale, 0)) < (den << max(scale, 0)):
        scale -= 1
    maxscale = (n - 2) * 2**es
    if scale >= maxscale:
        body = (1 << (n - 1)) - 1
    elif scale < -maxscale:
        body = 1
    else:
        k, e = divmod(scale, 2**es)
        regime = "1" * (k + 1) + "0" if k >= 0 else "0" * (-k) + "1"
        need = n + 2
        shift = need - scale  # x * 2^shift = 2^need + fraction bits
        q, r = divmod(num << shift, den) if shift >= 0 else divmod(num, den << -shift)
        frac = format(q - (1 << need), f"0{need}b")
        string = regime + (format(e, f"0{es}b") if es else "") + frac
        body = int(string[: n - 1], 2)
        round_bit = string[n - 1] == "1"
        sticky = "1" in string[n:] or r != 0
        if round_bit and (sticky or body & 1):
            body += 1
    return ((1 << n) - body) & ((1 << n) - 1) if negative else body


@functools.cache
def values(n: int, es: int) -> tuple[Fraction | None, ...]:
    """Every pattern's exact value, by pattern."""
    return tuple(decode(p, n, es) for p in range(1 << n))


@functools.lru_cache(maxsize=1 << 17)
def _exp(d: Decimal, digits: int) -> Decimal:
    """Decimal's e^d at `digits` digits (correctly rounded, so a function of d's value and
    the precision alone), kept: the exhaustive tests ask for e^d of the same operands many
    times (exp(x) and sigmoid's e^-x, tanh's e^2x, the posit formats' shared values)."""
    with localcontext() as ctx:
        ctx.prec = digits
        return d.exp()


def exp(x: Fraction, digits: int = 80) -> Fraction:
    """e^x (for |x| > 1000, a power of two beyond every posit's range: e^1000 > 2^1442)."""
    if abs(x) > 1000:
        return Fraction(2) ** (2000 if x > 0 else -2000)
    with localcontext() as ctx:
        ctx.prec = digits
        return Fraction(_exp(Decimal(x.numerator) / Decimal(x.denominator), digits))


def sigmoid(x: Fraction, digits: int = 80) -> Fraction:
    if abs(x) > 1000:
        return 1 - Fraction(2) ** -2000 if x > 0 else Fraction(2) ** -2000
    with localcontext() as ctx:
        ctx.prec = digits
        d = Decimal(x.numerator) / Decimal(x.denominator)
        return Fraction(1 / (1 + _exp(-d, digits)))


def tanh(x: Fraction, digits: int = 80) -> Fraction:
    """tanh(x) = expm1(2x) / (expm1(2x) + 2), expm1 from its series when |2x| < 2^-10
    (Decimal has no expm1: e^2x - 1 would cancel)."""
    with localcontext() as ctx:
        ctx.prec = digits
        if abs(x) > 1000:
            return Fraction(1 if x > 0 else -1) * (1 - Fraction(2) ** -2000)
        z = 2 * Decimal(x.numerator) / Decimal(x.denominator)
        if abs(z) < Decimal(2) ** -10:
            term, total, k = z, z, 1
            while abs(term) > abs(total) * Decimal(10) ** (-digits):
                k += 1
                term = term * z / k
                total += term
            em1 = total
        else:
            em1 = _exp(z, digits) - 1
        return Fraction(em1 / (em1 + 2))
