"""Posits (MinUn): `!num.posit<n, es>`, arithmetic rounded once per operation."""
