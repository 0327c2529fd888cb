#!/bin/sh
# Peak resident memory and CPU time of the gateway on the real kernel stack:
# four emulated devices (weight-scale, decent-scale, level-bottle on a random
# address, mi-scale), each sending a reading every 0.1 s, in ../shared/ble-vm.
#
#   benchmarks/gateway-memory-vm.sh [--mqtt [--hand-over]] [BINARY [SECONDS]]
#
# BINARY is what runs the gateway: a `quenchd`, or a `quench` (then `quench run`).
# --mqtt: as a Pi beside Home Assistant runs it: mosquitto in the guest and
# `quench mqtt run` (the quench-mqtt service) publishing beside the gateway, so
# every event also enters the outbox in the gateway's own transaction.
# --hand-over: the gateway also hears its connected devices' advertising and
# keeps its claims on them (docs/hub.md), which the publisher sends.
# Default: a static release quenchd, built here. Prints /usr/bin/time's figures
# and /proc/PID/status at two thirds of the run. Figures: docs/benchmarks-gateway.md.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--inside" ]; then
    # In the guest: pair the four devices with the debug quench, then measure.
    shift
    binary=$1 seconds=$2 quench=$3 mqtt=$4 handover=${5:-}
    export QUENCH_DB=/tmp/quench-bench.sqlite
    $quench pair "$QUENCH_VM_P1_ADDR" --capacity 750 --tare 180 >/dev/null
    $quench pair "$QUENCH_VM_P2_ADDR" --profile decent-scale --tare 180 >/dev/null
    $quench pair "$QUENCH_VM_P3_ADDR" --profile level-bottle --random --level-curve 0:0,200:750 >/dev/null
    $quench pair "$QUENCH_VM_P4_ADDR" --tare 180 >/dev/null
    if [ "$mqtt" = 1 ]; then
        printf 'listener 18830 127.0.0.1\nallow_anonymous true\nuser root\n' > /tmp/broker.conf
        /usr/sbin/mosquitto -c /tmp/broker.conf -d
        sleep 0.5
        $quench mqtt run --broker mqtt://127.0.0.1:18830 --node bench --seconds $((seconds + 5)) --log-level warning &
        sleep 1
        echo "outbox: $($quench mqtt status)"
    fi
    case "$(basename "$binary")" in quench) set -- "$binary" run $handover ;; *) set -- "$binary" $handover ;; esac
    /usr/bin/time -v "$@" --seconds "$seconds" --log-level warning >/dev/null 2>/tmp/quench-bench-time.txt &
    sleep $((seconds * 2 / 3))
    pid=$(pgrep -n -f -- "--seconds $seconds --log-level")
    echo "at $((seconds * 2 / 3)) s:"
    grep -E "VmHWM|VmRSS|RssAnon|RssFile|Threads" "/proc/$pid/status"
    wait
    echo "whole run:"
    grep -E "Maximum resident|User time|System time|Elapsed" /tmp/quench-bench-time.txt
    if [ "$mqtt" = 1 ]; then wait; echo "after: $($quench mqtt status); $($quench log --json --limit 100000 | grep -c .) events stored"; fi
    exit 0
fi

mqtt=0
handover=
if [ "${1:-}" = "--mqtt" ]; then mqtt=1; shift; fi
if [ "${1:-}" = "--hand-over" ]; then handover=--hand-over; shift; fi
binary=${1:-}
seconds=${2:-40}
if [ -z "$binary" ]; then
    swift build -c release --static-swift-stdlib --scratch-path .build-static --product quenchd
    binary=$PWD/.build-static/release/quenchd
fi
swift build --product quench
quench=$(swift build --show-bin-path)/quench
../shared/ble-vm/setup.sh >/dev/null
p() { printf -- "--profile %s --interval 0.1" "$1"; }
../shared/ble-vm/run.sh --quiet --timeout $((seconds + 120)) \
    --peripheral "$(p weight-scale) --value 500 --unit g" \
    --peripheral "$(p decent-scale) --value 500 --unit g" \
    --peripheral "$(p level-bottle) --random --value 100" \
    --peripheral "$(p mi-scale) --value 500 --unit g" \
    -- sh benchmarks/gateway-memory-vm.sh --inside "$(realpath "$binary")" "$seconds" "$quench" "$mqtt" "$handover"
