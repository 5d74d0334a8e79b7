// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/sim/report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "fabricplace/common/hostlist.hpp"

namespace fabricplace::sim {
namespace {

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", decimals, v);
  std::string s = buf.data();
  if (s.starts_with("-") && s.find_first_not_of("-0.") == std::string::npos) {
    s.erase(0, 1);
  }
  return s;
}

/// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double mean(const std::vector<double>& v, double empty) {
  if (v.empty()) return empty;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string esc(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// Appends " x,y" (appending, not operator+: GCC 12's -Wrestrict misfires on
/// `" " + std::string&&` at -O2).
void add_point(std::string& pts, double x, double y) {
  pts += ' ';
  pts += num(x, 1);
  pts += ',';
  pts += num(y, 1);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string run_label(const Run& r, bool with_routes) {
  return with_routes ? r.policy.name() + " [" + r.routes + "]" : r.policy.name();
}

Summary summarize(const Trace& t, const Run& r, std::size_t hosts, const SimOptions& opt,
                  bool with_routes) {
  Summary s;
  s.policy = run_label(r, with_routes);
  s.routes = r.routes;
  std::vector<double> waits, waits_multi, comm;
  double bsld = 0, leaves = 0, excess = 0;
  std::size_t tp_ok = 0;
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& o = r.jobs[i];
    if (!o.ran) continue;
    const auto& j = t.jobs[i];
    ++s.jobs;
    const double wait = o.start - j.submit;
    const double runtime = o.end - o.start;
    waits.push_back(wait);
    bsld += std::max(1.0, (wait + runtime) / std::max(runtime, opt.bounded_slowdown_tau));
    s.gpu_hours += runtime * j.gpus / 3600.0;
    s.gpu_hours_lost += std::max(0.0, runtime - j.duration) * j.gpus / 3600.0;
    if (j.shape.hosts_per_group() > 1) {
      ++s.jobs_tp_multi;
      if (o.tp_groups_split == 0) ++tp_ok;
    }
    if (o.tp_groups_split > 0) ++s.jobs_tp_split;
    if (o.hosts.size() >= 2) {
      ++s.jobs_multi_node;
      waits_multi.push_back(wait);
      comm.push_back(o.comm_slowdown);
      leaves += o.leaves;
      excess += static_cast<double>(o.leaves) - static_cast<double>(o.min_leaves);
      s.thin_tier_crossings += o.thin_tier_crossings;
    }
  }
  std::sort(waits.begin(), waits.end());
  std::sort(comm.begin(), comm.end());
  std::sort(waits_multi.begin(), waits_multi.end());
  s.mean_wait_multi_s = mean(waits_multi, 0);
  s.p95_wait_multi_s = percentile(waits_multi, 95);
  s.max_wait_multi_s = waits_multi.empty() ? 0 : waits_multi.back();
  s.mean_wait_s = mean(waits, 0);
  s.p95_wait_s = percentile(waits, 95);
  s.max_wait_s = waits.empty() ? 0 : waits.back();
  s.mean_bounded_slowdown = s.jobs ? bsld / static_cast<double>(s.jobs) : 1;
  s.tp_in_leaf_pct = s.jobs_tp_multi
                         ? 100.0 * static_cast<double>(tp_ok) / static_cast<double>(s.jobs_tp_multi)
                         : 100.0;
  if (s.jobs_multi_node) {
    s.mean_leaves = leaves / static_cast<double>(s.jobs_multi_node);
    s.mean_excess_leaves = excess / static_cast<double>(s.jobs_multi_node);
    s.mean_thin_tier_crossings =
        static_cast<double>(s.thin_tier_crossings) / static_cast<double>(s.jobs_multi_node);
  }
  s.thin_tier = r.thin_tier.tier;
  s.mean_comm_slowdown = mean(comm, 1);
  s.p95_comm_slowdown = comm.empty() ? 1 : percentile(comm, 95);
  s.max_link_load = r.max_link_load;
  s.makespan_s = r.last_end - r.first_submit;
  s.utilization = s.makespan_s > 0 && hosts > 0
                      ? r.busy_node_seconds / (static_cast<double>(hosts) * s.makespan_s)
                      : 0;
  s.domains = r.domains;
  s.mean_fragmented_domains = s.makespan_s > 0 ? r.fragmented_domain_seconds / s.makespan_s : 0;
  s.jobs_unrouted = r.unrouted;
  return s;
}

std::string unrouted_note(const Run& r, bool with_routes) {
  if (r.unrouted == 0) return {};
  std::size_t ran = 0;
  for (const auto& o : r.jobs) ran += o.ran;
  return run_label(r, with_routes) + ": " + std::to_string(r.unrouted) + " of " +
         std::to_string(ran) +
         " jobs had a ring edge with no route; they count as running alone (communication "
         "slowdown 1, no load on any link), so comm-slowdown and max-load leave them out. "
         "The first: " +
         r.first_unrouted;
}

std::string summary_csv(const std::vector<Summary>& all) {
  // One list of (column, value) keeps the header and the rows in step.
  using S = const Summary&;
  auto u = [](std::size_t v) { return std::to_string(v); };
  const std::vector<std::pair<const char*, std::function<std::string(S)>>> cols{
      {"policy", [](S s) { return s.policy; }},
      {"routes", [](S s) { return s.routes; }},
      {"jobs", [&](S s) { return u(s.jobs); }},
      {"jobs_multi_node", [&](S s) { return u(s.jobs_multi_node); }},
      {"jobs_tp_multi_node", [&](S s) { return u(s.jobs_tp_multi); }},
      {"jobs_tp_split", [&](S s) { return u(s.jobs_tp_split); }},
      {"tp_in_leaf_pct", [](S s) { return num(s.tp_in_leaf_pct, 2); }},
      {"mean_wait_s", [](S s) { return num(s.mean_wait_s, 1); }},
      {"p95_wait_s", [](S s) { return num(s.p95_wait_s, 1); }},
      {"max_wait_s", [](S s) { return num(s.max_wait_s, 1); }},
      {"mean_wait_multi_s", [](S s) { return num(s.mean_wait_multi_s, 1); }},
      {"p95_wait_multi_s", [](S s) { return num(s.p95_wait_multi_s, 1); }},
      {"max_wait_multi_s", [](S s) { return num(s.max_wait_multi_s, 1); }},
      {"mean_bounded_slowdown", [](S s) { return num(s.mean_bounded_slowdown, 4); }},
      {"utilization", [](S s) { return num(s.utilization, 4); }},
      {"mean_leaves", [](S s) { return num(s.mean_leaves, 4); }},
      {"mean_excess_leaves", [](S s) { return num(s.mean_excess_leaves, 4); }},
      {"thin_tier", [](S s) { return std::to_string(s.thin_tier); }},
      {"thin_tier_crossings", [&](S s) { return u(s.thin_tier_crossings); }},
      {"mean_thin_tier_crossings", [](S s) { return num(s.mean_thin_tier_crossings, 4); }},
      {"mean_comm_slowdown", [](S s) { return num(s.mean_comm_slowdown, 4); }},
      {"p95_comm_slowdown", [](S s) { return num(s.p95_comm_slowdown, 4); }},
      {"max_link_load", [](S s) { return routes::load_str(s.max_link_load); }},
      {"gpu_hours", [](S s) { return num(s.gpu_hours, 1); }},
      {"gpu_hours_lost", [](S s) { return num(s.gpu_hours_lost, 1); }},
      {"makespan_s", [](S s) { return num(s.makespan_s, 1); }},
      {"domains", [&](S s) { return u(s.domains); }},
      {"mean_fragmented_domains", [](S s) { return num(s.mean_fragmented_domains, 4); }},
      {"jobs_unrouted", [&](S s) { return u(s.jobs_unrouted); }},
  };
  std::string out;
  for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + std::string(cols[c].first);
  out += '\n';
  for (const auto& s : all) {
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (c) out += ',';
      out += cols[c].second(s);
    }
    out += '\n';
  }
  return out;
}

std::string jobs_csv(const Trace& t, const std::vector<Run>& runs, const fabric::Fabric& f,
                     bool with_routes) {
  std::string out =
      "policy,routes,job,submit_s,start_s,end_s,wait_s,duration_s,runtime_s,gpus,nodes,tp,"
      "leaves,min_leaves,tp_groups_split,ring_inter_leaf,ring_inter_pod,max_link_load,"
      "comm_slowdown,worst_comm_slowdown,hosts\n";
  std::vector<std::string> names;
  for (const auto& r : runs) {
    const std::string policy = run_label(r, with_routes) + "," + r.routes;
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
      const auto& o = r.jobs[i];
      if (!o.ran) continue;
      const auto& j = t.jobs[i];
      names.clear();
      for (auto h : o.hosts) names.push_back(f.host(h).name);
      // Ring order matters: list the hosts as they are ranked, compressed only where
      // consecutive ranks have consecutive names.
      std::string hosts;
      std::size_t a = 0;
      while (a < names.size()) {
        std::size_t b = a + 1;
        while (b < names.size() && names[b - 1] < names[b] &&
               hostlist::compress({names[b - 1], names[b]}).find(',') == std::string::npos) {
          ++b;
        }
        if (!hosts.empty()) hosts += ',';
        hosts += b == a + 1 ? names[a]
                            : hostlist::compress({names.begin() + static_cast<std::ptrdiff_t>(a),
                                                  names.begin() + static_cast<std::ptrdiff_t>(b)});
        a = b;
      }
      out += policy + "," + csv_field(j.id) + "," + num(j.submit, 1) + "," + num(o.start, 1) + "," +
             num(o.end, 1) + "," + num(o.start - j.submit, 1) + "," + num(j.duration, 1) + "," +
             num(o.end - o.start, 1) + "," + std::to_string(j.gpus) + "," +
             std::to_string(j.shape.nodes) + "," + std::to_string(j.shape.tp) + "," +
             std::to_string(o.leaves) + "," + std::to_string(o.min_leaves) + "," +
             std::to_string(o.tp_groups_split) + "," + std::to_string(o.ring_inter_leaf) + "," +
             std::to_string(o.ring_inter_pod) + "," + routes::load_str(o.max_link_load) + "," +
             num(o.comm_slowdown, 4) + "," + num(o.worst_comm_slowdown, 4) + "," +
             csv_field(hosts) + "\n";
    }
  }
  return out;
}

