// SPDX-License-Identifier: GPL-2.0-or-later
// Runs a SAX reader (states_from_json, running_from_json) over JSON text: the reader's
// `furthest` tracks how far the parser read (for the line of a syntax error), its `error`
// holds a fault it found itself, its `parse_error_what` and `line_now()` the parser's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"

namespace fabricplace::placement {

template <class Reader>
Result<void> read_json_events(std::string_view text, const std::string& file, Reader& reader) {
  reader.furthest = text.data();
  const str::TrackingIterator first{text.data(), &reader.furthest},
      last{text.data() + text.size(), &reader.furthest};
  if (nlohmann::json::sax_parse(first, last, &reader, nlohmann::json::input_format_t::json, true))
    return {};
  if (reader.error) return std::unexpected(*reader.error);
  return std::unexpected(
      fabric::json_syntax_error(reader.parse_error_what, reader.line_now(), file));
}

}  // namespace fabricplace::placement
