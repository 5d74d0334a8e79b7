// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_running: placement::parse_running (`place --running`, `rankfile --running`, the
// plugin's running jobs), and running_from_lines and running_from_json whatever the input's
// first character, on tests/data/fabrics/fat2_L8.ibnetdiscover.txt (node001..node160).
// Every result: each job has at least one host, no host twice in a job or in two jobs, ids
// not empty and distinct, jobs in the order of their lines; at most 21 warnings, each a
// message fit for a terminal (as errors are).
#include <set>
#include <string>

#include "fabricplace/placement/running.hpp"
#include "fixed_fabric.hpp"

namespace {

void check(const fabricplace::fabric::Fabric& f,
           const fabricplace::Result<fabricplace::placement::RunningJobs>& r) {
  using namespace fabricplace;
  if (!r) {
    fuzz::check_error(r.error());
    return;
  }
  std::vector<bool> seen(f.num_hosts(), false);
  std::set<std::string> ids;
  int line = 0;
  for (const auto& job : r->jobs) {
    fuzz::require(!job.hosts.empty(), "running: a job without hosts", job.id);
    fuzz::require(!job.id.empty(), "running: a job without an id");
    fuzz::require(ids.insert(job.id).second, "running: a job id twice", job.id);
    fuzz::require(job.line >= 1 && job.line >= line, "running: jobs out of line order", job.id);
    line = job.line;
    for (auto h : job.hosts) {
      fuzz::require(fabric::idx(h) < f.num_hosts(), "running: a host outside the fabric");
      fuzz::require(!seen[fabric::idx(h)], "running: a host twice", f.host(h).name);
      seen[fabric::idx(h)] = true;
    }
  }
  fuzz::require(r->warnings.size() <= 21, "running: more than 21 warnings");
  for (const auto& w : r->warnings) fuzz::check_error(Error{ErrorCode::kSyntax, w, {}, 0});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  static const auto f = fuzz::load_fixed("fabrics/fat2_L8.ibnetdiscover.txt");
  const auto text = fuzz::text_of(data, size);
  check(f, placement::parse_running(f, text, "running"));
  check(f, placement::running_from_lines(f, text, "squeue"));
  check(f, placement::running_from_json(f, text, "running.json"));
  return 0;
}
