"""The gateway's logic: routes, the backend protocol, the response cache, limits, retries and judge
thresholds. No HTTP."""
