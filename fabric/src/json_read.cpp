// SPDX-License-Identifier: GPL-2.0-or-later
// Reading canonical JSON as a stream of SAX events straight into a FabricBuilder.
//
// Why not a DOM: building nlohmann's tree (a std::map per object) was over half the cost
// of loading a fabric, and canonical JSON is what the plugin and the simulator load on
// every start. The reader still accepts any valid JSON layout (keys in any order, links
// before nodes), rejects unknown and duplicate keys, and names the JSON path of every
// error ("nodes[3].guid: expected ...").
#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"

namespace fabricplace::fabric {
namespace {

using nlohmann::json;

// Fields of a node object, in the order docs/fabric-json.md lists them.
enum NodeField {
  kGuid,
  kType,
  kDesc,
  kNports,
  kVendid,
  kDevid,
  kSysimg,
  kLid,
  kLmc,
  kEnh,
  kPorts,
  kNodeFields
};
constexpr std::array<const char*, kNodeFields> kNodeKeys{
    "guid",       "type", "desc", "nports",         "vendid", "devid",
    "sysimgguid", "lid",  "lmc",  "enhanced_port0", "ports"};
enum PortField {
  kPortNum,
  kPortGuid,
  kPortLid,
  kPortLmc,
  kPortCounters,
  kPortProblems,
  kPortWas,
  kPortFields
};
constexpr std::array<const char*, kPortFields> kPortKeys{
    "port", "guid", "lid", "lmc", "counters", "problems", "was_linked_to"};
constexpr std::size_t kRequiredPortFields = 4;  // port, guid, lid, lmc; health is optional
constexpr std::size_t kMaxProblems = 4096;      // per port: one per counter and merged source
// "generation" (optional): the Slurm-side file set's id that `slurm sync` stamps
// (docs/operations.md); read and checked for shape, not kept in the Fabric.
// "domains" (version 2): accelerator (NVLink) domains, by host name.
constexpr std::array<const char*, 8> kTopKeys{"format", "version", "origin",     "incomplete",
                                              "nodes",  "links",   "generation", "domains"};
constexpr std::size_t kTopDomains = 7;
// Fields of a domain object.
constexpr std::array<const char*, 3> kDomainKeys{"name", "gpus_per_host", "hosts"};

template <std::size_t N>
int index_of(const std::array<const char*, N>& keys, const std::string& key) {
  for (std::size_t i = 0; i < N; ++i)
    if (key == keys[i]) return static_cast<int>(i);
  return -1;
}

// What a value means depends on where it is: the innermost open container and its key.
enum class Ctx {
  kTop,
  kNodes,
  kNode,
  kPorts,
  kPort,
  kCounters,
  kProblems,
  kWas,
  kIncomplete,
  kLinks,
  kLink,
  kLinkExtra,  // {"assumed": [...]} after a link's rate
  kAssumed,
  kDomains,
  kDomain,
  kDomainHosts
};

struct PendingPort {
  PortNum number = 0;
  bool bare = false;  // a bare number: the switch's GUID, LID and LMC
  PortRecord rec;
  std::size_t index = 0;
  PortHealth health;
};

struct PendingLink {
  std::array<std::uint64_t, 4> v{};  // guid_a, port_a, guid_b, port_b
  LinkRate rate;
  Assumed assumed;
  std::size_t index = 0;
  int line = 0;
};

class Reader final : public json::json_sax_t {
 public:
  Reader(std::string_view text, const std::string& file, FabricBuilder& builder)
      : text_(text), lines_(text), file_(file), b_(builder) {}

  /// How far the parser has read (TrackingIterator): gives every error its line.
  const char* furthest = nullptr;

  std::optional<Error> error;

  // --- containers ------------------------------------------------------------------
  bool start_object(std::size_t) override {
    if (stack_.empty()) return push(Ctx::kTop);
    switch (top()) {
      case Ctx::kNodes:
        node_ = NodeRecord{};
        node_line_ = line_now();
        node_seen_ = {};
        ports_.clear();
        for (PortNum n : numbers_seen_) number_seen_[n] = 0;
        numbers_seen_.clear();
        return push(Ctx::kNode);
      case Ctx::kPorts:
        port_ = PendingPort{};
        port_.index = port_index_;
        port_seen_ = {};
        return push(Ctx::kPort);
      case Ctx::kPort:
        if (key_ == "counters") {
          port_.health.has_counters = true;
          counter_seen_ = {};
          return push(Ctx::kCounters);
        }
        return unexpected_value("object");
      case Ctx::kLink:
        if (link_pos_ == 5) {
          ++link_pos_;
          key_.clear();
          return push(Ctx::kLinkExtra);
        }
        return unexpected_value("object");
      case Ctx::kDomains:
        domain_ = PendingDomain{};
        domain_.line = line_now();
        domain_seen_ = {};
        return push(Ctx::kDomain);
      default:
        return unexpected_value("object");
    }
  }

