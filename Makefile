# iReporter - Swift FastCGI rewrite of the 2012 PHP photo-sharing API.
#
#   make build   release build: .build/release/ireporter
#   make up      private stack on http://127.0.0.1:$(PORT)/iReporter/ (MariaDB,
#                the server, nginx); again: restart with a fresh binary
#   make down    stop it
#   make status  what of it is running
#   make cluster-up    the same on loopback as several hosts: three Galera
#                nodes, Redis, two app hosts, a front nginx on 127.0.0.1:$(PORT)
#                (scripts/cluster.sh; not at once with `make up`)
#   make cluster-down  stop it;  make cluster-status
#   make test    every test suite against a fresh, isolated stack (CI: .ci/run)
#   make deps    install the Debian packages needed (as root)
#   make clean   remove the build directory and Python caches
#
# `make up` / `make down` take PORT, DB_PORT, DB_URL, UPLOAD_DIR, SESSION_DIR,
# RUN_DIR and WORKERS from the command line or the environment, e.g.
#   make up PORT=8000 DB_URL='mysql://ireport:secret@127.0.0.1:3306/iReport'
# (see scripts/stack.sh). Scripts that start daemons must run as root.

SHELL := /bin/bash
.DEFAULT_GOAL := build
.PHONY: build up down status cluster-up cluster-down cluster-status test deps clean

# Hand these to the scripts when they are set (command line or environment);
# unset ones stay unset, so the scripts' defaults apply.
export PORT DB_PORT DB_URL UPLOAD_DIR SESSION_DIR RUN_DIR WORKERS
export CLUSTER_DIR APP_PORTS GALERA_PORT REDIS_PORT

build:
	swift build -c release

up:
	scripts/stack.sh up

down:
	scripts/stack.sh down

status:
	scripts/stack.sh status

cluster-up:
	scripts/cluster.sh up

cluster-down:
	scripts/cluster.sh down

cluster-status:
	scripts/cluster.sh status

test:
	scripts/test.sh

deps:
	scripts/deps.sh

clean:
	rm -rf .build .pytest_cache
	find Tests -name __pycache__ -type d -prune -exec rm -rf {} +
