#!/usr/bin/env bash
# Stops the Ceph daemons started by scripts/ceph-up.sh (by their pid files) and removes CEPH_DIR.
# Set KEEP=1 to keep the folder (logs) for inspection.
set -uo pipefail
D=${CEPH_DIR:-/tmp/live-mem-ceph}
[ -d "$D/run" ] || { echo "ceph-down: nothing running under $D"; exit 0; }
for n in client.rgw osd.0 mon.a; do
  f="$D/run/$n.pid"
  if [ -f "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
done
stopped=no
for _ in $(seq 1 20); do
  if ! pgrep -f -- "-c $D/ceph.conf" >/dev/null; then stopped=yes; break; fi
  sleep 0.5
done
if [ "$stopped" != yes ]; then
  for n in client.rgw osd.0 mon.a; do
    f="$D/run/$n.pid"
    if [ -f "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null || true; fi
  done
  sleep 0.5
fi
[ "${KEEP:-0}" = 1 ] || rm -rf "$D"
echo "ceph stopped ($D)"