  bool key(string_t& k) override {
    key_ = k;
    switch (top()) {
      case Ctx::kTop: {
        const int i = index_of(kTopKeys, k);
        if (i < 0) return bad("(top level)", "unknown key " + str::quoted(k));
        if (top_seen_[static_cast<std::size_t>(i)])
          return bad("(top level)", "duplicate key " + str::quoted(k));
        top_seen_[static_cast<std::size_t>(i)] = true;
        return true;
      }
      case Ctx::kNode: {
        const int i = index_of(kNodeKeys, k);
        if (i < 0) return bad(node_path(""), "unknown key " + str::quoted(k));
        if (node_seen_[static_cast<std::size_t>(i)])
          return bad(node_path(""), "duplicate key " + str::quoted(k));
        node_seen_[static_cast<std::size_t>(i)] = true;
        return true;
      }
      case Ctx::kPort: {
        const int i = index_of(kPortKeys, k);
        if (i < 0) return bad(port_path(""), "unknown key " + str::quoted(k));
        if (port_seen_[static_cast<std::size_t>(i)])
          return bad(port_path(""), "duplicate key " + str::quoted(k));
        port_seen_[static_cast<std::size_t>(i)] = true;
        return true;
      }
      case Ctx::kDomain: {
        const int i = index_of(kDomainKeys, k);
        if (i < 0) return bad(domain_path(""), "unknown key " + str::quoted(k));
        if (domain_seen_[static_cast<std::size_t>(i)])
          return bad(domain_path(""), "duplicate key " + str::quoted(k));
        domain_seen_[static_cast<std::size_t>(i)] = true;
        return true;
      }
      case Ctx::kLinkExtra:
        if (k != "assumed") return bad(link_path(5), "unknown key " + str::quoted(k));
        if (assumed_seen_) return bad(link_path(5), "duplicate key " + str::quoted(k));
        assumed_seen_ = true;
        return true;
      case Ctx::kCounters: {
        const auto c = parse_counter(k);
        if (!c) return bad(port_path("counters"), "unknown counter " + str::quoted(k));
        counter_ = static_cast<std::size_t>(*c);
        if (counter_seen_[counter_])
          return bad(port_path("counters"), "duplicate key " + str::quoted(k));
        counter_seen_[counter_] = true;
        return true;
      }
      default:
        return true;
    }
  }

  bool end_object() override {
    const Ctx ctx = top();
    stack_.pop_back();
    switch (ctx) {
      case Ctx::kNode:
        return finish_node();
      case Ctx::kPort:
        return finish_port();
      case Ctx::kDomain:
        return finish_domain();
      case Ctx::kTop:
        return finish_top();
      default:
        return true;
    }
  }

  bool start_array(std::size_t) override {
    if (stack_.empty()) return bad("(top level)", "expected an object");
    switch (top()) {
      case Ctx::kTop:
        if (key_ == "incomplete") return push(Ctx::kIncomplete);
        if (key_ == "nodes") return push(Ctx::kNodes);
        if (key_ == "links") return push(Ctx::kLinks);
        if (key_ == "domains") return push(Ctx::kDomains);
        return unexpected_value("array");
      case Ctx::kDomain:
        if (key_ == "hosts") return push(Ctx::kDomainHosts);
        return unexpected_value("array");
      case Ctx::kNode:
        if (key_ == "ports") {
          port_index_ = 0;
          return push(Ctx::kPorts);
        }
        return unexpected_value("array");
      case Ctx::kPort:
        if (key_ == "problems") return push(Ctx::kProblems);
        if (key_ == "was_linked_to") {
          was_pos_ = 0;
          return push(Ctx::kWas);
        }
        return unexpected_value("array");
      case Ctx::kLinks:
        link_ = PendingLink{};
        link_.index = link_index_;
        link_.line = line_now();
        link_pos_ = 0;
        assumed_seen_ = false;
        return push(Ctx::kLink);
      case Ctx::kLinkExtra:
        if (key_ == "assumed") return push(Ctx::kAssumed);
        return unexpected_value("array");
      default:
        return unexpected_value("array");
    }
  }

