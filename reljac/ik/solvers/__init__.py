"""reljac.ik.solvers."""
