// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace-spank(8), from the tables the plugin registers and parses with (options.cpp,
// config.cpp): the manual page and `sbatch --help` cannot disagree.
#include "config.hpp"
#include "fabricplace/common/strings.hpp"
#include "options.hpp"

namespace fabricplace::plugin {

std::string spank_man_page(const std::string& version, const std::string& slurm_series) {
  using str::roff;
  std::string o = ".TH FABRICPLACE\\-SPANK 8 \"\" \"fabricplace " + roff(version) +
                  "\" \"fabricplace manual\"\n";
  o += ".SH NAME\nfabricplace\\-spank \\- fabricplace.so, fabricplace's SPANK plugin for Slurm: "
       "tensor\\-parallel groups inside leaf switches, ranks in the fabric ring order\n";
  o += ".SH SYNOPSIS\n.B optional\n.I /path/to/fabricplace.so\n";
  for (const auto& a : plugstack_arg_docs())
    o += "[\\fB" + roff(a.key) + "\\fR=\\fI" + roff(a.value) + "\\fR]\n";
  o += ".PP\nin \\fBplugstack.conf\\fR(5) or a file of /etc/slurm/plugstack.conf.d/.\n";
  o += ".SH DESCRIPTION\n" +
       roff(
           "The plugin adds the options below to sbatch, salloc and srun. This build loads "
           "only on Slurm " +
           slurm_series +
           ".x: Slurm refuses a SPANK plugin built for another major.minor (an `optional` "
           "one is then left out, its options unknown); `fabricplace slurm check` says which "
           "one is installed and loads it as Slurm would.") +
       "\n.PP\n" +
       roff(
           "It never breaks a launch: a missing or unreadable file, a host the fabric lacks, "
           "an internal error is one message in Slurm's log (and log=), and the job runs in "
           "Slurm's own order. Only an invalid option value fails, at once.") +
       "\n";
  o += ".SH OPTIONS\n";
  for (const auto& d : option_docs()) {
    o += ".TP\n\\fB\\-\\-" + roff(option_name(d.which)) + "\\fR=\\fI" + roff(d.arg) + "\\fR\n";
    o += roff(d.usage) + "\n.IP\n" + roff(d.more) + "\n";
  }
  o += ".SH PLUGSTACK.CONF ARGUMENTS\n";
  for (const auto& a : plugstack_arg_docs())
    o += ".TP\n\\fB" + roff(a.key) + "\\fR=\\fI" + roff(a.value) + "\\fR\n" + roff(a.usage) + "\n";
  o += ".SH ENVIRONMENT\n";
  for (const auto& [name, what] : std::initializer_list<std::pair<const char*, const char*>>{
           {"FABRICPLACE_RING_RANK", "the task's rank in the fabric ring (srun --fabric-tp)"},
           {"FABRICPLACE_RING_SIZE", "the ring's size"},
           {"FABRICPLACE_TP_GROUP", "the task's tensor-parallel group"},
           {"FABRICPLACE_TP_RANK", "its rank within the group"},
           {"FABRICPLACE_GPU", "the task's GPU (with hwloc_xml=)"},
           {"NCCL_IB_HCA", "the HCA nearest that GPU (with hwloc_xml=; a user's own wins)"}})
    o += ".TP\n\\fB" + roff(name) + "\\fR\n" + roff(what) + "\n";
  o += ".SH FILES\n";
  for (const auto& [name, what] : std::initializer_list<std::pair<const char*, const char*>>{
           {"/etc/slurm/plugstack.conf.d/fabricplace.conf", "the plugin's line"},
           {"/etc/slurm/fabric.json, /etc/slurm/fabric.hostmap, /etc/slurm/fabric.lua",
            "the fabric, its host map and job_submit.lua's table, written by `fabricplace "
            "slurm sync --out /etc/slurm`"},
           {"/usr/share/fabricplace/slurm/job_submit.lua",
            "constrain mode's job_submit.lua (JobSubmitPlugins=lua)"},
           {"/usr/share/fabricplace/slurm/cli_filter.lua",
            "topology/block's cli_filter.lua (CliFilterPlugins=lua)"}})
    o += ".TP\n" + roff(name) + "\n" + roff(what) + "\n";
  o += ".SH SEE ALSO\n\\fBfabricplace\\fR(1), \\fBfabricplace\\-slurm\\-sync\\fR(1), "
       "\\fBfabricplace\\-slurm\\-check\\fR(1), \\fBsbatch\\fR(1), \\fBsrun\\fR(1), "
       "\\fBspank\\fR(7)\n";
  return o;
}

}  // namespace fabricplace::plugin
