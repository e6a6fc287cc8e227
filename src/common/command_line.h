// The ogx commands' command lines, parsed by CLI11 (Debian's libcli11-dev). A command is a name, a one-line summary
// and a define function: it declares the command's flags (Flags, bound to an options struct it owns) and returns
// the function that runs the command once they are parsed. run_command parses, answers --help, suggests
// the closest flag for an unknown one, and turns errors into one line on stderr and an exit code.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ogx::cli {

using Runner = std::function<int()>;  // runs a parsed command; returns the exit code

// Declares a command's flags, each bound to a field of the command's options struct. Only command_line.cpp includes
// CLI11 (its header costs several seconds of compile time per file). Every flag is optional unless required()
// follows it; a non-optional field's value is the default that --help shows.
class Flags {
 public:
  explicit Flags(CLI::App& app) : app_(app) {}
  Flags& positional(const char* name, std::string& v, const char* help);
  Flags& option(const char* names, std::string& v, const char* help);  // names: "-i,--input" or "--text"
  Flags& option(const char* names, int& v, const char* help);
  Flags& option(const char* names, int64_t& v, const char* help);
  Flags& option(const char* names, uint64_t& v, const char* help);
  Flags& option(const char* names, float& v, const char* help);
  Flags& option(const char* names, std::optional<std::string>& v, const char* help);
  Flags& option(const char* names, std::optional<int>& v, const char* help);
  Flags& option(const char* names, std::optional<double>& v, const char* help);
  Flags& repeatable(const char* names, std::vector<std::string>& v, const char* help);  // one value per use
  Flags& choice(const char* names, std::string& v, const char* help, const std::vector<std::string>& allowed);
  Flags& flag(const char* names, bool& v, const char* help);
  Flags& required();                               // the flag declared last must be given
  Flags& description(const std::string& text);     // --help's text above the flags

 private:
  CLI::App& app_;
  CLI::Option* last_ = nullptr;
};

struct Command {
  const char* name;                 // "generate"
  const char* summary;              // one line for `ogx --help`
  Runner (*define)(Flags& flags);   // declares the flags, returns the runner
};

// A usage error found after parsing (flags that exclude each other, a missing one of two): exit code 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& msg) : std::runtime_error(msg) {}
};

// Exit codes: 0 success or --help; 1 the command failed (its error, one line naming the problem); 2 a usage error
// (unknown flag, missing or malformed value). `args` are the words after the command's name.
int run_command(const Command& command, const std::vector<std::string>& args);

// The candidate closest to `word` by edit distance, or "" when none is within max(2, a third of its length).
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ogx::cli
