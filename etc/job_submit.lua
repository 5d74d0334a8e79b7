-- SPDX-License-Identifier: GPL-2.0-or-later
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

-- Bounds on what a job brings (this runs under slurmctld's job write lock: no submission may
-- cost more than its own size, and nothing a job brings is kept beyond a few short strings).
M.MAX_PARTITIONS = 64         -- distinct names in a job's -p list; more: the job left to Slurm
M.MAX_GENERATIONS_SAID = 16   -- other generations already reported (the oldest forgotten)
M.RETRY_SECONDS = 60          -- a table that failed to load, unchanged: tried again after this
M.MAX_LOGGED = 64             -- bytes of a job's own string (name, -C, env value) in a log line

local function log(fmt, ...)
  local msg = string.format(fmt, ...)
  if slurm and slurm.log_info then slurm.log_info("fabricplace: %s", msg) end
  if M.LOG then
    local f = io.open(M.LOG, "a")
    if f then f:write(os.date("%Y-%m-%dT%H:%M:%S "), msg, "\n"); f:close() end
  end
end

-- A string of the job's (its name, -C, a SPANK value) for a log line: as it is when short and
-- plain, else quoted, control and non-ASCII bytes escaped, cut at `max` bytes (M.MAX_LOGGED)
-- with its length said: a job cannot make slurmctld log more than that.
function M.excerpt(s, max)
  if s == nil then return "nil" end
  s = tostring(s)
  max = max or M.MAX_LOGGED
  if #s <= max and not string.find(s, "[^%w%.%-_+:/@%[%],=|&*]") then return s end
  local head = (string.gsub(string.sub(s, 1, max), "[%c\"\\\128-\255]", function(c)
    return string.format("\\%03d", string.byte(c))
  end))
  if #s > max then return string.format('"%s"... (%d bytes)', head, #s) end
  return '"' .. head .. '"'
end

-- Our own message (a load error, which may quote the table file) cut for a log line.
local function clip(s)
  s = string.gsub(tostring(s), "%c", " ")
  if #s > 300 then return string.sub(s, 1, 300) .. "..." end
  return s
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

-- The fabric table, with leaf_of[host] = leaf index; or nil and why not. The file is data:
-- run with no globals (it cannot reach os, io or this script's functions), text only, and
-- every leaf checked here, so a malformed table is a load that failed (backed off, below),
-- never an error at each submission.
local function check_table(t, path)
  if type(t) ~= "table" or t.version ~= 1 or type(t.leaves) ~= "table" then
    return path .. ": not a fabricplace fabric table (version 1)"
  end
  if t.generation ~= nil and type(t.generation) ~= "string" then
    return path .. ": generation is not a string"
  end
  for i, leaf in ipairs(t.leaves) do
    if type(leaf) ~= "table" or type(leaf.name) ~= "string" or type(leaf.pod) ~= "number" or
       leaf.pod < 0 or leaf.pod ~= math.floor(leaf.pod) or type(leaf.hosts) ~= "table" then
      return string.format("%s: leaf %d: expected { name = \"...\", pod = N, hosts = { ... } }",
                           path, i)
    end
    for _, h in ipairs(leaf.hosts) do
      if type(h) ~= "string" then
        return string.format("%s: leaf %d (%s): a host that is not a string", path, i,
                             M.excerpt(leaf.name))
      end
    end
  end
  return nil
end

function M.load_fabric(path)
  local f = io.open(path, "rb")
  if not f then return nil, "cannot open " .. path end
  local first = f:read(1)
  f:close()
  if first == "\27" then return nil, path .. ": precompiled Lua, not a table file" end
  local chunk, err
  if setfenv then  -- Lua 5.1
    chunk, err = loadfile(path)
    if chunk then setfenv(chunk, {}) end
  else
    chunk, err = loadfile(path, "t", {})
  end
  if not chunk then return nil, tostring(err) end
  local ok, t = pcall(chunk)
  if not ok then return nil, tostring(t) end
  local bad = check_table(t, path)
  if bad then return nil, bad end
  t.leaf_of = {}
  for i, leaf in ipairs(t.leaves) do
    for _, h in ipairs(leaf.hosts) do t.leaf_of[h] = i end
  end
  return t
end

-- The `fabricplace slurm sync` generation on a table file's first line ("" if none: no file,
-- no such line), and the file's size (nil: no file). Only the file's first bytes are read.
local GENERATION = "^" .. string.rep("%x", 16) .. "$"
function M.file_generation(path)
  local f = io.open(path, "rb")
  if not f then return "", nil end
  local head = f:read(64) or ""
  local size = f:seek("end")
  f:close()
  local first = string.match(head, "^([^\n]*)\n") or (#head < 64 and head) or ""
  local g = string.match(first, "^%-%- fabricplace generation: (%x+)$")
  if g == nil or not string.match(g, GENERATION) then return "", size end
  return g, size
end

-- A table file that failed to load is not read again at every submission: only when its
-- first line's generation or its size changed (a sync, or a copy that was still being
-- written), else once M.RETRY_SECONDS have passed (fixed in place). One state for both ways
-- a load is tried (M.submit before any table loaded, M.refresh after).
local failed = nil  -- { gen = , size = , at = os.time() } of the last load that failed
local function worth_trying(gen, size)
  if failed == nil then return true end
  if gen ~= failed.gen or size ~= failed.size then return true end
  return os.difftime(os.time(), failed.at) >= M.RETRY_SECONDS
