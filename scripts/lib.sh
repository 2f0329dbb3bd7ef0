# Shell functions the scripts share; sourced, never run.

# Installs those of the Debian packages named that are missing (apt-get
# update first), as root or through sudo, without recommended packages.
install_missing_packages() {
  local missing=() package sudo=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "$(basename "$0"): installing ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Stops process `pid` with `signal`, then with SIGKILL if it is still there
# after `seconds`.
stop_process() {
  local pid=$1 signal=$2 seconds=$3 deadline
  kill -"$signal" "$pid" 2>/dev/null || return 0
  deadline=$((SECONDS + seconds))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Runs the command after the first four arguments every 0.1 s until it
# succeeds. Ends the script, with the last lines of `log`, if process `pid`
# ends first or `seconds` pass: `what` names what was awaited.
wait_until() {
  local pid=$1 seconds=$2 log=$3 what=$4 deadline=$((SECONDS + $2))
  shift 4
  until "$@"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$(basename "$0"): $what: its process ended first; its log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    if [ $SECONDS -ge "$deadline" ]; then
      echo "$(basename "$0"): $what: not ready after $seconds s; log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
}
