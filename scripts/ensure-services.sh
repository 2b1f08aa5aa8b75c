#!/usr/bin/env bash
# Start PostgreSQL and Redis if this machine has them but they are down, and install Chromium
# with its driver for the browser tests when they are missing and we are root with apt-get.
# A machine with no such server at all is left alone: the tests that need it skip with one loud
# line, except under CI=true, where a missing service fails the run.
set -u
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    echo "ensure-services: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
  fi
fi
if command -v redis-server >/dev/null 2>&1; then
  if ! (command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1); then
    echo "ensure-services: starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
  fi
fi
if { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; } \
  && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-services: installing chromium and chromium-driver (browser tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { timeout 900 apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; }
  apt_install || { timeout 300 apt-get update -qq >/dev/null 2>&1 && apt_install; } \
    || echo "ensure-services: could not install chromium; the browser tests will skip"
fi
exit 0
