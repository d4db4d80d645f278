#!/usr/bin/env bash
# Installs the Debian packages Herald builds and tests with, when missing: LMDB (library and
# mdb_stat/mdb_dump), libsodium, zlib, HAProxy for the test of `herald serve` behind it,
# PostgreSQL 15 for the replicated log's tests, for its cluster (Tools/cluster.sh and its
# test) Patroni, etcd (server and etcdctl) and curl, and Chromium with its WebDriver for the
# browser tests of the web console.
# Run as root (or with sudo on PATH). Used by the README's quick start and by CI.
set -euo pipefail
need=()
[ -f /usr/include/lmdb.h ] || need+=(liblmdb-dev)
command -v mdb_stat >/dev/null 2>&1 || need+=(lmdb-utils)
[ -f /usr/include/sodium.h ] || need+=(libsodium-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# PostgreSQL 15 (server and psql): the replicated log's tests (Tests/HeraldTestSupport/PostgresServers.swift).
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
command -v psql >/dev/null 2>&1 || need+=(postgresql-client-15)
# Patroni with etcd, and curl: Tools/cluster.sh and its test (ReplicatedFailoverTests).
command -v patroni >/dev/null 2>&1 || need+=(patroni)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ ${#need[@]} -eq 0 ] && exit 0
echo "setup: installing ${need[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}"
