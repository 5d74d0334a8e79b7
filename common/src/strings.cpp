// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/strings.hpp"

#include "fabricplace/common/limits.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace fabricplace::str {

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n'))
    --e;
  return s.substr(b, e - b);
}

bool starts_with_icase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (d > max || v > (max - d) / 10) return std::nullopt;  // v * 10 + d would exceed max
    v = v * 10 + d;
  }
  return v;
}

std::optional<std::uint64_t> parse_hex(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

std::string guid_hex(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

std::string hex(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string roff(std::string_view s) {
  std::string out;
  bool line_start = true;
  for (const char c : s) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 15];
  return out;
}

bool is_generation(std::string_view s) {
  if (s.size() != 16) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void Lines::iterator::find_end() {
  if (pos_ >= text_.size()) {
    pos_ = end_ = text_.size();
    return;
  }
  end_ = text_.find('\n', pos_);
  if (end_ == std::string_view::npos) end_ = text_.size();
}

std::string_view Lines::iterator::operator*() const {
  std::string_view line = text_.substr(pos_, end_ - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when there is none.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

// The code point of the well-formed n-byte sequence at s[i] (n from utf8_len, 2 to 4).
char32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[k]));
  };
  char32_t cp = b(i) & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3Fu);
  return cp;
}

// Characters that are valid but show nothing or change how a terminal shows what follows:
// C1 controls, zero-width characters and joiners, bidirectional marks, embeddings, overrides
// and isolates (the "Trojan Source" set), line and paragraph separators, the BOM and the
// interlinear annotation characters. excerpt() writes them as \u{XXXX}.
bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x061C || cp == 0x180E ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
}

}  // namespace

std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_len(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::size_t invisible_char_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_len(s, i);
    if (n == 0) return std::string_view::npos;  // not valid UTF-8: invalid_utf8_at's business
    if (n > 1 && invisible(code_point(s, i, n))) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::optional<std::string> host_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameBytes)
    return "is " + std::to_string(name.size()) + " bytes long, more than " +
           std::to_string(kMaxNameBytes) + " (a DNS name's longest)";
  if (const auto at = invalid_utf8_at(name); at != std::string_view::npos)
    return "is not valid UTF-8 (byte " + std::to_string(at + 1) + ")";
  if (const auto at = control_char_at(name); at != std::string_view::npos)
    return "holds a control character (byte " + std::to_string(at + 1) + ")";
  if (const auto at = invisible_char_at(name); at != std::string_view::npos)
    return "holds an invisible or line-breaking character (byte " + std::to_string(at + 1) + ")";
  if (name.find_first_of(kHostNameSpecials) != std::string_view::npos) {
    std::string list;
    for (char c : kHostNameSpecials) list += (list.empty() ? "" : " ") + std::string(1, c);
    return "holds one of " + list +
           ", which Slurm's files, hostlists or a shell give a meaning; expected a plain host name";
  }
  return std::nullopt;
}

std::size_t control_char_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return i;
  }
  return std::string_view::npos;
}

std::string excerpt(std::string_view s, std::size_t max) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && i < max) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_len(s, i);
    if (n > 1) {
      if (i + n > max) break;
      if (const char32_t cp = code_point(s, i, n); invisible(cp)) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
        out += buf;
      } else {
        out.append(s.substr(i, n));
      }
      i += n;
      continue;
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (n == 1 && (c >= 0x20 || c == '\t') && c != 0x7f)
      out += static_cast<char>(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
    ++i;
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_len(s, i);
    if (n == 0 || c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

int LineCounter::line_at(std::size_t offset) {
  offset = std::min(offset, text_.size());
  if (offset < offset_) {
    offset_ = 0;
    line_ = 1;
  }
  line_ += static_cast<int>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(offset_),
                                       text_.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  offset_ = offset;
  return line_;
}

int line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(),
                                         text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string quoted(std::string_view s, std::size_t max) {
  return '"' + excerpt(s, max) + '"';
}

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t n = utf8_len(s, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

Result<void> check_text(std::string_view text, const std::string& file) {
  // One pass, ASCII first (a few instructions a byte: this runs on every dump read).
  std::size_t bad_utf8 = std::string_view::npos, bad_ctl = std::string_view::npos;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      ++i;
      continue;
    }
    if (c == '\n' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c < 0x80) {
      bad_ctl = i;
      break;
    }
    const std::size_t n = utf8_len(text, i);
    if (n == 0) {
      bad_utf8 = i;
      break;
    }
    i += n;
  }
  const std::size_t at = std::min(bad_utf8, bad_ctl);
  if (at == std::string_view::npos) return {};
  const std::size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const std::size_t col =
      at - (line_start == std::string_view::npos || at == 0 ? 0 : line_start + 1) + 1;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[at]));
  return fail(ErrorCode::kSyntax,
              "column " + std::to_string(col) + ": byte " + byte +
                  (at == bad_ctl ? " is a control character" : " is not valid UTF-8") +
                  "; expected text (is this a binary file?)",
              file, str::line_at(text, at));
}

}  // namespace fabricplace::str
