#!/usr/bin/env bash
# The whole test run (the README's test command; .ci/run runs exactly this):
#
#   scripts/test.sh                  build the package and its tests once, then run every test
#   scripts/test.sh --filter REGEX   the same build, then only these tests, in one process
#                                    (any arguments go to the test binary: --filter, --skip, --list-tests)
#
# Every test runs in one of a few processes running at once (the shards below), so what one test
# waits on (an emulated guest, a child process, a simulated device in real time) overlaps the others;
# the emulated guests get the cores first (see `niceness` and `after_guests`).
# The VM tests (BLEVMTests) mostly wait on their guest (`quench run --seconds 72`, `sleep 75`): each
# VM shard runs its tests one after the other, so at most one VM per shard is up. Before anything
# runs, the shards are checked to cover every test exactly once: a new test lands in the VM
# shard vm-4 or in the last shard, never nowhere.
#
# Output: each shard's log is printed whole when it ends (kept in .build/test-logs/ with JUnit XML),
# then one line per shard with its time and result, and the slowest tests. Exit status 0 only when
# every shard passed.
set -uo pipefail
cd "$(dirname "$0")/.."

# QUENCH_TEST_BUILT=1: the caller has just run this same build (.ci/run does, to start its background
# jobs after it). A second `swift build` straight after a clean one is not a no-op: SwiftPM relinks
# the page's build tool, which recompiles QuenchWeb and relinks everything after it (11 s here).
[ "${QUENCH_TEST_BUILT:-}" = 1 ] || swift build --build-tests || exit
bin=$(swift build --show-bin-path)/QuenchPackageTests.xctest
tests() { "$bin" --testing-library swift-testing "$@"; }

