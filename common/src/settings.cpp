// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/settings.hpp"

#include <map>

#include "fabricplace/common/strings.hpp"

namespace fabricplace {

Result<void> for_each_setting(
    std::string_view text, const std::string& file, std::string_view form,
    const std::function<Result<void>(std::string_view name, std::string_view value, int line)>&
        on) {
  std::map<std::string, int, std::less<>> seen;
  int lineno = 0;
  for (std::string_view line : str::lines(text)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = str::trim(line);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos)
      return fail(ErrorCode::kSyntax,
                  "expected " + str::quoted(form) + ", got " + str::quoted(line), file,
                  lineno);
    const auto name = str::trim(line.substr(0, eq));
    if (str::invalid_utf8_at(name) != std::string_view::npos ||
        str::control_char_at(name) != std::string_view::npos)
      return fail(ErrorCode::kSyntax, "expected a setting name, got " + str::quoted(name), file,
                  lineno);
    if (auto r = on(name, str::trim(line.substr(eq + 1)), lineno); !r) return r;
    if (auto [it, inserted] = seen.emplace(std::string(name), lineno); !inserted)
      return fail(ErrorCode::kDuplicate,
                  std::string(name) + " already set at line " + std::to_string(it->second), file,
                  lineno);
  }
  return {};
}

}  // namespace fabricplace
