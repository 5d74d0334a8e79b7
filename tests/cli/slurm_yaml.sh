#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm_yaml.sh FABRICPLACE DATA: `fabric export --format slurm-yaml` (topology.yaml, Slurm
# 25.05+) against the rules of topology.yaml(5) of Slurm 25.05. No slurmctld 25.05 exists
# here (the test clusters are 22.05 and 24.11), so the file is parsed (PyYAML) and checked
# rule by rule, on fabrics with and without placeholders, 2 and 3 levels, and a rail fabric:
#   - a list of topologies, `topology` the first key of each, names unique;
#   - exactly one of tree / block / flat per topology; one `cluster_default: true`, the first;
#   - tree: switch names unique, at most 64 characters; every child a defined switch; one
#     root; every host under exactly one leaf;
#   - block: block_sizes positive, each a power-of-two multiple of the first; block names
#     unique; every block with at least the first size of nodes (24.11's rule, kept);
#   - both views hold exactly the fabric's hosts (the JSON export's), placeholders aside,
#     and the block view is the topology.conf block export, block for block.
# A switch name longer than 64 characters is an error naming it.
set -euo pipefail
bin=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3 has no yaml module (python3-yaml)"; exit 1; }

n=0
for src in fat3:pods=2,leaves=3,down=4,up=4 fat3:pods=3,leaves=2,down=2,up=2 fat2:leaves=3,down=4,up=4 \
           "$data/fabrics/fat3_small.ibnetdiscover.txt" "$data/fabrics/rail_4su.ibnetdiscover.txt"; do
  [[ $src == /* && ! -e $src ]] && { echo "FAIL: no test fabric $src"; exit 1; }
  "$bin" fabric export "$src" --format slurm-yaml -o "$tmp/t.yaml"
  "$bin" fabric export "$src" --format slurm-block -o "$tmp/t.conf"
  "$bin" fabric export "$src" --format slurm-block-nodes -o "$tmp/pad.conf"
  "$bin" fabric export "$src" --format json -o "$tmp/f.json"
  python3 - "$tmp" "$src" <<'PY'
import json, re, sys, yaml
tmp, src = sys.argv[1], sys.argv[2]
def expand(expr):
    out = []
    for term in re.findall(r'[^,\[]+(?:\[[^\]]*\])?[^,]*', expr):
        m = re.match(r'^(.*)\[([^\]]*)\](.*)$', term)
        if not m:
            out.append(term); continue
        pre, inner, suf = m.groups()
        for part in inner.split(','):
            a, _, b = part.partition('-')
            b = b or a
            for k in range(int(a), int(b) + 1):
                out.append(f"{pre}{k:0{len(a)}d}{suf}")
    return out
def fail(msg):
    print(f"FAIL [{src}]: {msg}"); sys.exit(1)
doc = yaml.safe_load(open(f"{tmp}/t.yaml"))
if not isinstance(doc, list) or not doc: fail("not a list of topologies")
names = [t.get('topology') for t in doc]
if any(list(t.keys())[0] != 'topology' for t in doc): fail("topology is not the first key")
if len(set(names)) != len(names): fail(f"topology names repeat: {names}")
defaults = [t['topology'] for t in doc if t.get('cluster_default') is True]
if defaults != [doc[0]['topology']]: fail(f"cluster_default: {defaults}")
for t in doc:
    kinds = [k for k in ('tree', 'block', 'flat') if k in t]
    if len(kinds) != 1: fail(f"{t['topology']}: {kinds}")
# The fabric's hosts: the first word of each HCA's description (a host with two HCAs once).
hosts = set(n['desc'].split()[0] for n in json.load(open(f"{tmp}/f.json"))['nodes'] if n['type'] == 'ca')
pads = set()
for line in open(f"{tmp}/pad.conf"):
    m = re.match(r'^NodeName=(\S+) State=FUTURE$', line.strip())
    if m: pads.update(expand(m.group(1)))
tree = next(t['tree'] for t in doc if 'tree' in t)
sw = tree['switches']
snames = [s['switch'] for s in sw]
if len(set(snames)) != len(snames): fail("switch names repeat")
if any(len(n) > 64 for n in snames): fail("a switch name over 64 characters")
child_of = {}
under = []
for s in sw:
    for c in expand(s.get('children', '')) if s.get('children') else []:
        if c not in snames: fail(f"child {c} of {s['switch']} is not a switch")
        child_of[c] = s['switch']
    if s.get('nodes'): under += expand(s['nodes'])
roots = [n for n in snames if n not in child_of]
if len(roots) != 1: fail(f"roots: {roots}")
if sorted(under) != sorted(hosts): fail("tree hosts are not the fabric's hosts, each once")
block = next(t['block'] for t in doc if 'block' in t)
sizes = block['block_sizes']
if not sizes or any(not isinstance(s, int) or s <= 0 for s in sizes): fail(f"block_sizes {sizes}")
for s in sizes[1:]:
    r = s // sizes[0]
    if s % sizes[0] or r & (r - 1): fail(f"block size {s} is not a power-of-two multiple of {sizes[0]}")
bnames = [b['block'] for b in block['blocks']]
if len(set(bnames)) != len(bnames): fail("block names repeat")
bhosts = []
for b in block['blocks']:
    nodes = expand(b['nodes'])
    if len(nodes) < sizes[0]: fail(f"block {b['block']} has {len(nodes)} nodes, fewer than {sizes[0]}")
    bhosts += nodes
real = [h for h in bhosts if h not in pads]
if sorted(real) != sorted(hosts): fail("block hosts are not the fabric's hosts, each once")
if set(bhosts) - set(real) != pads: fail("placeholder nodes differ from slurm-block-nodes")
conf = [tuple(l.strip()[len('BlockName='):].split(' Nodes=')) for l in open(f"{tmp}/t.conf") if l.startswith('BlockName=')]
if conf != [(b['block'], b['nodes']) for b in block['blocks']]: fail("block view differs from --format slurm-block")
csizes = [int(x) for l in open(f"{tmp}/t.conf") if l.startswith('BlockSizes=') for x in l.strip()[11:].split(',')]
if csizes != sizes: fail(f"block_sizes {sizes} vs BlockSizes {csizes}")
print(f"ok [{src}]: {len(sw)} switches, {len(bnames)} blocks ({len(bnames) - len(set(b['block'] for b in block['blocks'] if set(expand(b['nodes'])) & hosts))} placeholders), block_sizes {sizes}")
PY
  n=$((n + 1))
done

# A switch name over 64 characters: an error naming it, exit 1, no file.
long=$(printf 'x%.0s' {1..70})
sed "s/p01-leaf01/$long/" "$data/fabrics/fat3_small.ibnetdiscover.txt" >"$tmp/long.txt"
if "$bin" fabric export "$tmp/long.txt" --format slurm-yaml -o "$tmp/long.yaml" 2>"$tmp/long.err"; then
  echo "FAIL: a 70-character switch name was exported"; exit 1
fi
grep -q "is longer than the 64 characters topology.yaml allows" "$tmp/long.err" ||
  { echo "FAIL: $(cat "$tmp/long.err")"; exit 1; }
[[ ! -e $tmp/long.yaml ]] || { echo "FAIL: a file was written"; exit 1; }
echo "PASS: $n fabrics' topology.yaml follow topology.yaml(5) of Slurm 25.05; a long switch name is refused"