  bool end_array() override {
    const Ctx ctx = top();
    stack_.pop_back();
    switch (ctx) {
      case Ctx::kNodes:
        return true;
      case Ctx::kPorts:
        return true;
      case Ctx::kLinks:
        return true;
      case Ctx::kWas:
        if (was_pos_ != 4) return bad(port_path("was_linked_to"), kWasShape);
        return true;
      case Ctx::kAssumed:
        return true;
      case Ctx::kLink:
        if (link_pos_ != 5 && link_pos_ != 6) return bad(link_path(-1), kLinkShape);
        if (links_.size() >= limits().ports)
          return bad(link_path(-1),
                     "more than " + std::to_string(limits().ports) +
                         " links (FABRICPLACE_MAX_PORTS raises the limit)",
                     ErrorCode::kUnsupported);
        links_.push_back(link_);
        ++link_index_;
        return true;
      default:
        return true;
    }
  }

  // --- scalars ---------------------------------------------------------------------
  bool number_unsigned(number_unsigned_t v) override {
    return scalar(Scalar{Scalar::kUnsigned, v, {}, false});
  }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<number_unsigned_t>(v));
    return scalar(Scalar{Scalar::kOther, 0, {}, false});
  }
  bool number_float(number_float_t, const string_t&) override {
    return scalar(Scalar{Scalar::kOther, 0, {}, false});
  }
  bool string(string_t& s) override {
    return scalar(Scalar{Scalar::kString, 0, std::move(s), false});
  }
  bool boolean(bool v) override { return scalar(Scalar{Scalar::kBool, 0, {}, v}); }
  bool null() override { return scalar(Scalar{Scalar::kOther, 0, {}, false}); }
  bool binary(binary_t&) override { return scalar(Scalar{Scalar::kOther, 0, {}, false}); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    parse_error_what = e.what();
    return false;
  }

  std::string parse_error_what;

 private:
  static constexpr const char* kLinkShape =
      "expected [\"0x<guid>\", port, \"0x<guid>\", port, \"<rate>\"] (and optionally "
      "{\"assumed\": [\"rate\", \"count\"]})";
  static constexpr const char* kAssumedShape = "expected an array of \"rate\" and \"count\"";
  static constexpr const char* kWasShape =
      "expected [\"0x<guid>\", port, \"<description>\", \"switch|ca|router\"]";

  struct Scalar {
    enum Kind { kUnsigned, kString, kBool, kOther } kind;
    std::uint64_t u;
    std::string s;
    bool b;
  };

  Ctx top() const { return stack_.back(); }
  bool push(Ctx c) {
    if (stack_.size() >= limits().json_depth)
      return bad("(top level)", "nested deeper than " + std::to_string(limits().json_depth) +
                                    " levels (FABRICPLACE_MAX_JSON_DEPTH raises the limit)");
    stack_.push_back(c);
    return true;
  }
  int line_now() {
    if (!furthest || furthest <= text_.data()) return 1;
    return lines_.line_at(static_cast<std::size_t>(furthest - text_.data()) - 1);
  }

