-- SPDX-License-Identifier: GPL-2.0-or-later
-- Unit tests of etc/job_submit.lua's pure functions under Lua 5.1 (the interpreter slurmctld
-- embeds): lua5.1 tests/plugin/test_job_submit.lua ETC_JOB_SUBMIT_LUA FABRIC_LUA
-- The end-to-end behaviour inside a real slurmctld is tests/slurm/plugin_submit.sh.
local script, fabric_path = arg[1], arg[2]
local M = dofile(script)
local failures = 0
local function eq(what, got, want)
  if got ~= want then
    failures = failures + 1
    print(string.format("FAIL %s: got %s, want %s", what, tostring(got), tostring(want)))
  end
end

eq("expand", table.concat(M.expand("node[001-003,007],gpu5,x[8-10]y"), " "),
   "node001 node002 node003 node007 gpu5 x8y x9y x10y")
eq("expand empty", #M.expand(""), 0)

local f, err = M.load_fabric(fabric_path)
eq("load", err, nil)
-- fat3:pods=2,leaves=2,down=4,up=4: p01-leaf01 node001-004, p01-leaf02 node005-008, pod 2 ...
eq("leaf_of", f.leaf_of["node006"], 2)
local bad, why = M.load_fabric("/nonexistent/fabric.lua")
eq("missing table", bad, nil)
eq("missing table says why", why ~= nil and why:find("nonexistent") ~= nil, true)

local function busy(list)
  local b = {}
  for _, h in ipairs(M.expand(list)) do b[h] = true end
  return b
end
-- Leaves that fit alone, tightest first (matching OR); a single one by name.
eq("one leaf", M.plan(f, busy("node[001-002,005,009-016]"), 2, 2), "[p01-leaf01|p01-leaf02]")
eq("the only leaf", M.plan(f, busy("node[001-002,005-016]"), 2, 2), "p01-leaf01")
-- Only the partition's hosts count.
eq("partition", M.plan(f, busy(""), 4, 2, busy("node[009-016]")), "[p02-leaf01|p02-leaf02]")
local parts = { half = { nodes = "node[009-016]", flag_default = 0 },
                all = { nodes = "node[001-016]", flag_default = 1 } }
eq("allowed by -p", M.allowed_hosts({ partition = "half" }, parts)["node001"], nil)
eq("allowed by default", M.allowed_hosts({}, parts)["node001"], true)
-- 3 free in each leaf of pod 1, pod 2 full: 2 + 2.
eq("one pod", M.plan(f, busy("node[001,005,009-016]"), 4, 2), "[p01-leaf01*2&p01-leaf02*2]")
-- The tightest pod that fits (pod 2: 2 + 4 free = 3 groups; pod 1: 1 + 1 = 1 group).
eq("tightest pod", M.plan(f, busy("node[001-003,005-007,009-010]"), 6, 2),
   "[p02-leaf01*2&p02-leaf02*4]")
-- Across pods.
eq("across pods", M.plan(f, busy("node[001-002,005-006,009-012,013-014]"), 6, 2),
   "[p01-leaf01*2&p01-leaf02*2&p02-leaf02*2]")
local none, reason = M.plan(f, busy("node[001-003,005-007,009-011,013-015]"), 4, 2)
eq("no room", none, nil)
eq("no room reason", reason, "only 0 of 2 whole groups of 2 nodes fit in the free hosts now")

-- Running (1), suspended (2) and completing (0x8000 flag) jobs hold hosts; pending (0) not.
local b = M.busy_hosts({ [1] = { job_state = 1, nodes = "node[001-002]" },
                         [2] = { job_state = 0, nodes = nil },
                         [3] = { job_state = 32768 + 3, nodes = "node003" },
                         [4] = { job_state = 3, nodes = "node004" } })
eq("busy running", b["node001"], true)
eq("busy completing", b["node003"], true)
eq("not busy complete", b["node004"], nil)

-- shape(): JobShape::make's rules and messages (tests/placement/test_job_shape.cpp), for
-- --fabric-tp.
local function shape(nodes, gpn, tp, ep)
  local g, why = M.shape(nodes, gpn, tp, ep)
  return g or why
end
eq("shape: 2 hosts", shape(4, 8, 16), 2)
eq("shape: inside a node", shape(3, 8, 4), 1)
eq("shape: partial nodes", shape(4, 8, 12),
   "--fabric-tp 12 with 8 GPUs per node: a TP group larger than a node must span whole nodes "
   .. "(a multiple of 8)")
eq("shape: splits a node", shape(4, 8, 3),
   "--fabric-tp 3 with 8 GPUs per node: a TP group smaller than a node must divide it (8 is not "
   .. "a multiple of 3)")
eq("shape: does not tile", shape(3, 2, 4),
   "--fabric-tp 4 does not tile the job: 3 nodes x 2 GPUs per node = 6 GPUs, not a multiple of 4")
eq("shape: no TP", shape(3, 2, 0), "--fabric-tp must be at least 1")
-- --fabric-ep: the larger group is the one kept together.
eq("shape: EP of 4 hosts", shape(4, 8, 8, 32), 4)
eq("shape: EP nested in TP", shape(4, 8, 16, 8), 2)
eq("shape: EP inside a node", shape(4, 8, 4, 8), 1)
eq("shape: no EP", shape(2, 8, 8, 0), "--fabric-ep must be at least 1")
eq("shape: EP partial nodes", shape(4, 8, 8, 12),
   "--fabric-ep 12 with 8 GPUs per node: an EP group larger than a node must span whole nodes "
   .. "(a multiple of 8)")
eq("shape: EP splits a node", shape(4, 8, 8, 3),
   "--fabric-ep 3 with 8 GPUs per node: an EP group smaller than a node must divide it (8 is not "
   .. "a multiple of 3)")
eq("shape: EP and TP do not nest", shape(6, 8, 16, 24),
   "--fabric-ep 24 with --fabric-tp 16: EP and TP groups must nest (one size a multiple of the "
   .. "other)")
eq("shape: EP does not tile", shape(3, 8, 8, 16),
   "--fabric-ep 16 does not tile the job: 24 GPUs are not a multiple of 16")
eq("plan: not whole groups", select(2, M.plan(f, busy(""), 3, 2)),
   "3 nodes are not whole groups of 2 nodes (see M.shape)")

-- submit(): features set from the SPANK environment (indexed from 0), own -C respected.
M.FABRIC_TABLE = fabric_path
local job = { name = "t", min_nodes = 4,
              spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(job, { [7] = { job_state = 1, nodes = "node[001,005,009-016]" } })
eq("submit features", job.features, "[p01-leaf01*2&p01-leaf02*2]")
local own = { name = "own", min_nodes = 4, features = "fast",
              spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(own, {})
eq("own constraint kept", own.features, "fast")
local intra = { name = "intra", min_nodes = 4,
                spank_job_env = { [0] = "FABRICPLACE_TP=2", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(intra, {})
eq("TP inside a node: no constraint", intra.features, nil)
-- FABRICPLACE_EP: EP groups of 4 GPUs on 2-GPU nodes span 2 nodes, kept inside leaves as a
-- TP group of that size would be, and the log names them.
local ep = { name = "ep", min_nodes = 4,
             spank_job_env = { [0] = "FABRICPLACE_TP=2", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                               [2] = "FABRICPLACE_EP=4" } }
M.LOG = os.tmpname()
M.submit(ep, { [7] = { job_state = 1, nodes = "node[001,005,009-016]" } })
local eplog = io.open(M.LOG)
ep.line = eplog and eplog:read("*l"):gsub("^%S+ ", "") or ""
if eplog then eplog:close() end
os.remove(M.LOG)
M.LOG = nil
eq("EP groups: per-leaf counts", ep.features, "[p01-leaf01*2&p01-leaf02*2]")
eq("EP groups: said", ep.line, "job ep: 4 nodes, EP groups of 2 nodes: features=[p01-leaf01*2&p01-leaf02*2]")
local ep_intra = { name = "epi", min_nodes = 4,
                   spank_job_env = { [0] = "FABRICPLACE_TP=1", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                                     [2] = "FABRICPLACE_EP=2" } }
M.submit(ep_intra, {})
eq("EP inside a node: no constraint", ep_intra.features, nil)
local named = { name = "named", min_nodes = 2, req_nodes = "node[009-010]",
                spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(named, {})
eq("-w: left alone", named.features, nil)
-- Per-leaf counts with uneven tasks per node (Slurm 24.11 never starts such a job): left to
-- Slurm; even ones keep their counts.
local uneven = { name = "uneven", min_nodes = 4, num_tasks = 6,
                 spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(uneven, { [7] = { job_state = 1, nodes = "node[001,005,009-016]" } })
eq("uneven tasks: no count constraint", uneven.features, nil)
local even = { name = "even", min_nodes = 4, num_tasks = 8,
               spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.submit(even, { [7] = { job_state = 1, nodes = "node[001,005,009-016]" } })
eq("even tasks: counts", even.features, "[p01-leaf01*2&p01-leaf02*2]")
-- --segment from the TP group where the field exists (Slurm 25.11+; nil before): set when
-- none was asked for (0 or NO_VAL16); a user's own kept.
local seg_none = { name = "s", segment_size = 65534 }
eq("segment: set", M.segment(seg_none, 2), 2)
eq("segment: the field", seg_none.segment_size, 2)
local seg_zero = { name = "s", segment_size = 0 }
eq("segment: 0 is none", M.segment(seg_zero, 4), 4)
local seg_own = { name = "s", segment_size = 1 }
eq("segment: the user's own kept", M.segment(seg_own, 2), nil)
eq("segment: still 1", seg_own.segment_size, 1)
local old_slurm = { name = "s" }
eq("segment: no field before 25.11", M.segment(old_slurm, 2), nil)
eq("segment: nothing set", old_slurm.segment_size, nil)
-- Exact mode on Slurm 23.11+: the plugin's pin becomes the node list, no constraint; a -w of
-- the user's own wins.
local pinned = { name = "pinned", min_nodes = 4,
                 spank_job_env = { [0] = "FABRICPLACE_NODES=node[005-006,009-010]" } }
M.submit(pinned, {})
eq("exact pin: req_nodes", pinned.req_nodes, "node[005-006,009-010]")
eq("exact pin: no constraint", pinned.features, nil)
local pinned_w = { name = "pinned_w", min_nodes = 2, req_nodes = "node001",
                   spank_job_env = { [0] = "FABRICPLACE_NODES=node[005-006]" } }
M.submit(pinned_w, {})
eq("exact pin: the user's -w wins", pinned_w.req_nodes, "node001")
local odd = { name = "odd", min_nodes = 3,
              spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
M.LOG = os.tmpname()
M.submit(odd, {})
M.LOG, odd.log = nil, M.LOG
local lf = io.open(odd.log)
local line = lf and lf:read("*l") or ""
if lf then lf:close() end
os.remove(odd.log)
eq("TP that does not tile: left alone", odd.features, nil)
eq("TP that does not tile: the shape's message", line:gsub("^%S+ ", ""),
   "job odd: --fabric-tp 4 does not tile the job: 3 nodes x 2 GPUs per node = 6 GPUs, not a "
   .. "multiple of 4; left to Slurm")

-- topology/block (FABRICPLACE_TOPOLOGY=block): one leaf or nothing, never per-leaf counts
-- (Slurm refuses them there); the log says what keeps the groups whole instead.
eq("block: one leaf", M.plan(f, busy("node[001-002,005,009-016]"), 2, 2, nil, true),
   "[p01-leaf01|p01-leaf02]")
eq("block: no per-leaf counts", select(2, M.plan(f, busy("node[001,005,009-016]"), 4, 2, nil, true)),
   "no leaf has room for the whole job now")
local function block_job(name, env)
  local j = { name = name, min_nodes = 6, spank_job_env = env }
  M.LOG = os.tmpname()
  M.submit(j, { [7] = { job_state = 1, nodes = "node[001,005,013-016]" } })
  local fh = io.open(M.LOG)
  j.line = fh and fh:read("*l"):gsub("^%S+ ", "") or ""
  if fh then fh:close() end
  os.remove(M.LOG)
  M.LOG = nil
  return j
end
local seg = block_job("bseg", { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                                [2] = "FABRICPLACE_TOPOLOGY=block", [3] = "FABRICPLACE_SEGMENT=2" })
eq("block: 6 nodes, no leaf holds them: no constraint", seg.features, nil)
eq("block: the segment said", seg.line,
   "job bseg: 6 nodes, TP groups of 2 nodes: no leaf has room for the whole job now; " ..
   "fabricplace proposed --segment=2, which keeps each TP group inside one leaf (cli_filter.lua " ..
   "sets it unless the job has its own); left to Slurm")
local noseg = block_job("bnoseg", { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                                    [2] = "FABRICPLACE_TOPOLOGY=block" })
eq("block without a segment: no constraint", noseg.features, nil)
eq("block without a segment: said", noseg.line,
   "job bnoseg: 6 nodes, TP groups of 2 nodes: no leaf has room for the whole job now; " ..
   "topology/block refuses per-leaf counts (and this job has no --segment from fabricplace: " ..
   "cli_filter.lua, Slurm 24.05+); left to Slurm")
local tree = block_job("btree", { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" })
eq("tree: the same job gets per-leaf counts", tree.features, "[p01-leaf01*2&p02-leaf01*4]")
-- Slurm 25.11+ (segment_size exists; 65534 = none): set on topology/block without a
-- cli_filter, never on a tree.
local function with_field(name, env)
  local j = { name = name, min_nodes = 6, segment_size = 65534, spank_job_env = env }
  M.submit(j, { [7] = { job_state = 1, nodes = "node[001,005,013-016]" } })
  return j
end
local b25 = with_field("b25", { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                                [2] = "FABRICPLACE_TOPOLOGY=block" })
eq("25.11 block: segment_size set", b25.segment_size, 2)
eq("25.11 block: no constraint", b25.features, nil)
local r25 = { name = "r25", min_nodes = 6, max_nodes = 8, segment_size = 65534,
              spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2",
                                [2] = "FABRICPLACE_TOPOLOGY=block" } }
M.submit(r25, { [7] = { job_state = 1, nodes = "node[001,005,013-016]" } })
eq("25.11 block, -N 6-8: no segment_size (Slurm would size the job at 6)", r25.segment_size, 65534)
local t25 = with_field("t25", { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" })
eq("25.11 tree: no segment_size", t25.segment_size, 65534)
eq("25.11 tree: per-leaf counts", t25.features, "[p01-leaf01*2&p02-leaf01*4]")

-- `slurm sync` generations (arg[3], arg[4]: fabric.lua of two syncs of different fabrics).
local gen_a_path, gen_b_path = arg[3], arg[4]
local function slurp(path) local h = io.open(path, "r"); local t = h:read("*a"); h:close(); return t end
local function put(path, text) local h = io.open(path, "w"); h:write(text); h:close() end
local ga, gb = M.file_generation(gen_a_path), M.file_generation(gen_b_path)
eq("generation read", #ga, 16)
eq("generations differ", ga ~= gb, true)
eq("no generation in an export", M.file_generation(fabric_path), "")
eq("no file, no generation", M.file_generation("/nonexistent/fabric.lua"), "")
local live = os.tmpname()
put(live, slurp(gen_a_path))
local ta = M.load_fabric(live)
eq("table generation", ta.generation, ga)
eq("same generation: the same table", M.refresh(ta, live), ta)
M.LOG = os.tmpname()
put(live, slurp(gen_b_path))
local tb = M.refresh(ta, live)
eq("a sync replaced the file: reloaded", tb.generation, gb)
eq("reload logged", slurp(M.LOG):find(live .. ": generation " .. ga .. " replaced by " .. gb, 1, true) ~= nil, true)
put(live, "-- fabricplace generation: 00000000000000ff\nreturn {")
eq("a new table that does not load: the old one stays", M.refresh(tb, live), tb)
M.refresh(tb, live)
local _, tried = slurp(M.LOG):gsub("does not load", "")
eq("a table that does not load is tried once per generation", tried, 1)
eq("refresh of nothing", M.refresh(nil, live), nil)
eq("same generation as the submit host", M.check_generation(tb, gb, { name = "j" }), true)
eq("no generation from the submit host", M.check_generation(tb, nil, { name = "j" }), true)
eq("another generation on the submit host", M.check_generation(tb, ga, { name = "j1" }), false)
M.check_generation(tb, ga, { name = "j2" })
local _, said = slurp(M.LOG):gsub("the submit host's fabric files are generation " .. ga, "")
eq("said once", said, 1)
os.remove(live); os.remove(M.LOG); M.LOG = nil
-- A table missing when slurmctld started, then written by a sync: picked up at the next
-- submission, not 100 later (a fresh copy of the module: its own loaded table).
local M2 = dofile(script)
local late = os.tmpname(); os.remove(late)
M2.FABRIC_TABLE = late
local function tp_job(name)
  return { name = name, min_nodes = 4,
           spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=2" } }
end
local j1 = tp_job("j1")
M2.submit(j1, {})
eq("no table yet: no constraint", j1.features, nil)
put(late, slurp(gen_a_path))
local j2 = tp_job("j2")
M2.submit(j2, { [7] = { job_state = 1, nodes = "node[001,005,009-016]" } })
eq("a table written after a failed load: used at the next submission", j2.features,
   "[p01-leaf01*2&p01-leaf02*2]")
os.remove(late)

-- NVLink domains (arg[5]: the table of fat2:leaves=3,down=4,up=4,nvl=6,gpus=4: nvl01 =
-- node001-006 across leaf01 and leaf02, nvl02 = node007-012 across leaf02 and leaf03). The
-- table's entries are the domains, and the messages call them so.
local d = M.load_fabric(arg[5])
eq("domains: the table's blocks", d.blocks, "domain")
eq("domains: entries", d.leaves[1].name .. " " .. d.leaves[2].name .. " " .. #d.leaves, "nvl01 nvl02 2")
eq("domains: noun", M.block_noun(d, true), "NVLink domains")
eq("leaves: noun", M.block_noun(f), "leaf")
-- EP 16 on 4-GPU nodes: groups of 4 nodes; one group fits in either domain.
eq("domains: one group", M.plan(d, busy("node001"), 4, 4), "[nvl01|nvl02]")
-- Two groups: a domain each (one pod), never a group across the two.
eq("domains: two groups", M.plan(d, busy(""), 8, 4), "[nvl01*4&nvl02*4]")
eq("domains: block topology", select(2, M.plan(d, busy("node001"), 8, 4, nil, true)),
   "no NVLink domain has room for the whole job now")
local M3 = dofile(script)
M3.FABRIC_TABLE = arg[5]
local dj = { name = "dj", min_nodes = 8,
             spank_job_env = { [0] = "FABRICPLACE_TP=4", [1] = "FABRICPLACE_GPUS_PER_NODE=4",
                               [2] = "FABRICPLACE_EP=16" } }
M3.LOG = os.tmpname()
M3.submit(dj, {})
local dl = io.open(M3.LOG)
dj.line = dl and dl:read("*l"):gsub("^%S+ ", "") or ""
if dl then dl:close() end
os.remove(M3.LOG)
eq("domains: EP groups inside domains", dj.features, "[nvl01*4&nvl02*4]")
eq("domains: said", dj.line, "job dj: 8 nodes, EP groups of 4 nodes: features=[nvl01*4&nvl02*4]")

if failures > 0 then os.exit(1) end
print("ok")
