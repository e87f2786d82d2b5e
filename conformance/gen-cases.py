#!/usr/bin/env python3
"""Writes conformance/cases.txt: the list of cases record-all.sh records.

One line per case: NAME, a tab, the read command (words after `record --out DIR --`), with
$TABLES standing for conformance/tables/corpus.db. Derived from the corpus expected files:
every table gets a latest scan, a plan and a snapshots listing; every additional read of the
expected file (time travel by snapshot id and tag, projections, row ids) becomes a scan; tables
with tags get a tags listing; a predicate case and a limit case on tables with an integer
column. Every write spec of write-specs/ becomes a `write` case (`write.<spec name>`) recorded
into an empty directory ($EMPTY).
"""
import glob, json, os, re, shlex

here = os.path.dirname(os.path.abspath(__file__))
lines = []

def add(name, *words):
    name = re.sub(r'[^A-Za-z0-9_.-]+', '-', name)
    lines.append(name + '\t' + ' '.join(shlex.quote(w) if w != '$T' else w for w in words))

for f in sorted(glob.glob(os.path.join(here, 'tables', '*.expected.json'))):
    d = json.load(open(f))
    t = d['table']
    T = '$TABLES/' + t
    add(f'{t}.scan-latest', 'scan', T)
    add(f'{t}.plan-latest', 'plan', T)
    add(f'{t}.snapshots', 'snapshots', T)
    if d.get('tags'):
        add(f'{t}.tags', 'tags', T)
    if len({s.get('schemaId') for s in d.get('snapshots', [])}) > 1:
        add(f'{t}.schema-snapshot-1', 'schema', T, '--snapshot', '1')
    for r in d.get('additional_reads', []):
        words = ['scan', T]
        o = r['options']
        if 'scan.snapshot-id' in o:
            words += ['--snapshot', o['scan.snapshot-id']]
        if 'scan.tag-name' in o:
            words += ['--tag', o['scan.tag-name']]
        for k, v in o.items():
            if k not in ('scan.snapshot-id', 'scan.tag-name'):
                words += ['--option', f'{k}={v}']
        if r.get('projection'):
            words += ['--columns', ','.join(r['projection'])]
        add(f"{t}.scan-{r['label']}", *words)
    ints = [fl['name'] for fl in d['fields'] if isinstance(fl['type'], str) and fl['type'].split()[0] in ('INT', 'BIGINT')
            and fl['name'] not in d.get('partition_keys', [])]
    rows = d.get('rows', [])
    if ints and rows:
        c = ints[0]
        vals = sorted(r[c] for r in rows if r.get(c) is not None)
        if vals:
            v = vals[len(vals) // 2]
            add(f'{t}.scan-where-{c}-ge', 'scan', T, '--where', f'{c} >= {v}')
            add(f'{t}.scan-limit-3', 'scan', T, '--limit', '3', '--batch-size', '2')

for f in sorted(glob.glob(os.path.join(here, 'write-specs', '*.json'))):
    name = os.path.splitext(os.path.basename(f))[0]
    add(f'write.{name}', 'write', '$EMPTY', '--spec', f'conformance/write-specs/{name}.json')

with open(os.path.join(here, 'cases.txt'), 'w') as out:
    out.write('\n'.join(lines) + '\n')
print(len(lines), 'cases')
