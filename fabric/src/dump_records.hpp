// SPDX-License-Identifier: GPL-2.0-or-later
// Internal: what the ibnetdiscover parsers extract, before cross-checking.
#pragma once

#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric::detail {

struct DumpNode {
  NodeRecord rec;
  int line = 0;
};

struct DumpPort {
  Guid node = 0;
  PortRecord rec;
  bool has_peer = false;
  Guid peer = 0;
  PortNum peer_port = 0;
  NodeType peer_type = NodeType::kSwitch;
  LinkRate rate;
  int line = 0;
};

struct DumpRecords {
  std::vector<DumpNode> nodes;  // unique GUIDs
  std::vector<DumpPort> ports;  // unique (node, port)
};

/// Cross-checks every peer reference (defined, right type, links back) and feeds the
/// builder. Errors name `file` and the line of the referring port.
Result<void> resolve_dump(const DumpRecords& records, const std::string& file,
                          FabricBuilder& builder);

}  // namespace fabricplace::fabric::detail
