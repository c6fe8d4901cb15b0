"""The ``steadfast`` command line: start the services, check them, run evaluations."""
