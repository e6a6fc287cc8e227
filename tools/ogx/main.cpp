// ogx: command-line entry point. Each subcommand lives in its module; errors print one line and exit 1.
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "builder/cli.h"
#include "commands.h"
#include "common/error.h"
#include "genai/tokenizer/cli.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/cli.h"
#endif

namespace {

using Command = std::function<int(const std::vector<std::string>&)>;

int cmd_devices_unavailable(const std::vector<std::string>&) {
  std::fprintf(stderr, "ogx: this build has no Vulkan provider (configure with -DOGX_WITH_VULKAN=ON)\n");
  return 1;
}

const std::map<std::string, std::pair<Command, const char*>>& commands() {
  static const std::map<std::string, std::pair<Command, const char*>> c = {
      {"generate", {ogx::cli::cmd_generate, "run a model folder: --ids 1,2,3 or --prompt TEXT"}},
      {"bench", {ogx::cli::cmd_bench, "measure prefill/decode speed: --prompt-len P --gen-len G --json"}},
      {"check", {ogx::cli::cmd_check, "CPU vs GPU provider, token by token with logit margins: MODEL_DIR [--json]"}},
      {"serve", {ogx::cli::cmd_serve, "OpenAI-compatible HTTP server: MODEL_DIR [--host H] [--port P] [--api-key K]"}},
      {"tokenize", {ogx::tok::cmd_tokenize, "tokenize text: DIR --text T --json"}},
      {"chat-template", {ogx::tok::cmd_chat_template, "render the chat template: DIR --messages JSON --json"}},
      {"build", {ogx::builder::cmd_build, "convert a Hugging Face checkpoint: -i HF_DIR -o OUT -p P -e E"}},
#ifdef OGX_HAVE_VULKAN
      {"devices", {ogx::vk::cmd_devices, "list Vulkan devices [--json]"}},
#else
      {"devices", {cmd_devices_unavailable, "list Vulkan devices [--json]"}},
#endif
  };
  return c;
}

void usage() {
  std::fprintf(stderr, "usage: ogx COMMAND [args]\n\ncommands:\n");
  for (auto& [name, c] : commands()) std::fprintf(stderr, "  %-14s %s\n", name.c_str(), c.second);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 1 : 0;
  }
  auto it = commands().find(argv[1]);
  if (it == commands().end()) {
    std::fprintf(stderr, "ogx: unknown command '%s'\n", argv[1]);
    usage();
    return 1;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    return it->second.first(args);
  } catch (const ogx::Error& e) {
    std::fprintf(stderr, "ogx %s: error: %s\n", argv[1], e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ogx %s: internal error: %s\n", argv[1], e.what());
    return 1;
  }
}
