#!/bin/sh
# run_scenarios.sh DIR [SCENARIO.json ...]: runs conformance/scenarios/*.json (or the files given)
# with DIR/run (Java Paimon 2.0.0, installed by install.sh DIR), each into a fresh warehouse, and
# prints one line per scenario: "pass", "unsupported: <reason>", "differs: <checkpoint>" or
# "error: <message>", then the counts. Logs of every run are kept in $OUT (default a temporary
# directory, printed at the end). Exit 0 when nothing differs or fails.
set -u
dir=${1:?usage: run_scenarios.sh DIR [SCENARIO.json ...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
    set -- "$here"/../scenarios/*.json
fi
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/java-scenarios.XXXXXX")}
mkdir -p "$out"
pass=0 unsupported=0 differs=0 error=0
start=$(date +%s)
for f in "$@"; do
    name=$(basename "$f" .json)
    wh="$out/$name"
    rm -rf "$wh"
    mkdir -p "$wh"
    t0=$(date +%s)
    "$dir/run" "$f" "$wh/warehouse" > "$wh/stdout" 2> "$wh/stderr"
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    case $rc in
        0) pass=$((pass + 1)); line="pass" ;;
        3) unsupported=$((unsupported + 1))
           line="unsupported: $(grep -m1 '^unsupported scenario step' "$wh/stderr")" ;;
        *) if grep -q "rows differ from the scenario's" "$wh/stderr"; then
               differs=$((differs + 1))
               line="differs: $(grep -m1 -o 'checkpoint [^:]*: the table.s rows differ[^)]*)' "$wh/stderr")"
           else
               error=$((error + 1))
               line="error (exit $rc): $(grep -m1 '^run: ' "$wh/stderr" | cut -c1-400)"
           fi ;;
    esac
    printf '%-45s %s (%ss)\n' "$name" "$line" "$secs"
done
total=$(( $(date +%s) - start ))
echo "$pass passed, $unsupported unsupported, $differs differ, $error failed in ${total}s (logs: $out)"
[ $differs -eq 0 ] && [ $error -eq 0 ]
