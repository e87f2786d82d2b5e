#!/usr/bin/env bash
# Side-by-side read benchmark of paimon-kernel against its peers (see README.md).
# (Writes, compactions and commits: wbench.py, README.md "Writing, compaction and commit".)
#
# Env (defaults):
#   RUNS=5                  counted runs per reader and case (after 1 warm-up)
#   CASES="1 2 3 4 5"       cases to run (1 append, 2 PK dedup, 3 partial-update + aggregation,
#                           4 blob table: full read + one blob out of a 138 MB .blob file,
#                           5 planning over 1,000 files / 50 snapshots)
#   READERS=...             subset of: cat floor1 floor2 kernel kernel1c kcount ksif1 paimon
#                           pypaimon (kernel*: Arrow IPC to /dev/null; kcount: rows counted and
#                           batches dropped, as the paimon crate peer does; ksif1: one split
#                           or part in flight, the low-memory setting)
#                           (case 4's full read skips the parquet floors)
#   BLOB_READERS=...        case 4, one blob: subset of kblob (local) kblob_http (our CLI over
#                           HTTP Range requests to range_server.py) pyblob (pypaimon, local)
#   BLOB_ROW=75             case 4: _ROW_ID of the blob to extract (75: 1 MiB in the middle)
#   VENV=/work/venv         venv with pypaimon==2.1.0 (created if missing)
#   CARGO_TARGET_DIR=/work/target-bench   release builds (kept apart from the dev target dir)
#   PEER_BIN=$CARGO_TARGET_DIR/release    where paimon_read / parquet_floor are (e.g. older
#                           builds, with SKIP_BUILD=1)
#   DATA=<here>/data        tables (bench.db under $DATA/wh) and run logs ($DATA/res); made
#                           absolute (the `paimon` crate refuses a relative warehouse path)
#   HTTP_PORT=18765         case 4: port of range_server.py (127.0.0.1)
#   SKIP_BUILD=1, SKIP_VERIFY=1
# Output: $DATA/res/results.tsv (one line per reader and case), per-run lines in runs.txt,
# and a markdown summary (summarize.py) on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
CASES=${CASES:-"1 2 3 4 5"}
READERS=${READERS:-"cat floor1 floor2 kernel kernel1c kcount ksif1 paimon pypaimon"}
VENV=${VENV:-/work/venv}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
BLOB_READERS=${BLOB_READERS:-"kblob kblob_http pyblob"}
BLOB_ROW=${BLOB_ROW:-75}
HTTP_PORT=${HTTP_PORT:-18765}
DATA=$(realpath -m "${DATA:-$HERE/data}")
WH=$DATA/wh
OUT=$DATA/res
BIN=$(realpath -m "$CARGO_TARGET_DIR")/release
PEER_BIN=$(realpath -m "${PEER_BIN:-$BIN}")
mkdir -p "$OUT"

# 1. pypaimon venv and tables
if ! "$VENV/bin/python" -c 'import pypaimon' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install pypaimon==2.1.0
fi
tables_for() {
  case $1 in
    1) echo append_2m ;; 2) echo pk_dedup_1m ;; 3) echo "pk_partial_1m pk_agg_1m" ;;
    4) echo "blob_100m blob_one" ;; 5) echo plan_1k ;;
  esac
}
dir_of() {  # bench table (or case-4 pseudo table) -> its directory name in bench.db
  case $1 in blob_one) echo blob_100m ;; *) echo "$1" ;; esac
}
want=()
for c in $CASES; do
  for t in $(tables_for "$c"); do
    t=$(dir_of "$t")
    [ -d "$WH/bench.db/$t" ] || [[ " ${want[*]} " == *" $t "* ]] || want+=("$t")
  done
