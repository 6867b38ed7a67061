#!/bin/sh
# Serve BNMA Studio to a class: N Streamlit processes (ports PORT+1..PORT+N) behind nginx with
# sticky sessions on port PORT (default 8500; deploy/nginx-class.conf). One Python process uses one core,
# so take N = the cores you can give it. Needs nginx (apt-get install nginx) and the venv of
# `make run`. Usage, from the repository root:
#
#     deploy/serve-class.sh [N] [PORT]      # e.g. deploy/serve-class.sh 4 8500
#
# Stop with Ctrl-C: every process this script started is stopped.
set -eu
N=${1:-2}
LISTEN=${2:-8500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's packages
PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/bnma_class.XXXXXX")
mkdir -p "$PREFIX/tmp"
PIDS=""
cleanup() {
    [ -f "$PREFIX/nginx.pid" ] && kill "$(cat "$PREFIX/nginx.pid")" 2>/dev/null || true
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    rm -rf "$PREFIX"
}
trap cleanup EXIT INT TERM
SERVERS=""
i=1
while [ "$i" -le "$N" ]; do
    port=$((LISTEN + i))
    (cd "$ROOT" && exec "$PY" -m streamlit run app.py --server.headless true \
        --server.port "$port" --server.address 127.0.0.1 \
        --browser.gatherUsageStats false --server.fileWatcherType none) \
        > "$PREFIX/streamlit_$port.log" 2>&1 &
    PIDS="$PIDS $!"
    SERVERS="$SERVERS        server 127.0.0.1:$port;\n"
    i=$((i + 1))
done
# the upstream of N processes, the listening port
awk -v servers="$SERVERS" -v listen="$LISTEN" '
    /# SERVERS BEGIN/ { print; printf "%s", servers; skip = 1; next }
    /# SERVERS END/ { skip = 0 }
    skip { next }
    { sub(/listen 8500;/, "listen " listen ";"); print }' \
    "$ROOT/deploy/nginx-class.conf" | sed 's/\\n/\n/g' > "$PREFIX/nginx.conf"
nginx -p "$PREFIX" -c "$PREFIX/nginx.conf" -t
nginx -p "$PREFIX" -c "$PREFIX/nginx.conf" -g "daemon off;" &
PIDS="$PIDS $!"
echo "BNMA Studio for a class: http://localhost:$LISTEN ($N processes; logs in $PREFIX)"
wait
