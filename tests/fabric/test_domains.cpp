// SPDX-License-Identifier: GPL-2.0-or-later
// Accelerator (NVLink) domains: from specs (nvl=N), nvidia-smi output, a tiers CSV's domain
// column and canonical JSON; the same domains whichever source; clear errors for bad input.
#include "fabricplace/fabric/domains.hpp"

#include <gtest/gtest.h>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/report.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

// "nvl01=node[001-004] nvl02=node[005-008]": a fabric's domains, in order, for exact checks.
std::string domains_of(const Fabric& f) {
  std::string out;
  for (const auto& d : f.domains()) {
    std::vector<std::string> names;
    for (HostId h : d.hosts) names.push_back(f.host(h).name);
    out += (out.empty() ? "" : " ") + d.name + "=" + hostlist::compress(names) + "/" +
           std::to_string(d.gpus_per_host);
  }
  return out;
}

// The partition of the hosts into domains, names left out (sources name them differently).
std::vector<std::string> partition(const Fabric& f) {
  std::vector<std::string> out;
  for (const auto& d : f.domains()) {
    std::vector<std::string> names;
    for (HostId h : d.hosts) names.push_back(f.host(h).name);
    out.push_back(hostlist::compress(names) + "/" + std::to_string(d.gpus_per_host));
  }
  return out;
}

Error smi_error(const std::string& text) {
  auto r = read_nvidia_smi_domains(text, "smi.txt");
  EXPECT_FALSE(r) << text;
  return r ? Error{} : r.error();
}

const char* kA = "5c1e8a2f-9d3b-4e7a-8f21-3b6c0d9e4a17";
const char* kB = "a04f7e93-1c2d-4b58-9e6a-7d3f2b1c8e05";

}  // namespace

TEST(Domains, SpecConsecutiveHostsMayStraddleLeaves) {
  // 3 leaves of 12 hosts, domains of 18: nvl01 = leaf01's 12 + 6 of leaf02, nvl02 the rest.
  const auto f = test::gen("fat2:leaves=3,down=12,up=12,nvl=18,gpus=4");
  EXPECT_EQ(domains_of(f), "nvl01=node[001-018]/4 nvl02=node[019-036]/4");
  EXPECT_EQ(f.domain_of(*f.find_host("node018")), 0u);
  EXPECT_EQ(f.domain_of(*f.find_host("node019")), 1u);
  EXPECT_EQ(*f.find_domain("nvl02"), 1u);
  const auto text = show_text(f);
  EXPECT_NE(text.find("  NVLink domains: 2, 36 hosts in them, 2 across leaves\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    nvl01: 18 hosts node[001-018] of 4 GPUs (72 in all), leaves "
                      "leaf[01-02]\n"),
            std::string::npos)
      << text;
  // Under one leaf each, and on a rail-optimised fabric inside one rail group.
  EXPECT_EQ(domains_of(test::gen("fat2:leaves=2,down=8,up=8,nvl=4")),
            "nvl01=node[001-004]/0 nvl02=node[005-008]/0 nvl03=node[009-012]/0 "
            "nvl04=node[013-016]/0");
  const auto rail = test::gen("rail:sus=2,hosts=18,rails=4,nvl=18,gpus=4");
  EXPECT_EQ(domains_of(rail), "nvl01=node[001-018]/4 nvl02=node[019-036]/4");
  EXPECT_NE(show_text(rail).find("    nvl02: 18 hosts node[019-036] of 4 GPUs (72 in all), rail "
                                 "group (pod) 2\n"),
            std::string::npos)
      << show_text(rail);
  // No nvl=: no domains, and nothing said.
  const auto plain = test::gen("fat2:leaves=2,down=4,up=4");
  EXPECT_FALSE(plain.has_domains());
  EXPECT_EQ(plain.domain_of(HostId{0}), kNone);
  EXPECT_EQ(show_text(plain).find("NVLink"), std::string::npos);
}

// A domain across pods is one block for placement; the fabric's warnings say what the
// slurm-block export does with it (it lists it under its first host's pod).
TEST(Domains, AcrossPodsIsWarnedOf) {
  // 3 pods of 4 hosts, domains of 6: nvl01 = pods 1 and 2, nvl02 = pods 2 and 3.
  const auto f = test::gen("fat3:pods=3,leaves=1,down=4,up=4,nvl=6,gpus=4");
  EXPECT_EQ(f.topology().warnings,
            (std::vector<std::string>{
                "NVLink domain nvl01 spans pods 1, 2: one block for placement; the slurm-block "
                "export lists it under pod 1 (its first host's), so a pod-sized Slurm block that "
                "holds it reaches into another pod",
                "NVLink domain nvl02 spans pods 2, 3: one block for placement; the slurm-block "
                "export lists it under pod 2 (its first host's), so a pod-sized Slurm block that "
                "holds it reaches into another pod"}));
  // Inside pods: nothing said.
  EXPECT_TRUE(
      test::gen("fat3:pods=3,leaves=1,down=4,up=4,nvl=2,gpus=4").topology().warnings.empty());
}

