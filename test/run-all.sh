#!/usr/bin/env bash
# The whole test suite, as CI runs it: install the Debian packages (when root and missing), build
# with -Werror and run every test; then the same under ASan+UBSan (but the fake API server's own
# self-tests and clang-format, which run none of our compiled code); then the unit tests under
# valgrind; then a ThreadSanitizer build (clang) of the binary runs the live integration tests
# (watch churn, fault storms, an etcd restore) with test/tsan.supp. Prints one closing line
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
run meson test -C build-ci --print-errorlogs --num-processes 2
run meson setup build-ci-asan -Db_sanitize=address,undefined
run meson test -C build-ci-asan --print-errorlogs --num-processes 2 --no-suite fakeapi --no-suite lint
run meson test -C build-ci --setup=valgrind --suite unit --suite fuzz --print-errorlogs --num-processes 2
# TSan: only the binary is built (the live tests drive it); a report stops it (halt_on_error), so
# the test sees railfit die with the report on its stderr. The two suites run side by side: each
# starts its own fake API server and railfit on free ports, and mostly waits on timers (watch
# timeouts, backoff, a 12 s fault storm).
run env CC=clang meson setup build-ci-tsan -Db_sanitize=thread
run ninja -C build-ci-tsan server/railfit
tsan="suppressions=$PWD/test/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
TSAN_OPTIONS=$tsan meson test -C build-ci-tsan --no-rebuild --print-errorlogs \
	--logbase testlog-recovery integration-recovery >build-ci-tsan/recovery.out 2>&1 &
recovery=$!
run env TSAN_OPTIONS="$tsan" meson test -C build-ci-tsan --no-rebuild --print-errorlogs integration-live
echo "== meson test -C build-ci-tsan --no-rebuild --print-errorlogs integration-recovery (alongside)"
wait $recovery || status=1
cat build-ci-tsan/recovery.out

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
