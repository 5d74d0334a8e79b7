// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/slurm_plugin.hpp"

#include <elf.h>

#include <cstring>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::slurm {

namespace {

constexpr std::uint64_t kMaxPluginBytes = 256ULL << 20;

/// Bounds-checked little/big-endian reads of the file's bytes.
class Reader {
 public:
  Reader(std::string_view b, bool big) : b_(b), big_(big) {}
  [[nodiscard]] bool has(std::uint64_t off, std::uint64_t n) const {
    return off <= b_.size() && n <= b_.size() - off;
  }
  [[nodiscard]] std::uint64_t get(std::uint64_t off, unsigned n) const {  // has() first
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) {
      const auto byte = static_cast<unsigned char>(b_[off + (big_ ? i : n - 1 - i)]);
      v = (v << 8) | byte;
    }
    return v;
  }
  [[nodiscard]] std::string_view cstr(std::uint64_t off, std::uint64_t end) const {
    if (off >= end || end > b_.size()) return {};
    const auto* p = b_.data() + off;
    const auto* z = static_cast<const char*>(std::memchr(p, 0, end - off));
    return z ? std::string_view(p, static_cast<std::size_t>(z - p)) : std::string_view{};
  }

 private:
  std::string_view b_;
  bool big_;
};

struct Section {
  std::uint32_t type = 0, link = 0;
  std::uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
};

}  // namespace

std::string Version::to_string() const {
  return series() + "." + std::to_string(micro);
}

std::string Version::series() const {
  return std::to_string(major) + "." + (minor < 10 ? "0" : "") + std::to_string(minor);
}

Version from_number(std::uint32_t n) {
  return {(n >> 16) & 0xffU, (n >> 8) & 0xffU, n & 0xffU};
}

Result<Version> parse_version(std::string_view text, std::string_view what) {
  // The last whitespace-separated word: "slurm 22.05.8", "slurm-wlm 24.11.5", "24.11.5".
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
    text.remove_suffix(1);
  if (const auto sp = text.find_last_of(" \t"); sp != std::string_view::npos)
    text.remove_prefix(sp + 1);
  Version v;
  unsigned* parts[] = {&v.major, &v.minor, &v.micro};
  std::size_t i = 0, digits = 0;
  bool ok = true;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      *parts[i] = *parts[i] * 10 + static_cast<unsigned>(c - '0');
      if (*parts[i] > 255) ok = false;
      ++digits;
    } else if (c == '.' && digits > 0 && i < 2) {
      ++i, digits = 0;
    } else if ((c == '-' || c == '+' || c == '~') && i >= 1 && digits > 0) {
      break;  // a packaging suffix: "24.11.5-1"
    } else {
      ok = false;
    }
    if (!ok) break;
  }
  if (!ok || digits == 0 || i < 1)
    return fail(ErrorCode::kSyntax, std::string(what) + ": " + str::quoted(text) +
                                        " is not a Slurm version (expected MAJOR.MINOR[.MICRO], "
                                        "e.g. 24.11.5)");
  return v;
}

Result<std::uint32_t> read_elf_u32_bytes(std::string_view bytes, std::string_view symbol,
                                         const std::string& name) {
  const auto bad = [&](const std::string& why) { return fail(ErrorCode::kSyntax, why, name); };
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    return bad("not an ELF file (expected a shared object such as fabricplace.so)");
  const auto cls = static_cast<unsigned char>(bytes[EI_CLASS]);
  const auto data = static_cast<unsigned char>(bytes[EI_DATA]);
  if ((cls != ELFCLASS64 && cls != ELFCLASS32) || (data != ELFDATA2LSB && data != ELFDATA2MSB))
    return bad("an ELF file of unknown class or byte order");
  const bool is64 = cls == ELFCLASS64;
  const Reader r(bytes, data == ELFDATA2MSB);
  const unsigned word = is64 ? 8 : 4;
  // e_shoff, e_shentsize, e_shnum (ELF header layout, <elf.h>).
  const std::uint64_t shoff_at = is64 ? 0x28 : 0x20, shent_at = is64 ? 0x3A : 0x2E;
  if (!r.has(shent_at, 6)) return bad("a truncated ELF header");
  const std::uint64_t shoff = r.get(shoff_at, word);
  const auto shentsize = r.get(shent_at, 2), shnum = r.get(shent_at + 2, 2);
  const std::uint64_t min_ent = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  if (shoff == 0 || shnum == 0)
    return bad("no section headers (a stripped-down file): cannot find " + std::string(symbol));
  if (shentsize < min_ent || !r.has(shoff, shentsize * shnum))
    return bad("section headers out of the file's bounds (a truncated or corrupt file)");
  const auto section = [&](std::uint64_t i) {
    const std::uint64_t at = shoff + i * shentsize;
    Section s;
    s.type = static_cast<std::uint32_t>(r.get(at + 4, 4));
    s.addr = r.get(at + (is64 ? 0x10 : 0x0C), word);
    s.offset = r.get(at + (is64 ? 0x18 : 0x10), word);
    s.size = r.get(at + (is64 ? 0x20 : 0x14), word);
    s.link = static_cast<std::uint32_t>(r.get(at + (is64 ? 0x28 : 0x18), 4));
    s.entsize = r.get(at + (is64 ? 0x38 : 0x24), word);
    return s;
  };
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const Section dynsym = section(i);
    if (dynsym.type != SHT_DYNSYM) continue;
    const std::uint64_t min_sym = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    if (dynsym.entsize < min_sym || !r.has(dynsym.offset, dynsym.size) || dynsym.link >= shnum)
      return bad("a corrupt dynamic symbol table");
    const Section strtab = section(dynsym.link);
    if (strtab.type != SHT_STRTAB || !r.has(strtab.offset, strtab.size))
      return bad("a corrupt dynamic string table");
    const std::uint64_t count = dynsym.size / dynsym.entsize;
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t at = dynsym.offset + k * dynsym.entsize;
      const auto name_off = r.get(at, 4);
      if (r.cstr(strtab.offset + name_off, strtab.offset + strtab.size) != symbol) continue;
      // Elf64_Sym: name(4) info(1) other(1) shndx(2) value(8) size(8);
      // Elf32_Sym: name(4) value(4) size(4) info(1) other(1) shndx(2).
      const auto shndx = r.get(at + (is64 ? 6 : 14), 2);
      const auto value = r.get(at + (is64 ? 8 : 4), word);
      const auto size = r.get(at + (is64 ? 16 : 8), word);
      if (shndx == SHN_UNDEF) continue;  // a reference, not the definition
      if (shndx >= shnum || size != 4)
        return bad(std::string(symbol) + " is not a 32-bit object defined in the file");
      const Section holder = section(shndx);
      if (holder.type == SHT_NOBITS)
        return bad(std::string(symbol) + " is zero-initialised (not a stored version)");
      if (value < holder.addr || value - holder.addr > holder.size ||
          holder.size - (value - holder.addr) < 4 ||
          !r.has(holder.offset + (value - holder.addr), 4))
        return bad(std::string(symbol) + " lies outside its section (a corrupt file)");
      return static_cast<std::uint32_t>(r.get(holder.offset + (value - holder.addr), 4));
    }
    break;
  }
  return bad("no exported " + std::string(symbol) + ": not a Slurm plugin");
}

Result<std::uint32_t> read_elf_u32(const std::string& path, std::string_view symbol) {
  auto bytes = read_file(path, kMaxPluginBytes);
  if (!bytes) return std::unexpected(bytes.error());
  return read_elf_u32_bytes(*bytes, symbol, path);
}

}  // namespace fabricplace::slurm