// ---- HTML ------------------------------------------------------------------------------

namespace {

constexpr std::array<const char*, 6> kColours{"#1b6ac9", "#5aa02c", "#d1452f",
                                              "#8a5cc2", "#c28a1d", "#333333"};

struct Series {
  std::string name;
  std::vector<double> values;  // sorted
};

const char* colour(std::size_t k) {
  return kColours[k % kColours.size()];
}

/// The frame every plot shares: a 640 x 320 canvas, the plot area inside its margins.
struct Frame {
  static constexpr double W = 640, H = 320, L = 60, R = 20, T = 30, B = 50;
  static double y_of(double frac) { return T + (1 - frac) * (H - T - B); }  // 0..1 upwards
  static double x_of(double frac) { return L + frac * (W - L - R); }        // 0..1 rightwards

  static std::string open(const std::string& title) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W, 0) + "\" height=\"" +
           num(H, 0) + "\" role=\"img\" aria-label=\"" + esc(title) + "\">\n<text x=\"" +
           num(W / 2, 0) + "\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\">" + esc(title) +
           "</text>\n<rect x=\"" + num(L, 0) + "\" y=\"" + num(T, 0) + "\" width=\"" +
           num(W - L - R, 0) + "\" height=\"" + num(H - T - B, 0) +
           "\" fill=\"none\" stroke=\"#999\"/>\n";
  }
  /// A horizontal grid line at `frac` of the height, labelled on the left.
  static std::string hgrid(double frac, const std::string& label) {
    const std::string y = num(y_of(frac), 1);
    return "<line x1=\"" + num(L, 0) + "\" x2=\"" + num(W - R, 0) + "\" y1=\"" + y + "\" y2=\"" +
           y + "\" stroke=\"#eee\"/><text x=\"" + num(L - 6, 0) + "\" y=\"" +
           num(y_of(frac) + 4, 1) + "\" text-anchor=\"end\" font-size=\"11\">" + esc(label) +
           "</text>\n";
  }
  static std::string xtick(double x, const std::string& label) {
    return "<text x=\"" + num(x, 1) + "\" y=\"" + num(H - B + 16, 0) +
           "\" text-anchor=\"middle\" font-size=\"11\">" + esc(label) + "</text>\n";
  }
  static std::string xlabel(const std::string& text) {
    return "<text x=\"" + num((L + W - R) / 2, 0) + "\" y=\"" + num(H - 12, 0) +
           "\" text-anchor=\"middle\" font-size=\"12\">" + esc(text) + "</text>\n";
  }
  static std::string ylabel(const std::string& text) {
    const std::string mid = num((T + H - B) / 2, 0);
    return "<text x=\"14\" y=\"" + mid +
           "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 " + mid + ")\">" +
           esc(text) + "</text>\n";
  }
  /// Legend entry k (a colour swatch and its text) starting at (x, top).
  static std::string legend(std::size_t k, double x, const std::string& text, double top = T + 8) {
    const double y = top + 16.0 * static_cast<double>(k);
    // A light backing keeps the text readable over the lines.
    return "<rect x=\"" + num(x - 3, 0) + "\" y=\"" + num(y - 3, 0) +
           "\" width=\"200\" height=\"16\" fill=\"#fff\" fill-opacity=\"0.8\"/>" + "<rect x=\"" +
           num(x, 0) + "\" y=\"" + num(y, 0) + "\" width=\"12\" height=\"10\" fill=\"" + colour(k) +
           "\"/><text x=\"" + num(x + 18, 0) + "\" y=\"" + num(y + 9, 0) + "\" font-size=\"12\">" +
           esc(text) + "</text>\n";
  }
  static std::string polyline(std::size_t k, const std::string& points, double width) {
    return "<polyline fill=\"none\" stroke=\"" + std::string(colour(k)) + "\" stroke-width=\"" +
           num(width, 1) + "\" points=\"" + points + "\"/>\n";
  }
};