TEST(Domains, SpecErrors) {
  auto err = [](const std::string& spec) {
    auto f = generate(spec);
    EXPECT_FALSE(f) << spec;
    return f ? std::string() : f.error().to_string();
  };
  EXPECT_EQ(err("fat2:leaves=2,down=4,up=4,nvl=3"),
            "spec: fat2: nvl=3 does not divide the 8 hosts into whole domains");
  EXPECT_EQ(err("fat2:leaves=2,down=4,up=4,gpus=4"),
            "spec: fat2: gpus= is the GPU count of the hosts of nvl= domains; give nvl= too");
  EXPECT_EQ(err("fat2:leaves=2,down=4,up=4,nvl=0"),
            "spec: fat2: nvl=0: expected an integer from 1 to 1048576");
  EXPECT_EQ(err("rail:nvl=4,nvl=2"), "spec: rail: key \"nvl\" given twice");
  // One GPU bound for every source (kMaxGpusPerHost): the spec's, the JSON's (below) and
  // nvidia-smi's (NvidiaSmiErrorsNameTheLine).
  EXPECT_EQ(err("fat2:leaves=2,down=4,up=4,nvl=4,gpus=1025"),
            "spec: fat2: gpus=1025: expected an integer from 1 to 1024");
  EXPECT_TRUE(generate("fat2:leaves=2,down=4,up=4,nvl=4,gpus=1024"));
  EXPECT_EQ(err("fat2:leaves=2,down=4,up=4,nvl=4,gpus=0"),
            "spec: fat2: gpus=0: expected an integer from 1 to 1024");
}

// The samples (tests/data/domains: pdsh-collected nvidia-smi output in its documented format,
// written by hand since no GB200 was at hand; interleaved, a header line among them) give the
// spec's domains: the same hosts, the same GPU counts.
TEST(Domains, NvidiaSmiSamplesBuildTheSpecDomains) {
  const auto spec = test::gen("fat2:leaves=2,down=4,up=4,nvl=4,gpus=4");
  const auto bare = test::gen("fat2:leaves=2,down=4,up=4");
  auto f = load_domains(bare, test::data("domains/nvl_8hosts.smi.txt"));
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(partition(*f), partition(spec));
  EXPECT_EQ(domains_of(*f),
            std::string("5c1e8a2f-9d3b-4e7a-8f21-3b6c0d9e4a17.32766=node[001-004]/4 ") +
                "a04f7e93-1c2d-4b58-9e6a-7d3f2b1c8e05.32766=node[005-008]/4");
  EXPECT_NE(f->origin().find("; domains "), std::string::npos);
  // topograph's two-field query; node008 not registered (all-zero UUID): in no domain.
  auto g = load_domains(bare, test::data("domains/nvl_8hosts_2fields.smi.txt"));
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(partition(*g), (std::vector<std::string>{"node[001-004]/4", "node[005-007]/4"}));
  EXPECT_EQ(g->domain_of(*g->find_host("node008")), kNone);
  EXPECT_NE(show_text(*g).find("hosts in none: node008"), std::string::npos);
  // The same through load_fabrics (--domains), replacing the domains a source carries.
  SourceOptions o;
  o.domains = test::data("domains/nvl_8hosts.smi.txt");
  auto h = load_fabrics({"fat2:leaves=2,down=4,up=4,nvl=2"}, o);
  ASSERT_TRUE(h) << h.error().to_string();
  EXPECT_EQ(partition(*h), partition(spec));
}

