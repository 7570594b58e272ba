#!/usr/bin/env python3
"""Traces of the shop of tests/fixtures/traces/shop-known.toml as OTLP JSON:
payments and inventory called in parallel, then db, only after payments
succeeded; payments fails 5 % of its calls; three pods of each (shop's named
by k8s.pod.name, payments' and db's by service.instance.id, inventory's by
host.name). The same model as tests/it/import_shop.rs writes (not the same
draws), for the figures in docs/scenarios.md:

    scripts/shop-traces.py N [SEED] > shop.json
    resim import shop.json --out shop.toml"""
import json, math, random, sys

n = int(sys.argv[1])
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 11)
Z99 = 2.3263478740408408
def lognormal(p50, p99):
    return p50 * math.exp(math.log(p99 / p50) / Z99 * rng.gauss(0.0, 1.0))
MS, T0 = 1_000_000, 1_700_000_000_000_000_000
services = ["shop", "payments", "inventory", "db"]
keys = ["k8s.pod.name", "service.instance.id", "host.name", "service.instance.id"]
pods = [[] for _ in range(12)]
def span(trace, sid, parent, kind, start, end, error):
    s = {"traceId": "%032x" % trace, "spanId": "%016x" % sid,
         "name": "POST /checkout" if kind == 2 and parent is None else "call", "kind": kind,
         "startTimeUnixNano": str(int(start)), "endTimeUnixNano": str(int(end)),
         "status": {"code": 2 if error else 0}}
    if parent is None:
        s["attributes"] = [{"key": "http.route", "value": {"stringValue": "/checkout"}}]
    else:
        s["parentSpanId"] = "%016x" % parent
    return s
at = T0
for k in range(n):
    at += rng.expovariate(20.0) * 1e9
    trace, sid = k + 1, (k + 1) << 8
    own = lognormal(3, 9) * MS
    pay, inv = lognormal(20, 60) * MS, lognormal(15, 45) * MS
    failed = rng.random() < 0.05
    join = at + own + max(pay, inv)
    db = None if failed else lognormal(5, 20) * MS
    pods[k % 3].append(span(trace, sid, None, 2, at, join + (db or 0), failed))
    calls = [(1, at + own, pay, failed), (2, at + own, inv, False)]
    if db is not None:
        calls.append((3, join, db, False))
    for c, (svc, start, took, error) in enumerate(calls):
        client = sid + 2 * c + 1
        pods[k % 3].append(span(trace, client, sid, 3, start, start + took, error))
        pods[3 * svc + rng.randrange(3)].append(span(trace, client + 1, client, 2, start, start + took, error))
doc = {"resourceSpans": [
    {"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": services[i // 3]}},
        {"key": keys[i // 3], "value": {"stringValue": "%s-%d" % (services[i // 3], i % 3)}}]},
     "scopeSpans": [{"scope": {"name": "shop"}, "spans": spans}]}
    for i, spans in enumerate(pods)]}
json.dump(doc, sys.stdout)
