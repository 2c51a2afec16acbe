#!/usr/bin/env bash
# A second local PostgreSQL with wal_level=logical, for the change-capture tests
# (the main cluster runs with wal_level=replica and is left alone). Idempotent:
# creates the Debian cluster "changes" on port 5433 the first time, starts it
# when it is down. Needs root (pg_createcluster). Used by .ci/run; run it by hand
# once to run those tests on your machine:  sudo bash test/helpers/changes-cluster.sh
set -euo pipefail
PORT="${CHANGES_PG_PORT:-5433}"
if pg_isready -h 127.0.0.1 -p "$PORT" -q; then
  echo "changes cluster: already up on port $PORT"
  exit 0
fi
VERSION="$(ls /etc/postgresql | sort -n | tail -1)"
if [ ! -d "/etc/postgresql/$VERSION/changes" ]; then
  pg_createcluster "$VERSION" changes --port "$PORT" \
    -o wal_level=logical -o max_replication_slots=20 -o max_wal_senders=20 -o fsync=off \
    -- --auth trust >/dev/null
fi
pg_ctlcluster --skip-systemctl-redirect "$VERSION" changes start
for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p "$PORT" -q && break; sleep 1; done
pg_isready -h 127.0.0.1 -p "$PORT"
psql -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SHOW wal_level"
