#!/bin/sh
# Start one service: steadfast-service <evaluator|gateway|perturb|verify|scoring>
set -eu
service=${1:?usage: steadfast-service SERVICE}
var=$(echo "STEADFAST_${service}_PORT" | tr '[:lower:]' '[:upper:]')
eval port=\${$var:-}
case "$service" in
  evaluator) port=${port:-8000} ;; gateway) port=${port:-8001} ;; perturb) port=${port:-8002} ;;
  verify) port=${port:-8003} ;; scoring) port=${port:-8004} ;;
  *) echo "unknown service: $service" >&2; exit 2 ;;
esac
exec uvicorn --factory "steadfast.services.${service}.app:create_app" --host 0.0.0.0 --port "$port" \
  --no-access-log --timeout-graceful-shutdown 10
