"""Many runs: one configuration (``single``), sweeps over a grid of overrides and seeds
(``sweep``), the campaign engine on a process pool or Dask (``run``), the result store
(``store``), the rows a sweep prints and writes (``summary``) and ``tcplab results`` (``cli``)."""