done
if [ ${#want[@]} -gt 0 ]; then
  "$VENV/bin/python" "$HERE/gen_tables.py" "$WH" "${want[@]}"
fi

# 2. release binaries: ours (workspace) and the peers (bench/peer, not a workspace member)
if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release --manifest-path "$ROOT/Cargo.toml" -p paimon-native --bin paimon-kernel
  cargo build --release --manifest-path "$HERE/peer/Cargo.toml"
fi

# 3. correctness of our output before timing it
if [ -z "${SKIP_VERIFY:-}" ]; then
  for c in $CASES; do
    for t in $(tables_for "$c"); do
      [ "$t" = plan_1k ] || [ "$t" = blob_one ] && continue
      "$BIN/paimon-kernel" scan "$WH/bench.db/$t" --format arrow --output "$OUT/$t.arrow"
      "$VENV/bin/python" "$HERE/verify.py" "$t" "$OUT/$t.arrow" | tee "$OUT/$t.verify.txt"
      rm -f "$OUT/$t.arrow"
    done
  done
fi

# 4. timings
blob_file=$(find "$WH/bench.db/blob_100m" -name '*.blob' 2>/dev/null | head -1)
blob_url=http://127.0.0.1:$HTTP_PORT/bench.db/blob_100m
cmd_for() {  # reader table
  local d=$WH/bench.db/$(dir_of "$2")
  case $1 in
    cat)      echo "$HERE/cat_floor.sh $d" ;;
    floor1)   echo "$PEER_BIN/parquet_floor $d 1" ;;
    floor2)   echo "$PEER_BIN/parquet_floor $d 2" ;;
    kernel)   echo "$BIN/paimon-kernel scan $d --format arrow --output /dev/null" ;;
    kernel1c) echo "taskset -c 0 $BIN/paimon-kernel scan $d --format arrow --output /dev/null" ;;
    kcount)   echo "$BIN/paimon-kernel scan $d --format count" ;;
    ksif1)    echo "$BIN/paimon-kernel scan $d --format arrow --output /dev/null --splits-in-flight 1" ;;
    kfiles)   echo "$BIN/paimon-kernel files $d --json" ;;
    paimon)   echo "$PEER_BIN/paimon_read $WH bench $2 2 stream" ;;
    pypaimon) echo "$VENV/bin/python $HERE/pypaimon_read.py $WH bench.$2 table" ;;
    kblob)    echo "$BIN/paimon-kernel blob $d --row-id $BLOB_ROW --column data -o $OUT/blob.kblob.bin" ;;
    kblob_http) echo "$BIN/paimon-kernel blob $blob_url --row-id $BLOB_ROW --column data -o $OUT/blob.kblob_http.bin" ;;
    pyblob)   echo "$VENV/bin/python $HERE/pypaimon_blob.py $WH bench.blob_100m $BLOB_ROW data $OUT/blob.pyblob.bin" ;;
  esac
}
rows_of() {
  case $1 in
    append_2m) echo 2000000 ;; plan_1k) echo 100000 ;;
    blob_100m) echo 104 ;; blob_one) echo 1 ;; *) echo 1000000 ;;
  esac
}
bytes_of() {  # bytes a full read must deliver: data files; for blob_one the blob itself
  case $1 in
    blob_one) "$VENV/bin/python" -c "import sys; sys.path.insert(0, '$HERE'); import gen_tables as g; print(dict(g.blob_spec())[$BLOB_ROW])" ;;
    *) find "$WH/bench.db/$1" \( -name '*.parquet' -o -name '*.blob' \) -printf '%s\n' | awk '{s+=$1} END {print s}' ;;
  esac
}
readers_for() {  # case table
  case $2 in
    blob_one) echo "$BLOB_READERS" ;;
    blob_100m) for r in $READERS; do case $r in floor1|floor2) ;; *) printf '%s ' "$r" ;; esac; done ;;
    *) if [ "$1" = 5 ]; then echo "kfiles $READERS"; else echo "$READERS"; fi ;;
  esac
}
http_pid=
stop_http() { if [ -n "$http_pid" ]; then kill "$http_pid" 2>/dev/null || true; wait "$http_pid" 2>/dev/null || true; http_pid=; fi; }
trap stop_http EXIT
if [[ " $CASES " == *" 4 "* ]] && [[ " $BLOB_READERS " == *" kblob_http "* ]]; then
  : > "$OUT/http.log"
  "$VENV/bin/python" "$HERE/range_server.py" "$WH" "$HTTP_PORT" "$OUT/http.log" &
  http_pid=$!
  for _ in $(seq 50); do curl -sf -o /dev/null "$blob_url/snapshot/LATEST" && break; sleep 0.1; done
  # Another server on the port would answer instead of ours (and not log): refuse.
  if ! kill -0 "$http_pid" 2>/dev/null || ! [ -s "$OUT/http.log" ]; then
    echo "range_server.py did not start on port $HTTP_PORT (in use? set HTTP_PORT)" >&2; exit 1
  fi
