"""An independent exact reference for posit<n, es>, written from the definition with
Python integers and fractions.Fraction (bit strings, no numpy, nothing shared with
minun_mlir.numerics.posit): decode a pattern to its exact value, and round an exact real
to a pattern (round to nearest even on the unbounded pattern; never to 0 or NaR)."""

from __future__ import annotations

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
    f = Fraction(int(f_bits, 2), 2 ** len(f_bits)) if f_bits else Fraction(0)
    value = (1 + f) * Fraction(2) ** (k * 2**es + e)
    return -value if negative else value


def encode(x: Fraction, n: int, es: int) -> int:
    """Round the exact real x to posit<n, es>."""
    if x == 0:
        return 0
    negative = x < 0
    x = abs(x)
    scale = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** scale > x:
        scale -= 1
    maxscale = (n - 2) * 2**es
    if scale >= maxscale:
        body = (1 << (n - 1)) - 1
    elif scale < -maxscale:
        body = 1
    else:
        k, e = divmod(scale, 2**es)
        regime = "1" * (k + 1) + "0" if k >= 0 else "0" * (-k) + "1"
        f = x / Fraction(2) ** scale - 1  # in [0, 1)
        need = n + 2
        scaled = f * 2**need
        frac = format(int(scaled), f"0{need}b")
        inexact = scaled != int(scaled)
        string = regime + (format(e, f"0{es}b") if es else "") + frac
        body = int(string[: n - 1], 2)
        round_bit = string[n - 1] == "1"
        sticky = "1" in string[n:] or inexact
        if round_bit and (sticky or body & 1):
            body += 1
    return ((1 << n) - body) & ((1 << n) - 1) if negative else body


def fraction_of(d: Decimal) -> Fraction:
    return Fraction(d)


def exp(x: Fraction, digits: int = 80) -> Fraction:
    """e^x (for |x| > 1000, a power of two beyond every posit's range: e^1000 > 2^1442)."""
    if abs(x) > 1000:
        return Fraction(2) ** (2000 if x > 0 else -2000)
    with localcontext() as ctx:
        ctx.prec = digits
        return Fraction((Decimal(x.numerator) / Decimal(x.denominator)).exp())


def sigmoid(x: Fraction, digits: int = 80) -> Fraction:
    if abs(x) > 1000:
        return 1 - Fraction(2) ** -2000 if x > 0 else Fraction(2) ** -2000
    with localcontext() as ctx:
        ctx.prec = digits
        d = Decimal(x.numerator) / Decimal(x.denominator)
        return Fraction(1 / (1 + (-d).exp()))


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
            em1 = z.exp() - 1
        return Fraction(em1 / (em1 + 2))
