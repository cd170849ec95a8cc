#!/usr/bin/env bash
# The whole test suite, as CI runs it: install the Debian packages (when root and missing), build
# with -Werror, with ASan+UBSan, and a ThreadSanitizer (clang) binary; run the unit, fuzz, deploy
# and lint tests of the first two builds (the ASan build skips the fake API server's self-tests and
# clang-format, which run none of our compiled code), then the unit and fuzz tests under valgrind;
# then the integration tests of all three builds side by side (the TSan binary runs the live
# ones: watch churn, fault storms, an etcd restore, with test/tsan.supp). Prints one closing line
# "N passed, N failed, N skipped" and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

PKGS="build-essential meson ninja-build pkg-config libmicrohttpd-dev libgnutls28-dev libjansson-dev
      libcurl4-openssl-dev libhwloc-dev libyaml-dev check python3 valgrind prometheus curl
      clang-format openssl clang libclang-rt-14-dev"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	missing=$(for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
	if [ -n "$missing" ]; then
		echo "== installing:" $missing
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
	fi
fi

status=0
run() { echo "== $*"; "$@" || status=1; }

rm -rf build-ci build-ci-asan build-ci-tsan
run meson setup build-ci -Dwerror=true
run meson setup build-ci-asan -Db_sanitize=address,undefined
run env CC=clang meson setup build-ci-tsan -Db_sanitize=thread
run ninja -C build-ci
run ninja -C build-ci-asan
# TSan: only the binary is built (the live tests drive it)
run ninja -C build-ci-tsan server/railfit

# CPU-bound tests first, two at a time
run meson test -C build-ci --no-rebuild --print-errorlogs --num-processes 2 --no-suite integration
run meson test -C build-ci-asan --no-rebuild --print-errorlogs --num-processes 2 \
	--no-suite integration --no-suite lint
run meson test -C build-ci --no-rebuild --setup=valgrind --suite unit --suite fuzz --print-errorlogs \
	--num-processes 2

# The integration tests mostly wait (request and watch timeouts, backoff, a 12 s fault storm), so
# the three builds' integration tests run side by side, each build's one after the other as
# before; every test starts its own fake API server and railfit on free ports. A TSan report stops
# railfit (halt_on_error), so the test sees it die with the report on its stderr.
tsan="suppressions=$PWD/test/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
integration() { # build-dir, meson test arguments...
	local d=$1
	shift
	echo "== meson test -C $d $* (in the background)"
	meson test -C "$d" --no-rebuild --print-errorlogs --logbase testlog-integration "$@" \
		>"$d/integration.out" 2>&1
}
integration build-ci --suite integration &
plain=$!
integration build-ci-asan --suite integration --no-suite fakeapi &
asan=$!
TSAN_OPTIONS=$tsan integration build-ci-tsan integration-live integration-recovery &
thread=$!
for job in "build-ci:$plain" "build-ci-asan:$asan" "build-ci-tsan:$thread"; do
	wait "${job#*:}" || status=1
	echo "== integration tests of ${job%%:*}"
	cat "${job%%:*}/integration.out"
done

python3 - build-ci build-ci-asan build-ci-tsan <<'PY'
import json, sys, os
counts = {"passed": 0, "failed": 0, "skipped": 0}
for d in sys.argv[1:]:
    logs = os.path.join(d, "meson-logs")
    for log in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        if not (log.startswith("testlog") and log.endswith(".json")):
            continue
        for line in open(os.path.join(logs, log)):
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                counts["passed"] += 1
            elif r == "SKIP":
                counts["skipped"] += 1
            else:
                counts["failed"] += 1
print("%d passed, %d failed, %d skipped" % (counts["passed"], counts["failed"], counts["skipped"]))
PY
exit $status
