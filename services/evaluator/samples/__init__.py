"""Built-in sample datasets (≤ 200 items each), copied from ../shared/data with their licences;
see ``LICENSES.md``. Rebuild with ``python -m services.evaluator.samples.build``."""