end
local function load_or_back_off(path, gen, size)
  local t, err = M.load_fabric(path)
  if t then failed = nil; return t end
  failed = { gen = gen, size = size, at = os.time() }
  return nil, err
end

-- The loaded table, or the file's when a sync replaced it (another generation on its first
-- line): slurmctld needs no `touch job_submit.lua` after a sync. One line read per
-- submission that asks for fabricplace. A new table that does not load keeps the old one
-- (tried again as above).
function M.refresh(t, path)
  if t == nil then return nil end
  local on_disk, size = M.file_generation(path)
  if on_disk == "" or on_disk == (t.generation or "") or not worth_trying(on_disk, size) then
    return t
  end
  local fresh, err = load_or_back_off(path, on_disk, size)
  if fresh == nil then
    log("%s is generation %s but does not load (%s); the table of generation %s stays", path,
        on_disk, clip(err), tostring(t.generation))
    return t
  end
  log("%s: generation %s replaced by %s (slurm sync); reloaded", path,
      tostring(t.generation or "none"), on_disk)
  return fresh
end

-- The submit host's files (the plugin's FABRICPLACE_GENERATION) against this table: another
-- generation means a node whose files were not copied after a sync. Said once per pair of
-- generations, never fatal. The job brings the value: only a generation's shape (16 hex
-- digits, as `fabricplace slurm sync` writes) is taken, anything else is said as a short
-- excerpt; at most M.MAX_GENERATIONS_SAID such messages are remembered (the oldest forgotten,
-- so said again if it comes back), each a few dozen bytes.
local said, said_order, said_next = {}, {}, 1
local function say_once(key, fmt, ...)
  if said[key] then return end
  local n = M.MAX_GENERATIONS_SAID
  local old = said_order[said_next]
  if old ~= nil then said[old] = nil end
  said_order[said_next], said[key] = key, true
  said_next = said_next % n + 1
  log(fmt, ...)
