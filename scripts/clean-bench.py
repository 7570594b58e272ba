#!/usr/bin/env python3
"""Timing on a shared machine: runs each command until 3 runs were 'clean' (other
processes used < 10 % of one core during the run: busy time from /proc/stat minus
the run's own CPU time), waiting for the machine to be idle before each run, and
prints the median wall and user time and the peak RSS of the clean runs.

    scripts/clean-bench.py '[["name", "command"], ...]' MAX_SECONDS

Linux only. Rejected runs are printed too, so nothing is hidden."""
import os, sys, time, json, subprocess, statistics
HZ = os.sysconf('SC_CLK_TCK')
def busy():
    f = open('/proc/stat').readline().split()[1:]
    v = list(map(int, f))
    # user nice system idle iowait irq softirq steal
    return (v[0]+v[1]+v[2]+v[5]+v[6]+v[7]) / HZ
def idle_enough():
    b0=busy(); t0=time.time(); time.sleep(1.0); b1=busy()
    return (b1-b0)/(time.time()-t0) < 0.15
cases = json.loads(sys.argv[1])
results = {name: [] for name,_ in cases}
rejected = {name: 0 for name,_ in cases}
deadline = time.time() + float(sys.argv[2])
while time.time() < deadline and any(len(results[n]) < 3 for n,_ in cases):
    for name, cmd in cases:
        if len(results[name]) >= 3: continue
        while not idle_enough() and time.time() < deadline: time.sleep(2)
        b0=busy(); t0=time.time()
        p = subprocess.Popen(cmd, shell=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall=time.time()-t0; b1=busy()
        own = ru.ru_utime + ru.ru_stime
        others = (b1-b0) - own
        ok = others < 0.10 * wall
        print(f"{name}: wall {wall:.3f} user {ru.ru_utime:.3f} sys {ru.ru_stime:.3f} maxrss {ru.ru_maxrss} KB others {others:.2f} cpu-s -> {'ok' if ok else 'rejected'}", flush=True)
        if ok: results[name].append(dict(wall=wall, user=ru.ru_utime, sys=ru.ru_stime, rss=ru.ru_maxrss))
        else: rejected[name]+=1
for name,_ in cases:
    r = results[name]
    if r:
        print(f"SUMMARY {name}: clean runs {len(r)} (rejected {rejected[name]}), median wall {statistics.median(x['wall'] for x in r):.3f} s, median user {statistics.median(x['user'] for x in r):.3f} s, max rss {max(x['rss'] for x in r)} KB", flush=True)