/// A CDF plot of several series; x on a log10(1 + x) scale when `log_x`.
std::string cdf_svg(const std::string& title, const std::string& xlabel,
                    const std::vector<Series>& series, bool log_x) {
  double xmax = 0, xmin = log_x ? 0 : std::numeric_limits<double>::infinity();
  for (const auto& s : series) {
    if (s.values.empty()) continue;
    xmax = std::max(xmax, s.values.back());
    if (!log_x) xmin = std::min(xmin, s.values.front());
  }
  if (!std::isfinite(xmin)) xmin = 0;
  auto tx = [&](double v) { return log_x ? std::log10(1 + std::max(v, 0.0)) : v; };
  const double x0 = tx(xmin);
  double x1 = tx(xmax);
  if (x1 <= x0) x1 = x0 + 1;
  auto px = [&](double v) { return Frame::x_of((tx(v) - x0) / (x1 - x0)); };
  std::string o = Frame::open(title);
  for (int k = 0; k <= 4; ++k) o += Frame::hgrid(k / 4.0, num(k / 4.0, 2));
  std::vector<double> ticks;
  if (log_x) {
    for (double v = 0; tx(v) <= x1 + 1e-9; v = v == 0 ? 1 : v * 10) ticks.push_back(v);
  } else {
    for (int k = 0; k <= 5; ++k) ticks.push_back(xmin + (xmax - xmin) * k / 5.0);
  }
  for (double v : ticks) {
    o += Frame::xtick(px(v), log_x ? (v >= 1e6   ? num(v / 1e6, 0) + "M"
                                      : v >= 1e3 ? num(v / 1e3, 0) + "k"
                                                 : num(v, 0))
                                   : num(v, 2));
  }
  o += Frame::xlabel(xlabel) + Frame::ylabel("fraction of jobs");
  std::string legends;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& v = series[k].values;
    if (!v.empty()) {
      std::string pts;
      const std::size_t n = v.size();
      const std::size_t step = std::max<std::size_t>(n / 400, 1);
      double prev_y = Frame::y_of(0);
      pts += num(px(v.front()), 1) + "," + num(prev_y, 1);
      for (std::size_t i = 0; i < n; i += step) {
        const std::size_t last = std::min(n - 1, i + step - 1);
        const double y = Frame::y_of(static_cast<double>(last + 1) / static_cast<double>(n));
        add_point(pts, px(v[last]), prev_y);
        add_point(pts, px(v[last]), y);
        prev_y = y;
      }
      o += Frame::polyline(k, pts, 2);
    }
    // CDFs rise to the top right: the legend goes bottom right, after the lines.
    legends += Frame::legend(k, Frame::W - Frame::R - 210,
                             series[k].name + " (" + std::to_string(v.size()) + " jobs)",
                             Frame::y_of(0) - 8 - 16.0 * static_cast<double>(series.size()));
  }
  return o + legends + "</svg>\n";
}