  bool bad(const std::string& path, const std::string& what, ErrorCode code = ErrorCode::kSyntax,
           int line = 0) {
    if (!error) error = Error{code, path + ": " + what, file_, line > 0 ? line : line_now()};
    return false;
  }
  bool unexpected_value(const char* what) {
    switch (top()) {
      case Ctx::kTop:
        return bad(key_, std::string("expected a value here, not an ") + what);
      case Ctx::kNodes:
        return bad("nodes[" + std::to_string(node_index_) + "]", "expected an object");
      case Ctx::kNode:
        return bad(node_path(key_), std::string("expected a value here, not an ") + what);
      case Ctx::kPorts:
        return bad(port_path(""), "expected a port number or an object");
      case Ctx::kPort:
        return bad(port_path(key_), std::string("expected a value here, not an ") + what);
      case Ctx::kCounters:
        return bad(port_path("counters"), std::string("expected a number, not an ") + what);
      case Ctx::kProblems:
        return bad(port_path("problems"), std::string("expected a string, not an ") + what);
      case Ctx::kWas:
        return bad(port_path("was_linked_to"), kWasShape);
      case Ctx::kIncomplete:
        return bad("incomplete", std::string("expected a string, not an ") + what);
      case Ctx::kLinks:
        return bad(link_path(-1), kLinkShape);
      case Ctx::kLink:
        return bad(link_path(static_cast<int>(link_pos_)),
                   std::string("expected a value here, not an ") + what);
      case Ctx::kLinkExtra:
        return bad(link_path(5), std::string("expected a value here, not an ") + what);
      case Ctx::kAssumed:
        return bad(link_path(5) + ".assumed", kAssumedShape);
      case Ctx::kDomains:
        return bad(domain_path(""), "expected an object");
      case Ctx::kDomain:
        return bad(domain_path(key_), std::string("expected a value here, not an ") + what);
      case Ctx::kDomainHosts:
        return bad(domain_path("hosts"), std::string("expected a host name, not an ") + what);
    }
    return false;
  }

  std::string domain_path(std::string_view field) const {
    std::string p = "domains[" + std::to_string(domain_index_) + "]";
    if (!field.empty()) p += "." + std::string(field);
    return p;
  }

  std::string node_path(std::string_view field) const {
    std::string p = "nodes[" + std::to_string(node_index_) + "]";
    if (!field.empty()) p += "." + std::string(field);
    return p;
  }
  std::string port_path(std::string_view field) const {
    std::string p = node_path("ports[" + std::to_string(port_index_) + "]");
    if (!field.empty()) p += "." + std::string(field);
    return p;
  }
  std::string link_path(int k) const {
    std::string p = "links[" + std::to_string(link_index_) + "]";
    if (k >= 0) p += "[" + std::to_string(k) + "]";
    return p;
  }

  // Typed field readers; `path` is only called on error.
  template <class Path>
  std::optional<std::uint64_t> hex(const Scalar& v, Path&& path) {
    if (v.kind != Scalar::kString) {
      bad(path(), "expected a hexadecimal string like \"0x2c9\"");
      return std::nullopt;
    }
    if (!v.s.starts_with("0x")) {
      bad(path(), "expected a 0x-prefixed hexadecimal string");
      return std::nullopt;
    }
    const auto h = str::parse_hex(v.s);
    if (!h) bad(path(), str::quoted(v.s, 40) + " is not a 64-bit hexadecimal number");
    return h;
  }
  template <class Path>
  std::optional<std::uint64_t> uint(const Scalar& v, Path&& path, std::uint64_t max) {
    if (v.kind != Scalar::kUnsigned || v.u > max) {
      bad(path(), "expected an integer from 0 to " + std::to_string(max));
      return std::nullopt;
    }
    return v.u;
  }

