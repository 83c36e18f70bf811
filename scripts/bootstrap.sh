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
sh scripts/install-tools.sh

case "$step" in
  tools|env) ;;
  test)
    log "type-check"; npx --no-install tsc -p tsconfig.json --noEmit
    log "lint"; npx --no-install biome check .
    log "build"; npx --no-install tsc -p tsconfig.build.json
    log "tests"
    mkdir -p .tmp
    status=0
    npx --no-install vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@" || status=$?
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
