"""The five Steadfast services, one package each."""
