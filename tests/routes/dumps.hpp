// SPDX-License-Identifier: GPL-2.0-or-later
// Route dumps of tests/data/routes (NAME-ENGINE.ibnetdiscover.txt.gz and .lfts.dump.gz, made
// with opensm on ibsim: tests/data/routes/README.md) and the entry-by-entry comparison of a
// model's table with opensm's, shared by the ftree, minhop and updn tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/routes/table.hpp"

namespace fabricplace::test {

inline const std::string kRouteDumps = std::string(FABRICPLACE_TEST_DATA) + "/routes/";

/// The fabric of STEM.ibnetdiscover.txt.gz (taken after the SM assigned LIDs).
inline fabric::Fabric load_dump(const std::string& stem) {
  auto text = read_file(kRouteDumps + stem + ".ibnetdiscover.txt.gz");
  EXPECT_TRUE(text) << text.error().to_string();
  fabric::FabricBuilder b(stem);
  auto r = fabric::read_ibnetdiscover(*text, stem, b);
  EXPECT_TRUE(r) << r.error().to_string();
  auto f = b.build();
  EXPECT_TRUE(f) << f.error().to_string();
  EXPECT_TRUE(f->check().empty());
  return std::move(*f);
}

/// opensm's tables, STEM.lfts.dump.gz, on that fabric.
inline routes::Table load_lfts(const fabric::Fabric& f, const std::string& stem) {
  auto text = read_file(kRouteDumps + stem + ".lfts.dump.gz");
  EXPECT_TRUE(text) << text.error().to_string();
  auto r = routes::lft_routes(f, *text, stem + ".lfts.dump");
  EXPECT_TRUE(r) << r.error().to_string();
  return std::move(*r);
}

struct Agreement {
  std::size_t entries = 0, entry_mismatches = 0, pairs = 0, path_mismatches = 0;
  std::size_t unrouted = 0;  ///< pairs neither table routes (holes both agree on)
  std::string first;         ///< the first mismatched entry, for the failure message
};

/// Every (switch, end port) entry, and the path of every ordered pair of end ports.
inline Agreement compare(const fabric::Fabric& f, const routes::Table& model,
                         const routes::Table& dump) {
  Agreement a;
  const std::uint32_t ends = model.ends().size();
  for (fabric::NodeId s : f.switches()) {
    for (std::uint32_t e = 0; e < ends; ++e) {
      ++a.entries;
      if (model.out_port(s, e) == dump.out_port(s, e)) continue;
      if (a.entry_mismatches++ == 0) {
        a.first = f.topology().switch_name[fabric::idx(s)] + " -> " +
                  fabric::port_name(f, model.ends().port(e)) + ": model " +
                  std::to_string(model.out_port(s, e)) + ", opensm " +
                  std::to_string(dump.out_port(s, e));
      }
    }
  }
  std::vector<routes::DirLink> pm, pd;
  for (std::uint32_t s = 0; s < ends; ++s) {
    for (std::uint32_t d = 0; d < ends; ++d) {
      if (s == d) continue;
      ++a.pairs;
      pm.clear();
      pd.clear();
      const bool ok_m = model.path(s, d, pm);
      const bool ok_d = dump.path(s, d, pd);
      a.path_mismatches += ok_m != ok_d || pm != pd;
      a.unrouted += !ok_m && !ok_d;
    }
  }
  return a;
}

/// FNV-1a (64-bit) of every entry of a table, switch by switch (f.switches() order), end
/// port by end port, each entry as 2 bytes, low first: a table's fingerprint, to compare
/// one built now with one recorded from an earlier implementation (test_table_digests.cpp).
inline std::uint64_t digest(const routes::Table& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto byte = [&](std::uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ULL;
  };
  for (fabric::NodeId s : t.fabric().switches()) {
    for (std::uint32_t e = 0; e < t.ends().size(); ++e) {
      const routes::PortNum p = t.out_port(s, e);
      byte(static_cast<std::uint8_t>(p & 0xFF));
      byte(static_cast<std::uint8_t>(p >> 8));
    }
  }
  return h;
}

}  // namespace fabricplace::test
