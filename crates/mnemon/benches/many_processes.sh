#!/usr/bin/env bash
# Throughput of recalls: 1 process vs 8 processes on one memory folder (release build).
set -e
OUT=$(mktemp -d)
BIN="${MNEMON_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/mnemon}"
D=$(mktemp -d)/.mnemon
$BIN init --dir $D >/dev/null
for i in $(seq 0 19); do printf -- "---\nname: Node $i\n---\nanchor note $i about topic$i and shared words\n" > $D/memory/n$i.md; done
for i in $(seq 0 200); do printf -- "---\nname: Filler $i\n---\nfiller text $i unrelated\n" > $D/memory/f$i.md; done
$BIN --dir $D index >/dev/null
N=400
t0=$(date +%s.%N); $BIN --dir $D __worker --role recaller --ops $((N*8)) --seed 1 > $OUT/one.log; t1=$(date +%s.%N)
echo "1 process: $((N*8)) recalls in $(python3 -c "print(round($t1-$t0, 2))") s"
t0=$(date +%s.%N)
for i in $(seq 1 8); do $BIN --dir $D --session r$i __worker --role recaller --ops $N --seed $i > $OUT/r$i.log & done
$BIN --dir $D --session idx __worker --role indexer --ops 30 --seed 99 > $OUT/idx.log &
# notes edited while recalls run, so the indexer has work
for k in $(seq 1 30); do printf -- "---\nname: Churn\n---\nchurn $k\n" > $D/memory/churn$((k%5)).md; sleep 0.05; done
wait; t1=$(date +%s.%N)
echo "8 processes: $((N*8)) recalls in $(python3 -c "print(round($t1-$t0, 2))") s (plus an indexer re-indexing edited notes)"
cat $OUT/r*.log | python3 -c "
import sys,json
l=[json.loads(x) for x in sys.stdin if x.strip()]
lat=sorted(x['latency_us'] for x in l if x.get('op')=='query')
errs=[x for x in l if x.get('op')=='error']
print('8-process recalls: p50 %d us, p99 %d us, max %d us, errors %d'%(lat[len(lat)//2],lat[int(len(lat)*.99)],lat[-1],len(errs)))"
python3 -c "
import json
l=[json.loads(x) for x in open('$OUT/one.log') if x.strip()]
lat=sorted(x['latency_us'] for x in l if x.get('op')=='query')
print('1-process recalls: p50 %d us, p99 %d us, max %d us'%(lat[len(lat)//2],lat[int(len(lat)*.99)],lat[-1]))"
grep -c '"op":"index"' $OUT/idx.log | sed 's/^/indexer runs: /'
