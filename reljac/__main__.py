"""``python -m reljac ...``: the ``reljac`` program (:func:`reljac.apps.cli.main`).

Under ``if __name__ == "__main__":``: the worker processes a Dask LocalCluster spawns import this
module again (as ``__mp_main__``) and must not run the program once more."""

from .apps.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