end
function M.check_generation(t, submit_generation, job_desc)
  local mine = t.generation or ""
  if submit_generation == nil or submit_generation == "" or mine == "" then return true end
  if submit_generation == mine then return true end
  local name = M.excerpt(job_desc.name)
  if type(submit_generation) ~= "string" or #submit_generation ~= 16 or
     not string.match(submit_generation, GENERATION) then
    local what = M.excerpt(submit_generation, 24)
    say_once("?" .. what, "job %s: FABRICPLACE_GENERATION %s is not a generation (16 hex " ..
             "digits, as `fabricplace slurm sync` writes); not compared", name, what)
    return false
  end
  say_once(submit_generation .. "/" .. mine, "job %s: the submit host's fabric files are " ..
           "generation %s, this table %s: copy the files of the last `fabricplace slurm sync` " ..
           "to every node", name, submit_generation, mine)
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
  -- %d: under Lua 5.4 (Slurm 24.11 on Debian 13) the counts are floats, and "*2.0" is no count
  for _, p in ipairs(parts) do
    terms[#terms + 1] = fabric.leaves[p.i].name .. "*" .. string.format("%d", p.n)
  end
  return "[" .. table.concat(terms, "&") .. "]"
end

-- spank_job_env is a table indexed from 0: iterate with pairs. Only FABRICPLACE_* entries
-- are taken (the others are the job's business and may be large); one pass over each.
function M.spank_env(job_desc)
  local t = {}
  for _, v in pairs(job_desc.spank_job_env or {}) do
    if type(v) == "string" and string.sub(v, 1, 12) == "FABRICPLACE_" then
      local eq = string.find(v, "=", 13, true)
      if eq then t[string.sub(v, 1, eq - 1)] = string.sub(v, eq + 1) end
    end
  end
  return t
end

-- Each partition's hosts as a set, expanded once and kept while the node string stays the
-- same; keyed by the node string (part_list[name].nodes), so partitions over the same nodes
-- share one set. Once the cache holds M.MAX_PARTITIONS * 4 node strings, it keeps only those
-- some partition of part_list still has (a site's own configuration, never a job, sizes it).
local part_cache, part_cached = {}, 0   -- nodes -> { nodes = string, set = { [host] = true }, n }
local function partition_set(p, part_list)
  local nodes = p.nodes
  local e = part_cache[nodes]
  if e ~= nil then return e end
  if part_cached >= M.MAX_PARTITIONS * 4 then
    local live = {}
    for _, q in pairs(part_list) do
      if type(q) == "table" and type(q.nodes) == "string" then live[q.nodes] = true end
    end
    local kept, n = {}, 0
    for k, v in pairs(part_cache) do
      if live[k] and n < M.MAX_PARTITIONS * 2 then kept[k], n = v, n + 1 end
    end
    part_cache, part_cached = kept, n
  end
  local set, n = {}, 0
  for _, h in ipairs(M.expand(nodes)) do
    if not set[h] then set[h], n = true, n + 1 end
  end
  e = { nodes = nodes, set = set, n = n }
  part_cache[nodes] = e
  part_cached = part_cached + 1
  return e
end

-- The hosts of the job's partitions (or of the default partition), or nil when unknown (a
-- name that is no partition: every host counts, as before). The -p list is de-duplicated;
-- more than M.MAX_PARTITIONS distinct names: nil and why, and M.submit leaves the job to
-- Slurm. What is returned is indexed by host name (allowed[h]): a cached set, or for
-- several partitions a view of their sets; read it, never change or iterate it.
function M.allowed_hosts(job_desc, part_list)
  if part_list == nil then return nil end
  local names, seen = {}, {}
  local list = job_desc.partition
  if type(list) == "string" and list ~= "" then
    for p in string.gmatch(list, "[^,]+") do
      if not seen[p] then
        if #names == M.MAX_PARTITIONS then
          return nil, string.format("more than %d partitions in its -p list", M.MAX_PARTITIONS)
        end
        seen[p] = true
        names[#names + 1] = p
      end
    end
  else
    for name, p in pairs(part_list) do
      if tonumber(p.flag_default) == 1 then names[#names + 1] = name end
    end
  end
  if #names == 0 then return nil end
  local entries, nodes_seen = {}, {}
  for _, name in ipairs(names) do
    local p = part_list[name]
    if p == nil or type(p.nodes) ~= "string" then return nil end
    local e = partition_set(p, part_list)
    -- partitions over the same nodes count once
    if not nodes_seen[e.nodes] then nodes_seen[e.nodes] = true; entries[#entries + 1] = e end
  end
  if #entries == 1 then return entries[1].set end
  -- Several: a host is allowed when one of the sets has it, looked up largest set first (a
  -- union built per submission would cost the sum of their sizes, for any -p order).
  table.sort(entries, function(a, b) return a.n > b.n end)
  local sets = {}
  for i, e in ipairs(entries) do sets[i] = e.set end
  return setmetatable({}, { __index = function(_, h)
    for i = 1, #sets do if sets[i][h] then return true end end
    return nil
  end })
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
  log("job %s: --segment=%d (its %s groups)", M.excerpt(job_desc.name), g, what or "TP")
  return g
end

local fabric_table = nil

function M.submit(job_desc, jobs, part_list)
  local env = M.spank_env(job_desc)
  local name = M.excerpt(job_desc.name)
  -- Exact mode on Slurm 23.11+: the plugin placed the job at submission and hands its nodes
  -- here (sbatch there refuses -N with a hostfile, the pin of older versions).
  if (env.FABRICPLACE_NODES or "") ~= "" then
    if (job_desc.req_nodes or "") ~= "" then
      log("job %s names its nodes (-w); left alone", name)
      return
    end
    job_desc.req_nodes = env.FABRICPLACE_NODES
    log("job %s: exact mode: pinned to %s", name, M.excerpt(env.FABRICPLACE_NODES, 200))
    return
  end
  -- Sizes as numbers: one the job could only have forged (not finite, past 2^31) is none.
  local function size(v)
    local n = tonumber(v)
    if n ~= nil and n >= 0 and n < 2147483648 then return n end
    return nil
  end
  local tp, gpn = size(env.FABRICPLACE_TP), size(env.FABRICPLACE_GPUS_PER_NODE)
  local ep = size(env.FABRICPLACE_EP)
  -- Groups inside a node: nothing to pin.
  if tp == nil or gpn == nil or math.max(tp, ep or 0) <= gpn then return end
  local what = (ep or 0) > tp and "EP" or "TP"  -- the group kept together
  if job_desc.features ~= nil and job_desc.features ~= "" then
    log("job %s has its own constraint %s; left alone", name, M.excerpt(job_desc.features))
    return
  end
  if (job_desc.req_nodes or "") ~= "" or (job_desc.exc_nodes or "") ~= "" then
    log("job %s names its nodes (-w/-x); left alone", name)
    return
  end
  -- The table, loaded at the first submission that needs it; one that fails to load is tried
  -- again when its file changes (a sync, a copy completed: picked up without restarting
  -- slurmctld), else after M.RETRY_SECONDS; never at every submission.
  if fabric_table == nil then
    local gen, bytes = M.file_generation(M.FABRIC_TABLE)
    if not worth_trying(gen, bytes) then return end
    local err
    fabric_table, err = load_or_back_off(M.FABRIC_TABLE, gen, bytes)
    if fabric_table == nil then
      log("cannot load %s: %s (tried again when the file changes, else in %d s); jobs left to " ..
          "Slurm", M.FABRIC_TABLE, clip(err), M.RETRY_SECONDS)
      return
    end
  else
    fabric_table = M.refresh(fabric_table, M.FABRIC_TABLE)
  end
  -- The job's partitions: a -p list past the cap is left to Slurm before anything is done.
  local allowed, too_many = M.allowed_hosts(job_desc, part_list)
  if too_many then
    log("job %s: %s; left to Slurm", name, too_many)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s; Slurm places the job as it is", too_many)
    end
    return
  end
  M.check_generation(fabric_table, env.FABRICPLACE_GENERATION, job_desc)
  local nodes = tonumber(job_desc.min_nodes)
  if nodes == nil or (slurm and nodes == slurm.NO_VAL) then nodes = 1 end
  local g, bad = M.shape(nodes, gpn, tp, ep)
  if g == nil then
    log("job %s: %s; left to Slurm", name, bad)
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
  local features, why = M.plan(fabric_table, M.busy_hosts(jobs), nodes, g, allowed, block)
  if block and features == nil then
    -- topology/block refuses per-leaf counts: Slurm places the job, by its block rules.
    local seg = size(env.FABRICPLACE_SEGMENT) or seg_set
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
    log("job %s: %d nodes, %s groups of %d nodes: features=%s", name, nodes,
        what, g, features)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s groups of %d nodes kept inside %s: %s", what, g, many,
                     features)
    end
  else
    log("job %s: %d nodes, %s groups of %d nodes: %s; left to Slurm", name,
        nodes, what, g, why)
    if slurm and slurm.log_user then
      slurm.log_user("fabricplace: %s; Slurm places the job as it is", why)
    end
  end
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local ok, err = pcall(M.submit, job_desc, slurm.jobs, part_list)
  if not ok then log("internal error: %s; job left to Slurm", clip(err)) end
  return slurm.SUCCESS  -- never reject a job: fabricplace only steers
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

if slurm == nil then return M end  -- loaded by tests (lua5.1 etc/job_submit.lua)
return slurm.SUCCESS
