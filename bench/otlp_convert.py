#!/usr/bin/env python3
"""OTLP JSON spans (as `resim run --spans` writes them) rewritten as Zipkin v2 JSON and
Jaeger JSON, to measure `resim import` on each format (BENCHMARKS.md, "Trace import").

    bench/otlp_convert.py SPANS.json ZIPKIN.json JAEGER.json

Reads the whole file (a benchmark helper, not a streaming tool): a few GiB for 1e6 spans."""
import json
import sys

d = json.load(open(sys.argv[1]))
zipkin = []
traces = {}
for r in d['resourceSpans']:
    svc = r['resource']['attributes'][0]['value']['stringValue']
    for ss in r['scopeSpans']:
        for s in ss['spans']:
            start = int(s['startTimeUnixNano']) // 1000
            end = int(s['endTimeUnixNano']) // 1000
            kind = {1: None, 2: 'SERVER', 3: 'CLIENT'}[s['kind']]
            z = {'traceId': s['traceId'], 'id': s['spanId'], 'name': s['name'], 'timestamp': start,
                 'duration': end - start, 'localEndpoint': {'serviceName': svc}}
            if 'parentSpanId' in s: z['parentId'] = s['parentSpanId']
            if kind: z['kind'] = kind
            if s.get('status', {}).get('code') == 2: z['tags'] = {'error': 'true'}
            zipkin.append(z)
            t = traces.setdefault(s['traceId'], {'traceID': s['traceId'], 'spans': [], 'processes': {}})
            t['processes'][svc] = {'serviceName': svc}
            tags = [{'key': 'span.kind', 'type': 'string', 'value': (kind or 'internal').lower()}]
            if s.get('status', {}).get('code') == 2: tags.append({'key': 'error', 'type': 'bool', 'value': True})
            j = {'traceID': s['traceId'], 'spanID': s['spanId'], 'operationName': s['name'], 'startTime': start,
                 'duration': end - start, 'processID': svc, 'tags': tags,
                 'references': [{'refType': 'CHILD_OF', 'traceID': s['traceId'], 'spanID': s['parentSpanId']}] if 'parentSpanId' in s else []}
            t['spans'].append(j)
json.dump(zipkin, open(sys.argv[2], 'w'))
json.dump({'data': list(traces.values())}, open(sys.argv[3], 'w'))
