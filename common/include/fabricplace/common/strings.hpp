// SPDX-License-Identifier: GPL-2.0-or-later
// Small string helpers shared by the parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"

namespace fabricplace::str {

std::string_view trim(std::string_view s);
bool starts_with_icase(std::string_view s, std::string_view prefix);
std::vector<std::string_view> split(std::string_view s, char sep);

/// Parses a non-negative decimal integer that must fit in T; no sign, no spaces.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max);
/// Parses hex digits with or without a leading "0x" (64-bit at most).
std::optional<std::uint64_t> parse_hex(std::string_view s);

/// "0x%016x": the canonical GUID spelling in our outputs.
std::string guid_hex(std::uint64_t guid);
/// "0x%x".
std::string hex(std::uint64_t value);
/// Text as roff (man pages) wants it: backslashes and hyphens escaped, a leading dot or
/// quote guarded.
std::string roff(std::string_view s);
/// FNV-1a 64 of `text` as 16 lower-case hex digits: a content id (host map versions, the
/// generation of a `slurm sync` file set), not a cryptographic hash.
std::string fnv1a_hex(std::string_view text);
/// True for what fnv1a_hex() returns: exactly 16 lower-case hex digits.
bool is_generation(std::string_view s);

/// The lines of a text (without the '\n', a trailing '\r' removed), lazily: nothing is
/// allocated, so a file of a hundred million blank lines costs no memory. The last line is
/// returned even without a newline. `for (auto line : str::lines(text))`.
class Lines {
 public:
  class iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(std::string_view text, std::size_t pos) : text_(text), pos_(pos) { find_end(); }
    std::string_view operator*() const;
    iterator& operator++() {
      pos_ = end_ + 1;
      find_end();
      return *this;
    }
    bool operator==(const iterator& o) const { return pos_ == o.pos_; }

   private:
    void find_end();
    std::string_view text_;
    std::size_t pos_ = 0, end_ = 0;
  };
  explicit Lines(std::string_view text) : text_(text) {}
  iterator begin() const { return {text_, 0}; }
  iterator end() const { return {text_, text_.size()}; }

 private:
  std::string_view text_;
};
inline Lines lines(std::string_view text) {
  return Lines(text);
}

/// Checks that `text` is UTF-8 without control characters other than tab, CR and newline
/// (what every line-based input must be); the error (kSyntax) names `file`, the line and
/// the column of the first offending byte, and never echoes it.
Result<void> check_text(std::string_view text, const std::string& file);

/// The 1-based line of byte `offset` of `text`.
int line_at(std::string_view text, std::size_t offset);

/// Line numbers of increasing offsets into one text, in one pass over it all: each call
/// counts only the newlines since the previous one (a call with a smaller offset starts
/// over). For parsers that ask for the line of every record.
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  int line_at(std::size_t offset);

 private:
  std::string_view text_;
  std::size_t offset_ = 0;
  int line_ = 1;
};

/// A char iterator that records how far a parser has read (for nlohmann's SAX parser, which
/// reports no positions to its handler): `*furthest` is one past the last byte read, so
/// line_at(text, furthest - text.data() - 1) is the line of the token just read.
struct TrackingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** furthest = nullptr;
  reference operator*() const { return *p; }
  TrackingIterator& operator++() {
    *furthest = ++p;
    return *this;
  }
  bool operator==(const TrackingIterator& o) const { return p == o.p; }
};

/// JSON string literal with escapes (for the hand-written, byte-stable JSON writers). Always
/// valid UTF-8: a byte that is not part of a well-formed UTF-8 sequence becomes U+FFFD.
std::string json_quote(std::string_view s);

/// The offset of the first byte that is not part of a well-formed UTF-8 sequence (RFC 3629:
/// no overlong forms, no surrogates, nothing above U+10FFFF), or npos when `s` is valid.
std::size_t invalid_utf8_at(std::string_view s);

/// Offset of the first ASCII control character (0x00-0x1f, 0x7f; tab included), or npos.
std::size_t control_char_at(std::string_view s);

/// A short, printable rendering of input for error messages: at most `max` bytes of `s`
/// (cut at a character boundary, "..." appended when cut), line breaks written as \n and
/// \r, other control characters (tab aside) and bytes that are not valid UTF-8 as \xNN, and
/// characters that show nothing or reorder what follows (C1 controls, zero-width characters,
/// bidirectional marks and overrides, line separators, BOM) as \u{XXXX}, so nothing binary,
/// invisible or reordering and no line break ever reaches a terminal through an error message.
std::string excerpt(std::string_view s, std::size_t max = 60);

/// `s` with every control character and every byte that is not valid UTF-8 written as
/// \xNN, nothing else changed (so sanitize(sanitize(s)) == sanitize(s)): for free text
/// (origins, notes) that goes into line-based outputs.
std::string sanitize(std::string_view s);

/// The characters a host name may not hold: each means something in Slurm's files and
/// hostlists (`,` `[` `]` `=` `#`), in quoting (`"` `'` `\`) or in a shell (`;` `&` `|`
/// `$` `` ` `` `(` `)` `{` `}` `<` `>` `*` `?` `!` `~`), and host names reach all three
/// (topology.conf, hostfiles, the torchrun environment users source).
inline constexpr std::string_view kHostNameSpecials = ",[]=#\"'\\;&|$`(){}<>*?!~";

/// The offset of the first character that shows nothing or reorders the text after it (C1
/// controls, zero-width characters, bidirectional marks and overrides, line and paragraph
/// separators, BOM: what excerpt() writes as \u{XXXX}), or npos. `s` must be valid UTF-8.
std::size_t invisible_char_at(std::string_view s);

/// What is wrong with `name` as a host name, or nothing: empty, longer than 255 bytes
/// (kMaxNameBytes), not valid UTF-8, a control or invisible character (it could start a line
/// in a file written from it), or one of kHostNameSpecials. The one rule every reader of
/// host names applies (fabric sources, the builder, host maps); the reason reads after
/// "host name \"...\"".
std::optional<std::string> host_name_problem(std::string_view name);

/// excerpt() in double quotes: the form error messages quote input in.
std::string quoted(std::string_view s, std::size_t max = 60);

}  // namespace fabricplace::str
