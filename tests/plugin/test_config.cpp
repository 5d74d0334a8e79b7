// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.hpp"

#include <gtest/gtest.h>

using fabricplace::plugin::parse_plugin_args;

TEST(PluginConfig, Defaults) {
  auto c = parse_plugin_args({});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->policy, "fabric");
  EXPECT_EQ(c->mode, "constrain");
  EXPECT_EQ(c->gpus_per_node, 8);
  EXPECT_EQ(c->topology, "tree");
  EXPECT_TRUE(c->fabric_path.empty());
}

TEST(PluginConfig, ReadsEveryKey) {
  auto c = parse_plugin_args({"fabric=/etc/slurm/fabric.json", "policy=slurm-tree", "mode=exact",
                              "gpus_per_node=4", "log=/tmp/fp.log", "topology=block"});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->fabric_path, "/etc/slurm/fabric.json");
  EXPECT_EQ(c->policy, "slurm-tree");
  EXPECT_EQ(c->mode, "exact");
  EXPECT_EQ(c->gpus_per_node, 4);
  EXPECT_EQ(c->log_path, "/tmp/fp.log");
  EXPECT_EQ(c->topology, "block");
}

TEST(PluginConfig, RejectsBadArguments) {
  EXPECT_EQ(parse_plugin_args({"fabric"}).error().message,
            "plugstack.conf argument \"fabric\": expected key=value");
  EXPECT_EQ(parse_plugin_args({"mode=fast"}).error().message,
            "mode=\"fast\": expected constrain, exact or off");
  EXPECT_EQ(parse_plugin_args({"policy=best"}).error().message,
            "policy=\"best\": expected fabric, slurm-tree, slurm-block or first-fit");
  EXPECT_EQ(parse_plugin_args({"gpus_per_node=0"}).error().message,
            "gpus_per_node=\"0\": expected an integer from 1 to 1024");
  EXPECT_EQ(parse_plugin_args({"topology=fat-tree"}).error().message,
            "topology=\"fat-tree\": expected tree or block (the cluster's TopologyPlugin)");
  EXPECT_EQ(parse_plugin_args({"colour=red"}).error().message,
            "unknown plugstack.conf argument \"colour\", expected fabric=, hostmap=, policy=, "
            "mode=, gpus_per_node=, topology=, hwloc_xml= or log=");
  // A value is quoted short and escaped: no line break or terminal escape reaches the log.
  EXPECT_EQ(
      parse_plugin_args({"mode=a\n\x1b[2J" + std::string(100, 'x')}).error().message,
      "mode=\"a\\n\\x1b[2J" + std::string(54, 'x') + "...\": expected constrain, exact or off");
}
