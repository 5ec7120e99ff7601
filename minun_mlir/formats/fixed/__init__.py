"""Fixed point (SeeDot's and Shiftry's representation): `!num.fixed<bits, scale>`."""
