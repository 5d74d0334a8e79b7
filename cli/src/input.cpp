// Shared CLI plumbing: error reports, fabric input options, atomic output.
#include <iostream>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/sim/trace.hpp"

namespace fabricplace::cli {

int report(const Error& e) {
  std::cerr << "fabricplace: error: " << e.to_string() << "\n";
  return e.code == ErrorCode::kUsage ? kExitUsage : kExitError;
}

void InputOpts::add(CLI::App* cmd, const char* what, const char* option) {
  if (option)
    cmd->add_option(option, sources, what)->required();
  else
    cmd->add_option("fabric", sources, what)->required();
  cmd->add_option("--from", from,
                  "input format: auto, ibnetdiscover, ibnetdiscover-p, json, slurm-topology, "
                  "tiers-csv, spec")
      ->capture_default_str();
  cmd->add_option("--link-speed", link_speed,
                  "link rate assumed where a topology.conf or tiers CSV states none (default "
                  "4xHDR for topology.conf, 400GbE for a tiers CSV), e.g. 4xNDR, 400G");
}

Result<fabric::Fabric> InputOpts::load() const {
  fabric::SourceOptions o;
  const auto f = fabric::parse_source_format(from);
  if (!f) return fail(ErrorCode::kUsage, "--from " + from + ": unknown format");
  o.format = *f;
  if (!link_speed.empty()) {
    const auto rate = fabric::parse_rate(link_speed);
    if (!rate || !rate->known())
      return fail(ErrorCode::kUsage, "--link-speed " + link_speed +
                                         ": expected a rate like 4xHDR (InfiniBand) or 400G "
                                         "(Ethernet, Gb/s)");
    o.link_rate = *rate;
  }
  return fabric::load_fabrics(sources, o);
}

void print_warnings(const fabric::Fabric& f) {
  for (const auto& m : f.topology().incomplete)
    std::cerr << "fabricplace: warning: INCOMPLETE fabric: " << m << "\n";
  for (const auto& w : f.topology().warnings) std::cerr << "fabricplace: warning: " << w << "\n";
}

Result<placement::Weights> load_weights(const std::string& path) {
  if (path.empty()) return placement::Weights{};
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  return placement::parse_weights(*text, path);
}

Result<fabric::Routes> load_routes(const fabric::Fabric& f, const std::string& lfts) {
  if (lfts.empty()) return fabric::ftree_routes(f);
  auto text = sim::read_text_file(lfts);
  if (!text) return std::unexpected(text.error());
  return fabric::lft_routes(f, *text, lfts);
}

CLI::Option* add_output_option(CLI::App* cmd, std::string& out, const char* help) {
  return cmd->add_option("-o,--output", out, help)
      ->capture_default_str()
      ->check(non_empty("a file path or '-'", "FILE"));
}

CLI::Validator non_empty(const char* what, const char* name) {
  return CLI::Validator([expected = std::string("expected ") + what](
                            std::string& v) { return v.empty() ? expected : std::string(); },
                        name);
}

int write_output(const std::string& path, const std::string& content) {
  if (auto r = write_file_atomic(path, content); !r) return report(r.error());
  return kExitOk;
}

}  // namespace fabricplace::cli
