// `ogx tokenize` and `ogx chat-template` subcommands. `args` excludes the program and subcommand names.
// Both print JSON to stdout and return 0; on error they print a message to stderr and return 1 (2: a usage error).
#pragma once
#include <string>
#include <vector>

#include "common/command_line.h"

namespace ogx::tok {

// ogx tokenize DIR --text TEXT [--no-special] --json
//   -> {"ids": [...], "decoded": "...", "decoded_keep_special": "..."}
cli::Runner define_tokenize(cli::Flags& flags);
inline constexpr cli::Command kTokenizeCommand = {"tokenize", "tokenize text: DIR --text T --json", define_tokenize};
int cmd_tokenize(const std::vector<std::string>& args);

// ogx chat-template DIR --messages JSON [--add-generation-prompt] [--tools JSON] --json -> {"text": "..."}
cli::Runner define_chat_template(cli::Flags& flags);
inline constexpr cli::Command kChatTemplateCommand = {
    "chat-template", "render the chat template: DIR --messages JSON --json", define_chat_template};
int cmd_chat_template(const std::vector<std::string>& args);

}  // namespace ogx::tok
