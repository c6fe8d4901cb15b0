"""Built-in sample datasets (≤ 200 items each), subsets of public benchmarks with their
licences; see ``LICENSES.md``. Rebuild with ``python -m steadfast.services.evaluator.samples.build
SOURCE``."""
