#!/usr/bin/env python3
"""Samples the Chromium that tests/tests/page_fleet_bench.rs drives, while it runs: PSS per
process type (browser, renderer, GPU, utilities) every INTERVAL seconds, and at the peak the
renderers' PSS by mapping name, from /proc/PID/smaps. Writes OUT.json (peak, its breakdown, the
time series), rewritten at each sample; stop it with Ctrl-C or kill when the bench ends.

    python3 scripts/profile/chromium_memory_sampler.py target/bench/fleet-memory.json 0.25 &
    FLEET_SETS=1024 MEMSNAP_DIST=$PWD/dist cargo test -p memsnap-tests --test page_fleet_bench \
        -- --ignored --nocapture; kill %1

Sessions are found by their profile folder (memsnap-chromium-PID-PORT, web/browser.rs) whose
PID is a running page_fleet_bench binary, so other page tests on the machine are left out."""
import os, re, sys, time, json, collections
out = sys.argv[1]
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
def bench_pids():
    r = set()
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try: cl = open(f'/proc/{p}/cmdline','rb').read()
        except Exception: continue
        if b'page_fleet_bench-' in cl.split(b'\0')[0]: r.add(p)
    return r
def procs():
    res = []
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            cl = open(f'/proc/{p}/cmdline','rb').read()
        except Exception: continue
        if b'memsnap-chromium-' not in cl: continue
        m = re.search(rb'--type=([a-z-]+)', cl)
        t = m.group(1).decode() if m else 'browser'
        if t == 'utility':
            m2 = re.search(rb'--utility-sub-type=([\w.]+)', cl)
            if m2: t = 'utility:' + m2.group(1).decode().split('.')[-1]
        prof = re.search(rb'memsnap-chromium-(\d+)-(\d+)', cl).group(1).decode()
        if prof not in bench_pids(): continue
        res.append((int(p), t, prof))
    return res
def smaps(pid):
    groups = collections.Counter()
    name = None
    try:
        for line in open(f'/proc/{pid}/smaps'):
            if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
                parts = line.split(None, 5)
                name = parts[5].strip() if len(parts) > 5 else '[anon]'
                if name.startswith('/memfd:') or name.startswith('/dev/shm'): name = 'shm:' + name.split(' ')[0][:40]
                elif name.startswith('/'): name = 'file'
            elif line.startswith('Pss:'):
                groups[name] += int(line.split()[1])
    except Exception: pass
    return groups
series = []
peak = {}
peak_total = 0; peak_snap = None
try:
    while True:
        t = time.time()
        snap = {'t': t, 'types': collections.Counter(), 'renderer_maps': collections.Counter(), 'n': 0}
        for pid, typ, prof in procs():
            g = smaps(pid)
            pss = sum(g.values())
            snap['types'][typ] += pss; snap['n'] += 1
            if typ == 'renderer':
                snap['renderer_maps'].update(g)
        total = sum(snap['types'].values())
        if total:
            series.append((round(t,2), total, dict(snap['types'])))
            if total > peak_total:
                peak_total = total; peak_snap = snap
        with open(out, 'w') as f:
            json.dump({'peak_total_kb': peak_total,
                       'peak_types': dict(peak_snap['types']) if peak_snap else {},
                       'peak_renderer_maps': dict(peak_snap['renderer_maps'].most_common(15)) if peak_snap else {},
                       'last_types': dict(snap['types']), 'last_renderer_maps': dict(snap['renderer_maps'].most_common(15)),
                       'series': series}, f)
        time.sleep(max(0, interval - (time.time()-t)))
except KeyboardInterrupt:
    pass
