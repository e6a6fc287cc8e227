// Chat from C++: one generator keeps the whole conversation, so each turn only runs the model on the new tokens.
// Mirrors onnxruntime-genai's C++ chat example over the header-only wrapper ogx.hpp.
//
//   ogx_example_chat -m MODEL_DIR [-e follow_config|cpu|dml|vulkan] [-l MAX_LENGTH] [-n MAX_NEW_TOKENS]
//                    [-s SYSTEM_PROMPT] [-p USER_TURN]...
//
// Without -p, user turns are read from stdin, one per line, until an empty line or end of input.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "ogx/ogx.hpp"

namespace {

struct Options {
  std::string model_dir, provider = "follow_config", system_prompt = "You are a helpful assistant.";
  size_t max_length = 2048, max_new_tokens = 256;
  std::vector<std::string> turns;
};

[[noreturn]] void usage() {
  std::cerr << "usage: ogx_example_chat -m MODEL_DIR [-e follow_config|cpu|dml|vulkan] [-l MAX_LENGTH] "
               "[-n MAX_NEW_TOKENS] [-s SYSTEM_PROMPT] [-p USER_TURN]...\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage();
    std::string flag = argv[i], value = argv[++i];
    if (flag == "-m") o.model_dir = value;
    else if (flag == "-e") o.provider = value;
    else if (flag == "-l") o.max_length = std::stoul(value);
    else if (flag == "-n") o.max_new_tokens = std::stoul(value);
    else if (flag == "-s") o.system_prompt = value;
    else if (flag == "-p") o.turns.push_back(value);
    else usage();
  }
  if (o.model_dir.empty()) usage();
  return o;
}

// A JSON string literal.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += (char)c;
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += (char)c;
  }
  return out + "\"";
}

struct Message {
  std::string role, content;
};

std::string to_json(const std::vector<Message>& history) {
  std::string j = "[";
  for (size_t i = 0; i < history.size(); i++)
    j += (i ? ", " : "") + std::string("{\"role\": ") + quote(history[i].role) + ", \"content\": " +
         quote(history[i].content) + "}";
  return j + "]";
}

bool next_turn(Options& o, size_t& index, std::string& text) {
  if (!o.turns.empty()) {
    if (index >= o.turns.size()) return false;
    text = o.turns[index++];
    return true;
  }
  std::cout << "User: " << std::flush;
  return std::getline(std::cin, text) && !text.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    auto config = ogx::Config::Create(o.model_dir.c_str());
    if (o.provider != "follow_config") {
      config->ClearProviders();
      if (o.provider != "cpu") config->AppendProvider(o.provider.c_str());
    }
    auto model = ogx::Model::Create(*config);
    auto tokenizer = ogx::Tokenizer::Create(*model);
    auto params = ogx::GeneratorParams::Create(*model);
    params->SetSearchOption("max_length", static_cast<double>(o.max_length));
    auto generator = ogx::Generator::Create(*model, *params);

    std::vector<Message> history;
    if (!o.system_prompt.empty()) history.push_back({"system", o.system_prompt});
    std::string text;
    size_t turn = 0;
    while (next_turn(o, turn, text)) {
      history.push_back({"user", text});
      std::string prompt = tokenizer->ApplyChatTemplate(nullptr, to_json(history).c_str(), nullptr, true);
      std::vector<int32_t> tokens = tokenizer->Encode(prompt.c_str());
      if (tokens.size() + o.max_new_tokens > o.max_length) {
        std::cout << "(conversation too long for max_length " << o.max_length << "; ending)\n";
        break;
      }
      // Keep what the generator already holds; run the model only on the rest.
      std::vector<int32_t> held = generator->GetSequence(0);
      size_t kept = 0;
      while (kept < held.size() && kept < tokens.size() && held[kept] == tokens[kept]) kept++;
      if (kept == tokens.size()) kept--;  // something must be appended
      generator->RewindTo(kept);
      generator->AppendTokens(std::span<const int32_t>(tokens).subspan(kept));

      auto stream = ogx::TokenizerStream::Create(*tokenizer);
      std::vector<int32_t> reply;
      std::cout << "Assistant: " << std::flush;
      while (!generator->IsDone() && reply.size() < o.max_new_tokens) {
        generator->GenerateNextToken();
        int32_t token = generator->GetNextTokens()[0];
        reply.push_back(token);
        std::cout << stream->Decode(token) << std::flush;
      }
      std::cout << stream->Flush() << "\n";
      history.push_back({"assistant", tokenizer->Decode(reply)});
    }
  } catch (const ogx::Exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
