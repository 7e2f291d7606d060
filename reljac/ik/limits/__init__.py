"""reljac.ik.limits."""
