// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/traffic.hpp"

namespace fabricplace::sim {

using fabric::HostId;
using fabric::idx;
using routes::DirLink;
using routes::Load;

std::string SimPolicy::name() const {
  return std::string(policies::to_string(placement));
}

Result<std::vector<SimPolicy>> parse_sim_policies(std::string_view list) {
  std::vector<SimPolicy> out;
  for (auto part : str::split(list, ',')) {
    auto name = str::trim(part);
    if (name == "fabric+routes")
      return fail(ErrorCode::kUsage,
                  "policy 'fabric+routes' is now 'fabric': the fabric policy always orders its "
                  "ring on the routes");
    auto pol = policies::parse_policy(name);
    if (!pol) {
      return fail(ErrorCode::kUsage, "unknown policy '" + std::string(name) + "': expected " +
                                         policies::policy_choices());
    }
    SimPolicy p;
    p.placement = *pol;
    for (const auto& q : out) {
      if (q.name() == p.name()) {
        return fail(ErrorCode::kUsage, "policy '" + p.name() + "' given twice");
      }
    }
    out.push_back(p);
  }
  if (out.empty()) return fail(ErrorCode::kUsage, "no policy given");
  return out;
}

Simulator::Simulator(const policies::Planner& planner, SimOptions opt)
    : f_(*planner.context().fabric), routes_(planner.routes()), planner_(planner), opt_(opt) {
  const auto& cap = planner.context().capacity;
  for (routes::DirLink d = 0; d < cap.interswitch.size(); ++d)
    if (cap.interswitch[d]) interswitch_list_.push_back(d);
  for (const auto& hosts : planner.context().blocks.hosts) {
    max_block_ = std::max<std::uint32_t>(max_block_, static_cast<std::uint32_t>(hosts.size()));
  }
}

std::vector<std::uint8_t> Simulator::unplaceable(const Trace& t, const SimPolicy& p) const {
  const auto empty = placement::all_free(f_);
  std::vector<std::uint8_t> out(t.jobs.size(), 0);
  // Shapes repeat: decide each (nodes, GPUs per node, tp) once.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, bool> seen;
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& s = t.jobs[i].shape;
    auto key = std::make_tuple(s.nodes, s.gpus_per_node, s.tp);
    auto it = seen.find(key);
    if (it == seen.end()) {
      // The trace readers built the shape (JobShape::make): it is valid as it stands.
      bool ok = s.nodes <= f_.num_hosts() &&
                planner_.place(placement::request(s), empty, p.placement).feasible;
      it = seen.emplace(key, ok).first;
    }
    out[i] = it->second ? 0 : 1;
  }
  return out;
}