  bool scalar(Scalar v) {
    if (stack_.empty()) return bad("(top level)", "expected an object");
    switch (top()) {
      case Ctx::kTop:
        return top_value(v);
      case Ctx::kNodes:
        return bad("nodes[" + std::to_string(node_index_) + "]", "expected an object");
      case Ctx::kNode:
        return node_value(v);
      case Ctx::kPorts:
        return bare_port(v);
      case Ctx::kPort:
        return port_value(v);
      case Ctx::kCounters: {
        const auto n = uint(
            v, [&] { return port_path("counters"); }, UINT64_MAX);
        if (!n) return false;
        port_.health.counters[counter_] = *n;
        return true;
      }
      case Ctx::kProblems:
        if (v.kind != Scalar::kString) return bad(port_path("problems"), "expected a string");
        if (port_.health.problems.size() >= kMaxProblems)
          return bad(port_path("problems"), "more than " + std::to_string(kMaxProblems) +
                                                " problems for one port (the health checks "
                                                "name at most one per counter and source)");
        port_.health.problems.push_back(v.s);
        return true;
      case Ctx::kWas: {
        const auto at = [&] { return port_path("was_linked_to"); };
        std::optional<std::uint64_t> x;
        if (was_pos_ == 0) {
          if (!(x = hex(v, at))) return false;
          port_.health.was_linked_to = *x;
        } else if (was_pos_ == 1) {
          if (!(x = uint(v, at, 65535))) return false;
          port_.health.was_linked_port = static_cast<PortNum>(*x);
        } else if (was_pos_ == 2 && v.kind == Scalar::kString) {
          port_.health.was_linked_desc = v.s;
        } else if (was_pos_ == 3 && v.kind == Scalar::kString &&
                   (v.s == "switch" || v.s == "ca" || v.s == "router")) {
          port_.health.was_linked_type = v.s == "switch" ? NodeType::kSwitch
                                         : v.s == "ca"   ? NodeType::kCa
                                                         : NodeType::kRouter;
        } else {
          return bad(at(), kWasShape);
        }
        ++was_pos_;
        return true;
      }
      case Ctx::kIncomplete:
        if (v.kind != Scalar::kString) return bad("incomplete", "expected a string");
        b_.add_incomplete(v.s);
        return true;
      case Ctx::kLinks:
        return bad(link_path(-1), kLinkShape);
      case Ctx::kLink:
        return link_value(v);
      case Ctx::kLinkExtra:
        return bad(link_path(5) + "." + key_, "expected an array");
      case Ctx::kDomains:
        return bad(domain_path(""), "expected an object");
      case Ctx::kDomain:
        return domain_value(v);
      case Ctx::kDomainHosts:
        if (v.kind != Scalar::kString) return bad(domain_path("hosts"), "expected a host name");
        if (domain_hosts_ >= limits().nodes)
          return bad(domain_path("hosts"),
                     "more than " + std::to_string(limits().nodes) +
                         " domain hosts (FABRICPLACE_MAX_NODES raises the limit)",
                     ErrorCode::kUnsupported);
        ++domain_hosts_;
        domain_.hosts.push_back(v.s);
        return true;
      case Ctx::kAssumed:
        if (v.kind == Scalar::kString && v.s == "rate" && !link_.assumed.rate)
          link_.assumed.rate = true;
        else if (v.kind == Scalar::kString && v.s == "count" && !link_.assumed.count)
          link_.assumed.count = true;
        else
          return bad(link_path(5) + ".assumed", kAssumedShape + std::string(", each at most once"));
        return true;
    }
    return false;
  }

  bool top_value(const Scalar& v) {
    if (key_ == "format") {
      if (v.kind != Scalar::kString || v.s != "fabricplace-fabric")
        return bad("format", "expected \"fabricplace-fabric\"");
      return true;
    }
    if (key_ == "version") {
      if (v.kind != Scalar::kUnsigned || v.u < 1 || v.u > static_cast<std::uint64_t>(kJsonVersion))
        return bad(
            "version",
            "this build reads versions 1 to " + std::to_string(kJsonVersion) + ", got " +
                (v.kind == Scalar::kUnsigned ? std::to_string(v.u) : std::string("a non-integer")));
      version_ = static_cast<int>(v.u);
      return true;
    }
    if (key_ == "generation") {
      if (v.kind != Scalar::kString || !str::is_generation(v.s))
        return bad("generation", "expected 16 lower-case hex digits (written by slurm sync)");
      return true;
    }
    if (key_ == "origin") {
      if (v.kind != Scalar::kString) return bad("origin", "expected a string");
      b_.set_origin(v.s);
      return true;
    }
    return bad(key_, "expected an array");  // incomplete, nodes, links, domains
  }

  bool domain_value(const Scalar& v) {
    if (key_ == "name") {
      if (v.kind != Scalar::kString) return bad(domain_path("name"), "expected a string");
      if (auto why = domain_name_problem(v.s); !why.empty())
        return bad(domain_path("name"), "expected a domain name: " + why);
      domain_.name = v.s;
      return true;
    }
    if (key_ == "gpus_per_host") {
      const auto n = uint(
          v, [&] { return domain_path("gpus_per_host"); }, kMaxGpusPerHost);
      if (!n) return false;
      domain_.gpus = static_cast<std::uint32_t>(*n);
      return true;
    }
    return bad(domain_path(key_), "expected an array of host names");
  }

  bool finish_domain() {
    if (!domain_seen_[0])
      return bad(domain_path(""), "missing \"name\"", ErrorCode::kSyntax, domain_.line);
    if (!domain_seen_[2] || domain_.hosts.empty())
      return bad(domain_path(""), "expected \"hosts\": a non-empty array of host names",
                 ErrorCode::kSyntax, domain_.line);
    if (!domain_names_.insert(domain_.name).second)
      return bad(domain_path("name"), "domain " + domain_.name + " is listed twice",
                 ErrorCode::kDuplicate, domain_.line);
    domains_.push_back(std::move(domain_));
    ++domain_index_;
    return true;
  }

