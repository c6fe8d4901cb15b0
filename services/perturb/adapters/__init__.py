"""The perturb service's adapters (none yet: it calls the gateway and verify through
:mod:`shared.clients`)."""