/// Grouped bars: for each category, one bar per series (values are fractions 0..1).
std::string bars_svg(const std::string& title, const std::vector<std::string>& categories,
                     const std::vector<std::string>& names,
                     const std::vector<std::vector<double>>& frac, const std::string& xlabel) {
  const double plot_w = Frame::W - Frame::L - Frame::R;
  const double group_w = plot_w / static_cast<double>(std::max<std::size_t>(categories.size(), 1));
  const double bar_w = group_w * 0.8 / static_cast<double>(std::max<std::size_t>(names.size(), 1));
  std::string o = Frame::open(title);
  for (int k = 0; k <= 4; ++k) o += Frame::hgrid(k / 4.0, num(k / 4.0, 2));
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double gx = Frame::L + group_w * static_cast<double>(c) + group_w * 0.1;
    for (std::size_t s = 0; s < names.size(); ++s) {
      const double v = frac[s][c];
      o += "<rect x=\"" + num(gx + bar_w * static_cast<double>(s), 1) + "\" y=\"" +
           num(Frame::y_of(v), 1) + "\" width=\"" + num(bar_w * 0.95, 1) + "\" height=\"" +
           num(Frame::y_of(0) - Frame::y_of(v), 1) + "\" fill=\"" + colour(s) + "\"><title>" +
           esc(names[s]) + ": " + num(100 * v, 1) + "%</title></rect>\n";
    }
    o += Frame::xtick(gx + group_w * 0.4, categories[c]);
  }
  o += Frame::xlabel(xlabel) + Frame::ylabel("fraction of multi-node jobs");
  for (std::size_t s = 0; s < names.size(); ++s) {
    o += Frame::legend(s, Frame::W - Frame::R - 170, names[s]);
  }
  return o + "</svg>\n";
}