TEST(Domains, NvidiaSmiErrorsNameTheLine) {
  const std::string a = kA, b = kB;
  auto row = [](const std::string& host, int gpu, const std::string& uuid, const char* clique) {
    return host + ": " + std::to_string(gpu) + ", " + uuid + ", " + clique + "\n";
  };
  // A host in two domains.
  EXPECT_EQ(smi_error(row("n1", 0, a, "1") + row("n1", 1, b, "1")).to_string(),
            "smi.txt:2: host n1 is in two domains: " + b + ".1 here, " + a +
                ".1 at line 1 (a host's GPUs share one NVLink domain)");
  // Another partition (clique) of the same cluster is another domain.
  EXPECT_EQ(smi_error(row("n1", 0, a, "1") + row("n1", 1, a, "2")).line, 2);
  // In a domain and in none.
  EXPECT_EQ(smi_error(row("n1", 0, a, "1") + "n1: 1, N/A, N/A\n").to_string(),
            "smi.txt:2: host n1 is in two domains: none here, " + a +
                ".1 at line 1 (a host's GPUs share one NVLink domain)");
  // A domain of mixed GPU counts: the line of the host that differs.
  EXPECT_EQ(
      smi_error(row("n1", 0, a, "7") + row("n1", 1, a, "7") + row("n2", 0, a, "7")).to_string(),
      "smi.txt:3: domain " + a +
          ".7 mixes GPU counts: host n2 has 1 GPUs in it, host n1 "
          "(line 1) 2 (a domain's hosts are alike)");
  EXPECT_EQ(smi_error(row("n1", 0, a, "1") + row("n1", 0, a, "1")).to_string(),
            "smi.txt:2: host n1: GPU 0 is listed twice");
  EXPECT_EQ(smi_error("n1: 0, " + a + "\n" + row("n1", 1, a, "1")).line, 1);  // uuid, clique?
  // Two queries mixed for one host, either way round.
  EXPECT_EQ(smi_error("n1: " + a + ", 1\n" + row("n1", 1, a, "1")).to_string(),
            "smi.txt:2: host n1: 3 fields here, 2 (without the GPU index) at line 1; expected "
            "one query for every row");
  EXPECT_EQ(smi_error(row("n1", 0, a, "1") + "n1: " + a + ", 1\n").to_string(),
            "smi.txt:2: host n1: 2 fields here, 3 (with the GPU index) at line 1; expected one "
            "query for every row");
  EXPECT_EQ(smi_error("0, " + a + ", 1\n").to_string(),
            "smi.txt:1: expected \"HOST: INDEX, CLUSTER_UUID, CLIQUE_ID\" (pdsh output of "
            "nvidia-smi --query-gpu=index,fabric.clusterUuid,fabric.cliqueId "
            "--format=csv,noheader) or \"HOST: CLUSTER_UUID, CLIQUE_ID\", got \"0, " +
                a + ", 1\"");
  EXPECT_EQ(smi_error("n1: 0, not-a-uuid, 1\n").to_string(),
            "smi.txt:1: cluster UUID: expected 8-4-4-4-12 hexadecimal digits or N/A, got "
            "\"not-a-uuid\"");
  EXPECT_EQ(smi_error("n1: 0, " + a + ", x\n").to_string(),
            "smi.txt:1: clique ID: expected an integer from 0 to 4294967295 or N/A, got \"x\"");
  EXPECT_EQ(smi_error("n1: 0, " + a + ", N/A\n").to_string(),
            "smi.txt:1: expected both the cluster UUID and the clique ID, or N/A for both");
  EXPECT_EQ(smi_error("n1: 0, 1, 2, 3\n").to_string(),
            "smi.txt:1: expected \"HOST: INDEX, CLUSTER_UUID, CLIQUE_ID\" (pdsh output of "
            "nvidia-smi --query-gpu=index,fabric.clusterUuid,fabric.cliqueId "
            "--format=csv,noheader) or \"HOST: CLUSTER_UUID, CLIQUE_ID\"; got 4 fields");
  EXPECT_EQ(smi_error("# nothing\n\n").to_string(),
            "smi.txt:2: no GPU rows: expected \"HOST: INDEX, CLUSTER_UUID, CLIQUE_ID\" (pdsh "
            "output of nvidia-smi --query-gpu=index,fabric.clusterUuid,fabric.cliqueId "
            "--format=csv,noheader) or \"HOST: CLUSTER_UUID, CLIQUE_ID\"");
  // A host the fabric does not have: the line of its first row.
  const auto bare = test::gen("fat2:leaves=2,down=4,up=4");
  auto members =
      read_nvidia_smi_domains(row("node001", 0, a, "1") + row("gpu99", 0, a, "1"), "smi.txt");
  ASSERT_TRUE(members) << members.error().to_string();
  auto w = with_domains(bare, *members, "smi.txt");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().to_string(),
            "smi.txt:2: host \"gpu99\" is not in the fabric (spec fat2:leaves=2,down=4,up=4)");
  // A DNS domain is dropped, as hosts are named.
  members = read_nvidia_smi_domains(row("node001.cluster.example", 0, a, "1"), "smi.txt");
  ASSERT_TRUE(members);
  w = with_domains(bare, *members, "smi.txt");
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(w->domain_of(HostId{0}), 0u);
}

