// SPDX-License-Identifier: GPL-2.0-or-later
// Sources without InfiniBand identity: Slurm topology.conf and tiers CSV.
#include <gtest/gtest.h>

#include "fabricplace/fabric/sources.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
Result<Fabric> read(const std::string& text, bool csv,
                    LinkRate rate = {LinkWidth::k4x, LinkSpeed::kHDR}) {
  return fabricplace::test::read_tree_source(text, csv, rate);
}
}  // namespace

TEST(SlurmTopologySource, BuildsLevelsHostsAndRates) {
  auto f = read(
      "# site topology\nSwitchName=s1 Nodes=gpu[01-04]\nSwitchName=s2 Nodes=gpu[05-08] "
      "LinkSpeed=100\n"
      "SwitchName=top Switches=s[1-2]\n",
      false, {LinkWidth::k4x, LinkSpeed::kNDR});
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(f->num_hosts(), 8u);
  EXPECT_EQ(f->topology().leaves.size(), 2u);
  EXPECT_EQ(f->topology().level[idx(*f->find_switch("top"))], 2);
  EXPECT_EQ(f->link(LinkId{0}).rate.to_string(), "4xNDR");
  EXPECT_EQ(f->topology().host_leaves[idx(*f->find_host("gpu06"))],
            std::vector<NodeId>{*f->find_switch("s2")});
  // One uplink per leaf: 4 hosts down, 1 up.
  EXPECT_DOUBLE_EQ(f->topology().leaf_stats[0].oversubscription, 4.0);
}

TEST(TiersCsvSource, BuildsThreeTiers) {
  auto f = read(
      "host,leaf,spine,core\nh1,l1,s1,c1\nh2,l1,s1,c1\nh3,l2,s2,c1\n# comment\n\nh4,l2,s2,c1\n",
      true);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(f->num_hosts(), 4u);
  EXPECT_EQ(f->topology().max_level, 3);
  EXPECT_EQ(f->topology().pods.size(), 2u);  // l1+s1 and l2+s2 meet only at the core
  EXPECT_EQ(f->topology().level[idx(*f->find_switch("c1"))], 3);
  EXPECT_EQ(f->node(f->host(*f->find_host("h3")).hcas[0]).description, "h3 hca0");
}

