-- SPDX-License-Identifier: GPL-2.0-or-later
--[[
fabricplace cli_filter.lua: on a topology/block cluster, gives a --fabric-tp job the
--segment of its TP groups (CliFilterPlugins=lua; Slurm reads this file from the directory
of slurm.conf, in sbatch, salloc and srun, on every submitting host).

Why a cli_filter: topology/block keeps a segment of S nodes inside one base block (a leaf),
which is exactly "every TP group inside one leaf", but from Slurm 24.05 to 25.11.1 nothing
on the controller's side can set it: job_submit.lua has no segment_size field before
25.11.2; SBATCH_SEGMENT_SIZE (25.05.1+) is read before the options, so before the plugin
knows the TP group; and a SPANK plugin cannot set another option. A cli_filter can: its
pre_submit runs after every option is parsed (the plugin's callbacks included) and before
the job is built.

The SPANK plugin (plugstack.conf `topology=block`) does the arithmetic, with the fabric
and the job's shape at hand, and leaves the answer in its own process's environment:
FABRICPLACE_SEGMENT=g, the nodes of one TP group, only when a segment can be honoured
(the job is whole groups of g, g fits the base block, constrain mode; docs/slurm.md,
"--fabric-tp on topology/block"). This script only applies it, and only when the job
asked for no segment of its own. On Slurm without --segment (before 24.05) the plugin
never sets the variable and this script does nothing.
]]

local M = {}

-- The segment to give the job, or nil: `options` as cli_filter/lua passes it (reading
-- options.segment returns "unset" when the job has none; nil where Slurm has no --segment),
-- `env` the plugin's answer (FABRICPLACE_SEGMENT).
function M.segment(options, env)
  if env == nil or env == "" then return nil end
  local g = tonumber(env)
  if g == nil or g ~= math.floor(g) or g < 2 or g > 65533 then return nil end
  local cur = options.segment
  if cur == nil then return nil end                    -- no --segment in this Slurm
  if cur ~= "unset" and cur ~= "" and cur ~= "0" then return nil end  -- the job's own
  return g
end

function M.pre_submit(options, offset)
  if offset ~= nil and offset > 0 then return end  -- a heterogeneous job's later component
  local g = M.segment(options, os.getenv("FABRICPLACE_SEGMENT"))
  if g == nil then return end
  options.segment = tostring(g)
  if slurm and slurm.log_verbose then
    slurm.log_verbose("fabricplace: --segment=%d (groups of %d nodes, topology/block)", g, g)
  end
end

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
  -- Never fail a submission: fabricplace only steers.
  local ok, err = pcall(M.pre_submit, options, offset)
  if not ok and slurm and slurm.log_error then
    slurm.log_error("fabricplace cli_filter: %s; the job is submitted as it is", tostring(err))
  end
  return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
  return slurm.SUCCESS
end

if slurm == nil then return M end  -- loaded by tests (lua etc/cli_filter.lua)
return slurm.SUCCESS
