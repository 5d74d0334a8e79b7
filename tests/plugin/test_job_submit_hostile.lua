-- SPDX-License-Identifier: GPL-2.0-or-later
-- etc/job_submit.lua against hostile job descriptions: it runs inside slurmctld under the
-- job write lock, so no submission may cost more CPU than its own size allows, nor leave
-- anything of its own behind. Each case drives the script through its Slurm entry point
-- (slurm_job_submit, with a stub `slurm` table) and asserts the CPU of every submission
-- (os.clock, BUDGET), the Lua heap after a full collection (collectgarbage), what the job
-- became and what was logged.
--   lua5.1 tests/plugin/test_job_submit_hostile.lua ETC_JOB_SUBMIT_LUA
-- Self-contained: the fabric tables are written here, in the format of
-- `fabricplace fabric export --format lua` / `slurm sync` (placement/src/host_map.cpp).
-- JOB_SUBMIT_ABORT_S (default 2): a submission still running after that many seconds of CPU
-- is stopped (a count hook raises an error), so today's quadratic cases fail fast.
local script = arg[1]
assert(script, "usage: test_job_submit_hostile.lua ETC_JOB_SUBMIT_LUA")

local BUDGET = 0.1          -- s of CPU per submission
local HEAP_GROWTH = 4096    -- KB the heap may grow over a case, after a full collection
local ABORT = tonumber(os.getenv("JOB_SUBMIT_ABORT_S") or "") or 2

local failures = 0
local function check(what, ok, detail)
  if not ok then
    failures = failures + 1
    print("FAIL " .. what .. (detail and (": " .. detail) or ""))
  end
end
local function short(v)
  v = tostring(v)
  if #v > 160 then return string.sub(v, 1, 160) .. string.format("... (%d bytes)", #v) end
  return v
end
local function eq(what, got, want)
  check(what, got == want, string.format("got %s, want %s", short(got), short(want)))
end

