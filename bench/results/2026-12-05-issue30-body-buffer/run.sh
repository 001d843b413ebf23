#!/usr/bin/env bash
# Issue 30: nginx's client_body_buffer_size 1m (shipped) against 4m for 12 MP uploads,
# alternated, PHP in each run. Edits deploy/nginx/ireporter.conf while it runs and puts 1m back.
cd "$(dirname "$0")/../../.."
for i in 1 2; do
  for v in 1m 4m; do
    sed -i "s/^    client_body_buffer_size [0-9]*m;/    client_body_buffer_size $v;/" deploy/nginx/ireporter.conf
    env REPS=1 SKIP_BUILD=1 THUMB=0 PROBE=0 QUIET_WAIT=10 ONLY=upload_big_64s \
      RES=bench/results/2026-12-05-issue30-body-buffer/$v-$i bash bench/run.sh > /dev/null 2>&1
  done
done
sed -i "s/^    client_body_buffer_size [0-9]*m;/    client_body_buffer_size 1m;/" deploy/nginx/ireporter.conf