/// Step lines of (time, value) series: the most flows on any link over time.
std::string steps_svg(const std::string& title, const std::vector<std::string>& names,
                      const std::vector<const std::vector<std::pair<double, double>>*>& series,
                      double t_end) {
  double peak = 1;
  for (const auto* s : series)
    for (const auto& [t, v] : *s) peak = std::max(peak, v);
  const auto ymax = static_cast<std::uint32_t>(std::ceil(peak));
  const double t1 = t_end > 0 ? t_end : 1;
  auto px = [&](double t) { return Frame::x_of(t / t1); };
  auto py = [&](double v) { return Frame::y_of(v / ymax); };
  std::string o = Frame::open(title);
  for (std::uint32_t v = 0; v <= ymax; v += std::max<std::uint32_t>(1, ymax / 5)) {
    o += Frame::hgrid(static_cast<double>(v) / ymax, std::to_string(v));
  }
  for (int k = 0; k <= 5; ++k) o += Frame::xtick(px(t1 * k / 5.0), num(t1 * k / 5.0 / 86400, 1));
  o += Frame::xlabel("time (days)") + Frame::ylabel("ring edges");
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = *series[k];
    std::string pts = num(px(0), 1) + "," + num(py(0), 1);
    double prev = 0;
    for (const auto& [t, v] : s) {
      add_point(pts, px(t), py(prev));
      add_point(pts, px(t), py(v));
      prev = v;
    }
    add_point(pts, px(t1), py(prev));
    o += Frame::polyline(k, pts, 1.5);
  }
  // Legends last, over the lines.
  for (std::size_t k = 0; k < series.size(); ++k) o += Frame::legend(k, Frame::L + 10, names[k]);
  return o + "</svg>\n";
}

}  // namespace

