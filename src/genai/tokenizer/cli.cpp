#include "genai/tokenizer/cli.h"

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "genai/tokenizer/tokenizer.h"

namespace ogx::tok {

namespace {

struct TokenizeOptions {
  std::string dir, text;
  bool no_special = false, json = false;
};

struct ChatTemplateOptions {
  std::string dir, messages, tools;
  bool add_generation_prompt = false, json = false;
};

void print_json(const nlohmann::json& out) {
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

}  // namespace

cli::Runner define_tokenize(cli::Flags& flags) {
  auto o = std::make_shared<TokenizeOptions>();
  flags.positional("DIR", o->dir, "folder with tokenizer.json or tokenizer.model").required();
  flags.option("--text", o->text, "text to encode").required();
  flags.flag("--no-special", o->no_special, "encode without the special tokens (BOS) the tokenizer adds");
  flags.flag("--json", o->json, "print JSON (the only output format)");
  return [o] {
    auto tok = Tokenizer::load(o->dir);
    std::vector<int32_t> ids = tok->encode(o->text, !o->no_special);
    nlohmann::json out;
    out["ids"] = ids;
    out["decoded"] = tok->decode(ids, true);
    out["decoded_keep_special"] = tok->decode(ids, false);
    print_json(out);
    return 0;
  };
}

cli::Runner define_chat_template(cli::Flags& flags) {
  auto o = std::make_shared<ChatTemplateOptions>();
  flags.positional("DIR", o->dir, "folder with tokenizer_config.json (or chat_template.jinja)").required();
  flags.option("--messages", o->messages, "the conversation: a JSON list of {role, content}").required();
  flags.option("--tools", o->tools, "tool definitions: a JSON list");
  flags.flag("--add-generation-prompt", o->add_generation_prompt, "end with the assistant's turn opening");
  flags.flag("--json", o->json, "print JSON (the only output format)");
  return [o] {
    auto tok = Tokenizer::load(o->dir);
    nlohmann::json out;
    out["text"] = tok->apply_chat_template(o->messages, o->add_generation_prompt, o->tools);
    print_json(out);
    return 0;
  };
}

int cmd_tokenize(const std::vector<std::string>& args) { return cli::run_command(kTokenizeCommand, args); }
int cmd_chat_template(const std::vector<std::string>& args) { return cli::run_command(kChatTemplateCommand, args); }

}  // namespace ogx::tok