  bool node_value(const Scalar& v) {
    const auto at = [&] { return node_path(key_); };
    const int field = index_of(kNodeKeys, key_);
    switch (field) {
      case kGuid: {
        const auto g = hex(v, at);
        if (!g) return false;
        node_.guid = *g;
        return true;
      }
      case kType:
        if (v.kind == Scalar::kString && v.s == "switch")
          node_.type = NodeType::kSwitch;
        else if (v.kind == Scalar::kString && v.s == "ca")
          node_.type = NodeType::kCa;
        else if (v.kind == Scalar::kString && v.s == "router")
          node_.type = NodeType::kRouter;
        else
          return bad(at(), "expected \"switch\", \"ca\" or \"router\"");
        return true;
      case kDesc:
        if (v.kind != Scalar::kString) return bad(at(), "expected a string");
        node_.description = v.s;
        return true;
      case kNports: {
        const auto n = uint(v, at, 65535);
        if (!n) return false;
        node_.num_ports = static_cast<PortNum>(*n);
        return true;
      }
      case kVendid:
      case kDevid: {
        const auto h = hex(v, at);
        if (!h) return false;
        (field == kVendid ? node_.vendor_id : node_.device_id) = static_cast<std::uint32_t>(*h);
        return true;
      }
      case kSysimg: {
        const auto h = hex(v, at);
        if (!h) return false;
        node_.system_image_guid = *h;
        return true;
      }
      case kLid: {
        const auto n = uint(v, at, 65535);
        if (!n) return false;
        node_.lid = static_cast<std::uint16_t>(*n);
        return true;
      }
      case kLmc: {
        const auto n = uint(v, at, 7);
        if (!n) return false;
        node_.lmc = static_cast<std::uint8_t>(*n);
        return true;
      }
      case kEnh:
        if (v.kind != Scalar::kBool) return bad(at(), "expected true or false");
        node_.enhanced_port0 = v.b;
        return true;
      default:
        return bad(at(), "expected an array");  // ports
    }
  }

  // A port number seen twice on one node is refused as it is read, so a node's pending ports
  // are at most 65,536 however long its list ("ports": [1, 1, 1, ...]).
  bool first_use(PortNum n) {
    if (number_seen_[n])
      return bad(port_path(""), "port " + std::to_string(n) + " is listed twice",
                 ErrorCode::kDuplicate);
    number_seen_[n] = 1;
    numbers_seen_.push_back(n);
    return true;
  }

  bool bare_port(const Scalar& v) {
    const auto n = uint(
        v, [&] { return port_path(""); }, 65535);
    if (!n) return false;
    if (!first_use(static_cast<PortNum>(*n))) return false;
    ports_.push_back(PendingPort{static_cast<PortNum>(*n), true, {}, port_index_++, {}});
    return true;
  }

  bool port_value(const Scalar& v) {
    const auto at = [&] { return port_path(key_); };
    const int field = index_of(kPortKeys, key_);
    if (field == kPortCounters) return bad(at(), "expected an object of counters");
    if (field == kPortProblems) return bad(at(), "expected an array of strings");
    if (field == kPortWas) return bad(at(), kWasShape);
    std::optional<std::uint64_t> x;
    switch (field) {
      case kPortNum:
        if (!(x = uint(v, at, 65535))) return false;
        port_.number = static_cast<PortNum>(*x);
        return true;
      case kPortGuid:
        if (!(x = hex(v, at))) return false;
        port_.rec.guid = *x;
        return true;
      case kPortLid:
        if (!(x = uint(v, at, 65535))) return false;
        port_.rec.lid = static_cast<std::uint16_t>(*x);
        return true;
      default:
        if (!(x = uint(v, at, 7))) return false;
        port_.rec.lmc = static_cast<std::uint8_t>(*x);
        return true;
    }
  }

  bool finish_port() {
    for (std::size_t f = 0; f < kRequiredPortFields; ++f)
      if (!port_seen_[f])
        return bad(port_path(""), std::string("missing \"") + kPortKeys[f] + "\"");
    if (!first_use(port_.number)) return false;
    ports_.push_back(port_);
    ++port_index_;
    return true;
  }

