// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace trace generate: writes a synthetic trace (sim/synthetic.hpp) as an SWF log that
// `simulate --trace` reads back as the same jobs (docs/simulator.md, "A synthetic LLM-heavy
// trace").
//
// Exit status: 0 written, 1 an output that could not be written, 2 a bad spec or option.
#include <algorithm>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fabricplace/sim/synthetic.hpp"

namespace fabricplace::cli {

void add_trace_commands(CLI::App& app, RunFn& run) {
  auto* trace = app.add_subcommand("trace", "synthetic job traces for the simulator");
  trace->require_subcommand(1);
  struct Opts {
    std::string spec;
    std::string out = "-";
    std::uint32_t gpus_per_node = 8;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = trace->add_subcommand(
      "generate", "generate a trace from a spec; write it as an SWF log (simulate reads it back)");
  cmd->add_option("spec", o->spec, "e.g. llm:jobs=2000,seed=1,load=0.8,hosts=800")->required();
  add_output_option(cmd, o->out, "output file ('-' = stdout)");
  cmd->add_option("--gpus-per-node", o->gpus_per_node,
                  "GPUs per node (the file counts GPUs: simulate it with the same value)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_flag("-q,--quiet", o->quiet, "no summary on stderr");
  cmd->footer("Spec keys and defaults:\n" + sim::llm_spec_help());
  cmd->callback([&run, o] {
    run = [o] {
      sim::TraceOptions topt;
      topt.gpus_per_node = o->gpus_per_node;
      auto t = sim::generate_trace(o->spec, topt);
      if (!t) return report(t.error());
      std::vector<std::string> header{
          "Version: 2.2",
          "Computer: synthetic (fabricplace trace generate)",
          "Note: generated with " + std::to_string(o->gpus_per_node) +
              " GPUs per node; processors are GPUs (simulate it with --gpus-per-node " +
              std::to_string(o->gpus_per_node) + " --swf-procs-per-gpu 1)",
          "MaxJobs: " + std::to_string(t->jobs.size()),
          "MaxRecords: " + std::to_string(t->jobs.size()),
      };
      // SWF has a field for neither TP nor EP: simulate reads the TP size back from the GPUs
      // (the largest that tiles), but the MoE jobs' EP groups are lost. Said, in the file
      // and on stderr.
      const auto moe = std::count_if(t->jobs.begin(), t->jobs.end(),
                                     [](const auto& j) { return j.shape.ep > 0; });
      if (moe > 0)
        t->notes.push_back(std::to_string(moe) +
                           " MoE job(s) have EP groups, which SWF cannot hold: the file "
                           "simulates them without; simulate the spec itself (--trace '" +
                           o->spec + "') to keep them");
      for (const auto& n : t->notes) header.push_back("Note: " + n);
      const int rc = write_output(o->out, sim::to_swf(*t, header));
      if (rc == kExitOk && !o->quiet)
        for (const auto& n : t->notes) std::cerr << "trace: " << n << "\n";
      return rc;
    };
  });
}

}  // namespace fabricplace::cli
