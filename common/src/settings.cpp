#include "fabricplace/common/settings.hpp"

#include <map>

#include "fabricplace/common/strings.hpp"

namespace fabricplace {

Result<void> for_each_setting(
    std::string_view text, const std::string& file, std::string_view form,
    const std::function<Result<void>(std::string_view name, std::string_view value, int line)>&
        on) {
  std::map<std::string, int, std::less<>> seen;
  const auto lines = str::lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int lineno = static_cast<int>(i) + 1;
    auto line = lines[i];
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = str::trim(line);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos)
      return fail(ErrorCode::kSyntax,
                  "expected \"" + std::string(form) + "\", got \"" + std::string(line) + "\"", file,
                  lineno);
    const auto name = str::trim(line.substr(0, eq));
    if (auto r = on(name, str::trim(line.substr(eq + 1)), lineno); !r) return r;
    if (auto [it, inserted] = seen.emplace(std::string(name), lineno); !inserted)
      return fail(ErrorCode::kDuplicate,
                  std::string(name) + " already set at line " + std::to_string(it->second), file,
                  lineno);
  }
  return {};
}

}  // namespace fabricplace