TEST(Domains, JsonRoundTripAndVersions) {
  const auto f = test::gen("fat2:leaves=3,down=12,up=12,nvl=18,gpus=4");
  const std::string json = to_json(f);
  EXPECT_NE(json.find("  \"version\": 2,\n"), std::string::npos);
  EXPECT_NE(json.find("  \"domains\": [\n    {\"name\": \"nvl01\", \"gpus_per_host\": 4, "
                      "\"hosts\": [\"node001\", \"node002\", "),
            std::string::npos);
  FabricBuilder b;
  ASSERT_TRUE(read_json(json, "f.json", b));
  auto back = b.build();
  ASSERT_TRUE(back) << back.error().to_string();
  test::expect_valid(*back);
  EXPECT_EQ(to_json(*back), json);
  EXPECT_EQ(domains_of(*back), domains_of(f));
  // Without domains: version 1, as builds before domains wrote and read it.
  EXPECT_NE(to_json(test::gen("fat2:leaves=2,down=4,up=4")).find("  \"version\": 1,\n"),
            std::string::npos);
  auto err = [](const std::string& text) {
    FabricBuilder fb;
    auto r = read_json(text, "f.json", fb);
    if (r) {
      auto built = fb.build();
      EXPECT_FALSE(built);
      return built ? std::string() : built.error().to_string();
    }
    return r.error().to_string();
  };
  std::string v1 = json;
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  EXPECT_NE(err(v1).find(": domains: domains need \"version\": 2 (this file says 1)"),
            std::string::npos)
      << err(v1);
  std::string v3 = json;
  v3.replace(v3.find("\"version\": 2"), 12, "\"version\": 3");
  EXPECT_EQ(err(v3), "f.json:3: version: this build reads versions 1 to 2, got 3");
  // Host errors name the domain entry and its line.
  const auto line_of = [&](const char* what) {
    const auto at = static_cast<long>(json.find(what));
    return std::to_string(1 + std::count(json.begin(), json.begin() + at, '\n'));
  };
  std::string unknown = json;
  unknown.replace(unknown.find("\"node001\""), 9, "\"gpu999\"");
  EXPECT_EQ(err(unknown), "f.json:" + line_of("{\"name\": \"nvl01\"") +
                              ": domains[0].hosts: host \"gpu999\" is not in the fabric");
  std::string twice = json;
  twice.replace(twice.find("\"node019\""), 9, "\"node001\"");
  EXPECT_EQ(err(twice), "f.json:" + line_of("{\"name\": \"nvl02\"") +
                            ": domains[1].hosts: host node001 is also in domain nvl01 (a host is "
                            "in one domain)");
  std::string again = json;
  again.replace(again.find("\"node002\""), 9, "\"node001\"");
  EXPECT_EQ(err(again), "f.json:" + line_of("{\"name\": \"nvl01\"") +
                            ": domains[0].hosts: host node001 is listed twice");
  std::string many = json;
  many.replace(many.find("\"gpus_per_host\": 4"), 18, "\"gpus_per_host\": 1025");
  EXPECT_NE(err(many).find("domains[0].gpus_per_host: expected an integer from 0 to 1024"),
            std::string::npos)
      << err(many);
  std::string badname = json;
  badname.replace(badname.find("\"nvl02\""), 7, "\"nv l2\"");
  EXPECT_NE(
      err(badname).find("domains[1].name: expected a domain name: domain name \"nv l2\" has a "
                        "character other than letters, digits and . _ : -"),
      std::string::npos);
}

