// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace man --out DIR` and `fabricplace completion`: the manual pages, fabricplace(1) and
// one per subcommand (fabricplace-fabric-export(1), ...), written from the same command definitions
// as --help, so the two cannot disagree (tests/cli/man_pages.sh checks every option of every --help
// against the rendered page). Hidden from --help: the build runs it (cli/CMakeLists.txt).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::cli {
namespace {

using str::roff;

/// The page's name for a command path: "fabricplace", "fabricplace-fabric-export".
std::string page_name(const std::vector<std::string>& path) {
  std::string name;
  for (const auto& p : path) name += (name.empty() ? "" : "-") + p;
  return name;
}

std::string command_line(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) s += (s.empty() ? "" : " ") + p;
  return s;
}

/// Visible subcommands (the hidden `man` aside), in definition order.
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const auto* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) out.push_back(sub);
  return out;
}

/// One option as the OPTIONS section lists it: ".TP\n\fB\-o\fR, \fB\-\-output\fR \fIFILE\fR".
std::string option_entry(const CLI::Option* o) {
  std::string names;
  auto add = [&names](const std::string& n) {
    names += (names.empty() ? "" : ", ") + ("\\fB" + roff(n) + "\\fR");
  };
  for (const auto& s : o->get_snames()) add("-" + s);
  for (const auto& l : o->get_lnames()) add("--" + l);
  if (o->get_positional() && names.empty()) names = "\\fI" + roff(o->get_name()) + "\\fR";
  std::string out = ".TP\n" + names;
  // CLI11's type name, less the validators' names it appends ("TEXT:--plugin"); a choice
  // list is kept ("TEXT:{a,b}" -> "{a,b}").
  auto type = o->get_type_name();
  if (const auto colon = type.find(':'); colon != std::string::npos)
    type = type[colon + 1] == '{' ? type.substr(colon + 1) : type.substr(0, colon);
  if (!o->get_positional() && o->get_type_size() != 0 && !type.empty())
    out += " \\fI" + roff(type) + "\\fR";
  out += "\n" + roff(o->get_description());
  if (o->get_required()) out += " (required)";
  const auto def = o->get_default_str();
  if (!def.empty()) out += " [default: " + roff(def) + "]";
  return out + "\n";
}

std::string page(const CLI::App& root, const CLI::App& app, const std::vector<std::string>& path,
                 const std::string& version) {
  const auto name = page_name(path);
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  std::string out = ".TH " + roff(upper) + " 1 \"\" \"fabricplace " + roff(version) +
                    "\" \"fabricplace manual\"\n";
  out += ".SH NAME\n" + roff(name) + " \\- " +
         roff(path.size() == 1 ? std::string("topology-aware placement and rank ordering for "
                                             "InfiniBand and Ethernet (RoCE) GPU clusters")
                               : app.get_description()) +
         "\n";
  const auto subs = visible_subcommands(app);
  std::vector<const CLI::Option*> positionals, options;
  for (const auto* o : app.get_options([](const CLI::Option*) { return true; })) {
    if (o->get_lnames().empty() && o->get_snames().empty() && !o->get_positional()) continue;
    (o->get_positional() ? positionals : options).push_back(o);
  }
  out += ".SH SYNOPSIS\n.B " + roff(command_line(path)) + "\n";
  if (!options.empty()) out += "[\\fIOPTIONS\\fR]";
  for (const auto* p : positionals)
    out += std::string(" ") + (p->get_required() ? "" : "[") + "\\fI" + roff(p->get_name()) +
           "\\fR" + (p->get_items_expected_max() > 1 ? "..." : "") + (p->get_required() ? "" : "]");
  if (!subs.empty()) out += " \\fISUBCOMMAND\\fR";
  out += "\n.SH DESCRIPTION\n" + roff(app.get_description()) + "\n";
  if (!app.get_footer().empty()) out += ".PP\n.nf\n" + roff(app.get_footer()) + "\n.fi\n";
  if (!subs.empty()) {
    out += ".SH SUBCOMMANDS\n";
    for (const auto* s : subs) {
      auto sub_path = path;
      sub_path.push_back(s->get_name());
      out += ".TP\n\\fB" + roff(s->get_name()) + "\\fR\n" + roff(s->get_description()) +
             " See \\fB" + roff(page_name(sub_path)) + "\\fR(1).\n";
    }
  }
  if (!positionals.empty()) {
    out += ".SH ARGUMENTS\n";
    for (const auto* p : positionals) out += option_entry(p);
  }
  if (!options.empty()) {
    out += ".SH OPTIONS\n";
    for (const auto* o : options) out += option_entry(o);
  }
  out +=
      ".SH EXIT STATUS\n0: success; 1: bad input or an I/O failure; 2: a bad command line; "
      "commands that can find no answer say so (place: 3). Errors name the file, the line "
      "and what was expected.\n";
  out += ".SH SEE ALSO\n";
  std::vector<std::string> see;
  if (path.size() > 1) see.push_back(page_name({path.begin(), path.end() - 1}));
  for (const auto* s : visible_subcommands(root)) see.push_back("fabricplace-" + s->get_name());
  std::vector<std::string> listed;  // each once, not this page; in the order above
  for (const auto& p : see)
    if (p != name && std::find(listed.begin(), listed.end(), p) == listed.end())
      listed.push_back(p);
  for (std::size_t i = 0; i < listed.size(); ++i)
    out += "\\fB\\%" + roff(listed[i]) + "\\fR(1)" + (i + 1 < listed.size() ? ",\n" : "\n");
  out += ".PP\nThe documentation in /usr/share/doc/fabricplace (docs/ in the source).\n";
  return out;
}

