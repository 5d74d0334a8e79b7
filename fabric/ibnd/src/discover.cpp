// SPDX-License-Identifier: GPL-2.0-or-later
// libibnetdisc -> FabricBuilder. Attribute decoding follows infiniband-diags'
// ibnetdiscover.c: active width; active speed, or extended speed when the port's
// capability mask has IsExtendedSpeedsSupported (bit 14; for switch ports the mask lives in
// port 0's PortInfo); FDR10 from Mellanox ExtendedPortInfo.
#include "fabricplace/fabric_ibnd/discover.hpp"

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric::ibnd {
namespace {

constexpr std::uint32_t kCapIsExtendedSpeedsSupported = 1u << 14;
constexpr std::uint32_t kMlnxFdr10 = 1;
constexpr int kPhysStateLinkUp = 5;

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};
using FabricPtr = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

LinkWidth decode_width(std::uint32_t w) {
  switch (w) {
    case 1:
      return LinkWidth::k1x;
    case 2:
      return LinkWidth::k4x;
    case 4:
      return LinkWidth::k8x;
    case 8:
      return LinkWidth::k12x;
    case 16:
      return LinkWidth::k2x;
  }
  return LinkWidth::kUnknown;
}

LinkSpeed decode_speed(std::uint32_t speed, std::uint32_t ext, bool fdr10) {
  switch (ext) {
    case 0:
      break;
    case 1:
      return LinkSpeed::kFDR;
    case 2:
      return LinkSpeed::kEDR;
    case 4:
      return LinkSpeed::kHDR;
    case 8:
      return LinkSpeed::kNDR;
    default:
      return LinkSpeed::kUnknown;
  }
  if (speed == 4 && fdr10) return LinkSpeed::kFDR10;
  switch (speed) {
    case 1:
      return LinkSpeed::kSDR;
    case 2:
      return LinkSpeed::kDDR;
    case 4:
      return LinkSpeed::kQDR;
  }
  return LinkSpeed::kUnknown;
}

// The active rate one end of a link reports.
LinkRate port_rate(ibnd_port_t* port) {
  ibnd_node_t* node = port->node;
  std::uint8_t* capinfo = port->info;
  if (node->type == IB_NODE_SWITCH) {
    if (!node->ports || !node->ports[0]) return LinkRate{};  // no port 0 PortInfo: speed unknown
    capinfo = node->ports[0]->info;
  }
  const std::uint32_t cap = mad_get_field(capinfo, 0, IB_PORT_CAPMASK_F);
  const std::uint32_t width = mad_get_field(port->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
  const std::uint32_t speed = mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
  const std::uint32_t ext = (cap & kCapIsExtendedSpeedsSupported)
                                ? mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F)
                                : 0;
  const bool fdr10 =
      mad_get_field(port->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & kMlnxFdr10;
  return LinkRate{decode_width(width), decode_speed(speed, ext, fdr10)};
}

std::string description(const ibnd_node_t* n) {
  std::string d(n->nodedesc, strnlen(n->nodedesc, sizeof n->nodedesc));
  while (!d.empty() && (d.back() == ' ' || d.back() == '\0')) d.pop_back();
  return d;
}

std::string label(const ibnd_node_t* n) {
  const std::string d = description(n);
  if (d.empty()) return str::guid_hex(n->guid);
  if (n->type == IB_NODE_SWITCH) {  // "MF0;leaf01:MQM8700/U1" -> leaf01
    if (const auto semi = d.find(';'); semi != std::string::npos) {
      const auto colon = d.find(':', semi);
      return d.substr(semi + 1, colon == std::string::npos ? std::string::npos : colon - semi - 1);
    }
  }
  return d;
}

// The devices libibnetdisc asks for Mellanox ExtendedPortInfo (is_mlnx_ext_port_info_supported
// in rdma-core's libibnetdisc/ibnetdisc.c): only between two of them can a link run FDR10.
bool mlnx_epi_capable(const ibnd_node_t* n) {
  const auto devid = static_cast<std::uint16_t>(
      mad_get_field(const_cast<std::uint8_t*>(n->info), 0, IB_NODE_DEVID_F));
  const auto vendor = mad_get_field(const_cast<std::uint8_t*>(n->info), 0, IB_NODE_VENDORID_F);
  const bool bull = vendor == 0x119f;
  if ((devid >= 0xc738 && devid <= 0xc73b) || devid == 0xc839 || devid == 0xcb20 ||
      devid == 0xcf08 || devid == 0xcf09 || devid == 0xd2f0)
    return true;
  if (bull && (devid == 0x1b02 || devid == 0x1b50 || devid == 0x1ba0 ||
               (devid >= 0x1bd0 && devid <= 0x1bd5) || devid == 0x1bf0))
    return true;
  if ((devid >= 0x1003 && devid <= 0x101b) || devid == 0xa2d2) return true;
  return bull && (devid == 0x1b33 || devid == 0x1b73 || devid == 0x1b40 || devid == 0x1b41 ||
                  devid == 0x1b60 || devid == 0x1b61 || devid == 0x1b83 || devid == 0x1b93 ||
                  devid == 0x1b94 || devid == 0x1bb4 || devid == 0x1bb5 ||
                  (devid >= 0x1bc4 && devid <= 0x1bc6));
}

// A PortInfo that never arrived: libibnetdisc creates a port (and may link it) before its
// PortInfo does; a real one never has PortState 0 ("no state change").
bool portinfo_lost(ibnd_port_t* port) {
  return mad_get_field(port->info, 0, IB_PORT_STATE_F) == 0;
}

NodeType node_type(int t) {
  return t == IB_NODE_SWITCH   ? NodeType::kSwitch
         : t == IB_NODE_ROUTER ? NodeType::kRouter
                               : NodeType::kCa;
}

// Everything one discovery saw, in the builder, plus what it could not see.
Result<void> convert(ibnd_fabric_t* f, FabricBuilder& b, std::vector<std::string>& missing) {
  std::vector<std::string> up_no_peer, no_portinfo, port_no_info, no_switchinfo, no_epi, no_desc;
  for (ibnd_node_t* n = f->nodes; n; n = n->next) {
    NodeRecord r;
    r.guid = n->guid;
    r.type = node_type(n->type);
    r.description = description(n);
    r.num_ports = static_cast<PortNum>(n->numports);
    r.vendor_id = mad_get_field(n->info, 0, IB_NODE_VENDORID_F);
    r.device_id = mad_get_field(n->info, 0, IB_NODE_DEVID_F);
    r.system_image_guid = mad_get_field64(n->info, 0, IB_NODE_SYSTEM_GUID_F);
    if (r.type == NodeType::kSwitch) {
      r.lid = n->smalid;
      r.lmc = n->smalmc;
      r.enhanced_port0 = n->smaenhsp0 != 0;
    }
    if (r.description.empty()) no_desc.push_back(str::guid_hex(n->guid));
    // Every switch answers SwitchInfo with a non-zero LinearFDBCap; zero means it was lost.
    if (r.type == NodeType::kSwitch && mad_get_field(n->switchinfo, 0, IB_SW_LINEAR_FDB_CAP_F) == 0)
      no_switchinfo.push_back(label(n));
    if (r.type == NodeType::kSwitch && (!n->ports || !n->ports[0] || portinfo_lost(n->ports[0])))
      port_no_info.push_back(label(n) + "[0]");
    if (auto res = b.add_node(r); !res) return res;
  }
  for (ibnd_node_t* n = f->nodes; n; n = n->next) {
    std::vector<std::string> lost_ports;
    for (int p = 1; p <= n->numports; ++p) {
      ibnd_port_t* port = n->ports ? n->ports[p] : nullptr;
      if (!port) {
        // libibnetdisc reads PortInfo of every switch port; a hole is a lost MAD.
        if (n->type == IB_NODE_SWITCH) lost_ports.push_back(std::to_string(p));
        continue;
      }
      if (portinfo_lost(port)) port_no_info.push_back(label(n) + "[" + std::to_string(p) + "]");
      PortRecord pr;
      pr.number = static_cast<PortNum>(p);
      pr.guid = port->guid;
      pr.lid = n->type == IB_NODE_SWITCH ? n->smalid : port->base_lid;
      pr.lmc = n->type == IB_NODE_SWITCH ? n->smalmc : port->lmc;
      if (auto res = b.add_port(n->guid, pr); !res) return res;
      const int phys = static_cast<int>(mad_get_field(port->info, 0, IB_PORT_PHYS_STATE_F));
      if (!port->remoteport) {
        if (phys == kPhysStateLinkUp)
          up_no_peer.push_back(label(n) + "[" + std::to_string(p) + "]");
        continue;
      }
      ibnd_port_t* peer = port->remoteport;
      // Add each link once, from its lower (GUID, port) end, with the lower of both readings.
      if (std::pair(peer->node->guid, peer->portnum) < std::pair(n->guid, p)) continue;
      const LinkRate mine = port_rate(port), theirs = port_rate(peer);
      const LinkRate rate = lower_rate(mine, theirs);
      if (mine != theirs) {
        const std::string link = label(n) + "[" + std::to_string(p) + "] - " + label(peer->node) +
                                 "[" + std::to_string(peer->portnum) + "]";
        const bool fdr10_vs_qdr =
            (mine.speed == LinkSpeed::kFDR10 && theirs.speed == LinkSpeed::kQDR) ||
            (mine.speed == LinkSpeed::kQDR && theirs.speed == LinkSpeed::kFDR10);
        // Both ends of a link train to one rate. FDR10 is seen only in a separate Mellanox
        // ExtendedPortInfo MAD: when two capable ends disagree, one of those MADs was lost.
        if (fdr10_vs_qdr && mlnx_epi_capable(n) && mlnx_epi_capable(peer->node))
          no_epi.push_back(link);
        else  // e.g. a switch that does not advertise extended speeds in port 0
          b.add_warning("link " + link + " is read as " + mine.to_string() + " at one end and " +
                        theirs.to_string() + " at the other; taking " + rate.to_string());
      }
      if (auto res = b.add_link(n->guid, static_cast<PortNum>(p), peer->node->guid,
                                static_cast<PortNum>(peer->portnum), rate);
          !res)
        return res;
    }
    if (!lost_ports.empty())
      no_portinfo.push_back(label(n) + " (ports " + hostlist::compress(lost_ports) + ")");
  }
  auto summarize = [&](const std::vector<std::string>& v, const std::string& what) {
    if (v.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < v.size() && i < 12; ++i) list += (i ? ", " : "") + v[i];
    if (v.size() > 12) list += ", ... (" + std::to_string(v.size() - 12) + " more)";
    missing.push_back(std::to_string(v.size()) + " " + what + ": " + list);
  };
  summarize(up_no_peer, "port(s) with the link up but the peer never discovered");
  summarize(no_portinfo, "switch(es) without PortInfo for some ports");
  summarize(port_no_info, "port(s) whose PortInfo never arrived");
  summarize(no_switchinfo, "switch(es) whose SwitchInfo never arrived");
  summarize(
      no_epi,
      "link(s) read as FDR10 at one end and QDR at the other (a Mellanox ExtendedPortInfo lost)");
  summarize(no_desc, "node(s) without a node description");
  return {};
}

// FDR10 shows only in Mellanox ExtendedPortInfo, a MAD of its own that libibnetdisc may lose
// without failing; lost at both ends of a link, the link would pass for QDR. So wherever a
// link between two capable devices reads QDR without an extended speed, each end's
// ExtendedPortInfo is read again, over the directed route libibnetdisc used; what cannot be
// read is incompleteness.
void confirm_fdr10(ibnd_fabric_t* f, const DiscoverOptions& o, std::vector<std::string>& missing) {
  auto qdr_maybe_fdr10 = [](ibnd_port_t* port) {
    const LinkRate r = port_rate(port);
    return r.speed == LinkSpeed::kQDR && mlnx_epi_capable(port->node);
  };
  struct ibmad_port* src = nullptr;
  std::vector<std::string> unread;
  for (ibnd_node_t* n = f->nodes; n; n = n->next) {
    for (int p = 1; p <= n->numports; ++p) {
      ibnd_port_t* port = n->ports ? n->ports[p] : nullptr;
      if (!port || !port->remoteport || !qdr_maybe_fdr10(port) ||
          !mlnx_epi_capable(port->remoteport->node))
        continue;
      if (!src) {
        int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
        src = mad_rpc_open_port(o.ca.empty() ? nullptr : const_cast<char*>(o.ca.c_str()), o.port,
                                classes, 2);
        if (!src) {
          missing.push_back("cannot open a MAD port to confirm FDR10 links");
          return;
        }
        if (o.timeout_ms) mad_rpc_set_timeout(src, static_cast<int>(o.timeout_ms));
      }
      std::uint8_t buf[IB_SMP_DATA_SIZE] = {};
      ib_portid_t path = n->path_portid;
      if (smp_query_via(buf, &path, IB_ATTR_MLNX_EXT_PORT_INFO, static_cast<unsigned>(p),
                        o.timeout_ms, src))
        std::memcpy(port->ext_info, buf, sizeof buf);
      else
        unread.push_back(label(n) + "[" + std::to_string(p) + "]");
    }
  }
  if (src) mad_rpc_close_port(src);
  if (!unread.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unread.size() && i < 12; ++i) list += (i ? ", " : "") + unread[i];
    if (unread.size() > 12) list += ", ...";
    missing.push_back(std::to_string(unread.size()) +
                      " QDR port(s) between FDR10-capable devices whose ExtendedPortInfo could not "
                      "be read (FDR10 "
                      "unknown): " +
                      list);
  }
}

// Expectations from outside: a host count, the switches of a previous discovery.
void check_expectations(ibnd_fabric_t* f, const DiscoverOptions& o,
                        std::vector<std::string>& missing) {
  if (o.expect_hosts) {
    std::set<std::string> hosts;
    for (ibnd_node_t* n = f->nodes; n; n = n->next)
      if (n->type == IB_NODE_CA)
        hosts.insert(std::string(split_ca_description(description(n)).first));
    if (hosts.size() < *o.expect_hosts)
      missing.push_back("found " + std::to_string(hosts.size()) + " hosts, expected " +
                        std::to_string(*o.expect_hosts));
  }
  if (o.previous) {
    std::vector<std::string> gone;
    for (NodeId s : o.previous->switches())
      if (!ibnd_find_node_guid(f, o.previous->node(s).guid))
        gone.push_back(o.previous->topology().switch_name[idx(s)]);
    if (!gone.empty())
      missing.push_back(
          std::to_string(gone.size()) +
          " switch(es) of the previous discovery not found: " + hostlist::compress(gone));
  }
}

// PortCounters of every linked port, judged against the thresholds.
Result<std::size_t> read_counters(ibnd_fabric_t* f, const DiscoverOptions& o, FabricBuilder& b) {
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
  struct ibmad_port* src = mad_rpc_open_port(
      o.ca.empty() ? nullptr : const_cast<char*>(o.ca.c_str()), o.port, classes, 4);
  if (!src)
    return fail(ErrorCode::kIo, "cannot open a MAD port to read counters (CA " +
                                    (o.ca.empty() ? std::string("default") : o.ca) + ")");
  if (o.timeout_ms) mad_rpc_set_timeout(src, static_cast<int>(o.timeout_ms));
  if (o.retries) mad_rpc_set_retries(src, static_cast<int>(o.retries));
  std::size_t read = 0;
  std::vector<std::string> failed;
  static constexpr int kFields[kNumCounters] = {
      IB_PC_ERR_SYM_F,       IB_PC_LINK_RECOVERS_F,  IB_PC_LINK_DOWNED_F,    IB_PC_ERR_RCV_F,
      IB_PC_ERR_PHYSRCV_F,   IB_PC_ERR_SWITCH_REL_F, IB_PC_XMT_DISCARDS_F,   IB_PC_ERR_XMTCONSTR_F,
      IB_PC_ERR_RCVCONSTR_F, IB_PC_ERR_LOCALINTEG_F, IB_PC_ERR_EXCESS_OVR_F, IB_PC_VL15_DROPPED_F,
      IB_PC_XMT_WAIT_F};
  for (ibnd_node_t* n = f->nodes; n; n = n->next) {
    for (int p = 1; p <= n->numports; ++p) {
      ibnd_port_t* port = n->ports ? n->ports[p] : nullptr;
      if (!port || !port->remoteport) continue;
      const int lid = n->type == IB_NODE_SWITCH ? n->smalid : port->base_lid;
      if (lid == 0) {
        mad_rpc_close_port(src);
        return fail(ErrorCode::kUnsupported,
                    "reading counters needs LIDs, and " + label(n) +
                        " has none: no subnet manager has configured this fabric");
      }
      ib_portid_t id{};
      ib_portid_set(&id, lid, 0, 0);
      std::uint8_t buf[1024] = {};
      if (!pma_query_via(buf, &id, p, o.timeout_ms ? static_cast<unsigned>(o.timeout_ms) : 0,
                         IB_GSI_PORT_COUNTERS, src)) {
        // Kept with the port (and so in the JSON): a link whose counters cannot be read is
        // not known to be healthy.
        failed.push_back(label(n) + "[" + std::to_string(p) + "]");
        PortHealth h;
        h.problems.push_back("PortCounters could not be read");
        if (auto r = b.set_port_health(n->guid, static_cast<PortNum>(p), h); !r) {
          mad_rpc_close_port(src);
          return std::unexpected(r.error());
        }
        continue;
      }
      PortHealth h;
      h.has_counters = true;
      for (std::size_t c = 0; c < kNumCounters; ++c) {
        std::uint32_t v = 0;
        mad_decode_field(buf, static_cast<enum MAD_FIELDS>(kFields[c]), &v);
        h.counters[c] = v;
      }
      h.problems = judge(h.counters, o.thresholds);
      if (auto r = b.set_port_health(n->guid, static_cast<PortNum>(p), h); !r) {
        mad_rpc_close_port(src);
        return std::unexpected(r.error());
      }
      ++read;
    }
  }
  mad_rpc_close_port(src);
  if (!failed.empty()) {
    std::string list;
    for (std::size_t i = 0; i < failed.size() && i < 12; ++i) list += (i ? ", " : "") + failed[i];
    b.add_warning("PortCounters could not be read from " + std::to_string(failed.size()) +
                  " port(s): " + list + (failed.size() > 12 ? ", ..." : ""));
  }
  return read;
}

}  // namespace

