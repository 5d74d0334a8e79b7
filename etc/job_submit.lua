--[[
fabricplace job_submit.lua: the slurmctld half of fabricplace's constrain mode
(JobSubmitPlugins=lua; Slurm 22.05 runs it with Lua 5.1 inside slurmctld, Debian 13's 24.11
with Lua 5.4), and on Slurm 23.11+ the pin of exact mode (FABRICPLACE_NODES, below).

sbatch/salloc --fabric-tp=T (plugin fabricplace.so, mode constrain) puts FABRICPLACE_TP=T and
FABRICPLACE_GPUS_PER_NODE=G into the job's SPANK environment, and --fabric-ep=E also
FABRICPLACE_EP=E. When the group kept together (the larger of T and E) spans nodes (groups of
g = max(T, E) / G nodes), this script turns the request into a per-leaf node-feature
constraint so that every group lands inside one leaf (on a fabric with NVLink domains, one
domain: the table's entries are then domains, `blocks = "domain"`):
  - leaves with room for the whole job:      features = "[p01-leaf03|p02-leaf01]" (one of them)
  - else leaves of one pod, else of several:  features = "[p01-leaf01*4&p01-leaf02*2]"
    (each count a multiple of g; leaves with the most room first, the tightest pod first)
Leaf names are the node features of `fabricplace fabric export --format slurm-features`.
On topology/block (plugstack.conf `topology=block`: FABRICPLACE_TOPOLOGY=block) only the
first form is made: Slurm there keeps a job inside one block over as few leaves as its size
needs and refuses per-leaf counts, so a job no single leaf holds is left to Slurm, whose
--segment (set by etc/cli_filter.lua from Slurm 24.05) keeps each TP group inside a leaf.
On Slurm 25.11.2+ with topology/block, where job_desc.segment_size exists, this script sets
that --segment itself (no cli_filter needed), unless the job has its own or a node range.

It reads the fabric from a table precomputed by `fabricplace fabric export --format lua`
(never a process per submission), and estimates the free hosts of each leaf in-process
from the running jobs' node lists (slurm.jobs[id].nodes). It never asks for node states
over RPC: sinfo or scontrol from here would deadlock slurmctld, which holds its locks.

The trade-off: the choice is a snapshot at submission. Jobs that end or start before this
one is scheduled are not seen; down or drained nodes are not seen either (no node table
here); a job whose constraint cannot be met waits for those leaves. `--fabric-mode=exact`
pins exact nodes instead (immediate jobs), `--fabric-mode=off` leaves the job alone.
A job that already has a constraint (-C) or names its nodes (-w, -x) is left alone; only
hosts of the job's partitions (else the default partition) count.
]]

local M = {}

M.FABRIC_TABLE = "/etc/slurm/fabric.lua"  -- fabricplace fabric export --format lua
M.LOG = nil                               -- a file for one line per decision, or nil

local function log(fmt, ...)
  local msg = string.format(fmt, ...)
  if slurm and slurm.log_info then slurm.log_info("fabricplace: %s", msg) end
  if M.LOG then
    local f = io.open(M.LOG, "a")
    if f then f:write(os.date("%Y-%m-%dT%H:%M:%S "), msg, "\n"); f:close() end
  end
end

-- "node[001-003,007],gpu5" -> { "node001", "node002", "node003", "node007", "gpu5" }
function M.expand(list)
  local out = {}
  if list == nil or list == "" then return out end
  local i, n = 1, #list
  while i <= n do
    local depth, j = 0, i
    while j <= n do
      local c = list:sub(j, j)
      if c == "[" then depth = depth + 1 elseif c == "]" then depth = depth - 1
      elseif c == "," and depth == 0 then break end
      j = j + 1
    end
    local term = list:sub(i, j - 1)
    local pre, body, post = term:match("^([^%[]*)%[([^%]]*)%](.*)$")
    if pre == nil then
      if term ~= "" then out[#out + 1] = term end
    else
      for part in body:gmatch("[^,]+") do
        local a, b = part:match("^(%d+)%-(%d+)$")
        if a then
          for k = tonumber(a), tonumber(b) do
            out[#out + 1] = pre .. string.format("%0" .. #a .. "d", k) .. post
          end
        else
          out[#out + 1] = pre .. part .. post
        end
      end
    end
    i = j + 1
  end
  return out
end

-- The fabric table, with leaf_of[host] = leaf index.
function M.load_fabric(path)
  local ok, t = pcall(dofile, path)
  if not ok then return nil, tostring(t) end
  if type(t) ~= "table" or t.version ~= 1 or type(t.leaves) ~= "table" then
    return nil, path .. ": not a fabricplace fabric table (version 1)"
  end
  t.leaf_of = {}
  for i, leaf in ipairs(t.leaves) do
    for _, h in ipairs(leaf.hosts) do t.leaf_of[h] = i end
  end
  return t
end

-- The `fabricplace slurm sync` generation on a table file's first line ("" if none).
function M.file_generation(path)
  local f = io.open(path, "r")
  if not f then return "" end
  local first = f:read("*l") or ""
  f:close()
  return string.match(first, "^%-%- fabricplace generation: (%x+)$") or ""
end

-- The loaded table, or the file's when a sync replaced it (another generation on its first
-- line): slurmctld needs no `touch job_submit.lua` after a sync. One line read per
-- submission that asks for fabricplace. A new table that does not load keeps the old one.
local refresh_failed = nil  -- a generation on disk that did not load: not tried again
function M.refresh(t, path)
  if t == nil then return nil end
  local on_disk = M.file_generation(path)
  if on_disk == "" or on_disk == (t.generation or "") or on_disk == refresh_failed then
    return t
  end
  local fresh, err = M.load_fabric(path)
  if fresh == nil then
    refresh_failed = on_disk
    log("%s is generation %s but does not load (%s); the table of generation %s stays", path,
        on_disk, err, tostring(t.generation))
    return t
  end
  log("%s: generation %s replaced by %s (slurm sync); reloaded", path,
      tostring(t.generation or "none"), on_disk)
  return fresh
end

-- The submit host's files (the plugin's FABRICPLACE_GENERATION) against this table: another
-- generation means a node whose files were not copied after a sync. Said, never fatal.
local said_generation = {}
function M.check_generation(t, submit_generation, job_desc)
  local mine = t.generation or ""
  if submit_generation == nil or submit_generation == "" or mine == "" then return true end
  if submit_generation == mine then return true end
  local key = submit_generation .. "/" .. mine
  if not said_generation[key] then
    said_generation[key] = true
    log("job %s: the submit host's fabric files are generation %s, this table %s: copy the "
        .. "files of the last `fabricplace slurm sync` to every node", tostring(job_desc.name),
        submit_generation, mine)
  end
  return false
end

-- Hosts held by jobs that run, are suspended or are completing. A job's node list is
-- expanded once and kept while it stays the same (this runs on every --fabric-tp
-- submission, under slurmctld's locks); the cache holds only the jobs seen last time.
local expanded = {}
function M.busy_hosts(jobs)
  local busy, seen = {}, {}
  for id, j in pairs(jobs or {}) do
    local st = tonumber(j.job_state) or 0
    local base = st % 256
    local completing = math.floor(st / 32768) % 2 == 1  -- JOB_COMPLETING = 0x8000
    if base == 1 or base == 2 or completing then
      local nodes = j.nodes
      local e = expanded[id]
      if e == nil or e.nodes ~= nodes then e = { nodes = nodes, hosts = M.expand(nodes) } end
      seen[id] = e
      for _, h in ipairs(e.hosts) do busy[h] = true end
    end
  end
  expanded = seen
  return busy
end

-- What the table's entries are ("leaf", "rail-group" or "domain": fabric::block_tag), in
-- words: "leaf" / "leaves", "rail group" / "rail groups", "NVLink domain" / "NVLink domains".
function M.block_noun(fabric, plural)
  local kind = fabric and fabric.blocks or "leaf"
  if kind == "domain" then return plural and "NVLink domains" or "NVLink domain" end
  if kind == "rail-group" then return plural and "rail groups" or "rail group" end
  return plural and "leaves" or "leaf"
end

-- The job's shape: `nodes` nodes of `gpn` GPUs with TP groups of `tp` GPUs and EP groups of
-- `ep` GPUs (nil: none). Returns the hosts per group kept together (the larger of TP and
-- EP), or nil and why not. The rules and messages are placement::JobShape::make's
-- (placement/src/job_shape.cpp, first_broken_rule), worded for --fabric-tp and --fabric-ep
-- as the plugin words them: slurmctld's Lua cannot call that C++, so they are written again
-- here, and tests/plugin/test_job_submit.lua pins the same messages as tests/placement/
-- test_job_shape.cpp. Change both together.
function M.shape(nodes, gpn, tp, ep)
  local function whole(x) return x == math.floor(x) end
  if not whole(gpn) or gpn < 1 then return nil, "gpus_per_node must be at least 1" end
  if not whole(tp) or tp < 1 then return nil, "--fabric-tp must be at least 1" end
  if not whole(nodes) or nodes < 1 then return nil, "the job's node count must be at least 1" end
  if tp > gpn and tp % gpn ~= 0 then
    return nil, string.format("--fabric-tp %d with %d GPUs per node: a TP group larger than a "
                              .. "node must span whole nodes (a multiple of %d)", tp, gpn, gpn)
  end
  if tp <= gpn and gpn % tp ~= 0 then
    return nil, string.format("--fabric-tp %d with %d GPUs per node: a TP group smaller than a "
                              .. "node must divide it (%d is not a multiple of %d)",
                              tp, gpn, gpn, tp)
  end
  if (nodes * gpn) % tp ~= 0 then
    return nil, string.format("--fabric-tp %d does not tile the job: %d nodes x %d GPUs per node "
                              .. "= %d GPUs, not a multiple of %d", tp, nodes, gpn, nodes * gpn, tp)
  end
  local group = tp
  if ep ~= nil then
    if not whole(ep) or ep < 1 then return nil, "--fabric-ep must be at least 1" end
    if ep > gpn and ep % gpn ~= 0 then
      return nil, string.format("--fabric-ep %d with %d GPUs per node: an EP group larger than "
                                .. "a node must span whole nodes (a multiple of %d)", ep, gpn, gpn)
    end
    if ep <= gpn and gpn % ep ~= 0 then
      return nil, string.format("--fabric-ep %d with %d GPUs per node: an EP group smaller than "
                                .. "a node must divide it (%d is not a multiple of %d)",
                                ep, gpn, gpn, ep)
    end
    if ep % tp ~= 0 and tp % ep ~= 0 then
      return nil, string.format("--fabric-ep %d with --fabric-tp %d: EP and TP groups must nest "
                                .. "(one size a multiple of the other)", ep, tp)
    end
    group = math.max(tp, ep)
    if (nodes * gpn) % group ~= 0 then
      return nil, string.format("--fabric-ep %d does not tile the job: %d GPUs are not a "
                                .. "multiple of %d", ep, nodes * gpn, group)
    end
  end
  if group > gpn then return group / gpn end
  return 1
end

-- The constraint for `nodes` nodes in groups of `g` nodes (M.shape: nodes is a multiple of
-- g), given the busy hosts and the hosts the job may use (nil: all); or nil and the reason.
-- Leaves (the table's entries: NVLink domains on a fabric with domains): free = hosts not
-- busy and allowed, room = whole groups that fit. With one_leaf (topology/block), only a
-- leaf that holds the whole job.
function M.plan(fabric, busy, nodes, g, allowed, one_leaf)
  if nodes % g ~= 0 then
    return nil, string.format("%d nodes are not whole groups of %d nodes (see M.shape)", nodes, g)
  end
  local need = nodes / g
  local room, pods = {}, {}
  for i, leaf in ipairs(fabric.leaves) do
    local free = 0
    for _, h in ipairs(leaf.hosts) do
      if not busy[h] and (allowed == nil or allowed[h]) then free = free + 1 end
    end
    room[i] = math.floor(free / g)
    local p = pods[leaf.pod + 1] or { room = 0, leaves = {} }
    p.room = p.room + room[i]
    p.leaves[#p.leaves + 1] = i
    pods[leaf.pod + 1] = p
  end
  -- 1. One leaf: any leaf with room, as a matching OR ("[leafA|leafB]": all nodes from one
  --    of them), tightest first; Slurm picks among them, so a burst of jobs spreads over the
  --    leaves instead of queueing for the one that was tightest at submission.
  local fits = {}
  for i = 1, #fabric.leaves do
    if room[i] >= need then fits[#fits + 1] = i end
  end
  if #fits > 0 then
    table.sort(fits, function(a, b)
      if room[a] ~= room[b] then return room[a] < room[b] end
      return a < b
    end)
    if #fits == 1 then return fabric.leaves[fits[1]].name end
    local names = {}
    for _, i in ipairs(fits) do names[#names + 1] = fabric.leaves[i].name end
    return "[" .. table.concat(names, "|") .. "]"
  end
  if one_leaf then
    return nil, "no " .. M.block_noun(fabric) .. " has room for the whole job now"
  end
  -- 2. The tightest single pod, else every leaf; leaves with the most room first.
  local candidates
  local best_pod
  for _, p in pairs(pods) do
    if p.room >= need and (best_pod == nil or p.room < best_pod.room) then best_pod = p end
  end
  if best_pod then
    candidates = best_pod.leaves
  else
    candidates = {}
    for i = 1, #fabric.leaves do candidates[#candidates + 1] = i end
  end
  table.sort(candidates, function(a, b)
    if room[a] ~= room[b] then return room[a] > room[b] end
    return a < b
  end)
  local parts, left = {}, need
  for _, i in ipairs(candidates) do
    if left == 0 then break end
    local take = math.min(room[i], left)
    if take > 0 then
      parts[#parts + 1] = { i = i, n = take * g }
      left = left - take
    end
  end
  if left > 0 then
    return nil, string.format("only %d of %d whole groups of %d nodes fit in the free hosts now",
                              need - left, need, g)
  end
  table.sort(parts, function(a, b) return a.i < b.i end)  -- topology.conf order
  local terms = {}
  for _, p in ipairs(parts) do terms[#terms + 1] = fabric.leaves[p.i].name .. "*" .. p.n end
  return "[" .. table.concat(terms, "&") .. "]"
end

-- spank_job_env is a table indexed from 0: iterate with pairs.
function M.spank_env(job_desc)
  local t = {}
  for _, v in pairs(job_desc.spank_job_env or {}) do
    local name, val = string.match(v, "^([^=]+)=(.*)$")
    if name then t[name] = val end
  end
  return t
end

-- The hosts of the job's partitions (or of the default partition), or nil when unknown.
function M.allowed_hosts(job_desc, part_list)
  if part_list == nil then return nil end
  local names = {}
  if job_desc.partition ~= nil and job_desc.partition ~= "" then
    for p in string.gmatch(job_desc.partition, "[^,]+") do names[#names + 1] = p end
  else
    for name, p in pairs(part_list) do
      if tonumber(p.flag_default) == 1 then names[#names + 1] = name end
    end
  end
  if #names == 0 then return nil end
  local allowed = {}
  for _, name in ipairs(names) do
    local p = part_list[name]
    if p == nil or p.nodes == nil then return nil end
    for _, h in ipairs(M.expand(p.nodes)) do allowed[h] = true end
  end
  return allowed
end

-- Slurm 25.11.2+ lets this script set --segment (job_desc.segment_size; Slurm before has no
-- such field and reads it as nil): a group of g nodes (the larger of TP and EP) becomes a
-- segment of g nodes, which topology/block keeps inside one block. Only on topology/block (M.submit: on a tree
-- the per-leaf counts keep the groups, and a segment there is no rule of ours) and only when
-- the job asked for no segment of its own. Returns the segment set, or nil.
function M.segment(job_desc, g, what)
  local cur = job_desc.segment_size
  if cur == nil then return nil end  -- no such field: Slurm before 25.11.2
  cur = tonumber(cur)
  if cur ~= nil and cur > 0 and cur < 65534 then return nil end  -- the user's own (NO_VAL16 = 65534)
  job_desc.segment_size = g
  log("job %s: --segment=%d (its %s groups)", tostring(job_desc.name), g, what or "TP")
  return g
end

local fabric_table, fabric_error, fabric_tries = nil, nil, 0
local fabric_failed_generation = nil  -- the table file's generation when it last failed to load

function M.submit(job_desc, jobs, part_list)
  local env = M.spank_env(job_desc)
  -- Exact mode on Slurm 23.11+: the plugin placed the job at submission and hands its nodes
  -- here (sbatch there refuses -N with a hostfile, the pin of older versions).
  if (env.FABRICPLACE_NODES or "") ~= "" then
    if (job_desc.req_nodes or "") ~= "" then
      log("job %s names its nodes (-w); left alone", tostring(job_desc.name))
      return
    end
    job_desc.req_nodes = env.FABRICPLACE_NODES
    log("job %s: exact mode: pinned to %s", tostring(job_desc.name), env.FABRICPLACE_NODES)
    return
  end
  local tp, gpn = tonumber(env.FABRICPLACE_TP), tonumber(env.FABRICPLACE_GPUS_PER_NODE)
  local ep = tonumber(env.FABRICPLACE_EP)
  -- Groups inside a node: nothing to pin.
  if tp == nil or gpn == nil or math.max(tp, ep or 0) <= gpn then return end
  local what = (ep or 0) > tp and "EP" or "TP"  -- the group kept together
  if job_desc.features ~= nil and job_desc.features ~= "" then
    log("job %s has its own constraint %s; left alone", tostring(job_desc.name), job_desc.features)
    return
  end
  if (job_desc.req_nodes or "") ~= "" or (job_desc.exc_nodes or "") ~= "" then
    log("job %s names its nodes (-w/-x); left alone", tostring(job_desc.name))
    return
  end
  -- A table that failed to load is tried again every 100 submissions, and at once when a
  -- sync wrote another generation (fixed on disk, it is picked up without restarting
  -- slurmctld).
  if fabric_table == nil and (fabric_error == nil or fabric_tries % 100 == 0 or
                              M.file_generation(M.FABRIC_TABLE) ~= fabric_failed_generation) then
    fabric_table, fabric_error = M.load_fabric(M.FABRIC_TABLE)
    if fabric_error then
      fabric_failed_generation = M.file_generation(M.FABRIC_TABLE)
      log("cannot load %s: %s", M.FABRIC_TABLE, fabric_error)
    end
  end
  fabric_tries = fabric_tries + 1
  fabric_table = M.refresh(fabric_table, M.FABRIC_TABLE)
  if fabric_table == nil then return end
  M.check_generation(fabric_table, env.FABRICPLACE_GENERATION, job_desc)
  local nodes = tonumber(job_desc.min_nodes)
  if nodes == nil or (slurm and nodes == slurm.NO_VAL) then nodes = 1 end
  local g, bad = M.shape(nodes, gpn, tp, ep)
  if g == nil then
    log("job %s: %s; left to Slurm", tostring(job_desc.name), bad)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s; Slurm places the job as it is", bad)
    end
    return
  end
  local block = env.FABRICPLACE_TOPOLOGY == "block"
  -- Not for a node range (-N 4-6): with a segment, Slurm sizes the job at its minimum.
  local maxn = tonumber(job_desc.max_nodes)
  local fixed = maxn == nil or maxn == 0 or maxn == nodes or (slurm and maxn == slurm.NO_VAL)
  local seg_set = block and fixed and M.segment(job_desc, g, what) or nil
  local one, many = M.block_noun(fabric_table), M.block_noun(fabric_table, true)
  local features, why = M.plan(fabric_table, M.busy_hosts(jobs), nodes, g,
                               M.allowed_hosts(job_desc, part_list), block)
  if block and features == nil then
    -- topology/block refuses per-leaf counts: Slurm places the job, by its block rules.
    local seg = tonumber(env.FABRICPLACE_SEGMENT) or seg_set
    if seg then
      why = string.format("%s; fabricplace proposed --segment=%d, which keeps each %s group " ..
                          "inside one %s (cli_filter.lua sets it unless the job has its own)",
                          why, seg, what, one)
    else
      why = string.format("%s; topology/block refuses per-leaf counts (and this job has no " ..
                          "--segment from fabricplace: cli_filter.lua, Slurm 24.05+)", why)
    end
  end
  -- Per-leaf node counts with a task count that is not the same on every node (-N 4 -n 6):
  -- Slurm 24.11 plans more nodes than the job asks for and never starts it.
  local tasks = tonumber(job_desc.num_tasks)
  if features and string.find(features, "*", 1, true) and tasks and tasks > 0 and
     not (slurm and tasks == slurm.NO_VAL) and tasks % nodes ~= 0 then
    features, why = nil, string.format("%d tasks on %d nodes are not the same on every node, " ..
                                       "which per-leaf node counts cannot hold", tasks, nodes)
  end
  if features then
    job_desc.features = features
    log("job %s: %d nodes, %s groups of %d nodes: features=%s", tostring(job_desc.name), nodes,
        what, g, features)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s groups of %d nodes kept inside %s: %s", what, g, many,
                     features)
    end
  else
    log("job %s: %d nodes, %s groups of %d nodes: %s; left to Slurm", tostring(job_desc.name),
        nodes, what, g, why)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s; Slurm places the job as it is", why)
    end
  end
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local ok, err = pcall(M.submit, job_desc, slurm.jobs, part_list)
  if not ok then log("internal error: %s; job left to Slurm", tostring(err)) end
  return slurm.SUCCESS  -- never reject a job: fabricplace only steers
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

if slurm == nil then return M end  -- loaded by tests (lua5.1 etc/job_submit.lua)
return slurm.SUCCESS