void walk(const CLI::App& root, const CLI::App& app, std::vector<std::string> path,
          const std::string& version, std::vector<std::pair<std::string, std::string>>& pages) {
  pages.emplace_back(page_name(path) + ".1", page(root, app, path, version));
  for (const auto* s : visible_subcommands(app)) {
    auto sub = path;
    sub.push_back(s->get_name());
    walk(root, *s, sub, version, pages);
  }
}

/// Every command path (" fabric export") with its subcommands and its options' names.
struct Completion {
  std::string path, subs, opts;
};
void completion_words(const CLI::App& app, const std::string& path, std::vector<Completion>& out) {
  Completion c{path, {}, {}};
  for (const auto* s : visible_subcommands(app))
    c.subs += (c.subs.empty() ? "" : " ") + s->get_name();
  for (const auto* o : app.get_options([](const CLI::Option*) { return true; })) {
    for (const auto& l : o->get_lnames()) c.opts += (c.opts.empty() ? "" : " ") + ("--" + l);
    for (const auto& sn : o->get_snames()) c.opts += (c.opts.empty() ? "" : " ") + ("-" + sn);
  }
  out.push_back(std::move(c));
  for (const auto* s : visible_subcommands(app))
    completion_words(*s, path + " " + s->get_name(), out);
}

/// A bash completion script for the command tree: a command's subcommands, its options after
/// "-", file names where it takes no subcommand.
std::string bash_completion(const CLI::App& app) {
  std::vector<Completion> paths;
  completion_words(app, "", paths);
  std::string known, cases;
  for (const auto& c : paths) {
    if (!c.path.empty()) known += (known.empty() ? "" : "|") + ("\"" + c.path + "\"");
    cases += "    \"" + c.path + "\") subs=\"" + c.subs + "\" opts=\"" + c.opts + "\" ;;\n";
  }
  return "# bash completion for fabricplace, written by `fabricplace completion` from the same\n"
         "# definitions as --help; installed as "
         "/usr/share/bash-completion/completions/fabricplace.\n"
         "_fabricplace() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" subs=\"\" opts=\"\" i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case \"$path ${COMP_WORDS[i]}\" in\n"
         "      " +
         known +
         ") path=\"$path ${COMP_WORDS[i]}\" ;;\n"
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n" +
         cases +
         "  esac\n"
         "  if [[ $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
         "  elif [[ -n $subs ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$subs\" -- \"$cur\")\n"
         "  else\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _fabricplace fabricplace\n";
}

}  // namespace

void add_completion_command(CLI::App& app, RunFn& run) {
  auto* cmd = app.add_subcommand("completion", "print the bash completion script");
  cmd->group("");  // hidden: for the build and the package
  cmd->callback([&run, &app] {
    run = [&app] {
      std::cout << bash_completion(app);
      return kExitOk;
    };
  });
}

void add_man_command(CLI::App& app, RunFn& run) {
  auto dir = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("man", "write the manual pages (fabricplace.1, ...) into a directory");
  cmd->group("");  // hidden: for the build and the package
  cmd->add_option("--out", *dir, "the directory to write them into")
      ->required()
      ->check(non_empty("a directory", "--out"));
  cmd->callback([&run, &app, dir] {
    run = [&app, dir] {
      std::error_code ec;
      std::filesystem::create_directories(*dir, ec);
      if (ec) return report(Error{ErrorCode::kIo, "cannot create: " + ec.message(), *dir, 0});
      std::vector<std::pair<std::string, std::string>> pages;
      walk(app, app, {"fabricplace"}, FABRICPLACE_VERSION, pages);
      for (const auto& [file, text] : pages)
        if (auto w = write_file_atomic(*dir + "/" + file, text); !w) return report(w.error());
      return kExitOk;
    };
  });
}

}  // namespace fabricplace::cli
