// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/error.hpp"

namespace fabricplace {

std::string Error::to_string() const {
  if (file.empty()) return message;
  if (line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

}  // namespace fabricplace
