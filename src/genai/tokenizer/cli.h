// `ogx tokenize` and `ogx chat-template` subcommands. `args` excludes the program and subcommand names.
// Both print JSON to stdout and return 0; on error they print a message to stderr and return 1.
#pragma once
#include <string>
#include <vector>

namespace ogx::tok {

// ogx tokenize DIR --text TEXT [--no-special] --json
//   -> {"ids": [...], "decoded": "...", "decoded_keep_special": "..."}
int cmd_tokenize(const std::vector<std::string>& args);
// ogx chat-template DIR --messages JSON [--add-generation-prompt] [--tools JSON] --json -> {"text": "..."}
int cmd_chat_template(const std::vector<std::string>& args);

}  // namespace ogx::tok
