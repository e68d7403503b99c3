"""Generated programs for the differential tests: descriptions drawn by hypothesis (`kernels`,
`orch`, `tensor_level`, over the DAGs of `dag` / `dag_gen`), written as `pl` source with NumPy's
answer, and `case.check`, which runs one everywhere and compares."""
