// SPDX-License-Identifier: GPL-2.0-or-later
// Running jobs as placement reads them: each job's id and its hosts in rank (ring) order.
// The bandwidth objective (docs/placement.md) loads their rings on the route model in force
// (placement::Traffic) so a new job avoids the links they use.
//
// Formats (one reader for `place --running`, `--from-slurm` and `rankfile --running`):
// - JSON: an object of job id to its hosts in rank order, each a host name or a Slurm
//   hostlist expression: {"4711": ["node041", "node042"], "4712": ["node[050-057]"]}.
// - squeue: saved `squeue -h -t R -o '%i %N'` output, one "id hostlist" per line; a job's
//   hosts are in Slurm's (hostlist) order, which is its rank order under the default
//   block distribution.
// - rings: one hostlist per line (the older `rankfile --running` format); the jobs are
//   numbered by line.
// Blank lines and '#' comments are skipped in the line formats.
//
// Contract
// - Hosts the fabric lacks are dropped from their job with one warning per job (a running
//   job on hosts outside the fabric still loads the rest); a job left with no host is
//   dropped with a warning. A host named twice in one job is an error (also inside one
//   hostlist expression: "n[1-2],n1"); a host in two jobs is a warning (the later job keeps
//   it: Slurm can share nodes, our simulation cannot). A job id named twice is an error.
// - Job ids: the squeue format's are Slurm's (`4711`, `4711_3` array task, `4711+1` het
//   component); a JSON key is any text of at most 128 bytes without blanks, control or
//   invisible characters; a ring's is its line number.
// - Errors name the file, the line and what was expected; warnings name the file and the
//   job's line, the first 20 in full, then one line counting the rest.
// - Bounded (common/limits): all jobs together name at most FABRICPLACE_MAX_HOSTLIST hosts
//   (counted as each hostlist is expanded, so a file of many huge hostlists stops at the
//   line that passes it), each expression is bounded as hostlist::expand bounds it, and the
//   JSON reader builds no document tree and refuses any container where a host belongs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::placement {

struct RunningJob {
  std::string id;                     ///< as the source names it
  std::vector<fabric::HostId> hosts;  ///< rank (ring) order
  int line = 0;                       ///< the 1-based line naming the job, for messages
};

struct RunningJobs {
  std::vector<RunningJob> jobs;
  std::vector<std::string> warnings;
};

/// A JSON object job id -> [host or hostlist, ...].
Result<RunningJobs> running_from_json(const fabric::Fabric& f, std::string_view text,
                                      const std::string& file);
/// `squeue -h -t R -o '%i %N'` output ("id hostlist" per line) or the rings format (one
/// hostlist per line), told apart line by line by the number of fields.
Result<RunningJobs> running_from_lines(const fabric::Fabric& f, std::string_view text,
                                       const std::string& file);
/// Either, by the first non-blank character ('{' is JSON).
Result<RunningJobs> parse_running(const fabric::Fabric& f, std::string_view text,
                                  const std::string& file);

/// The flow salt of a running job (ecmp hashes it): its id when that is a number (a Slurm
/// job id; a ring's line in the rings format), else a hash of it (FNV-1a); never 0 (the job
/// being placed salts with 0 unless told otherwise).
std::uint64_t running_salt(const RunningJob& job);

}  // namespace fabricplace::placement
