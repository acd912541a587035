#!/bin/sh
# scratch: memory of a bench server at 10k idle-ish connections
KIND=$1
cd /work/main
FANOUT_RATE=1 FANOUT_EVENT_BYTES=300 taskset -c 0 node $NODE_FLAGS $KIND > /tmp/mem-srv.txt 2>&1 &
SPID=$!
sleep 4
PORT=$(sed -n 's/^ready //p' /tmp/mem-srv.txt)
grep VmRSS /proc/$SPID/status
taskset -c 1 /tmp/fanout-client 127.0.0.1 $PORT /api/v1/events/stream 10000 2 3 256 40 > /tmp/mem-cli.txt &
CPID=$!
sleep 7
grep -E "VmRSS|RssAnon|RssFile" /proc/$SPID/status
wait $CPID
cat /tmp/mem-cli.txt | head -1
kill $SPID
