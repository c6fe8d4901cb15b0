#!/usr/bin/env bash
# Make sure a PostgreSQL server answers on 127.0.0.1:5432 (trust auth, user postgres):
# use a running one, start an installed one, or install it from Debian's packages.
set -euo pipefail

ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

# the tests' database, on a server found running or one started here
ensure_test_database() {
  psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" \
    | grep -q 1 || psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE test" >/dev/null
}

if command -v pg_isready >/dev/null && ready; then
  ensure_test_database
  exit 0
fi

if [ ! -d /etc/postgresql ] || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
  echo "ensure-postgres: installing PostgreSQL" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq postgresql >/dev/null
fi

version=$(ls /etc/postgresql | sort -V | tail -1)
hba=/etc/postgresql/$version/main/pg_hba.conf
if ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
  sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
fi
pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null \
  || pg_ctlcluster --skip-systemctl-redirect "$version" main reload

for _ in $(seq 1 60); do
  if ready; then
    ensure_test_database
    exit 0
  fi
  sleep 1
done
echo "ensure-postgres: PostgreSQL did not become ready" >&2
exit 1
