"""numba kernels only: they take small integer / float arrays, never DataFrames (DESIGN §1)."""
