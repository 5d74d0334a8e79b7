// SPDX-License-Identifier: GPL-2.0-or-later
// Live fabric discovery through libibnetdisc (and libibmad for port counters), in process:
// never by running ibnetdiscover or perfquery. Produces the same Fabric as every other source.
//
// Completeness: libibnetdisc returns success with a partial fabric when MADs are lost. After
// every discovery the result is checked from the fabric itself (a port whose PortInfo says
// the link is up but whose peer was never discovered; a switch without PortInfo for some of
// its ports; a node without a description) and against expectations (a host count, the
// switches of a previous discovery). An incomplete discovery is retried; if it stays
// incomplete, discover() fails and names what is missing, unless allow_partial is set, in
// which case the fabric records it (Topology::incomplete) so it is never silently partial.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/health.hpp"

namespace fabricplace::fabric::ibnd {

/// SMPs kept in flight. libibnetdisc's default is 2; on ibsim 16 discovers a 2k-HCA fabric
/// 4.7x and an 8k-HCA fabric 3.5x as fast, and 64 adds only 7-20 % more
/// (docs/performance.md), so 16 takes nearly all the gain while staying gentle on the SMAs
/// of real switches, which answer SMPs on a slow management CPU.
inline constexpr unsigned kDefaultMaxSmps = 16;

struct DiscoverOptions {
  std::string ca;  ///< CA to discover from (empty: the first one)
  int port = 0;    ///< its port (0: the first active one)
  unsigned max_smps = kDefaultMaxSmps;
  unsigned timeout_ms = 0;  ///< per MAD; 0 = libibnetdisc's default
  unsigned retries = 0;     ///< per MAD; 0 = libibnetdisc's default
  unsigned attempts = 3;    ///< whole discoveries tried until one is complete
  std::optional<std::size_t> expect_hosts;
  const Fabric* previous = nullptr;  ///< marks lost links; its switches are expected
  bool counters = false;             ///< read PortCounters of every linked port (needs LIDs)
  HealthThresholds thresholds = HealthThresholds::defaults();
  bool allow_partial = false;
};

struct DiscoverReport {
  unsigned attempts = 0;
  unsigned mads = 0;   ///< SMPs the last discovery used (libibnetdisc's count)
  double seconds = 0;  ///< wall time of the last discovery (without counters)
  std::size_t counters_read = 0;
  std::vector<std::string> missing;  ///< what the last attempt could not see
};

Result<Fabric> discover(const DiscoverOptions& options, DiscoverReport* report = nullptr);

}  // namespace fabricplace::fabric::ibnd
