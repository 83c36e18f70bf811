#!/bin/sh
# Bootstrap for a fresh clone: a current Node, node modules, the pinned server binaries, a build; then the
# requested step. Dependency-free POSIX sh so that it runs on the machine's own (older) Node and npm.
#   sh scripts/bootstrap.sh test|demo|bench|tools|env [args...]
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh

step="${1:-env}"
[ $# -gt 0 ] && shift

ensure_node
ensure_node_modules
case "$step" in
  demo) sh scripts/install-tools.sh temporal ;;   # the demo runs Temporal only: no S3 or GCS server to build
  *) sh scripts/install-tools.sh ;;
esac

case "$step" in
  tools|env) ;;
  test)
    mkdir -p .tmp
    # Independent and each mostly single-threaded: side by side, each into its own log, shown when it fails.
    log "type-check, lint and build"
    node_modules/.bin/tsc -p tsconfig.json --noEmit >.tmp/type-check.log 2>&1 & typecheck=$!
    node_modules/.bin/biome check . >.tmp/lint.log 2>&1 & lint=$!
    node_modules/.bin/tsc -p tsconfig.build.json >.tmp/build.log 2>&1 & build=$!
    failed=""
    wait "$typecheck" || failed="$failed type-check"
    wait "$lint" || failed="$failed lint"
    wait "$build" || failed="$failed build"
    if [ -n "$failed" ]; then
      for step in $failed; do log "$step failed:"; cat ".tmp/$step.log" >&2; done
      exit 1
    fi
    log "tests"
    # Node's compiled-code cache for the test processes and the CLI and worker processes they start (kept between runs).
    NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/node_modules/.cache/node-compile-cache}"
    export NODE_COMPILE_CACHE
    status=0
    node_modules/.bin/vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@" || status=$?
    # One plain closing line that any CI reader understands.
    node -e 'const r=JSON.parse(require("fs").readFileSync(".tmp/vitest.json","utf8"));console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`)' 2>/dev/null || true
    exit "$status"
    ;;
  demo)
    log "build"; npx --no-install tsc -p tsconfig.build.json
    exec node dist/cli/main.js demo "$@"
    ;;
  bench)
    log "build"; npx --no-install tsc -p tsconfig.build.json
    exec node bench/run.ts "$@"
    ;;
  *) echo "bootstrap: unknown step '$step' (expected test, demo, bench, tools)" >&2; exit 2 ;;
esac
