# A bench udp CSV: checks the invariants every step must satisfy and
# prints "rate requested sent skipped answered lost late dup reord" per
# step (t0800, t0801).
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
for r in rows:
    n = {k: int(r[k]) for k in ('requested', 'sent', 'skipped', 'answered', 'lost', 'late',
                                'duplicated', 'reordered', 'send_errors')}
    assert n['sent'] + n['skipped'] + n['send_errors'] == n['requested'], r
    assert n['answered'] + n['late'] + n['lost'] == n['sent'], r
    print(int(float(r['rate'])), n['requested'], n['sent'], n['skipped'], n['answered'],
          n['lost'], n['late'], n['duplicated'], n['reordered'])
