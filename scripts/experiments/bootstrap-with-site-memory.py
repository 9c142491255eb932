#!/usr/bin/env python3
"""Issue 30, session 35: does the paper's self-training (with the bootstrap's label-free check
and layout guard) add anything on top of site memory?

Three columns for each of issue 30's protocols: supervised (site memory off), site memory
alone (what `pipeline bootstrap` gives with its defaults: the supervised model and the pool's
site memory), and the model `pipeline bootstrap --iterations N [FLAGS]` writes, with site
memory. Rows: big9 dev with the pool = the scored pages (pooled and per site); big9 held-out
years (each year scored, the pool = the other three years, as site memory's pool too); the
dragnet dev pages of the sites with at least 5 pages in dev + train (the pool); both together.

Usage: scripts/experiments/bootstrap-with-site-memory.py N [BOOTSTRAP FLAGS...]
       (from the repository root, after `cargo build --release`; datasets in target/datasets)
"""
import json, os, subprocess, sys, tempfile, collections
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from manifests import read_manifest, write_manifest
BIN='target/release/pipeline'; DS='target/datasets'
ITER=sys.argv[1]; EXTRA=sys.argv[2:]
work=tempfile.mkdtemp(prefix='bootsm-')
def pooled(rows):
    rows=list(rows); p=sum(r['sh_p'] or 0 for r in rows)/len(rows); r_=sum(r['sh_r'] or 0 for r in rows)/len(rows)
    return 2*p*r_/(p+r_) if p+r_ else 0
def ev(manifest, extra, split='dev'):
    pp=os.path.join(work,'pp.jsonl')
    subprocess.run([BIN,'eval','--manifest',manifest,'--split',split,'--threads','2','--per-page',pp]+extra,check=True,capture_output=True)
    return {r['id']:r for r in map(json.loads,open(pp))}
def boot(pool, name):
    out=os.path.join(work,name+'.nbm')
    cmd=[BIN,'bootstrap','--unlabeled',pool,'--out',out]+(['--iterations',ITER] if ITER!='0' else [])+EXTRA
    p=subprocess.run(cmd,capture_output=True,text=True,check=True)
    ad=[l for l in p.stderr.splitlines()+p.stdout.splitlines() if l.startswith('adapted for') or 'no source' in l or 'keeps the supervised' in l]
    return out, (ad[0][:90] if ad else '')
b9d=os.path.join(DS,'big9'); big9=[r for r in read_manifest(b9d+'/manifest.jsonl') if r['split']=='dev']
whole=os.path.join(work,'big9dev.jsonl'); write_manifest(big9,b9d,whole)
m,ad=boot(whole,'b9'); print('big9 pool=scored:',ad)
res={'sup':ev(whole,['--site-memory-pages','0']),'sm':ev(whole,[]),'boot':ev(whole,['--model',m])}
print('  pooled sup %.4f sm %.4f boot+sm %.4f'%tuple(pooled(res[k].values()) for k in ('sup','sm','boot')))
for s in sorted({r['site'] for r in big9}):
    ids=[r['id'] for r in big9 if r['site']==s]
    print('   ',s,' '.join('%.4f'%pooled(res[k][i] for i in ids) for k in ('sup','sm','boot')))
held={'sup':{},'sm':{},'boot':{}}
for y in sorted({r['year'] for r in big9}):
    sc=os.path.join(work,f'y{y}.jsonl'); pl=os.path.join(work,f'n{y}.jsonl')
    write_manifest([r for r in big9 if r['year']==y],b9d,sc); write_manifest([r for r in big9 if r['year']!=y],b9d,pl)
    m,ad=boot(pl,f'n{y}'); print('  held',y,ad)
    held['sup'].update(ev(sc,['--site-memory-pages','0'])); held['sm'].update(ev(sc,['--site-memory-pool',pl])); held['boot'].update(ev(sc,['--site-memory-pool',pl,'--model',m]))
print('big9 held-out years pooled sup %.4f sm %.4f boot+sm %.4f'%tuple(pooled(held[k].values()) for k in ('sup','sm','boot')))
worst=min((pooled(held['boot'][r['id']] for r in big9 if (r['site'],r['year'])==sy)-pooled(held['sup'][r['id']] for r in big9 if (r['site'],r['year'])==sy),sy) for sy in {(r['site'],r['year']) for r in big9})
print('  worst site-year boot+sm vs sup %+.4f %s'%worst)
dd=os.path.join(DS,'dragnet'); dn=read_manifest(dd+'/manifest.jsonl')
site=lambda r: r.get('site') or None
cnt=collections.Counter(site(r) for r in dn)
poolrows=[r for r in dn if site(r) and cnt[site(r)]>=5]
dev=[r['id'] for r in poolrows if r['split']=='dev']
pl=os.path.join(work,'dnpool.jsonl'); write_manifest(poolrows,dd,pl)
m,ad=boot(pl,'dn'); print('dragnet:',ad)
full=os.path.join(dd,'manifest.jsonl')
dres={'sup':ev(full,['--site-memory-pages','0']),'sm':ev(full,[]),'boot':ev(full,['--model',m])}
print('dragnet sites (%d pages) sup %.4f sm %.4f boot+sm %.4f'%((len(dev),)+tuple(pooled(dres[k][i] for i in dev) for k in ('sup','sm','boot'))))
print('dragnet all dev sup %.4f sm %.4f boot+sm %.4f'%tuple(pooled(dres[k].values()) for k in ('sup','sm','boot')))
both={k:list(res[k].values())+[dres[k][i] for i in dev] for k in res}
print('big9+dragnet sites sup %.4f sm %.4f boot+sm %.4f'%tuple(pooled(both[k]) for k in ('sup','sm','boot')))
