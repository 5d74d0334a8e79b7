// SPDX-License-Identifier: GPL-2.0-or-later
// "name = value" configuration files (etc/fabricplace/health.conf, policy.conf).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"

namespace fabricplace {

/// Calls `on(name, value, line)` for every "name = value" line of `text`, names and values
/// trimmed; '#' starts a comment, blank lines are skipped. A line without '=' is a kSyntax
/// error ("expected \"<form>\", got ..."), a name set twice a kDuplicate error naming the
/// first line; an error from `on` is returned as is. Errors carry `file` and the line.
Result<void> for_each_setting(
    std::string_view text, const std::string& file, std::string_view form,
    const std::function<Result<void>(std::string_view name, std::string_view value, int line)>& on);

}  // namespace fabricplace
