#!/usr/bin/env bash
# Runs the load test of web/testdata/load against one or more probity binaries, side by
# side: for each repetition, each binary is started on the load database, warmed up,
# and measured on every page kind in two ways, and the medians are printed at the end.
#
#   web/testdata/load/run.sh [-r REPS] [-p "PAGE..."] BINARY[=DATABASE_URL]...
#
#   saturated  wrk -t2 -c16, as fast as the server answers: the throughput
#   paced      wrk -t2 -c32 with PACE_MS=12: about 2,100 requests/s offered, the
#              latency at the goal's rate
#   1k         the directory pages only: wrk -t2 -c16 with PACE_MS=15, about 1,000
#              requests/s offered (issue 16's rate for the directory)
#
# -p measures those pages only (of entry history feed changes directory
# directory-sorted). A binary may name its own database (BINARY=URL): a binary that
# predates a migration refuses a database migrated past it, so a before/after pair runs
# on two copies (README.md). Each line shows requests/s, p50 and p99 latency, and the CPU
# time the server and PostgreSQL spent per request (from /proc). Needs wrk, the
# database built by BenchmarkLoadDatabase and its key directory (README.md). Takes about
# REPS × binaries × pages × 30 s.
set -euo pipefail
reps=3
pages="entry history feed changes directory"
while [[ ${1:-} == -[rp] ]]; do
  case $1 in
    -r) reps=$2 ;;
    -p) pages=$2 ;;
  esac
  shift 2
done
(($# > 0)) || { sed -n '2,22p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
db=${LOAD_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/probity_bench_web_v1?sslmode=disable}
datadir=${PROBITY_LOAD_DIR:-${TMPDIR:-/tmp}/probity-webload}
addr=127.0.0.1:8090
tick=$(getconf CLK_TCK)
results=$(mktemp)
server=
trap '[[ -n $server ]] && kill $server 2>/dev/null; rm -f "$results"' EXIT

snap() { # "pid ticks" of the processes whose command line matches $1
  local p
  for p in $(pgrep -f "$1"); do awk -v p="$p" '{print p, $14+$15}' "/proc/$p/stat" 2>/dev/null || true; done
}

used() { # CPU ticks used between two snaps ($1, $2) by the processes in both: a
  # PostgreSQL worker that came or went meanwhile is not counted
  awk 'NR == FNR { a[$1] = $2; next } ($1 in a) { s += $2 - a[$1] } END { print s + 0 }' \
    <(echo "$1") <(echo "$2")
}

measure() { # binary page mode
  local lua=$here/$2.lua conns=16 pace=0
  [[ $3 == paced ]] && conns=32 pace=12
  [[ $3 == 1k ]] && conns=16 pace=15
  PACE_MS=$pace wrk -t2 -c$conns -d4s -s "$lua" "http://$addr" >/dev/null
  local s1 p1 s2 p2 out
  s1=$(snap "$1 serve"); p1=$(snap "postgres:")
  out=$(PACE_MS=$pace wrk -t2 -c$conns -d10s --latency -s "$lua" "http://$addr")
  s2=$(snap "$1 serve"); p2=$(snap "postgres:")
  awk -v bin="$(basename "$1")" -v page="$2" -v mode="$3" -v ds="$(used "$s1" "$s2")" -v dp="$(used "$p1" "$p2")" -v tick="$tick" '
    function ms(x) { if (x ~ /us$/) return x / 1000; if (x ~ /ms$/) return x + 0; return x * 1000 }
    /requests in/ { n = $1 }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    END { printf "%s %s %s %.0f %.2f %.2f %.3f %.3f %d\n", bin, page, mode, rps, p50, p99, ds*1000/tick/n, dp*1000/tick/n, bad }
  ' <<<"$out" | tee -a "$results"
}

printf '%s\n' "binary page mode rps p50_ms p99_ms server_ms/req postgres_ms/req non2xx"
for rep in $(seq "$reps"); do
  for arg in "$@"; do
    bin=$(realpath "${arg%%=*}") bindb=$db
    [[ $arg == *=* ]] && bindb=${arg#*=}
    # --publish-only where the binary has it: the pages alone, nothing scheduled.
    only=()
    "$bin" serve -h 2>/dev/null | grep -q -- --publish-only && only=(--publish-only)
    DATABASE_URL=$bindb "$bin" serve "${only[@]}" --data-dir "$datadir" --listen "$addr" \
      --rate-limit 1000000 --burst 1000000 >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 50); do curl -fso /dev/null "http://$addr/healthz" && break; sleep 0.1; done
    # One pass over every entry page first, so that the page memos are as warm as a
    # long-running server's.
    wrk -t2 -c16 -d8s -s "$here/entry.lua" "http://$addr" >/dev/null
    for page in $pages; do
      modes="saturated paced"
      [[ $page == directory* ]] && modes="saturated paced 1k"
      for mode in $modes; do measure "$bin" $page $mode; done
    done
    kill $server; wait $server 2>/dev/null || true; server=
  done
done

echo
echo "medians over $reps runs:"
printf '%s\n' "binary page mode rps p50_ms p99_ms server_ms/req postgres_ms/req"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cut -d' ' -f1-3 "$results" | sort -u | while read -r bin page mode; do
  rows=$(awk -v k="$bin $page $mode" '$1 " " $2 " " $3 == k' "$results")
  line="$bin $page $mode"
  for col in 4 5 6 7 8; do line+=" $(cut -d' ' -f$col <<<"$rows" | median)"; done
  echo "$line"
done
