#!/usr/bin/env bash
# Starts a single-node, in-memory Ceph (mon + memstore OSD + radosgw) on 127.0.0.1, for the S3 tests.
# radosgw is the only S3 server installable here that honours conditional writes (If-None-Match / If-Match),
# which live-mem's locking depends on; npm emulators ignore them.
#
#   CEPH_DIR=/tmp/live-mem-ceph bash scripts/ceph-up.sh     # then: bash scripts/ceph-down.sh
#
# Env: CEPH_DIR, RGW_PORT (7480), MON_V2 (3300), MON_V1 (6789), AK / SK (the S3 keys). Needs root for apt.
# Quiet on success except for one final line; on failure exits non-zero with the tail of the Ceph logs.
set -euo pipefail

D=${CEPH_DIR:-/tmp/live-mem-ceph}
RGW_PORT=${RGW_PORT:-7480}
MON_V2=${MON_V2:-3300}
MON_V1=${MON_V1:-6789}
AK=${AK:-livememtest}
SK=${SK:-livememtestsecret}
ENDPOINT="http://127.0.0.1:$RGW_PORT"
HINT="export LIVE_MEM_TEST_S3_ENDPOINT=$ENDPOINT LIVE_MEM_TEST_S3_ACCESS_KEY_ID=$AK LIVE_MEM_TEST_S3_SECRET_ACCESS_KEY=$SK"

fail() {
  echo "ceph-up: $*" >&2
  if [ -d "$D/log" ]; then
    for f in "$D"/log/*; do
      [ -s "$f" ] || continue
      echo "--- tail of $f" >&2
      tail -n 20 "$f" >&2
    done
  fi
  exit 1
}
trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null || ! command -v curl >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install --no-install-recommends -y -qq radosgw ceph-mon ceph-osd curl >/dev/null
fi

# HTTP status of a SigV4-signed ListBuckets with our keys: 200 = up and the keys work, 403 = up, other keys.
# curl 7.x does not send x-amz-content-sha256 itself and radosgw refuses the signature without it.
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
signed_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 3 -H "x-amz-content-sha256: $EMPTY_SHA256" \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" "$ENDPOINT/" || true
}
answering() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; }

if answering; then
  if [ "$(signed_status)" = 200 ]; then
    echo "radosgw already up at $ENDPOINT with our keys; $HINT"
    exit 0
  fi
  # Ours from an earlier run but without this user: add it rather than restart.
  if [ -f "$D/ceph.conf" ] && radosgw-admin -c "$D/ceph.conf" user create --uid=livemem --display-name=livemem \
      --access-key="$AK" --secret="$SK" >/dev/null 2>&1 && [ "$(signed_status)" = 200 ]; then
    echo "radosgw already up at $ENDPOINT (user added); $HINT"
    exit 0
  fi
  trap - ERR
  fail "something else already answers on $ENDPOINT and does not accept our keys; stop it or set RGW_PORT"
fi

# Stop leftovers of an earlier run in the same folder before wiping it.
if [ -d "$D/run" ]; then
  for n in client.rgw osd.0 mon.a; do
    f="$D/run/$n.pid"
    if [ -f "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
  done
  for _ in $(seq 1 20); do pgrep -f -- "-c $D/ceph.conf" >/dev/null || break; sleep 0.5; done
fi

rm -rf "$D"
mkdir -p "$D"/{mon,osd,rgw,run,log}
FSID=$(cat /proc/sys/kernel/random/uuid)
cat >"$D/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
# without these, radosgw's monclient insists on 'secure' mode and fails auth with -13 under auth=none
ms mon client mode = crc
ms client mode = crc
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon warn on pool no redundancy = false
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
pid file = $D/run/\$name.pid
keyring = $D/keyring
[mon.a]
mon data = $D/mon
[osd.0]
osd data = $D/osd
osd objectstore = memstore
memstore device bytes = 1073741824
[client.rgw]
# tcp_nodelay: without it, an answer written in two parts waits for the client's delayed ACK (Nagle): 40 ms
# on every GET and LIST on Linux, most of the S3 tests' time.
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw data = $D/rgw
rgw dns name = localhost
EOF
C=(-c "$D/ceph.conf")
SETUP_LOG="$D/log/setup.log"

ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >>"$SETUP_LOG" 2>&1
ceph-authtool "$D/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >>"$SETUP_LOG" 2>&1
ceph-authtool "$D/keyring" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' >>"$SETUP_LOG" 2>&1
monmaptool --create --addv a "[v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]" --fsid "$FSID" "$D/monmap" >>"$SETUP_LOG" 2>&1
ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring" >>"$SETUP_LOG" 2>&1
ceph-mon "${C[@]}" -i a >>"$SETUP_LOG" 2>&1

OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ID=$(timeout 60 ceph "${C[@]}" osd new "$OSD_UUID" 2>>"$SETUP_LOG")
ceph-osd "${C[@]}" -i "$ID" --mkfs --osd-uuid "$OSD_UUID" >>"$SETUP_LOG" 2>&1
timeout 30 ceph "${C[@]}" osd crush add-bucket localhost host >>"$SETUP_LOG" 2>&1
timeout 30 ceph "${C[@]}" osd crush move localhost root=default >>"$SETUP_LOG" 2>&1
timeout 30 ceph "${C[@]}" osd crush add "osd.$ID" 1.0 host=localhost >>"$SETUP_LOG" 2>&1
ceph-osd "${C[@]}" -i "$ID" >>"$SETUP_LOG" 2>&1

up=no
for _ in $(seq 1 60); do
  if timeout 10 ceph "${C[@]}" osd stat 2>/dev/null | grep -q '1 up'; then up=yes; break; fi
  sleep 1
done
[ "$up" = yes ] || { trap - ERR; fail "the OSD did not come up within 60 s"; }

# radosgw forks into the background once initialised; the timeout only bounds its start-up.
timeout 90 radosgw "${C[@]}" -n client.rgw >>"$SETUP_LOG" 2>&1
up=no
for _ in $(seq 1 60); do
  if answering; then up=yes; break; fi
  sleep 1
done
[ "$up" = yes ] || { trap - ERR; fail "radosgw did not answer on $ENDPOINT within 60 s"; }

radosgw-admin "${C[@]}" user create --uid=livemem --display-name=livemem --access-key="$AK" --secret="$SK" >>"$SETUP_LOG" 2>&1
# The user may take a moment to be visible to the gateway.
for _ in $(seq 1 20); do
  [ "$(signed_status)" = 200 ] && break
  sleep 0.5
done
[ "$(signed_status)" = 200 ] || { trap - ERR; fail "radosgw is up but refuses the keys $AK / $SK"; }

echo "radosgw up at $ENDPOINT (CEPH_DIR=$D); $HINT"