struct BadTree {
  const char* name;
  bool csv;
  std::string text;
  std::string error;
  friend void PrintTo(const BadTree& b, std::ostream* os) { *os << b.name; }
};
class TreeSourceErrors : public ::testing::TestWithParam<BadTree> {};
TEST_P(TreeSourceErrors, NameFileLineAndExpectation) {
  auto r = read(GetParam().text, GetParam().csv);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), GetParam().error);
}
INSTANTIATE_TEST_SUITE_P(
    Table, TreeSourceErrors,
    ::testing::Values(
        BadTree{"unknown_key", false, "SwitchName=a Nodes=n1\nSwitchName=b Hosts=n2\n",
                "topology.conf:2: unknown key \"Hosts\", expected SwitchName, Nodes, Switches or "
                "LinkSpeed"},
        BadTree{"no_name", false, "Nodes=n1\n", "topology.conf:1: line has no SwitchName="},
        BadTree{"bad_hostlist", false, "SwitchName=a Nodes=n[1-\n",
                "topology.conf:1: Nodes=: hostlist \"n[1-\", column 2: '[' without ']'"},
        BadTree{"undefined_child", false, "SwitchName=a Nodes=n1\nSwitchName=top Switches=a,b\n",
                "topology.conf:2: switch top lists child switch b, which is never defined"},
        BadTree{"duplicate", false, "SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n",
                "topology.conf:2: switch a already defined at line 1"},
        BadTree{"empty_switch", false, "SwitchName=a\n",
                "topology.conf:1: switch a has neither Nodes= nor Switches="},
        BadTree{"not_kv", false, "SwitchName=a Nodes=n1 oops\n",
                "topology.conf:1: expected Key=Value, got \"oops\""},
        BadTree{"empty", false, "# nothing\n",
                "topology.conf:1: no SwitchName= lines up to the end: not a Slurm topology.conf"},
        BadTree{"csv_header", true, "name,leaf\nh1,l1\n",
                "t.csv:1: expected the header line \"host,leaf,spine\" or "
                "\"host,leaf,spine,core\" (and optionally a last column \"domain\"), got "
                "\"name,leaf\""},
        BadTree{"csv_columns", true, "host,leaf,spine\nh1,l1,s1\nh2,l1\n",
                "t.csv:3: expected 3 comma-separated columns, got 2"},
        BadTree{"csv_dup_host", true, "host,leaf,spine\nh1,l1,s1\nh1,l2,s1\n",
                "t.csv:3: host h1 already listed at line 2"},
        BadTree{"csv_tier_clash", true, "host,leaf,spine\nh1,l1,s1\nh2,s1,s2\n",
                "t.csv:3: \"s1\" is a leaf here but a spine at line 2"},
        BadTree{"csv_bad_name", true, "host,leaf,spine\nh 1,l1,s1\n",
                "t.csv:2: column host: expected a printable name of at most 255 bytes without "
                "blanks, commas, brackets or quotes, got \"h 1\""},
        BadTree{"csv_long_name", true, "host,leaf,spine\nh1," + std::string(256, 'l') + ",s1\n",
                "t.csv:2: column leaf: expected a printable name of at most 255 bytes without "
                "blanks, commas, brackets or quotes, got \"" +
                    std::string(60, 'l') + "...\""},
        BadTree{"conf_long_host", false,
                "SwitchName=s1 Nodes=h[1-2]" + std::string(300, 'x') + "\n",
                "topology.conf:1: Nodes=: host name \"h1" + std::string(58, 'x') +
                    "...\" is 302 bytes long, more than 255 (a DNS name's longest)"},
        BadTree{"conf_long_child", false, "SwitchName=s1 Switches=" + std::string(256, 'c') + "\n",
                "topology.conf:1: Switches=: bad switch name \"" + std::string(60, 'c') +
                    "...\", expected printable text of at most 255 bytes without blanks, commas, "
                    "brackets, '=' or quotes"},
        BadTree{
            "conf_shell_host", false, "SwitchName=s1 Nodes=a(1)\n",
            "topology.conf:1: Nodes=: host name \"a(1)\" holds one of , [ ] = # \" ' \\ ; & | $ "
            "` ( ) { } < > * ? ! ~, which Slurm's files, hostlists or a shell give a meaning; "
            "expected a plain host name"},
        BadTree{"csv_bidi_host", true,
                "host,leaf,spine\nh\xe2\x80\xae"
                "1,l1,s1\n",
                "t.csv:2: column host: expected a printable name of at most 255 bytes without "
                "blanks, commas, brackets or quotes, got \"h\\u{202e}1\""},
        BadTree{"csv_shell_host", true, "host,leaf,spine\nh$1,l1,s1\n",
                "t.csv:2: column host: host name \"h$1\" holds one of , [ ] = # \" ' \\ ; & | $ "
                "` ( ) { } < > * ? ! ~, which Slurm's files, hostlists or a shell give a meaning; "
                "expected a plain host name"},
        BadTree{"csv_no_rows", true, "host,leaf,spine\n",
                "t.csv:1: no host rows after the header, up to the end"}));

TEST(SlurmTopologySource, FlatSwitchesMayHoldThousandsOfHosts) {
  auto f = read("SwitchName=s1 Nodes=node[0001-1000]\n", false);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(f->num_hosts(), 1000u);
  EXPECT_EQ(f->topology().leaf_stats[0].hosts, 1000u);
}

TEST(SlurmTopologySource, TabsSeparateKeysToo) {
  auto f = read("SwitchName=s1\tNodes=n[1-2]\n", false);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(f->num_hosts(), 2u);
}

TEST(SlurmTopologySource, CyclesAreRejected) {
  auto f = read("SwitchName=a Nodes=n1\nSwitchName=s1 Switches=s2,a\nSwitchName=s2 Switches=s1\n",
                false);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().to_string(),
            "topology.conf:2: switch s1 lists s2 as a child, but s2 is already above it: a cycle, "
            "not a tree");
}