std::string html_report(const Trace& t, const std::vector<Run>& runs,
                        const std::vector<Summary>& sums, const ReportInfo& info,
                        const fabric::Fabric& f, bool with_routes) {
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      esc(info.title) +
      "</title>\n<style>body{font-family:sans-serif;max-width:1400px;margin:1em auto;padding:0 "
      "1em;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid "
      "#ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}td:first-child{text-align:"
      "left}.plots svg{margin:0 12px 12px 0;border:1px solid #ddd}code{background:#f5f5f5}"
      "</style>\n</head>\n<body>\n<h1>" +
      esc(info.title) + "</h1>\n<ul>\n<li>Fabric: " + esc(info.fabric) + "</li>\n";
  for (const auto& r : info.routes) o += "<li>Routes: " + esc(r) + "</li>\n";
  for (const auto& tr : info.traces) o += "<li>Trace: <code>" + esc(tr) + "</code></li>\n";
  o += "<li>Jobs: " + std::to_string(t.jobs.size()) + " read";
  if (!runs.empty() && runs[0].dropped) {
    o += ", " + std::to_string(runs[0].dropped) + " dropped (no policy run could place them)";
  }
  o += "</li>\n";
  for (const auto& s : info.settings) o += "<li>" + esc(s) + "</li>\n";
  o += "</ul>\n<h2>Summary</h2>\n<table>\n<tr><th>policy</th><th>jobs</th><th>multi-node "
       "jobs</th><th>TP groups in one leaf</th><th>jobs with a TP group split</th><th>mean "
       "wait (s)</th><th>p95 wait (s)</th><th>multi-node jobs: mean / p95 wait (s)</th><th>mean "
       "bounded slowdown</th><th>utilisation</th>"
       "<th>mean leaves (excess)</th><th>mean comm slowdown</th><th>p95 comm "
       "slowdown</th><th>max load on a link (ring edges)</th><th>GPU-hours lost to "
       "contention</th></tr>\n";
  for (const auto& s : sums) {
    o += "<tr><td>" + esc(s.policy) + "</td><td>" + std::to_string(s.jobs) + "</td><td>" +
         std::to_string(s.jobs_multi_node) + "</td><td>" +
         (s.jobs_tp_multi ? num(s.tp_in_leaf_pct, 1) + "% of " + std::to_string(s.jobs_tp_multi)
                          : std::string("none (no multi-node TP group)")) +
         "</td><td>" + std::to_string(s.jobs_tp_split) + "</td><td>" + num(s.mean_wait_s, 0) +
         "</td><td>" + num(s.p95_wait_s, 0) + "</td><td>" + num(s.mean_wait_multi_s, 0) + " / " +
         num(s.p95_wait_multi_s, 0) + "</td><td>" + num(s.mean_bounded_slowdown, 2) + "</td><td>" +
         num(100 * s.utilization, 1) + "%</td><td>" + num(s.mean_leaves, 2) + " (+" +
         num(s.mean_excess_leaves, 2) + ")</td><td>" + num(s.mean_comm_slowdown, 3) + "</td><td>" +
         num(s.p95_comm_slowdown, 3) + "</td><td>" + routes::load_str(s.max_link_load) +
         "</td><td>" + num(s.gpu_hours_lost, 1) + " of " + num(s.gpu_hours, 0) + "</td></tr>\n";
  }
  o += "</table>\n";
  if (!info.notes.empty()) {
    o += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : info.notes) o += "<li>" + esc(n) + "</li>\n";
    o += "</ul>\n";
  }

  std::vector<Series> waits, comm;
  std::vector<std::string> names;
  std::vector<std::vector<double>> excess_frac;
  const std::vector<std::string> cats{"0", "1", "2", "3", "4+"};
  for (const auto& r : runs) {
    const std::string label = run_label(r, with_routes);
    Series w{label, {}}, c{label, {}};
    std::vector<double> hist(cats.size(), 0);
    double multi = 0;
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
      const auto& jo = r.jobs[i];
      if (!jo.ran) continue;
      w.values.push_back(jo.start - t.jobs[i].submit);
      if (jo.hosts.size() >= 2) {
        c.values.push_back(jo.comm_slowdown);
        const auto ex = jo.leaves > jo.min_leaves ? jo.leaves - jo.min_leaves : 0u;
        hist[std::min<std::size_t>(ex, cats.size() - 1)] += 1;
        multi += 1;
      }
    }
    std::sort(w.values.begin(), w.values.end());
    std::sort(c.values.begin(), c.values.end());
    for (auto& h : hist) h = multi > 0 ? h / multi : 0;
    waits.push_back(std::move(w));
    comm.push_back(std::move(c));
    names.push_back(label);
    excess_frac.push_back(std::move(hist));
  }
  o += "<h2>Plots</h2>\n<div class=\"plots\">\n";
  o += cdf_svg("Wait time, all jobs (CDF)", "wait (s, log scale)", waits, true);
  o += cdf_svg("Communication slowdown, multi-node jobs (CDF)",
               "time-averaged ring slowdown (1 = uncontended)", comm, false);
  o += bars_svg("Leaves per multi-node job beyond the fewest possible", cats, names, excess_frac,
                "extra leaves used");
  {
    std::vector<const std::vector<std::pair<double, double>>*> series;
    double t_end = 0;
    for (const auto& r : runs) {
      series.push_back(&r.max_load_over_time);
      t_end = std::max(t_end, r.last_end - r.first_submit);
    }
    o += steps_svg("Most ring load on any switch-to-switch link", names, series, t_end);
  }
  o += "</div>\n<h2>Hottest links</h2>\n<p>Directed switch-to-switch links by the most ring "
       "load they carried at once, in ring edges (flows, on the static route models; top 5 per "
       "policy).</p>\n<table>\n<tr><th>policy</th>"
       "<th>link</th><th>rate</th><th>most load</th></tr>\n";
  for (const auto& r : runs) {
    std::vector<routes::DirLink> order;
    for (routes::DirLink d = 0; d < r.link_peak.size(); ++d) {
      if (r.link_peak[d] > 0 && routes::switch_to_switch(f, d)) order.push_back(d);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return r.link_peak[a] > r.link_peak[b]; });
    if (order.size() > 5) order.resize(5);
    for (auto d : order) {
      o += "<tr><td>" + esc(run_label(r, with_routes)) + "</td><td>" +
           esc(routes::dir_link_name(f, d)) + "</td><td>" +
           esc(f.link(fabric::LinkId{d / 2}).rate.to_string()) + "</td><td>" +
           routes::load_str(routes::edges(r.link_peak[d])) + "</td></tr>\n";
    }
  }
  o += "</table>\n";
  o += "<h2>Model</h2>\n<p>FCFS with EASY backfill, node-exclusive jobs. Every "
       "multi-node job runs ring AllReduce over its hosts in the policy's rank order; each ring "
       "edge's traffic goes where the route model puts it (one static path, ecmp's hashed "
       "flows, or adaptive's split moved off the most utilised links); a link carrying a load of L "
       "ring edges gives each "
       "1/L of its capacity, a job's ring runs at its worst link's share, and the "
       "communication share of its run time stretches by the slowdown. See "
       "docs/simulator.md.</p>\n</body>\n</html>\n";
  return o;
}

}  // namespace fabricplace::sim
