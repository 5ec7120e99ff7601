"""Zero-skew int8 (TFLite's affine int8): `!num.affine<bits, scale, zero_point>`."""
