#!/usr/bin/env bash
# Run serialbench (../shared/bench, beside the repository) on bootlab (record -q and record echoing), the reference recorder and grabserial:
# every script, unpaced and paced at 115200 baud. Results go to bench/results/<timestamp>/
# (git-ignored): runs.jsonl (one JSON object per run), table.txt, argv.txt, console.log, and
# targets.txt (the unpaced flood beside issue 15's targets, serialbench_targets.py).
#
#   bench/run_serialbench.sh                      # --repeat 1
#   REPEAT=3 bench/run_serialbench.sh             # the full comparison
#   bench/run_serialbench.sh --script boot,partial --pace 0   # extra args go to the harness
#                                                 # (later options override the defaults)
# Environment:
#   REPEAT=N          repeats (default 1)
#   NOISE_MAX=P       re-run a run in which other processes used more than P % of the machine
#                     (default 25; "off" disables the check)
#   NOISE_RETRIES=N   at most N re-runs per run (default 1)
#   RECORDERS=list    default bootlab,bootlab-echo,reference,grabserial
#   OUT=DIR           results folder (default bench/results/<timestamp>)
#
# grabserial comes from Debian (apt-get install grabserial); it is installed when missing and
# this runs as root, otherwise the run goes on without it (the harness marks it as unavailable).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
main="$(dirname "$here")"
harness="$main/../shared/bench"            # the harness lives beside the repository
[ -f "$harness/serialbench.py" ] || { echo "run_serialbench: no serialbench.py in $harness" >&2; exit 2; }
python="$main/.venv/bin/python"          # has pyserial, which the harness needs
[ -x "$python" ] || python=python3

repeat="${REPEAT:-1}"
noise_max="${NOISE_MAX:-25}"
noise_retries="${NOISE_RETRIES:-1}"
recorders="${RECORDERS:-bootlab,bootlab-echo,reference,grabserial}"
out="${OUT:-$here/results/$(date +%Y%m%d-%H%M%S)}"

if ! command -v grabserial >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "run_serialbench: installing grabserial (apt-get)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y grabserial >&2 \
            || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive \
                 apt-get install -y grabserial >&2; } \
            || echo "run_serialbench: grabserial could not be installed; continuing" >&2
    else
        echo "run_serialbench: grabserial missing and not root; it will be skipped" >&2
    fi
fi

noise=()
if [ "$noise_max" != off ]; then
    noise=(--noise-max "$noise_max" --noise-retries "$noise_retries")
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"                  # the harness runs in its own folder
echo "run_serialbench: results in $out" >&2
cd "$harness"
set +e
"$python" serialbench.py \
    --adapters "$here/serialbench_bootlab.py" \
    --recorder "$recorders" \
    --script all --pace both --repeat "$repeat" \
    "${noise[@]}" \
    --out "$out" \
    "$@" 2> >(tee "$out/console.log" >&2)
status=$?
set -e
echo "run_serialbench: harness exit $status; table: $out/table.txt" >&2
"$python" "$here/serialbench_targets.py" "$out/runs.jsonl" | tee "$out/targets.txt" || true
exit "$status"