TEST(Domains, TiersCsvDomainColumn) {
  const std::string csv =
      "host,leaf,spine,domain\n"
      "n1,leaf1,spine1,rackA\n"
      "n2,leaf1,spine1,rackA\n"
      "n3,leaf2,spine1,rackA\n"
      "n4,leaf2,spine1,\n";
  FabricBuilder b;
  ASSERT_TRUE(read_tiers_csv(csv, "t.csv", {}, b));
  auto f = b.build();
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(domains_of(*f), "rackA=n[1-3]/0");
  EXPECT_EQ(f->domain_of(*f->find_host("n4")), kNone);
  // Written back with the column, read back the same.
  auto out = to_tiers_csv(*f);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_NE(out->find("host,leaf,spine,domain\nn1,leaf1,spine1,rackA\n"), std::string::npos)
      << *out;
  EXPECT_NE(out->find("\nn4,leaf2,spine1,\n"), std::string::npos) << *out;
  FabricBuilder b2;
  ASSERT_TRUE(read_tiers_csv(*out, "t2.csv", {}, b2));
  auto g = b2.build();
  ASSERT_TRUE(g);
  EXPECT_EQ(domains_of(*g), domains_of(*f));
  // A bad domain name, and a row without the column.
  FabricBuilder b3;
  auto r = read_tiers_csv("host,leaf,spine,domain\nn1,leaf1,spine1,rack A\n", "t.csv", {}, b3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.csv:2: column domain: expected a domain name: domain name \"rack A\" has a "
            "character other than letters, digits and . _ : -");
  FabricBuilder b4;
  r = read_tiers_csv("host,leaf,spine,domain\nn1,leaf1,spine1\n", "t.csv", {}, b4);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "t.csv:2: expected 4 comma-separated columns, got 3");
  // A domain named as a switch: the block of that leaf's other hosts would share its name.
  FabricBuilder b5;
  ASSERT_TRUE(read_tiers_csv("host,leaf,spine,domain\nn1,l1,s1,l2\nn2,l2,s1,\n", "t.csv", {}, b5));
  auto clash = b5.build();
  ASSERT_FALSE(clash);
  EXPECT_EQ(clash.error().message,
            "domain l2 has the name of a switch; a domain's name must differ from every "
            "switch's (rename the domain)");
  EXPECT_EQ(clash.error().line, 2);
}

// A domain named as a Slurm switch that merges several fabric switches (spa1 and spa2 share
// their leaves: one Slurm switch "spa1-2"): every host under it has the feature spa1-2, so
// `-C spa1-2` would match n01-n04 besides the domain's n05-n06. Refused at the domain's line.
TEST(DomainNames, MergedSlurmSwitchNameRefused) {
  const std::string csv =
      "host,leaf,spine,core,domain\n"
      "n01,la1,spa1,c1,\n"
      "n02,la1,spa2,c1,\n"
      "n03,la2,spa1,c1,\n"
      "n04,la2,spa2,c1,\n"
      "n05,lb1,spb1,c1,spa1-2\n"
      "n06,lb1,spb2,c1,spa1-2\n"
      "n07,lb2,spb1,c1,\n"
      "n08,lb2,spb2,c1,\n";
  FabricBuilder b;
  ASSERT_TRUE(read_tiers_csv(csv, "t.csv", {}, b));
  auto f = b.build();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, fabricplace::ErrorCode::kSyntax);
  EXPECT_EQ(f.error().line, 6);
  EXPECT_EQ(f.error().message,
            "domain spa1-2 has the name the Slurm topology gives switches spa[1-2] (merged into "
            "one Slurm switch), so a feature constraint -C spa1-2 would match hosts outside the "
            "domain; a domain's name must differ from every switch's, merged ones included "
            "(rename the domain)");
  // Another name is taken, and its features stay inside the domain.
  std::string renamed = csv;
  for (auto at = renamed.find(",spa1-2"); at != std::string::npos; at = renamed.find(",spa1-2"))
    renamed.replace(at, 7, ",nvlB");
  FabricBuilder b2;
  ASSERT_TRUE(read_tiers_csv(renamed, "t.csv", {}, b2));
  auto ok = b2.build();
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_NE(to_slurm_features(*ok, slurm_tree(*ok)).find("NodeName=n[05-06] Features=lb1,spb1-2,nvlB\n"),
            std::string::npos);
}

// fabric diff (and fabric watch) see domains change: a repartition from 2-host to 4-host
// domains, and domains gone.
TEST(Domains, DiffNamesDomainChanges) {
  const auto a = test::gen("fat2:leaves=2,down=4,up=4,nvl=2");
  const auto b = test::gen("fat2:leaves=2,down=4,up=4,nvl=4");
  const auto d = diff(a, b);
  EXPECT_FALSE(d.empty());
  EXPECT_EQ(diff_text(d),
            "domain nvl01: node[001-002] -> node[001-004]\n"
            "domain nvl02: node[003-004] -> node[005-008]\n"
            "domain removed nvl03: node[005-006]\n"
            "domain removed nvl04: node[007-008]\n");
  const auto none = diff(b, test::gen("fat2:leaves=2,down=4,up=4"));
  ASSERT_EQ(none.domains.size(), 2u);
  EXPECT_EQ(none.domains[0].after, "");
  EXPECT_TRUE(diff(b, b).empty());
  const auto added = diff(test::gen("fat2:leaves=2,down=4,up=4"), b);
  EXPECT_EQ(diff_text(added),
            "domain added nvl01: node[001-004]\ndomain added nvl02: node[005-008]\n");
}
