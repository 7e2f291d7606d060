"""reljac.ik.search."""