  bool link_value(const Scalar& v) {
    const auto at = [&] { return link_path(static_cast<int>(link_pos_)); };
    if (link_pos_ >= 5) return bad(link_path(-1), kLinkShape);
    std::optional<std::uint64_t> x;
    if (link_pos_ == 0 || link_pos_ == 2) {
      if (!(x = hex(v, at))) return false;
      link_.v[link_pos_] = *x;
    } else if (link_pos_ == 1 || link_pos_ == 3) {
      if (!(x = uint(v, at, 65535))) return false;
      link_.v[link_pos_] = *x;
    } else {
      const auto rate = v.kind == Scalar::kString ? parse_rate(v.s) : std::nullopt;
      if (!rate) return bad(at(), "expected a link rate like \"4xHDR\"");
      link_.rate = *rate;
    }
    ++link_pos_;
    return true;
  }

  bool finish_node() {
    const bool sw = node_.type == NodeType::kSwitch;
    for (std::size_t f = 0; f < kNodeFields; ++f) {
      const bool switch_only = f == kLid || f == kLmc || f == kEnh;
      if (switch_only && !sw) {
        if (node_seen_[f])
          return bad(node_path(""), std::string("unknown key \"") + kNodeKeys[f] + "\"");
        continue;
      }
      if (!node_seen_[f])
        return bad(node_path(""), std::string("missing \"") + kNodeKeys[f] + "\"");
    }
    if (b_.has_node(node_.guid))
      return bad(node_path(""), "duplicate GUID " + str::guid_hex(node_.guid),
                 ErrorCode::kDuplicate, node_line_);
    if (auto r = b_.add_node(node_); !r)
      return bad(node_path(""), r.error().message, r.error().code, node_line_);
    for (const PendingPort& p : ports_) {
      port_index_ = p.index;
      PortRecord rec = p.rec;
      rec.number = p.number;
      if (p.bare) {
        if (!sw)
          return bad(port_path(""),
                     "a bare port number is only allowed on switches; expected {\"port\": N, "
                     "\"guid\": ...}");
        rec.guid = node_.guid;
        rec.lid = node_.lid;
        rec.lmc = node_.lmc;
      }
      if (rec.number == 0) return bad(port_path(""), "port numbers start at 1");
      if (b_.has_port(node_.guid, rec.number))
        return bad(port_path(""), "port " + std::to_string(rec.number) + " is listed twice",
                   ErrorCode::kDuplicate);
      if (auto r = b_.add_port(node_.guid, rec); !r)
        return bad(port_path(""), r.error().message, r.error().code);
      if (!p.health.empty())
        if (auto r = b_.set_port_health(node_.guid, rec.number, p.health); !r)
          return bad(port_path(""), r.error().message, r.error().code);
    }
    ++node_index_;
    return true;
  }

  bool finish_top() {
    for (std::size_t i = 0; i < kTopKeys.size(); ++i)
      if (i != 2 && i != 3 && i != 6 && i != kTopDomains && !top_seen_[i])
        return bad("(top level)", std::string("missing \"") + kTopKeys[i] + "\"");
    if (top_seen_[kTopDomains] && version_ < 2)
      return bad("domains",
                 "domains need \"version\": 2 (this file says " + std::to_string(version_) + ")");
    // Links last: a hand-edited file may list them before the nodes.
    for (const PendingLink& l : links_) {
      link_index_ = l.index;
      for (const auto& [g, port] : {std::pair(l.v[0], l.v[1]), std::pair(l.v[2], l.v[3])})
        if (!b_.has_port(g, static_cast<PortNum>(port)))
          return bad(link_path(-1),
                     "port " + std::to_string(port) + " of " + str::guid_hex(g) + " is " +
                         (b_.has_node(g) ? "not listed in that node's \"ports\""
                                         : "on a node that is not in \"nodes\""),
                     ErrorCode::kReference, l.line);
      for (const auto& [g, port] : {std::pair(l.v[0], l.v[1]), std::pair(l.v[2], l.v[3])})
        if (b_.is_linked(g, static_cast<PortNum>(port)))
          return bad(link_path(-1),
                     "port " + std::to_string(port) + " of " + str::guid_hex(g) +
                         " is already linked by an earlier entry",
                     ErrorCode::kDuplicate, l.line);
      if (auto r = b_.add_link(l.v[0], static_cast<PortNum>(l.v[1]), l.v[2],
                               static_cast<PortNum>(l.v[3]), l.rate, l.assumed);
          !r)
        return bad(link_path(-1), r.error().message, r.error().code, l.line);
    }
    // Domains last too: their hosts are the nodes' (checked here, to name the entry).
    if (!domains_.empty()) {
      const auto hosts = b_.host_names();
      std::unordered_map<std::string, std::string> in;  // host -> its domain
      for (std::size_t i = 0; i < domains_.size(); ++i) {
        domain_index_ = i;
        const auto& dom = domains_[i];
        for (const auto& h : dom.hosts) {
          if (!hosts.contains(h))
            return bad(domain_path("hosts"), "host " + str::quoted(h, 60) + " is not in the fabric",
                       ErrorCode::kReference, dom.line);
          const auto [it, fresh] = in.emplace(h, dom.name);
          if (!fresh)
            return bad(domain_path("hosts"),
                       "host " + h +
                           (it->second == dom.name ? std::string(" is listed twice")
                                                   : " is also in domain " + it->second +
                                                         " (a host is in one domain)"),
                       ErrorCode::kDuplicate, dom.line);
          b_.add_domain_host(dom.name, h, dom.gpus);
        }
      }
    }
    return true;
  }

