// ogx: command-line entry point. Every command is one row of kCommands (name, summary, the function declaring its
// flags); common/command_line.h parses them with CLI11. Errors print one line and exit 1 (2: a usage error).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "builder/cli.h"
#include "commands.h"
#include "genai/tokenizer/cli.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/cli.h"
#endif

namespace {

using ogx::cli::Command;

#ifndef OGX_HAVE_VULKAN
ogx::cli::Runner define_devices_unavailable(ogx::cli::Flags& flags) {
  static bool json = false;
  flags.flag("--json", json, "print JSON");
  return [] {
    std::fprintf(stderr, "ogx: this build has no Vulkan provider (configure with -DOGX_WITH_VULKAN=ON)\n");
    return 1;
  };
}
#endif

const Command kCommands[] = {
    {"generate", "run a model folder: MODEL_DIR (--ids 1,2,3 | --prompt TEXT)", ogx::cli::define_generate},
    {"chat", "a multi-turn conversation on the terminal: MODEL_DIR [--system TEXT]", ogx::cli::define_chat},
    {"bench", "measure prefill/decode speed: MODEL_DIR --prompt-len P --gen-len G --json", ogx::cli::define_bench},
    {"check", "CPU vs GPU provider, token by token with logit margins: MODEL_DIR [--json]", ogx::cli::define_check},
    {"serve", "OpenAI-compatible HTTP server: MODEL_DIR [--host H] [--port P] [--api-key K]", ogx::cli::define_serve},
    ogx::tok::kTokenizeCommand,
    ogx::tok::kChatTemplateCommand,
    ogx::builder::kBuildCommand,
#ifdef OGX_HAVE_VULKAN
    ogx::vk::kDevicesCommand,
#else
    {"devices", "list Vulkan devices [--json]", define_devices_unavailable},
#endif
};

void usage(FILE* f) {
  std::fprintf(f, "usage: ogx COMMAND [args]   (ogx COMMAND --help: the command's flags)\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(f, "  %-14s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  std::vector<std::string> names;
  for (const Command& c : kCommands) {
    if (name == c.name) return ogx::cli::run_command(c, std::vector<std::string>(argv + 2, argv + argc));
    names.push_back(c.name);
  }
  std::string near = ogx::cli::closest(name, names);
  std::fprintf(stderr, "ogx: unknown command '%s'%s\n", name.c_str(),
               near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str());
  usage(stderr);
  return 2;
}
