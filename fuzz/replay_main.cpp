// SPDX-License-Identifier: GPL-2.0-or-later
// Replay driver: runs LLVMFuzzerTestOneInput over files, without libFuzzer, so the regression
// inputs of tests/data/fuzz/<target>/ replay under any compiler (ctest fuzz.<target>).
//
//   fuzz_replay_<target> [--known-open LIST] PATH...
//
// PATH is a file or a directory (its regular files, in name order; a missing directory is
// no input). A FILE.gz is gunzipped first (scripts/fuzz.sh does the same for the corpus), so
// an input beyond the 64 KiB kept in tests/data (a deeply nested document) can be stored small.
// LIST names inputs that crash and are not fixed yet, one path per line relative to the list's
// directory ('#' comments); they are skipped with a message. A crash, a failed check or an uncaught
// exception ends the process abnormally, after naming the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <zlib.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p, bool& ok) {
  if (p.extension() == ".gz") {
    gzFile gz = gzopen(p.c_str(), "rb");
    ok = gz != nullptr;
    std::string out;
    char buf[65536];
    int n = 0;
    while (gz && (n = gzread(gz, buf, sizeof buf)) > 0)
      out.append(buf, static_cast<std::size_t>(n));
    if (gz && (n < 0 || gzclose(gz) != Z_OK)) ok = false;
    return out;
  }
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Paths of the known-open list, made canonical (weakly: a listed file may be gone).
std::set<fs::path> read_known_open(const fs::path& list) {
  std::set<fs::path> out;
  std::ifstream in(list);
  std::string line;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r");
    out.insert(fs::weakly_canonical(list.parent_path() / line.substr(b, e - b + 1)));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::set<fs::path> known_open;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--known-open" && i + 1 < argc) {
      known_open = read_known_open(argv[++i]);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(a))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::exists(a, ec)) {
      inputs.emplace_back(a);
    }
  }
  std::size_t ran = 0, skipped = 0;
  for (const auto& p : inputs) {
    if (known_open.contains(fs::weakly_canonical(p))) {
      std::printf(
          "SKIP %s: listed in KNOWN_OPEN (a fuzzing find, crash or slow input, not fixed yet)\n",
          p.c_str());
      ++skipped;
      continue;
    }
    bool ok = false;
    const std::string data = read_all(p, ok);
    if (!ok) {
      std::printf("FAIL %s: cannot read\n", p.c_str());
      return 1;
    }
    std::printf("replay %s (%zu bytes)\n", p.c_str(), data.size());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
    ++ran;
  }
  std::printf("%zu inputs replayed, %zu skipped as known open\n", ran, skipped);
  return 0;
}