  std::string_view text_;
  str::LineCounter lines_;
  const std::string& file_;
  FabricBuilder& b_;
  int node_line_ = 0;
  std::vector<Ctx> stack_;
  std::string key_;
  std::array<bool, kTopKeys.size()> top_seen_{};
  std::array<bool, kNumCounters> counter_seen_{};
  std::size_t counter_ = 0, was_pos_ = 0;
  NodeRecord node_;
  std::array<bool, kNodeFields> node_seen_{};
  std::vector<PendingPort> ports_;
  std::vector<std::uint8_t> number_seen_ = std::vector<std::uint8_t>(65536);  // per node
  std::vector<PortNum> numbers_seen_;
  PendingPort port_;
  std::array<bool, kPortFields> port_seen_{};
  PendingLink link_;
  std::size_t link_pos_ = 0;
  bool assumed_seen_ = false;
  std::vector<PendingLink> links_;
  std::size_t node_index_ = 0, port_index_ = 0, link_index_ = 0;
  int version_ = 0;
  struct PendingDomain {
    std::string name;
    std::uint32_t gpus = 0;
    std::vector<std::string> hosts;
    int line = 0;
  };
  PendingDomain domain_;
  std::vector<PendingDomain> domains_;
  std::array<bool, kDomainKeys.size()> domain_seen_{};
  std::unordered_set<std::string> domain_names_;
  std::size_t domain_index_ = 0, domain_hosts_ = 0;
};

}  // namespace

Result<void> read_json(std::string_view text, const std::string& file, FabricBuilder& builder) {
  Reader reader(text, file, builder);
  reader.furthest = text.data();
  const str::TrackingIterator first{text.data(), &reader.furthest},
      last{text.data() + text.size(), &reader.furthest};
  const bool ok = json::sax_parse(first, last, &reader, json::input_format_t::json, true);
  if (ok) return {};
  if (reader.error) return std::unexpected(*reader.error);
  const int read_so_far =
      reader.furthest > text.data()
          ? str::line_at(text, static_cast<std::size_t>(reader.furthest - text.data()) - 1)
          : 1;
  return std::unexpected(json_syntax_error(reader.parse_error_what, read_so_far, file));
}

Error json_syntax_error(std::string_view what, int fallback_line, const std::string& file) {
  // nlohmann's message: "[json.exception.parse_error.101] parse error at line L, column C:
  // ..." (or out_of_range.406 for a number overflow, which names no line).
  int line = 0;
  if (const auto p = what.find("at line "); p != std::string_view::npos) {
    for (std::size_t i = p + 8;
         i < what.size() && what[i] >= '0' && what[i] <= '9' && line < 100000000; ++i)
      line = line * 10 + (what[i] - '0');
  }
  if (line <= 0) line = fallback_line;
  if (const auto p = what.find("parse error"); p != std::string_view::npos)
    what = what.substr(p);
  else if (const auto q = what.find("] ");
           what.starts_with("[json.exception") && q != std::string_view::npos)
    what = what.substr(q + 2);
  return Error{ErrorCode::kSyntax, "invalid JSON: " + str::excerpt(what, 200), file, line};
}

}  // namespace fabricplace::fabric
