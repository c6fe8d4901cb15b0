"""Self-paraphrase strategies (docs/method.md §1.5): answer one question more reliably than a single
call. Plain domain code: it knows the model gateway only through :class:`ports.ModelGateway`
and nothing of HTTP."""