namespace {

struct Active {
  std::uint32_t job = 0;
  double work_left = 0;   ///< nominal seconds still to run
  double last = 0;        ///< when work_left was last brought up to date
  double rate = 1;        ///< nominal seconds per second
  double slowdown = 1;    ///< current communication slowdown s
  double s_integral = 0;  ///< integral of s over the run so far
  double expected_end = 0;
  std::uint64_t version = 0;  ///< of its finish event; never reset (slots are reused)
  bool scheduled = false;     ///< has a finish event
  /// Its ring in the traffic (placement::Traffic handle); kNone: a one-node job.
  std::uint32_t traffic = fabric::kNone;
};

struct Event {
  double time;
  std::uint64_t seq;
  std::uint32_t slot;  ///< index into the active table
  std::uint64_t version;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

}  // namespace

Run Simulator::run(const Trace& t, const SimPolicy& p, const std::vector<std::uint8_t>& skip,
                   const Progress& progress) const {
  Run run;
  run.policy = p;
  run.routes = routes_.label();
  run.thin_tier = placement::thinnest_tier(planner_.context());
  run.domains = f_.domains().size();
  run.jobs.resize(t.jobs.size());
  const std::size_t n_jobs = t.jobs.size();
  const double f = opt_.comm_fraction;

  auto states = placement::all_free(f_);
  std::size_t free_count = f_.num_hosts();
  const auto& cap = planner_.context().capacity;
  placement::Traffic traffic(routes_, cap, &planner_.context().groups);
  const auto flows = traffic.load();
  run.link_peak.assign(flows.size(), 0);

  std::vector<Active> active;  // slots; reused
  std::vector<std::uint32_t> free_slots;
  std::vector<std::uint32_t> multi;                 // slots of running multi-node jobs
  std::set<std::pair<double, std::uint32_t>> ends;  // (expected end, slot) for reservations
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0;

  std::vector<std::uint32_t> queue;  // waiting jobs, FCFS (submit order)
  std::size_t qhead = 0;
  std::vector<std::uint8_t> started(n_jobs, 0);

  std::size_t next = 0, done = 0, total = 0;
  for (std::size_t i = 0; i < n_jobs; ++i) total += skip.empty() || !skip[i];
  run.dropped = n_jobs - total;
  bool first = true;
  std::size_t progress_step = std::max<std::size_t>(total / 100, 1);

  auto schedule_finish = [&](std::uint32_t slot) {
    auto& a = active[slot];
    ++a.version;
    a.scheduled = true;
    events.push({std::max(a.last, a.last + a.work_left / a.rate), seq++, slot, a.version});
  };

  // Brings every running multi-node job's rate up to date at time `now`.
  auto update_rates = [&](double now) {
    for (std::uint32_t slot : multi) {
      auto& a = active[slot];
      Load worst = 0;
      for (const auto& [d, own] : traffic.links(a.traffic))
        if (cap.interswitch[d]) worst = std::max(worst, flows[d]);
      const double s = traffic.slowdown(a.traffic);
      auto& out = run.jobs[a.job];
      out.max_link_load = std::max(out.max_link_load, routes::edges(worst));
      out.worst_comm_slowdown = std::max(out.worst_comm_slowdown, s);
      if (s == a.slowdown && a.scheduled) continue;
      a.work_left -= (now - a.last) * a.rate;
      a.s_integral += (now - a.last) * a.slowdown;
      a.work_left = std::max(a.work_left, 0.0);
      a.last = now;
      a.slowdown = s;
      a.rate = 1.0 / ((1.0 - f) + f * s);
      schedule_finish(slot);
    }
  };

  // While a reservation holds, `masked` is `states` with the head's reserved hosts busy.
  placement::NodeStates masked;
  bool masking = false;
  auto request = [&](std::uint32_t j) {
    auto req = placement::request(t.jobs[j].shape);
    req.salt = j + 1;  // tells its flows apart (ecmp)
    req.runner_up = false;
    return req;
  };

  // Places job j on the hosts `view` calls free and starts it.
  // Busy hosts per NVLink domain, and how many domains are fragmented (some busy, some free).
  std::vector<std::uint32_t> dom_busy(f_.domains().size(), 0);
  std::uint32_t fragmented = 0;
  double frag_since = 0;
  auto occupy = [&](HostId h, bool busy) {
    const auto d = f_.domain_of(h);
    if (d == fabric::kNone) return;
    const auto size = static_cast<std::uint32_t>(f_.domains()[d].hosts.size());
    auto frag = [&](std::uint32_t b) { return b > 0 && b < size; };
    const bool was = frag(dom_busy[d]);
    dom_busy[d] = busy ? dom_busy[d] + 1 : dom_busy[d] - 1;
    const bool is = frag(dom_busy[d]);
    fragmented = fragmented + (is ? 1u : 0u) - (was ? 1u : 0u);
  };

  auto try_start = [&](std::uint32_t j, double now, const placement::NodeStates& view) {
    const auto& tj = t.jobs[j];
    const auto req = request(j);
    ++run.placements_tried;
    auto pl = planner_.place(req, view, p.placement, &traffic);
    if (!pl.feasible) return false;
    std::vector<HostId> ring = std::move(pl.hosts);
    // The ring that runs, measured as evaluate() measures a placement.
    const auto measured =
        placement::measure_ring(planner_.context().blocks, ring, req.group_nodes());
    for (HostId h : ring) {
      occupy(h, true);
      states.state[idx(h)] = placement::HostState::kBusy;
      if (masking) masked.state[idx(h)] = placement::HostState::kBusy;
    }
    free_count -= ring.size();
    std::uint32_t slot;
    if (free_slots.empty()) {
      slot = static_cast<std::uint32_t>(active.size());
      active.emplace_back();
    } else {
      slot = free_slots.back();
      free_slots.pop_back();
    }
    auto& a = active[slot];
    const auto version = a.version;
    a = Active{};
    a.version = version;
    a.job = j;
    a.work_left = tj.duration;
    a.last = now;
    a.expected_end = now + tj.duration * opt_.estimate_factor;
    // Ring edges: host i -> i + 1, wrapping (a 2-host ring has one edge each way), on the
    // route model over the running jobs' load; the job's index salts its flows. A job's
    // routes are fixed when it starts (adaptive does not re-balance running jobs). A ring
    // with an edge that has no route adds no load (it runs as if alone): counted and said
    // (Run::unrouted).
    bool unrouted = false;
    if (ring.size() >= 2) {
      const auto h = traffic.add(ring, req.salt);
      if (!h) {
        unrouted = true;
        if (run.unrouted++ == 0)
          if (const auto e = routes::unrouted_edge(routes_, ring))
            run.first_unrouted = routes::no_route_text(routes_, e->first, e->second);
      }
      if (h && !traffic.links(*h).empty()) {
        a.traffic = *h;
        for (const auto& [d, own] : traffic.links(*h)) {
          run.link_peak[d] = std::max(run.link_peak[d], flows[d]);
          if (cap.interswitch[d])
            run.max_link_load = std::max(run.max_link_load, routes::edges(flows[d]));
        }
        multi.push_back(slot);
      } else if (h) {
        traffic.remove(*h);
      }
    }
    auto& out = run.jobs[j];
    out.ran = true;
    out.unrouted = unrouted;
    out.start = now;
    out.leaves = measured.leaves;
    out.tp_groups_split = measured.tp_groups_split;
    out.ring_inter_leaf = measured.inter_leaf;
    out.ring_inter_pod = measured.inter_pod;
    out.thin_tier_crossings = run.thin_tier.tier == 2 ? out.ring_inter_pod : out.ring_inter_leaf;
    const std::uint32_t gn = req.group_nodes();
    const std::uint32_t per_block = max_block_ / gn;  // whole groups a leaf holds
    out.min_leaves = per_block ? (req.groups() + per_block - 1) / per_block : 0;
    out.hosts = std::move(ring);
    ends.emplace(a.expected_end, slot);
    started[j] = 1;
    if (a.traffic == fabric::kNone) schedule_finish(slot);  // rate 1, never changes
    return true;
  };

  auto finish = [&](std::uint32_t slot, double now) {
    auto& a = active[slot];
    auto& out = run.jobs[a.job];
    a.s_integral += (now - a.last) * a.slowdown;
    out.end = now;
    const double runtime = now - out.start;
    out.comm_slowdown = runtime > 0 ? a.s_integral / runtime : a.slowdown;
    if (a.traffic != fabric::kNone) {
      traffic.remove(a.traffic);
      multi.erase(std::find(multi.begin(), multi.end(), slot));
    }
    for (HostId h : out.hosts) {
      states.state[idx(h)] = placement::HostState::kFree;
      occupy(h, false);
    }
    free_count += out.hosts.size();
    run.busy_node_seconds += runtime * static_cast<double>(out.hosts.size());
    run.last_end = std::max(run.last_end, now);
    ends.erase({a.expected_end, slot});
    a.traffic = fabric::kNone;
    ++a.version;
    free_slots.push_back(slot);
    ++done;
    if (progress && (done % progress_step == 0 || done == total)) progress(done, total);
  };

  // One pass of FCFS + EASY backfill at time `now`; returns whether a multi-node job started.
  auto schedule = [&](double now) {
    ++run.scheduler_passes;
    bool multi_started = false;
    while (qhead < queue.size()) {
      std::uint32_t j = queue[qhead];
      if (started[j]) {
        ++qhead;
        continue;
      }
      if (t.jobs[j].shape.nodes > free_count || !try_start(j, now, states)) break;
      multi_started |= t.jobs[j].shape.nodes > 1;
      ++qhead;
    }
    if (qhead >= queue.size()) {
      queue.clear();
      qhead = 0;
      return multi_started;
    }
    // The head's reservation, as Slurm's backfill makes it: project the running jobs' ends
    // (by estimate; ties together) onto the host states until the head's policy places it
    // there. That time is the shadow time; the hosts it would get are reserved.
    const std::uint32_t head = queue[qhead];
    double shadow = std::numeric_limits<double>::infinity();
    std::vector<HostId> reserved;
    {
      auto projected = states;
      std::size_t avail = free_count;
      const auto head_req = request(head);
      for (auto it = ends.begin(); it != ends.end();) {
        const double end = it->first;
        for (; it != ends.end() && it->first == end; ++it) {
          for (HostId h : run.jobs[active[it->second].job].hosts) {
            projected.state[idx(h)] = placement::HostState::kFree;
          }
          avail += run.jobs[active[it->second].job].hosts.size();
        }
        if (avail < head_req.nodes) continue;
        ++run.placements_tried;
        auto pl = planner_.place(head_req, projected, p.placement, &traffic);
        if (pl.feasible) {
          shadow = std::max(end, now);
          reserved = std::move(pl.hosts);
          break;
        }
      }
    }
    masked = states;
    for (HostId h : reserved) masked.state[idx(h)] = placement::HostState::kBusy;
    masking = true;
    // Backfill: a job that ends (by estimate) before the shadow time may use any free host;
    // one that ends later only hosts outside the reservation.
    std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> failed;  // shapes that did not fit
    std::uint32_t tested = 0;
    bool removed = false;
    for (std::size_t q = qhead + 1; q < queue.size() && tested < opt_.bf_max_job_test; ++q) {
      const std::uint32_t j = queue[q];
      if (started[j]) continue;
      ++tested;
      const auto& tj = t.jobs[j];
      if (tj.shape.nodes > free_count) continue;
      const bool ends_in_time = now + tj.duration * opt_.estimate_factor <= shadow;
      const auto shape = std::make_tuple(tj.shape.nodes, tj.shape.tp, ends_in_time);
      if (failed.contains(shape)) continue;
      if (!try_start(j, now, ends_in_time ? states : masked)) {
        failed.insert(shape);
        continue;
      }
      removed = true;
      multi_started |= tj.shape.nodes > 1;
    }
    masking = false;
    if (removed || qhead > 4096) {
      std::erase_if(queue, [&](std::uint32_t j) { return started[j] != 0; });
      qhead = 0;
    }
    return multi_started;
  };

  while (done < total) {
    // Skip the jobs not to run.
    while (next < n_jobs && !skip.empty() && skip[next]) ++next;
    double now = std::numeric_limits<double>::infinity();
    if (!events.empty()) now = events.top().time;
    if (next < n_jobs) now = std::min(now, t.jobs[next].submit);
    if (!std::isfinite(now)) {
      // Nothing will ever happen again: the queued jobs cannot be placed on this fabric.
      run.never_started = total - done;
      break;
    }
    if (first) {
      run.first_submit = now;
      frag_since = now;
      first = false;
    }
    run.fragmented_domain_seconds += fragmented * (now - frag_since);
    frag_since = now;
    bool multi_changed = false;
    // Finishes first, then arrivals, then one scheduling pass.
    while (!events.empty() && events.top().time <= now) {
      Event e = events.top();
      events.pop();
      if (active[e.slot].version != e.version) continue;  // superseded by a rate change
      multi_changed |= active[e.slot].traffic != fabric::kNone;
      finish(e.slot, now);
    }
    while (next < n_jobs && t.jobs[next].submit <= now) {
      if (skip.empty() || !skip[next]) queue.push_back(static_cast<std::uint32_t>(next));
      ++next;
    }
    multi_changed |= schedule(now);
    if (multi_changed) {
      update_rates(now);
      Load peak = 0;
      for (DirLink d : interswitch_list_) peak = std::max(peak, flows[d]);
      const double e = routes::edges(peak);
      if (run.max_load_over_time.empty() || run.max_load_over_time.back().second != e) {
        run.max_load_over_time.emplace_back(now, e);
      }
    }
  }
  return run;
}

}  // namespace fabricplace::sim
