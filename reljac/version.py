"""reljac's version (``reljac.__version__``; pyproject.toml's ``version``, checked equal by
``tests/test_architecture.py``)."""

__version__ = "0.1.0"
