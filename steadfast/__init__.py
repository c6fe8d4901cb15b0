"""Steadfast: measure and improve how reliably language models answer.

One import package holds it all: the services (``steadfast.services.<name>``), the code they
share (``steadfast.shared``), the command line (``steadfast.cli``) and the client library
(``steadfast.client``). In the repository, ``services/`` and ``shared/`` sit at the top and are
mapped into this package.
"""

#: the one place the version is written; the package metadata and every service read it
__version__ = "0.2.0"
