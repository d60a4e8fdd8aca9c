#!/bin/sh
# dwconv_ab.sh BASE_BENCH NEW_BENCH [ROUNDS] [TARGET] — runs two builds of kiln_dwconv_bench
# (bench/dwconv_bench.c) one after the other ROUNDS times (never together: they would share the
# cores), keeps each layer's minimum and prints base ns, new ns and base/new per layer and model.
# A base tree without the bench builds it with:
#   cc -O2 -std=c11 -IBASE/src -IBASE/include bench/dwconv_bench.c BASE/build/libkiln.a -lm -lpthread
set -eu
base=$1 new=$2 rounds=${3:-5} target=${4:-x86-64-v4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$rounds" ]; do
    "$base" "$target" 20 >>"$tmp/base"
    "$new" "$target" 20 >>"$tmp/new"
    i=$((i + 1))
done
awk 'FNR == 1 { f++ }
     { key = $1 == "total" ? $1 " " $2 : $2 " C=" substr($3, 3) " " $4 " " $5 " " $6 " " $7; v = $NF + 0
       if (!((key, f) in best) || v < best[key, f]) best[key, f] = v
       if (f == 1 && !(key in seen)) { seen[key] = 1; order[n++] = key } }
     END { for (i = 0; i < n; i++) { k = order[i]
             printf "%-58s %9d %9d %5.2f\n", k, best[k, 1], best[k, 2], best[k, 1] / best[k, 2] } }' "$tmp/base" "$tmp/new"
