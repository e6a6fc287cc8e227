#include "genai/tokenizer/cli.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "genai/tokenizer/tokenizer.h"

namespace ogx::tok {

namespace {

struct Args {
  std::string dir, text, messages, tools;
  bool has_text = false, has_messages = false, no_special = false, add_gen = false;
};

// Throws std::invalid_argument with a usage message.
Args parse(const std::vector<std::string>& args, bool chat) {
  Args a;
  const char* usage = chat ? "usage: ogx chat-template DIR --messages JSON [--add-generation-prompt] [--tools JSON] --json"
                           : "usage: ogx tokenize DIR --text TEXT [--no-special] --json";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(s + " needs a value\n" + usage);
      return args[++i];
    };
    if (s == "--json") continue;
    if (!chat && s == "--text") { a.text = value(); a.has_text = true; }
    else if (!chat && s == "--no-special") a.no_special = true;
    else if (chat && s == "--messages") { a.messages = value(); a.has_messages = true; }
    else if (chat && s == "--tools") a.tools = value();
    else if (chat && s == "--add-generation-prompt") a.add_gen = true;
    else if (!s.empty() && s[0] == '-') throw std::invalid_argument("unknown option " + s + "\n" + usage);
    else if (a.dir.empty()) a.dir = s;
    else throw std::invalid_argument("unexpected argument " + s + "\n" + usage);
  }
  if (a.dir.empty()) throw std::invalid_argument(std::string("missing model folder\n") + usage);
  if (!chat && !a.has_text) throw std::invalid_argument(std::string("missing --text\n") + usage);
  if (chat && !a.has_messages) throw std::invalid_argument(std::string("missing --messages\n") + usage);
  return a;
}

template <typename F>
int run(const char* name, F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ogx " << name << ": " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "ogx " << name << ": unknown error\n";
    return 1;
  }
}

}  // namespace

int cmd_tokenize(const std::vector<std::string>& args) {
  return run("tokenize", [&] {
    Args a = parse(args, false);
    auto tok = Tokenizer::load(a.dir);
    std::vector<int32_t> ids = tok->encode(a.text, !a.no_special);
    nlohmann::json out;
    out["ids"] = ids;
    out["decoded"] = tok->decode(ids, true);
    out["decoded_keep_special"] = tok->decode(ids, false);
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  });
}

int cmd_chat_template(const std::vector<std::string>& args) {
  return run("chat-template", [&] {
    Args a = parse(args, true);
    auto tok = Tokenizer::load(a.dir);
    nlohmann::json out;
    out["text"] = tok->apply_chat_template(a.messages, a.add_gen, a.tools);
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  });
}

}  // namespace ogx::tok
