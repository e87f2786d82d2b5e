#!/usr/bin/env bash
# Side-by-side read benchmark of paimon-kernel against its peers (see README.md).
#
# Env (defaults):
#   RUNS=5                  counted runs per reader and case (after 1 warm-up)
#   CASES="1 2 3 5"         cases to run (1 append, 2 PK dedup, 3 partial-update + aggregation,
#                           5 planning over 1,000 files / 50 snapshots)
#   READERS=...             subset of: cat floor1 floor2 kernel kernel1c paimon pypaimon
#   VENV=/work/venv         venv with pypaimon==2.1.0 (created if missing)
#   CARGO_TARGET_DIR=/work/target-bench   release builds (kept apart from the dev target dir)
#   DATA=<here>/data        tables (bench.db under $DATA/wh) and run logs ($DATA/res)
#   SKIP_BUILD=1, SKIP_VERIFY=1
# Output: $DATA/res/results.tsv (one line per reader and case), per-run lines in runs.txt,
# and a markdown summary (summarize.py) on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
CASES=${CASES:-"1 2 3 5"}
READERS=${READERS:-"cat floor1 floor2 kernel kernel1c paimon pypaimon"}
VENV=${VENV:-/work/venv}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/target-bench}
DATA=${DATA:-$HERE/data}
WH=$DATA/wh
OUT=$DATA/res
BIN=$CARGO_TARGET_DIR/release
mkdir -p "$OUT"

# 1. pypaimon venv and tables
if ! "$VENV/bin/python" -c 'import pypaimon' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install pypaimon==2.1.0
fi
tables_for() {
  case $1 in
    1) echo append_2m ;; 2) echo pk_dedup_1m ;; 3) echo "pk_partial_1m pk_agg_1m" ;; 5) echo plan_1k ;;
  esac
}
want=()
for c in $CASES; do
  for t in $(tables_for "$c"); do
    [ -d "$WH/bench.db/$t" ] || want+=("$t")
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
      [ "$t" = plan_1k ] && continue
      "$BIN/paimon-kernel" scan "$WH/bench.db/$t" --format arrow --output "$OUT/$t.arrow"
      "$VENV/bin/python" "$HERE/verify.py" "$t" "$OUT/$t.arrow" | tee "$OUT/$t.verify.txt"
      rm -f "$OUT/$t.arrow"
    done
  done
fi

# 4. timings
cmd_for() {  # reader table
  local d=$WH/bench.db/$2
  case $1 in
    cat)      echo "$HERE/cat_floor.sh $d" ;;
    floor1)   echo "$BIN/parquet_floor $d 1" ;;
    floor2)   echo "$BIN/parquet_floor $d 2" ;;
    kernel)   echo "$BIN/paimon-kernel scan $d --format arrow --output /dev/null" ;;
    kernel1c) echo "taskset -c 0 $BIN/paimon-kernel scan $d --format arrow --output /dev/null" ;;
    kfiles)   echo "$BIN/paimon-kernel files $d --json" ;;
    paimon)   echo "$BIN/paimon_read $WH bench $2 2 stream" ;;
    pypaimon) echo "$VENV/bin/python $HERE/pypaimon_read.py $WH bench.$2 table" ;;
  esac
}
rows_of() {
  case $1 in append_2m) echo 2000000 ;; plan_1k) echo 100000 ;; *) echo 1000000 ;; esac
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
results=$OUT/results.tsv
[ -f "$results" ] || printf 'case\ttable\treader\truns\tmedian_s\tmin_s\tmax_s\trows\tdata_bytes\trows_per_s\tMB_per_s\tmedian_rss_MiB\tmax_rss_MiB\tok\n' > "$results"
for c in $CASES; do
  for t in $(tables_for "$c"); do
    rdrs=$READERS
    [ "$c" = 5 ] && rdrs="kfiles $READERS"
    bytes=$(find "$WH/bench.db/$t" -name '*.parquet' -printf '%s\n' | awk '{s+=$1} END {print s}')
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
    done
  done
done
"$VENV/bin/python" "$HERE/summarize.py" "$results"