if [ $# -gt 0 ]; then
    tests "$@"
    exit
fi

# Name and test-binary arguments, one shard a line (no spaces inside an argument). Test IDs are
# Module.Suite/…/test(); --filter and --skip are regular expressions (any --filter, then no --skip).
# The VM shards run their tests one at a time (--no-parallel), balanced by how long their VMs run
# on an idle 2-core host: bothFirmwares ~135 s, allProfiles ~130, firstPairingThenKilledMidSip ~130,
# poweredOffAndOn ~115, the hub's two gateways with the carried bottle ~110, hearsTheScaleAfterAFreeze ~70, dropsMidDrain ~60,
# serviceBinary ~55, runPublishes (MQTT) ~45, legacyController and linkLoss ~45 (one boot, so one
# shard), killedMidDrain ~40, the reminder ~40, bt5Controller ~10. In CI, where the other shards
# keep both cores busy for their first four minutes, each shard's first guest takes about twice that.
# Six guests at once: with four, the VM shards ran 366-419 s in CI (at 8b6da14) while the other
# shards had ended by 240 s and left the cores half idle; with five, 282-375 s; with eight on two
# cores (and the other shards) a guest took 80 s to start one program, lost a broadcast scale's
# readings and ran out of time (CI at efe3239 and 219b383). vm-4 takes any VM test the others do not name.
vm='BLEVMTests\.'
live="${vm}LiveVMTests/"
web='(QuenchWebTests|QuenchServeTests)\.'
packaging='PackagingTests\.'
waiting='(QuenchCLITests|QuenchConfigTests|QuenchStoreTests|MQTTTests|QuenchMQTTTests|QuenchHubTests|QuenchNotifyTests|DocSamplesTests)\.'
realtime='(QuenchGatewayTests|QuenchToolsTests|QuenchServiceTests|QuenchSimulatedDevicesTests)\.'
named_vm="${live}(allProfiles|serviceBinary|firstPairingThenKilledMidSip|MQTTVMTests|AdapterVMTests)|${live}HidrateSparkVMTests/|${vm}(ReminderSignalVMTests|BleVMTests/)"
shards=(
    "vm-1|--no-parallel --filter ${live}allProfiles --filter ${live}HidrateSparkVMTests/killedMidDrain"
    "vm-2|--no-parallel --filter ${live}firstPairingThenKilledMidSip --filter ${live}HidrateSparkVMTests/dropsMidDrain"
    "vm-3|--no-parallel --filter ${live}HidrateSparkVMTests/bothFirmwares --filter ${live}MQTTVMTests"
    # The hub's two gateways in one guest, the frozen gateway, and any new VM test.
    "vm-4|--no-parallel --filter ${vm} --skip ${named_vm}"
    "vm-5|--no-parallel --filter ${live}AdapterVMTests --filter ${vm}BleVMTests/bt5Controller"
    "vm-6|--no-parallel --filter ${live}serviceBinary --filter ${vm}BleVMTests/(legacyController|linkLoss) --filter ${vm}ReminderSignalVMTests"
    # Tests that mostly wait on processes they start: the page's (quench serve, browsers), the
    # package's (dpkg, lintian, systemd-analyze), the others (quench, brokers, Home Assistant); the
    # gateway over simulated peripherals in real time; then the rest (pure, CPU-bound). Apart
    # because a test that blocks (as these do, for up to 80 s) holds one of the process's few test
    # threads (as many as cores): in one process the others waited behind them (the tests' own
    # times said 240 s for a 1 s test).
    "web|--filter ${web}"
    "packaging|--filter ${packaging}"
    "processes|--filter ${waiting}"
    "realtime|--filter ${realtime}"
    "rest|--skip ${vm} --skip ${web} --skip ${packaging} --skip ${waiting} --skip ${realtime}"
)
# The emulated guests run in real time against peripherals that stream on the host's clock, and
# each keeps about half a core busy while it runs (TCG): six of them take nearly both cores of a
# 2-core machine. Starved, a guest delivers notifications late (its clock went 4 s off the host's),
# brings its adapter up at 86 s instead of 5, and runs out of time; and the tests beside them that
# wait on a browser or a broker for a bounded time ran out of theirs (a page not loaded in 30 s).
# So the guests come first, in two ways. Each shard runs in a session of its own with the share of
# the CPU of a nice value (scripts/cpu-share says why `nice` alone did not hold: libdispatch resets
# it for the tests' threads and what they start): the gateway over simulated peripherals, whose
# traces run ten times faster than real time (a stall of 1 s is 10 s of a trace: two sips merged
# beside six booting guests, CI here 2026-12-02), ahead of all at -10 (11 s of CPU in all; a user
# who may not raise a share leaves it at 0); the guests at 0, vm-1's (eight peripherals, four
# devices in one gateway, near a core of its own while they stream: the one whose sips went missing
# or merged when it was starved, with a third of a core) at -5, ahead of the others; the
# throughput-bound shards (dpkg and lintian, the pure CPU-bound tests) on what is left. And the
# shards whose tests wait on browsers, brokers and Home Assistant with bounds start only once most
# guests are done (`after_guests`: at most that many VM shards still running).
declare -A niceness=([realtime]=-10 [vm-1]=-5 [packaging]=15 [rest]=19)
declare -A after_guests=([processes]=3 [web]=2)

# The tests a shard's arguments select from the list of all (what the test binary's --filter and
# --skip do; its --list-tests ignores them).
select_tests() { # LIST ARGS...
    local list=$1 filters=() skips=(); shift
    while [ $# -gt 0 ]; do
        case $1 in --filter) filters+=(-e "$2"); shift 2 ;; --skip) skips+=(-e "$2"); shift 2 ;; *) shift ;; esac
    done
    if [ ${#filters[@]} -gt 0 ]; then grep -E "${filters[@]}" "$list"; else cat "$list"; fi |
        if [ ${#skips[@]} -gt 0 ]; then grep -v -E "${skips[@]}"; else cat; fi
}

logs=.build/test-logs
rm -rf "$logs" && mkdir -p "$logs"

# Every test in exactly one shard.
tests --list-tests > "$logs/all.list" 2> "$logs/list.err" || { cat "$logs/list.err"; echo "test: cannot list the tests"; exit 1; }
: > "$logs/sharded.list"
for shard in "${shards[@]}"; do
    read -r -a args <<< "${shard#*|}"
    select_tests "$logs/all.list" "${args[@]}" >> "$logs/sharded.list"
done
if ! diff <(sort "$logs/all.list") <(sort "$logs/sharded.list") > "$logs/coverage.diff"; then
    echo "test: the shards in $0 do not cover each test exactly once (< in none, > more than once):"
    cat "$logs/coverage.diff"
    exit 1
fi

start=$(date +%s)
declare -A pid began
# A shard's session holds all it started (guests, browsers, brokers): an interrupted run ends them all.
trap 'for session in "$logs"/*.session; do [ -f "$session" ] && pkill -s "$(cat "$session")"; done 2>/dev/null' EXIT
declare -A port_block
launch() { # NAME
    local name=$1 args
    read -r -a args <<< "${arguments[$name]}"
    # Each shard's servers take ports from a block of their own (TestPorts in QuenchTestSupport).
    # The shard's CPU time (user and system, its children's included: guests, browsers, brokers) is
    # what `times` says of the subshell's children (its last line), kept beside its log for the summary.
    (export QUENCH_TEST_PORT_BLOCK=${port_block[$name]}
     scripts/cpu-share "${niceness[$name]:-0}" "$bin" --testing-library swift-testing "${args[@]}" --xunit-output "$logs/$name.xml" &
     echo $! > "$logs/$name.session"; wait $!; rc=$?; times > "$logs/$name.cpu"; exit $rc) > "$logs/$name.log" 2>&1 &
    pid[$name]=$! began[$name]=$(date +%s)
}
# Starts the shards not yet started whose guests are done enough.
launch_ready() {
    local name guests=0
    for name in "${!pid[@]}"; do [[ $name == vm-* ]] && guests=$(( guests + 1 )); done
    for name in "${!after_guests[@]}"; do
        if [ -z "${began[$name]:-}" ] && [ "$guests" -le "${after_guests[$name]}" ]; then
            echo "test: $name starts, $guests VM shards still running, after $(( $(date +%s) - start )) s"
            launch "$name"
        fi
    done
}
declare -A arguments
number=0
for shard in "${shards[@]}"; do
    name=${shard%%|*}
    arguments[$name]=${shard#*|} port_block[$name]=$(( number++ ))
    [ -n "${after_guests[$name]:-}" ] || launch "$name"
done
launch_ready

status=0 summary=()
remaining=${#pid[@]}
while [ "$remaining" -gt 0 ]; do
    wait -n -p done "${pid[@]}"; rc=$?
    for name in "${!pid[@]}"; do
        [ "${pid[$name]}" = "$done" ] || continue
        secs=$(( $(date +%s) - began[$name] ))
        echo "==== tests: $name (exit $rc after ${secs} s) ===="
        cat "$logs/$name.log"
        [ "$rc" -eq 0 ] || status=1
        summary+=("$(printf '%-9s %s after %3d s, CPU %s' "$name" "$([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)")" "$secs" \
            "$(awk 'END { printf "%d s", cpu($1) + cpu($2) } function cpu(t) { split(t, p, "m"); return p[1] * 60 + p[2] }' "$logs/$name.cpu" 2>/dev/null)")")
        unset "pid[$name]"
    done
    launch_ready
    remaining=${#pid[@]}
done
rm -f "$logs"/*.session  # all ended: nothing for the trap to stop

echo "==== tests: $(( $(date +%s) - start )) s in ${#shards[@]} processes; logs and JUnit XML in $logs ===="
printf '%s\n' "${summary[@]}"
echo "slowest tests (s):"
sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)" time="\([0-9.]*\)".*/\3 \1\/\2/p' "$logs"/*.xml | sort -rn | head -12
# The one closing line over all shards, from their JUnit XML (a shard that died wrote none: its
# tests count as failed by the exit status above, and the line says how many shards reported).
totals=$(sed -n 's/.*<testsuite [^>]*tests="\([0-9]*\)" failures="\([0-9]*\)" skipped="\([0-9]*\)".*/\1 \2 \3/p' "$logs"/*.xml |
    awk '{t+=$1; f+=$2; s+=$3; n++} END {printf "%d %d %d %d", t-f-s, f, s, n}')
read -r passed failed skipped reported <<< "$totals"
[ "$reported" -eq "${#shards[@]}" ] || echo "test: only $reported of ${#shards[@]} processes wrote their results"
echo "tests: $passed passed, $failed failed, $skipped skipped"
# What failed, once more at the very end: a CI page that keeps only the tail of a long run still
# shows it (a VM shard's failure was printed minutes before the end, and the page kept none of it).
# Each issue's line and the two after it (the expectation's message), at most 12 issues a shard.
if [ "$status" -ne 0 ]; then
    for log in "$logs"/*.log; do
        grep -q '✘' "$log" || continue
        echo "failed in $(basename "$log" .log):"
        grep -A2 '✘.*recorded an issue' "$log" | grep -v '^--$' | head -36 | cut -c1-600
    done
    # A guest's kernel crash is run again once (BLEVMHarness.boot); one that crashed twice says so here.
    grep -l 'exit 123 (the guest kernel crashed)' "$logs"/vm-*.log 2>/dev/null | sed 's|.*/|a guest kernel crashed in |'
fi
exit $status
