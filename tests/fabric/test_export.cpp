// SPDX-License-Identifier: GPL-2.0-or-later
// DOT and ibsim net writers.
#include "fabricplace/fabric/export.hpp"

#include <gtest/gtest.h>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

TEST(IbsimNet, CarriesExactGuidsRatesAndLimits) {
  const Fabric f = test::gen("fat2:leaves=2,down=2,up=2,degrade=leaf01:3:w=1");
  const std::string net = to_ibsim_net(f);
  const auto sz = ibsim_sizes(f);
  EXPECT_EQ(sz.nodes, 7u);
  EXPECT_EQ(sz.switches, 3u);
  EXPECT_EQ(sz.ports, 3u * 41u + 4u);
  EXPECT_NE(net.find("# start with: ibsim -N 7 -S 3 -P 127 <this file>\n"), std::string::npos)
      << net;
  // The first record is an HCA (ibsim's default SIM_HOST), with its GUID.
  const auto first = net.find("\nvendid=");
  const std::string head =
      "\nvendid=0x2c9\ndevid=0x101b\ncaguid=0x1070fd0300200000\nCa 1 \"node001_mlx5_0\" # "
      "\"node001 mlx5_0\"\n";
  EXPECT_EQ(net.substr(first, head.size()), head);
  EXPECT_NE(net.find("switchguid=0xfc6a1c0300100001\nSwitch 40 \"leaf01\" # "
                     "\"MF0;leaf01:MQM8700/U1\" enhanced port 0 lid 0 lmc 0\n"),
            std::string::npos);
  // The degraded link carries 1x on both ends.
  EXPECT_NE(net.find("[3]\t\"spine01\"[1]\t\t# \"MF0;spine01:MQM8700/U1\" lid 0 1xHDR\n"),
            std::string::npos)
      << net;
  EXPECT_NE(net.find("[1]\t\"leaf01\"[3]\t\t# \"MF0;leaf01:MQM8700/U1\" lid 0 1xHDR\n"),
            std::string::npos)
      << net;
}

TEST(IbsimNet, IsAlsoReadableAsADumpOfTheSameFabric) {
  // ibsim's net format is ibnetdiscover's; our reader needs "S-<guid>" ids, so this checks
  // the rates and descriptions line up by reading the ibnetdiscover writer instead.
  const Fabric f = test::gen("rail:sus=2,hosts=3,rails=2,up=3");
  FabricBuilder b;
  ASSERT_TRUE(read_ibnetdiscover(to_ibnetdiscover(f), "x", b));
  auto g = b.build();
  ASSERT_TRUE(g);
  test::expect_valid(*g);
  EXPECT_EQ(to_ibsim_net(*g).substr(to_ibsim_net(*g).find('\n')),
            to_ibsim_net(f).substr(to_ibsim_net(f).find('\n')));
}

TEST(Dot, FoldsParallelLinksAndMarksDegradedOnes) {
  const Fabric f = test::gen("fat2:leaves=2,down=2,up=4,spines=2,degrade=leaf02:4:s=EDR");
  const std::string dot = to_dot(f);
  EXPECT_EQ(dot.rfind("graph fabric {", 200) != std::string::npos, true);
  EXPECT_NE(dot.find("  \"leaf01\" -- \"spine01\" [label=\"2 x 4xHDR\"];\n"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("  \"leaf02\" -- \"spine02\" [label=\"4xEDR\", color=\"#e31a1c\", "
                     "fontcolor=\"#e31a1c\", penwidth=2];\n"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("  \"node001\" -- \"leaf01\" [label=\"4xHDR\"];\n"), std::string::npos);
  EXPECT_EQ(dot.back(), '\n');
}
