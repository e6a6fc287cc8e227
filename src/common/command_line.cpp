#include "common/command_line.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "common/error.h"

namespace ogx::cli {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Every spelling of the app's flags, with their dashes: --max-new-tokens, -i, --input.
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// "unknown flag --top-kk (did you mean --top-k?)" for the first unexpected word that looks like a flag; "" if none.
std::string unknown_flag_message(const CLI::App& app) {
  for (const std::string& word : app.remaining()) {
    if (word.size() < 2 || word[0] != '-') continue;
    std::string flag = word.substr(0, word.find('='));
    std::string msg = "unknown flag " + flag;
    std::string near = closest(flag, flag_names(app));
    if (!near.empty()) msg += " (did you mean " + near + "?)";
    return msg;
  }
  return "";
}

// The one line for a parse error: an unknown flag first (CLI11 reports missing required ones before extras, but a
// misspelt flag is the likely cause of both), then an unexpected word, then CLI11's own message.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
  std::string msg = unknown_flag_message(app);
  if (!msg.empty()) return msg;
  std::vector<std::string> rest = app.remaining();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && !rest.empty()) return "unexpected argument '" + rest.front() + "'";
  return e.what();
}

template <typename T>
CLI::Option* add(CLI::App& app, const char* names, T& v, const char* help, bool show_default) {
  CLI::Option* o = app.add_option(names, v, help);
  if (show_default) o->capture_default_str();
  return o;
}

}  // namespace

Flags& Flags::positional(const char* name, std::string& v, const char* help) {
  last_ = add(app_, name, v, help, false);
  return *this;
}
Flags& Flags::option(const char* names, std::string& v, const char* help) {
  last_ = add(app_, names, v, help, !v.empty());
  return *this;
}
Flags& Flags::option(const char* names, int& v, const char* help) {
  last_ = add(app_, names, v, help, true);
  return *this;
}
Flags& Flags::option(const char* names, int64_t& v, const char* help) {
  last_ = add(app_, names, v, help, true);
  return *this;
}
Flags& Flags::option(const char* names, uint64_t& v, const char* help) {
  last_ = add(app_, names, v, help, true);
  return *this;
}
Flags& Flags::option(const char* names, float& v, const char* help) {
  last_ = add(app_, names, v, help, true);
  return *this;
}
Flags& Flags::option(const char* names, std::optional<std::string>& v, const char* help) {
  last_ = add(app_, names, v, help, false);
  return *this;
}
Flags& Flags::option(const char* names, std::optional<int>& v, const char* help) {
  last_ = add(app_, names, v, help, false);
  return *this;
}
Flags& Flags::option(const char* names, std::optional<double>& v, const char* help) {
  last_ = add(app_, names, v, help, false);
  return *this;
}
Flags& Flags::repeatable(const char* names, std::vector<std::string>& v, const char* help) {
  last_ = add(app_, names, v, help, false)->allow_extra_args(false);
  return *this;
}
Flags& Flags::choice(const char* names, std::string& v, const char* help, const std::vector<std::string>& allowed) {
  last_ = add(app_, names, v, help, !v.empty())->check(CLI::IsMember(allowed));
  return *this;
}
Flags& Flags::flag(const char* names, bool& v, const char* help) {
  last_ = app_.add_flag(names, v, help);
  return *this;
}
Flags& Flags::required() {
  if (last_) last_->required();
  return *this;
}
Flags& Flags::description(const std::string& text) {
  app_.description(text);
  return *this;
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

int run_command(const Command& command, const std::vector<std::string>& args) {
  const std::string name = std::string("ogx ") + command.name;
  CLI::App app(command.summary, name);
  app.get_formatter()->column_width(34);
  Flags flags(app);
  Runner run = command.define(flags);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the words last first
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s (%s --help lists the flags)\n", name.c_str(), parse_error_message(app, e).c_str(),
                 name.c_str());
    return 2;
  }
  try {
    return run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s (%s --help lists the flags)\n", name.c_str(), e.what(), name.c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", name.c_str(), e.what());
    return 1;
  }
}

}  // namespace ogx::cli
