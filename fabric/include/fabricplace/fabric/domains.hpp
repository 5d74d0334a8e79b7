// SPDX-License-Identifier: GPL-2.0-or-later
// Accelerator (NVLink) domains from nvidia-smi, collected from every node into one file
// (docs/sources.md, "Accelerator domains").
//
//   pdsh -w 'gpu[001-072]' nvidia-smi --query-gpu=index,fabric.clusterUuid,fabric.cliqueId
//        --format=csv,noheader > domains.txt
//
// Each line is "HOST: INDEX, CLUSTER_UUID, CLIQUE_ID" (pdsh's and clush's prefix); the
// two-field query topograph runs ("HOST: CLUSTER_UUID, CLIQUE_ID") reads too, and nvidia-smi's
// header line ("HOST: index, fabric.cluster_uuid, fabric.clique_id", --format=csv) is
// skipped. A host's domain is ClusterUUID.CliqueId (topograph's form, the GPU Operator's
// nvidia.com/gpu.clique label); its GPU count is its rows. A GPU that reports N/A, or the
// all-zero UUID (not registered with the fabric manager), is in no domain.
//
// Errors name the file and the line: a host whose GPUs are in two domains, or in one and
// none; a domain whose hosts have different GPU counts; a GPU listed twice; a host not in the
// fabric; a line of another shape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

/// A host's domain as a source states it.
struct DomainMember {
  std::string host;
  std::string domain;  ///< empty: the host's GPUs are in no domain
  std::uint32_t gpus = 0;
  int line = 0;  ///< the host's first line
};

/// Reads collected nvidia-smi output (the format above). One entry per host, in file order.
Result<std::vector<DomainMember>> read_nvidia_smi_domains(std::string_view text,
                                                          const std::string& file);

/// `f` with its domains replaced by `members` (hosts with an empty domain are in none).
/// Every host must be in `f` (an error names `file` and the host's line). The origin
/// says where the domains came from.
Result<Fabric> with_domains(const Fabric& f, const std::vector<DomainMember>& members,
                            const std::string& file);

/// Reads the domains file at `path` (bounded, like every input) and applies it to `f`.
Result<Fabric> load_domains(const Fabric& f, const std::string& path);

}  // namespace fabricplace::fabric
