// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_set>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::hostlist {
namespace {


struct Range {
  std::uint64_t lo = 0, hi = 0;
  std::size_t width = 0;  // zero-pad width, from the bound as written
};

Error syntax(std::string_view expr, std::size_t col, const std::string& what) {
  return Error{
      ErrorCode::kSyntax,
      "hostlist " + str::quoted(expr) + ", column " + std::to_string(col + 1) + ": " + what,
      {},
      0};
}

// Parses "1-3,07,10-12" (the inside of one bracket) starting at column `base`.
Result<std::vector<Range>> parse_ranges(std::string_view expr, std::string_view body,
                                        std::size_t base) {
  std::vector<Range> out;
  std::size_t pos = 0;
  for (std::string_view part : str::split(body, ',')) {
    const std::size_t col = base + pos;
    pos += part.size() + 1;
    if (part.empty()) return std::unexpected(syntax(expr, col, "empty range, expected N or N-M"));
    const auto dash = part.find('-');
    const std::string_view lo_s = part.substr(0, dash);
    const std::string_view hi_s = dash == std::string_view::npos ? lo_s : part.substr(dash + 1);
    const auto lo = str::parse_uint(lo_s, UINT32_MAX);
    const auto hi = str::parse_uint(hi_s, UINT32_MAX);
    if (!lo || !hi)
      return std::unexpected(
          syntax(expr, col, "bad range " + str::quoted(part, 30) + ", expected N or N-M"));
    if (*hi < *lo)
      return std::unexpected(
          syntax(expr, col, "range " + str::quoted(part, 30) + " runs backwards"));
    out.push_back(Range{*lo, *hi, lo_s.size()});
  }
  return out;
}

std::string too_many() {
  return "expands to more than " + std::to_string(limits().hostlist_names) +
         " names (FABRICPLACE_MAX_HOSTLIST raises the limit)";
}

std::string pad(std::uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

}  // namespace

Result<std::vector<std::string>> expand(std::string_view expr, Duplicates duplicates) {
  const bool keep = duplicates == Duplicates::kKeep;
  std::vector<std::string> out;
  std::uint64_t out_bytes = 0;  // what `out` holds, bounded like an input file
  std::unordered_set<std::string> seen;
  if (const auto bad = str::invalid_utf8_at(expr); bad != std::string_view::npos)
    return std::unexpected(syntax(expr, bad, "not valid UTF-8"));
  // Split the top level at commas outside brackets.
  std::size_t term_start = 0;
  int depth = 0;
  std::size_t open_at = 0;
  for (std::size_t i = 0; i <= expr.size(); ++i) {
    const char c = i < expr.size() ? expr[i] : ',';
    if (i == expr.size() && depth > 0)
      return std::unexpected(syntax(expr, open_at, "'[' without ']'"));
    if (c == '[') {
      if (depth++ > 0) return std::unexpected(syntax(expr, i, "nested '['"));
      open_at = i;
      continue;
    }
    if (c == ']') {
      if (--depth < 0) return std::unexpected(syntax(expr, i, "']' without '['"));
      continue;
    }
    if (c == ' ' || c == '\t') return std::unexpected(syntax(expr, i, "unexpected blank"));
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return std::unexpected(syntax(expr, i, "control character in a host name"));
    if (c != ',' || depth > 0) continue;
    const std::string_view term = expr.substr(term_start, i - term_start);
    if (term.empty()) return std::unexpected(syntax(expr, term_start, "empty host name"));
    // Expand one term: literal pieces and bracket sets, cartesian product left to right.
    // Before each step its size is bounded in names and in bytes (a name of the term is at
    // most its literal text plus, per bracket, the digits of its widest bound), with
    // overflow-safe products: n[0-524287][0-4294967295] must not wrap to a small number.
    const std::uint64_t max = limits().hostlist_names, max_bytes = limits().input_bytes;
    auto bytes_ok = [&](std::uint64_t names_n, std::uint64_t name_len) {
      std::uint64_t b = 0;
      return mul_within(names_n, name_len + 32, max_bytes, b) &&
             add_within(out_bytes, b, max_bytes, b);
    };
    const std::string too_big = "expands to more than " + std::to_string(max_bytes >> 20) +
                                " MiB of names";
    std::vector<std::string> names{""};
    std::uint64_t name_len = 0;  // the longest name so far
    std::size_t j = 0;
    while (j < term.size()) {
      const auto open = term.find('[', j);
      const std::string_view lit =
          term.substr(j, open == std::string_view::npos ? term.npos : open - j);
      name_len += lit.size();
      if (!bytes_ok(names.size(), name_len))
        return std::unexpected(syntax(expr, term_start + j, too_big));
      for (auto& n : names) n.append(lit);
      if (open == std::string_view::npos) break;
      const auto close = term.find(']', open);
      if (close == std::string_view::npos)
        return std::unexpected(syntax(expr, term_start + open, "'[' without ']'"));
      auto ranges =
          parse_ranges(expr, term.substr(open + 1, close - open - 1), term_start + open + 1);
      if (!ranges) return std::unexpected(ranges.error());
      std::uint64_t count = 0, total = 0;
      std::size_t digits = 0;
      for (const auto& r : *ranges) {
        digits = std::max({digits, r.width, std::to_string(r.hi).size()});
        if (!add_within(count, r.hi - r.lo + 1, max, count)) {
          count = max + 1;
          break;
        }
      }
      if (count > max || !mul_within(count, names.size(), max, total) ||
          total + out.size() > max)
        return std::unexpected(syntax(expr, term_start + open, too_many()));
      name_len += digits;
      if (!bytes_ok(total, name_len)) return std::unexpected(syntax(expr, term_start + open, too_big));
      std::vector<std::string> next;
      next.reserve(total);
      for (const auto& n : names)
        for (const auto& r : *ranges)
          for (std::uint64_t v = r.lo; v <= r.hi; ++v) next.push_back(n + pad(v, r.width));
      names = std::move(next);
      j = close + 1;
    }
    for (auto& n : names)
      if (keep || seen.insert(n).second) {
        out_bytes += n.size() + 32;
        out.push_back(std::move(n));
      }
    if (out.size() > limits().hostlist_names)
      return std::unexpected(syntax(expr, term_start, too_many()));
    term_start = i + 1;
  }
  return out;
}

std::string compress(const std::vector<std::string>& names) {
  struct Entry {
    std::uint64_t value;
    std::string digits;
  };
  // Group by prefix (the name without its trailing run of digits), in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<Entry>> groups;
  std::vector<std::string> plain_seen;
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (!seen.insert(name).second) continue;
    std::size_t d = name.size();
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') --d;
    const std::size_t ndig = name.size() - d;
    std::string prefix = name.substr(0, d);
    // Names without trailing digits, or whose number is above what a range holds (expand()
    // reads bounds up to 2^32 - 1, as Slurm does), stay literal: n4294967296 has no range.
    const bool ranged = ndig > 0 && ndig <= 10 && std::stoull(name.substr(d)) <= UINT32_MAX;
    if (!ranged) prefix = name + '\x01';
    auto [it, inserted] = groups.try_emplace(prefix);
    if (inserted) order.push_back(prefix);
    if (ranged) it->second.push_back(Entry{std::stoull(name.substr(d)), name.substr(d)});
  }
  std::string out;
  for (const auto& prefix : order) {
    if (!out.empty()) out += ',';
    if (!prefix.empty() && prefix.back() == '\x01') {  // "000": an all-digit name has no prefix
      out.append(prefix, 0, prefix.size() - 1);
      continue;
    }
    auto& entries = groups[prefix];
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.value != b.value ? a.value < b.value : a.digits.size() < b.digits.size();
    });
    if (entries.size() == 1) {
      out += prefix + entries.front().digits;
      continue;
    }
    // Greedy ranges: the range keeps the width of its first bound; the next entry joins when
    // it is the successor and is spelled the way that width would spell it.
    std::string body;
    std::size_t i = 0;
    while (i < entries.size()) {
      std::size_t j = i;
      const std::size_t width = entries[i].digits.size();
      while (j + 1 < entries.size() && entries[j + 1].value == entries[j].value + 1 &&
             pad(entries[j + 1].value, width) == entries[j + 1].digits)
        ++j;
      if (!body.empty()) body += ',';
      body += entries[i].digits;
      if (j > i) body += "-" + entries[j].digits;
      i = j + 1;
    }
    out += prefix + "[" + body + "]";
  }
  return out;
}

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && is_digit(a[i2])) ++i2;
      while (j2 < b.size() && is_digit(b[j2])) ++j2;
      // Compare by value: strip leading zeros, then length, then digits.
      std::size_t za = i, zb = j;
      while (za + 1 < i2 && a[za] == '0') ++za;
      while (zb + 1 < j2 && b[zb] == '0') ++zb;
      const auto va = a.substr(za, i2 - za), vb = b.substr(zb, j2 - zb);
      if (va.size() != vb.size()) return va.size() < vb.size();
      if (va != vb) return va < vb;
      if ((i2 - i) != (j2 - j)) return (i2 - i) < (j2 - j);
      i = i2;
      j = j2;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return (a.size() - i) < (b.size() - j);
}

}  // namespace fabricplace::hostlist
