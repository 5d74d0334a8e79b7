-- SPDX-License-Identifier: GPL-2.0-or-later
-- lua5.1 bench/job_submit_lua.lua etc/job_submit.lua FABRIC.lua: the cost of one --fabric-tp
-- submission in etc/job_submit.lua (it runs under slurmctld's locks), with N running 2-node
-- jobs and M pending ones, on the fabric table of `fabric export --format lua`
-- (docs/performance.md uses the 16,384-host fat-tree of bench_placement).
local M = dofile(arg[1])
M.FABRIC_TABLE = arg[2]
local f = M.load_fabric(arg[2])
local hosts = {}
for _, leaf in ipairs(f.leaves) do for _, h in ipairs(leaf.hosts) do hosts[#hosts + 1] = h end end
local function run(nrun, npend, partition, parts)
  local jobs = {}
  -- running jobs of 2 nodes each, as compressed lists "nodeXXXXX,nodeYYYYY"
  for i = 1, nrun do
    local a, b = hosts[(2 * i - 1) % #hosts + 1], hosts[(2 * i) % #hosts + 1]
    jobs[i] = { job_state = 1, nodes = a .. "," .. b }
  end
  for i = nrun + 1, nrun + npend do jobs[i] = { job_state = 0 } end
  local job = function() return { name = "b", min_nodes = 4, partition = partition, spank_job_env = { [0] = "FABRICPLACE_TP=16", [1] = "FABRICPLACE_GPUS_PER_NODE=8" } } end
  M.submit(job(), jobs, parts)  -- warm (loads the table, fills the caches)
  local t0 = os.clock()
  local n = 20
  for _ = 1, n do M.submit(job(), jobs, parts) end
  return (os.clock() - t0) / n * 1000
end
for _, c in ipairs({ {100, 1000}, {2000, 10000}, {8000, 20000} }) do
  io.write(string.format("%d running, %d pending: %.1f ms per submission\n", c[1], c[2], run(c[1], c[2])))
end
-- A hostile -p list: one partition of every host, named 10,000 times (de-duplicated; its
-- expansion cached).
local all = {}
for i = 1, 10000 do all[i] = "all" end
local parts = { all = { nodes = table.concat(hosts, ","), flag_default = 1 } }
io.write(string.format("2000 running, -p all x 10,000: %.1f ms per submission\n",
                       run(2000, 0, table.concat(all, ","), parts)))
