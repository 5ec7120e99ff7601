"""Packed 4-bit weights (`--weight-bits 4`) of fixed point and zero-skew."""