fi
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
results=$OUT/results.tsv
[ -f "$results" ] || printf 'case\ttable\treader\truns\tmedian_s\tmin_s\tmax_s\trows\tdata_bytes\trows_per_s\tMB_per_s\tmedian_rss_MiB\tmax_rss_MiB\tok\n' > "$results"
for c in $CASES; do
  for t in $(tables_for "$c"); do
    rdrs=$(readers_for "$c" "$t")
    bytes=$(bytes_of "$t")
    rows=$(rows_of "$t")
    for r in $rdrs; do
      cmd=$(cmd_for "$r" "$t")
      log=$OUT/$t.$r.log; : > "$log"
      walls=(); rss=(); ok=yes
      for i in $(seq 0 "$RUNS"); do
        if ! /usr/bin/time -v -o "$OUT/time.tmp" $cmd > "$OUT/stdout.tmp" 2>> "$log"; then ok=failed; fi
        tail -c 300 "$OUT/stdout.tmp" >> "$log"
        w=$(awk -F': ' '/Elapsed/ {n=split($2,a,":"); s=a[n]; if(n>1) s+=a[n-1]*60; print s}' "$OUT/time.tmp")
        m=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2/1024}' "$OUT/time.tmp")
        u=$(awk -F': ' '/User time/ {print $2}' "$OUT/time.tmp")
        s=$(awk -F': ' '/System time/ {print $2}' "$OUT/time.tmp")
        echo "$t $r run=$i wall_s=$w user_s=$u sys_s=$s maxrss_mib=$m" >> "$OUT/runs.txt"
        [ "$i" -gt 0 ] && { walls+=("$w"); rss+=("$m"); }
        [ "$ok" = failed ] && break
      done
      if [ "$ok" = failed ] || [ ${#walls[@]} -eq 0 ]; then
        printf '%s\t%s\t%s\t0\t\t\t\t%s\t%s\t\t\t\t\tfailed\n' "$c" "$t" "$r" "$rows" "$bytes" >> "$results"
        echo "case $c $t $r: FAILED ($(tail -c 200 "$log" | tr '\n' ' '))"
        continue
      fi
      md=$(printf '%s\n' "${walls[@]}" | median)
      mn=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
      mx=$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)
      mr=$(printf '%s\n' "${rss[@]}" | median)
      xr=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
      rps=$(awk -v r="$rows" -v w="$md" 'BEGIN {printf "%.0f", (w > 0 ? r / w : 0)}')
      mbs=$(awk -v b="$bytes" -v w="$md" 'BEGIN {printf "%.1f", (w > 0 ? b / 1e6 / w : 0)}')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tok\n' "$c" "$t" "$r" "${#walls[@]}" \
        "$md" "$mn" "$mx" "$rows" "$bytes" "$rps" "$mbs" "$mr" "$xr" >> "$results"
      echo "case $c $t $r: median ${md}s (min $mn, max $mx) $rps rows/s $mbs MB/s rss ${mr} MiB"
      if [ "$c" = 4 ] && [ "$r" != cat ]; then  # requests and bytes, counted in one more run
        hl=-; [ "$r" = kblob_http ] && hl=$OUT/http.log
        case $r in kernel*|kblob*) cmd="$cmd --io-stats" ;; esac
        "$VENV/bin/python" "$HERE/blob_io.py" "$OUT/blob_io.tsv" "$t" "$r" "$hl" -- $cmd \
          || echo "case $c $t $r: IO count failed"
      fi
      if [ "$t" = blob_one ] && [ -z "${SKIP_VERIFY:-}" ]; then
        "$VENV/bin/python" "$HERE/verify.py" blob_one "$OUT/blob.$r.bin" "$BLOB_ROW" | tee -a "$OUT/blob_one.verify.txt"
      fi
    done
  done
done
stop_http
"$VENV/bin/python" "$HERE/summarize.py" "$results" "$OUT/blob_io.tsv"
