// SPDX-License-Identifier: GPL-2.0-or-later
// plugstack.conf arguments of the SPANK plugin: parsed by ops (fabricplace/ops/plugstack.hpp),
// the one parser `slurm sync` checks its line with too; the manual page is the plugin's.
#pragma once

#include <string>

#include "fabricplace/ops/plugstack.hpp"

namespace fabricplace::plugin {

using ops::ArgDoc;
using ops::parse_plugin_args;
using ops::plugstack_arg_docs;
using ops::PluginConfig;

/// fabricplace-spank(8), in roff: the job options (option_docs()) and plugstack.conf
/// arguments (plugstack_arg_docs()), written at build time (plugin/src/man_main.cpp).
std::string spank_man_page(const std::string& version, const std::string& slurm_series);

}  // namespace fabricplace::plugin
