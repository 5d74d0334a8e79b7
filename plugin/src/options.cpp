#include "options.hpp"

#include "fabricplace/common/strings.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::plugin {

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "constrain") return Mode::kConstrain;
  if (s == "exact") return Mode::kExact;
  if (s == "off") return Mode::kOff;
  return std::nullopt;
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kConstrain:
      return "constrain";
    case Mode::kExact:
      return "exact";
    case Mode::kOff:
      return "off";
  }
  return "?";
}

const char* option_name(Option o) {
  switch (o) {
    case Option::kTp:
      return "fabric-tp";
    case Option::kMode:
      return "fabric-mode";
    case Option::kPolicy:
      return "fabric-policy";
    case Option::kRankfile:
      return "fabric-rankfile";
  }
  return "?";
}

Result<void> set_option(JobOptions& o, Option which, const char* value) {
  const std::string v = value ? value : "";
  const std::string name = std::string("--") + option_name(which);
  switch (which) {
    case Option::kTp: {
      const auto n = str::parse_uint(v, 1u << 20);
      if (!n || *n == 0)
        return fail(ErrorCode::kUsage,
                    name + ": expected a positive integer (GPUs per tensor-parallel group), got " +
                        str::quoted(v));
      o.tp = static_cast<std::uint32_t>(*n);
      return {};
    }
    case Option::kMode: {
      const auto m = parse_mode(v);
      if (!m)
        return fail(ErrorCode::kUsage,
                    name + ": expected constrain, exact or off, got " + str::quoted(v));
      o.mode = *m;
      return {};
    }
    case Option::kPolicy:
      if (!policies::parse_policy(v))
        return fail(ErrorCode::kUsage,
                    name + ": expected " + policies::policy_choices() + ", got " + str::quoted(v));
      o.policy = v;
      return {};
    case Option::kRankfile:
      if (v.empty() || v.find('\n') != std::string::npos)
        return fail(ErrorCode::kUsage,
                    name + ": expected a file path prefix, got " + str::quoted(v));
      o.rankfile = v;
      return {};
  }
  return fail(ErrorCode::kUsage, "unknown option");
}

}  // namespace fabricplace::plugin