Result<Fabric> discover(const DiscoverOptions& o, DiscoverReport* report) {
  DiscoverReport local;
  DiscoverReport& rep = report ? *report : local;
  const unsigned attempts = std::max(1u, o.attempts);
  for (rep.attempts = 1;; ++rep.attempts) {
    ibnd_config_t config{};
    config.max_smps = o.max_smps;
    config.timeout_ms = o.timeout_ms;
    config.retries = o.retries;
    config.flags = IBND_CONFIG_MLX_EPI;  // FDR10 is only visible in Mellanox ExtendedPortInfo
    const auto t0 = std::chrono::steady_clock::now();
    FabricPtr raw(ibnd_discover_fabric(o.ca.empty() ? nullptr : const_cast<char*>(o.ca.c_str()),
                                       o.port, nullptr, &config));
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!raw)
      return fail(ErrorCode::kIo,
                  "libibnetdisc could not discover the fabric from CA " +
                      (o.ca.empty() ? std::string("(default)") : o.ca) + " port " +
                      std::to_string(o.port) +
                      " (no IB device, port down, or no access to /dev/infiniband/umad*)");
    rep.mads = raw->total_mads_used;
    rep.missing.clear();
    const std::string from = raw->from_node ? description(raw->from_node) : std::string("?");
    FabricBuilder b("libibnetdisc from " +
                    (from.empty() ? str::guid_hex(raw->from_node->guid) : from));
    confirm_fdr10(raw.get(), o, rep.missing);
    if (auto r = convert(raw.get(), b, rep.missing); !r) return std::unexpected(r.error());
    check_expectations(raw.get(), o, rep.missing);
    const bool complete = rep.missing.empty();
    if (!complete && rep.attempts < attempts) continue;
    if (!complete && !o.allow_partial) {
      std::string what;
      for (const auto& m : rep.missing) what += "\n  " + m;
      return fail(ErrorCode::kIo,
                  "discovery incomplete after " + std::to_string(rep.attempts) + " attempt(s) (" +
                      std::to_string(rep.mads) + " MADs); missing:" + what +
                      "\nNothing was written. Retry, raise --attempts, or pass --allow-partial to "
                      "publish a fabric marked incomplete.");
    }
    for (const auto& m : rep.missing) b.add_incomplete(m);
    if (o.counters) {
      auto n = read_counters(raw.get(), o, b);
      if (!n) return std::unexpected(n.error());
      rep.counters_read = *n;
    }
    if (o.previous) note_lost_links(b, *o.previous);
    return b.build();
  }
}

}  // namespace fabricplace::fabric::ibnd
