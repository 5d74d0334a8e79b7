-- SPDX-License-Identifier: GPL-2.0-or-later
-- Unit tests of etc/cli_filter.lua under Lua 5.1: lua5.1 tests/plugin/test_cli_filter.lua
-- ETC_CLI_FILTER_LUA. The end-to-end behaviour inside sbatch is tests/slurm/plugin_block.sh.
local M = dofile(arg[1])
local failures = 0
local function eq(what, got, want)
  if got ~= want then
    failures = failures + 1
    print(string.format("FAIL %s: got %s, want %s", what, tostring(got), tostring(want)))
  end
end

-- options.segment reads "unset" when the job has none (slurm_opt.c's arg_get_segment_size),
-- nil in a Slurm without --segment.
eq("the plugin's segment", M.segment({ segment = "unset" }, "2"), 2)
eq("no answer from the plugin", M.segment({ segment = "unset" }, nil), nil)
eq("an empty answer", M.segment({ segment = "unset" }, ""), nil)
eq("the job's own segment wins", M.segment({ segment = "3" }, "2"), nil)
eq("a Slurm without --segment", M.segment({}, "2"), nil)
eq("a segment of 1 is no segment", M.segment({ segment = "unset" }, "1"), nil)
eq("garbage is ignored", M.segment({ segment = "unset" }, "2x"), nil)
eq("a fraction is ignored", M.segment({ segment = "unset" }, "2.5"), nil)
eq("over uint16 is ignored", M.segment({ segment = "unset" }, "70000"), nil)

-- pre_submit sets the option, and only for the first component of a heterogeneous job.
local saved = os.getenv
os.getenv = function(name) if name == "FABRICPLACE_SEGMENT" then return "4" end return saved(name) end
local o = { segment = "unset" }
M.pre_submit(o, 0)
eq("pre_submit sets --segment", o.segment, "4")
local het = { segment = "unset" }
M.pre_submit(het, 1)
eq("a later component is left alone", het.segment, "unset")
local own = { segment = "8" }
M.pre_submit(own, 0)
eq("the job's own is kept", own.segment, "8")
os.getenv = saved

if failures > 0 then os.exit(1) end
print("ok")
