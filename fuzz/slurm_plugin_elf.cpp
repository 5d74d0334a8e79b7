// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_slurm_plugin_elf: fabricplace::slurm::read_elf_u32_bytes() (`fabricplace slurm check`
// reads plugin_version from a plugin file without loading it) over arbitrary bytes: every
// offset the ELF headers give is checked, so any input is a value or a one-line error.
#include "fabricplace/common/slurm_plugin.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (const char* symbol : {"plugin_version", "plugin_name", ""}) {
    auto v = slurm::read_elf_u32_bytes(bytes, symbol, "fuzz.so");
    if (!v) fuzz::check_error(v.error());
  }
  return 0;
}