-- The stub: the script's log lines and messages to users, counted by kind, the last few
-- kept (keeping them all would be the test's own heap growth).
local log = { n = 0, longest = 0, last = {}, count = {} }
local function record(line)
  log.n = log.n + 1
  if #line > log.longest then log.longest = #line end
  log.last[(log.n - 1) % 32 + 1] = line
  log.latest = line
end
local told = { n = 0, longest = 0 }
local function load_script()
  slurm = nil  -- the script returns its functions only when loaded without slurm
  local M = dofile(script)
  slurm = {
    SUCCESS = 0, ERROR = -1, NO_VAL = 4294967294, jobs = {},
    log_info = function(fmt, ...) record(string.format(fmt, ...)) end,
    log_user = function(fmt, ...)
      local s = string.format(fmt, ...)
      told.n, told.latest = told.n + 1, s
      if #s > told.longest then told.longest = #s end
    end,
  }
  return M, slurm_job_submit
end

-- Lines logged by the script since `mark` whose text has `needle`.
local function since(mark, needle)
  local n = 0
  local first = math.max(mark + 1, log.n - 31)
  for i = first, log.n do
    local line = log.last[(i - 1) % 32 + 1]
    if string.find(line, needle, 1, true) then n = n + 1 end
  end
  return n
end
local matches = {}  -- needle -> count, over every line (for counts past the ring)
local watched = {}
local function watch(needle) watched[#watched + 1] = needle; matches[needle] = 0 end
local record0 = record
record = function(line)
  record0(line)
  for _, w in ipairs(watched) do
    if string.find(line, w, 1, true) then matches[w] = matches[w] + 1 end
  end
end

local function heap()
  collectgarbage("collect"); collectgarbage("collect")
  return collectgarbage("count")
end

-- One submission through the entry point, its CPU measured; stopped past ABORT seconds.
local worst = {}    -- case -> most CPU of one submission
local function submit(case, entry, job, part_list)
  if (worst[case] or 0) > BUDGET then return end  -- failed already: the rest would take minutes
  local t0 = os.clock()
  debug.sethook(function()
    if os.clock() - t0 > ABORT then error("over the test's CPU abort", 0) end
  end, "", 10000)
  local ok, rc = pcall(entry, job, part_list, 1000)
  debug.sethook()
  local dt = os.clock() - t0
  if dt > (worst[case] or 0) then worst[case] = dt end
  check(case .. ": returns SUCCESS", ok and rc == 0, tostring(rc))
  return dt
end
local function cpu_ok(case)
  check(case .. string.format(": at most %.2f s of CPU per submission", BUDGET),
        (worst[case] or 0) < BUDGET, string.format("%.3f s", worst[case] or 0))
end

-- Files.
local function put(path, text) local h = assert(io.open(path, "w")); h:write(text); h:close() end
local HOSTS, PER_LEAF = 16384, 32
local function host(i) return string.format("node%05d", i) end
local function table_text(generation, nhosts, per_leaf)
  nhosts, per_leaf = nhosts or HOSTS, per_leaf or PER_LEAF
  local out = {}
  if generation then out[#out + 1] = "-- fabricplace generation: " .. generation .. "\n" end
  out[#out + 1] = "-- fabricplace fabric table for job_submit.lua (fabricplace fabric export --format lua)\n"
  out[#out + 1] = "return {\n  version = 1,\n  origin = \"hostile\",\n"
  if generation then out[#out + 1] = "  generation = \"" .. generation .. "\",\n" end
  out[#out + 1] = "  leaves = {\n"
  for l = 1, nhosts / per_leaf do
    local hs = {}
    for i = (l - 1) * per_leaf + 1, l * per_leaf do hs[#hs + 1] = "\"" .. host(i) .. "\"" end
    out[#out + 1] = string.format("    { name = \"p%02d-leaf%02d\", pod = %d, hosts = { %s } },\n",
                                  math.floor((l - 1) / 32) + 1, (l - 1) % 32 + 1,
                                  math.floor((l - 1) / 32), table.concat(hs, ", "))
  end
  out[#out + 1] = "  },\n}\n"
  return table.concat(out)
end
local GEN = "0123456789abcdef"
local big = os.tmpname()
put(big, table_text(GEN))

-- The cluster: `all` (the default), 64 partitions q01..q64 of 256 hosts each (8 leaves),
-- and `r` (hosts of q01 again, another node string). Leaves 3 and 7 are free, every other
-- host runs a job: a 32-node job of TP groups of 2 nodes fits p01-leaf03 or p01-leaf07.
local parts = { all = { nodes = "node[00001-16384]", flag_default = 1 } }
for q = 1, 64 do
  parts[string.format("q%02d", q)] = {
    nodes = string.format("node[%05d-%05d]", (q - 1) * 256 + 1, q * 256), flag_default = 0 }
end
parts.r = { nodes = "node[00001-00128],node[00129-00256]", flag_default = 0 }
local running = { [1] = { job_state = 1, nodes = "node[00001-00064,00097-00192,00225-16384]" } }
local FITS = "[p01-leaf03|p01-leaf07]"
local function tp_job(name, extra)
  local j = { name = name, min_nodes = 32,
              spank_job_env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8" } }
  for k, v in pairs(extra or {}) do j[k] = v end
  return j
end
local function list(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return table.concat(t, ",")
end

local M, entry = load_script()
M.FABRIC_TABLE = big
slurm.jobs = running
watch("left to Slurm"); watch("more than 64 partitions"); watch("internal error")
watch("is not a generation"); watch("the submit host's fabric files are generation")
watch("cannot load"); watch("does not load"); watch("replaced by")

-- Warm: the table loaded, `all` expanded, the running job's hosts expanded.
local warm = tp_job("warm", { partition = "all" })
submit("warm", entry, warm, parts)
eq("warm: the free leaves", warm.features, FITS)
local base = heap()

-- 1. A -p list of one name 10,000 times: de-duplicated, the cached expansion reused.
do
  local case = "10,000 x -p all"
  local p = list(10000, function() return "all" end)
  local j
  for _ = 1, 20 do j = tp_job("same", { partition = p }); submit(case, entry, j, parts) end
  cpu_ok(case)
  eq(case .. ": the constraint", j.features, FITS)
  local grown = heap() - base
  check(case .. ": heap", grown < HEAP_GROWTH, string.format("%.0f KB more", grown))
  print(string.format("%s: %.4f s CPU per submission at most, heap +%.0f KB", case,
                      worst[case], grown))
end

-- 2. Two partitions over the same hosts (q01, r) and one beside them (q02, all busy), 10,000
-- names in all: the same free leaves, both orders.
do
  local case = "10,000 x -p q02,r,q01"
  for _, p in ipairs({ list(10000, function(i) return ({ "q02", "r", "q01" })[i % 3 + 1] end),
                       list(10000, function(i) return ({ "q01", "q02", "r" })[i % 3 + 1] end) }) do
    local j = tp_job("three", { partition = p })
    submit(case, entry, j, parts)
    eq(case .. ": the constraint", j.features, FITS)
  end
  cpu_ok(case)
  local only = tp_job("q02", { partition = "q02" })
  submit(case, entry, only, parts)
  eq("-p q02 (every host busy): no constraint", only.features, nil)
  eq("-p q02: said why", matches["left to Slurm"] > 0, true)
end

-- 3. 10,000 distinct names: past the cap of 64, left to Slurm at once, said briefly.
do
  local case = "10,000 distinct -p names"
  local p = list(10000, function(i) return string.format("x%05d", i) end)
  local before = matches["more than 64 partitions"]
  local j
  for _ = 1, 20 do j = tp_job("distinct", { partition = p }); submit(case, entry, j, parts) end
  cpu_ok(case)
  eq(case .. ": no constraint", j.features, nil)
  eq(case .. ": said once per submission", matches["more than 64 partitions"] - before, 20)
  eq(case .. ": the line", log.latest,
     "fabricplace: job distinct: more than 64 partitions in its -p list; left to Slurm")
  eq(case .. ": told the user", told.latest,
     "fabricplace: more than 64 partitions in its -p list; Slurm places the job as it is")
  local grown = heap() - base
  check(case .. ": heap", grown < HEAP_GROWTH, string.format("%.0f KB more", grown))
  print(string.format("%s: %.4f s CPU per submission at most, heap +%.0f KB", case,
                      worst[case], grown))
end

-- 4. Exactly 64 distinct partitions (every q), 10,000 names: at the cap, so taken; each
-- partition expanded once (the first submission) and reused. 65 (all of them and r): over.
do
  local case = "64 partitions in 10,000 names"
  local p = list(10000, function(i) return string.format("q%02d", (i * 7) % 64 + 1) end)
  local j
  for _ = 1, 10 do j = tp_job("q64", { partition = p }); submit(case, entry, j, parts) end
  cpu_ok(case)
  eq(case .. ": the constraint", j.features, FITS)
  local over = tp_job("q65", { partition = p .. ",r" })
  submit(case, entry, over, parts)
  eq("65 partitions: no constraint", over.features, nil)
  eq("65 partitions: said", log.latest,
     "fabricplace: job q65: more than 64 partitions in its -p list; left to Slurm")
  print(string.format("%s: %.4f s CPU per submission at most", case, worst[case]))
end

-- 4b. A site with many partitions over the same nodes (300 names for the whole cluster, as
-- `all`): they share one expanded set, so naming 60 of them keeps nothing more.
do
  local case = "60 partitions over one node string"
  local wide = {}
  for k, v in pairs(parts) do wide[k] = v end
  for i = 1, 300 do wide[string.format("w%03d", i)] = { nodes = "node[00001-16384]", flag_default = 0 } end
  local before = heap()
  local p = list(60, function(i) return string.format("w%03d", i * 5) end)
  local j
  for _ = 1, 5 do j = tp_job("wide", { partition = p }); submit(case, entry, j, wide) end
  cpu_ok(case)
  eq(case .. ": the constraint", j.features, FITS)
  local grown = heap() - before
  check(case .. ": heap (one set for the node string)", grown < 256, string.format("%.0f KB more", grown))
  print(string.format("%s: %.4f s CPU per submission at most, heap +%.0f KB", case, worst[case], grown))
end

-- 5. 5,000 submissions with distinct 100 KB FABRICPLACE_GENERATION values: not a
-- generation, said as a short excerpt, nothing kept. Jobs of 3 nodes (not whole TP groups)
-- end right after the check, so the case costs seconds, not minutes.
do
  local case = "5,000 distinct 100 KB generations"
  local pad = string.rep("f", 100 * 1024 - 16)
  local before, grown_max = matches["is not a generation"], 0
  for i = 1, 5000 do
    local v = string.format("%016x", i) .. pad
    local j = { name = "gen", min_nodes = 3, partition = "all",
                spank_job_env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8",
                                  [2] = "FABRICPLACE_GENERATION=" .. v } }
    submit(case, entry, j, parts)
    if i % 500 == 0 then
      local grown = heap() - base
      if grown > grown_max then grown_max = grown end
      if grown > 4 * HEAP_GROWTH then break end  -- today's: half a GB by the end
    end
  end
  cpu_ok(case)
  check(case .. ": heap", grown_max < HEAP_GROWTH, string.format("%.0f KB more", grown_max))
  eq(case .. ": each said", matches["is not a generation"] - before, 5000)
  check(case .. ": short log lines", log.longest < 400, log.longest .. " bytes")
  eq(case .. ": the excerpt", since(log.n - 2, "job gen: FABRICPLACE_GENERATION \"" ..
     string.format("%016x", 5000) .. "ffffffff\"... (102400 bytes) is not a generation"), 1)
  print(string.format("%s: %.4f s CPU per submission at most, heap +%.0f KB", case,
                      worst[case], grown_max))
end

-- 6. 5,000 distinct values shaped like generations: each said once, at most 16 remembered
-- (the last 16 are not said again; the first one, forgotten, is).
do
  local case = "5,000 distinct generations"
  local before, grown_max = matches["the submit host's fabric files are generation"], 0
  local function gen_job(i)
    return { name = "g", min_nodes = 3, partition = "all",
             spank_job_env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8",
                               [2] = string.format("FABRICPLACE_GENERATION=%016x", i) } }
  end
  for i = 1, 5000 do
    submit(case, entry, gen_job(i), parts)
    if i % 1000 == 0 then
      local grown = heap() - base
      if grown > grown_max then grown_max = grown end
    end
  end
  eq(case .. ": each said once", matches["the submit host's fabric files are generation"] - before,
     5000)
  for i = 4985, 5000 do submit(case, entry, gen_job(i), parts) end
  eq(case .. ": the last 16 remembered", matches["the submit host's fabric files are generation"]
     - before, 5000)
  submit(case, entry, gen_job(1), parts)
  eq(case .. ": the first forgotten, said again",
     matches["the submit host's fabric files are generation"] - before, 5001)
  submit(case, entry, gen_job(1), parts)
  eq(case .. ": and remembered", matches["the submit host's fabric files are generation"] - before,
     5001)
  cpu_ok(case)
  check(case .. ": heap", grown_max < HEAP_GROWTH, string.format("%.0f KB more", grown_max))
  print(string.format("%s: %.4f s CPU per submission at most, heap +%.0f KB", case,
                      worst[case], grown_max))
end

-- 7. Huge strings of the job's own: a 1 MB name, -C, node pin; 100 other SPANK entries of
-- 100 KB; a TP of 100,000 digits. Logged as short excerpts; the outcome as for small ones.
do
  local case = "huge job strings"
  local mb = string.rep("n", 1024 * 1024)
  local env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8" }
  for i = 2, 101 do env[i] = string.format("JUNK%03d=", i) .. string.rep("j", 100 * 1024) end
  local named = tp_job(mb, { partition = "all", spank_job_env = env })
  local longest0, errors0 = log.longest, matches["internal error"]
  submit(case, entry, named, parts)
  eq(case .. ": a 1 MB name, the constraint", named.features, FITS)
  local said = "fabricplace: job \"" .. string.rep("n", 64) .. "\"... (1048576 bytes): 32 nodes"
  eq(case .. ": the name's excerpt", string.sub(log.latest, 1, #said), said)
  local own = tp_job("own", { features = mb, partition = "all" })
  submit(case, entry, own, parts)
  eq(case .. ": a 1 MB -C kept", own.features, mb)
  eq(case .. ": -C said short", log.latest, "fabricplace: job own has its own constraint \"" ..
     string.rep("n", 64) .. "\"... (1048576 bytes); left alone")
  local pin = { name = "pin", spank_job_env = { [0] = "FABRICPLACE_NODES=" .. mb } }
  submit(case, entry, pin, parts)
  eq(case .. ": a 1 MB pin is the node list", pin.req_nodes, mb)
  eq(case .. ": the pin said short", #log.latest < 400, true)
  local digits = tp_job("digits", { partition = "all", spank_job_env = {
    [0] = "FABRICPLACE_TP=" .. string.rep("9", 100000), [1] = "FABRICPLACE_GPUS_PER_NODE=8" } })
  submit(case, entry, digits, parts)
  eq(case .. ": a TP of 100,000 digits: none", digits.features, nil)
  cpu_ok(case)
  check(case .. ": short log lines", log.longest < 400, log.longest .. " bytes")
  check(case .. ": short messages to the user", told.longest < 400, told.longest .. " bytes")
  eq(case .. ": no internal error", matches["internal error"] - errors0, 0)
  print(string.format("%s: %.4f s CPU per submission at most, longest log line %d bytes (%d before)",
                      case, worst[case], log.longest, longest0))
end

-- 8. A broken fabric.lua: read once, then again only when the file changes or
-- M.RETRY_SECONDS passed (os.time is the test's), never at every submission. Small tables
-- (4 leaves of 4 hosts), a fresh copy of the script each time (its own state).
local small_parts = { all = { nodes = "node[00001-00016]", flag_default = 1 } }
local function small_job(name)
  return { name = name, min_nodes = 4,
           spank_job_env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8" } }
end
local real_time, now = os.time, 1000000
os.time = function(t) if t then return real_time(t) end return now end
local function broken_case(case, first_text, steps)
  local S, sentry = load_script()
  S.FABRIC_TABLE = os.tmpname()
  if first_text then put(S.FABRIC_TABLE, first_text) else os.remove(S.FABRIC_TABLE) end
  slurm.jobs = {}
  local c0, d0 = matches["cannot load"], matches["does not load"]
  local function tries() return matches["cannot load"] - c0 + matches["does not load"] - d0 end
  steps(S, function(n, name)
    local j
    for _ = 1, n do j = small_job(name or "b"); submit(case, sentry, j, small_parts) end
    return j
  end, tries)
  cpu_ok(case)
  os.remove(S.FABRIC_TABLE)
end
local ONE_LEAF = "[p01-leaf01|p01-leaf02|p01-leaf03|p01-leaf04]"

broken_case("broken table, no generation line", "return {", function(S, run, tries)
  local j = run(1000)
  eq("no generation line: no constraint", j.features, nil)
  eq("no generation line: read once in 1,000 submissions", tries(), 1)
  now = now + (S.RETRY_SECONDS or 60)
  run(10)
  eq("no generation line: read again after RETRY_SECONDS", tries(), 2)
  put(S.FABRIC_TABLE, table_text(nil, 16, 4))
  eq("fixed in place (another size): read at the next submission", run(1).features, ONE_LEAF)
end)

broken_case("leaves without hosts", "return { version = 1, leaves = { { name = \"a\", pod = 0 } } }",
            function(S, run, tries)
  local errors0 = matches["internal error"]
  run(1000)
  eq("leaves without hosts: read once, said once", tries(), 1)
  eq("leaves without hosts: no internal error", matches["internal error"] - errors0, 0)
  eq("leaves without hosts: the reason", string.find(log.latest, "leaf 1: expected", 1, true) ~= nil,
     true)
end)

broken_case("broken table of a generation", "-- fabricplace generation: 00000000000000aa\nreturn {",
            function(S, run, tries)
  run(1000)
  eq("broken generation: read once", tries(), 1)
  put(S.FABRIC_TABLE, "-- fabricplace generation: 00000000000000bb\nreturn {")
  run(1000)
  eq("another broken generation: read once more", tries(), 2)
  put(S.FABRIC_TABLE, table_text("00000000000000cc", 16, 4))
  eq("a sync's table: read at the next submission", run(1).features, ONE_LEAF)
end)

broken_case("a table that fails after a generation change", table_text("00000000000000aa", 16, 4),
            function(S, run, tries)
  eq("generation aa: loaded", run(1).features, ONE_LEAF)
  local whole = table_text("00000000000000bb", 16, 4)
  put(S.FABRIC_TABLE, string.sub(whole, 1, #whole - 200))  -- a copy still under way
  eq("a half-copied bb: the aa table stays", run(1000).features, ONE_LEAF)
  eq("a half-copied bb: read once", tries(), 1)
  put(S.FABRIC_TABLE, whole)
  eq("bb copied whole: the constraint", run(1).features, ONE_LEAF)
  eq("bb copied whole: reloaded at the next submission", log.latest,
     "fabricplace: job b: 4 nodes, TP groups of 2 nodes: features=" .. ONE_LEAF)
  eq("bb: said", matches["replaced by"] > 0, true)
end)

broken_case("a table that vanishes", table_text("00000000000000aa", 16, 4), function(S, run, tries)
  eq("loaded", run(1).features, ONE_LEAF)
  os.remove(S.FABRIC_TABLE)
  eq("vanished: the loaded table stays", run(1000).features, ONE_LEAF)
  eq("vanished: nothing tried", tries(), 0)
end)

broken_case("no table at the start", nil, function(S, run, tries)
  run(1000)
  eq("missing: tried once", tries(), 1)
  put(S.FABRIC_TABLE, table_text("00000000000000aa", 16, 4))
  eq("written by a sync: used at the next submission", run(1).features, ONE_LEAF)
end)
os.time = real_time

-- The whole run: the heap where it started, give or take the caches' bound.
local grown = heap() - base
check("the heap at the end", grown < HEAP_GROWTH, string.format("%.0f KB more", grown))
print(string.format("heap at the end: %.0f KB (%.0f KB after the warm submission)", base + grown,
                    base))

if failures > 0 then
  print(failures .. " failed")
  os.exit(1)
end
print("ok")
