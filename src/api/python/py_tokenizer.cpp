// Python: Tokenizer and TokenizerStream.
#include "py_util.h"

namespace ogx::py_module {

namespace {

// A chat given as a JSON string, or as a list of {"role", "content"} dicts (serialized here).
std::string json_arg(const py::handle& obj, const char* what) {
  if (py::isinstance<py::str>(obj)) return c_text(obj.cast<std::string>(), what);
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) || py::isinstance<py::dict>(obj))
    return py::module_::import("json").attr("dumps")(obj).cast<std::string>();
  throw py::type_error(std::string(what) + ": expected a JSON string or a list of dicts, got " +
                       std::string(py::str(py::type::of(obj).attr("__name__"))));
}

py::list decode_batch(const ogx::Tokenizer& t, const py::object& tokens) {
  if (py::isinstance<ogx::Tensor>(tokens)) return decode_batch(t, to_numpy(tokens.cast<const ogx::Tensor&>()));
  auto rows = token_rows(tokens, "decode_batch");
  auto texts = nogil([&] {
    std::vector<std::string> out;
    for (auto& r : rows) out.push_back(t.Decode(r));
    return out;
  });
  py::list out;
  for (auto& s : texts) out.append(utf8(s));
  return out;
}

py::array_t<int32_t> encode_batch(const ogx::Tokenizer& t, const std::vector<std::string>& texts) {
  for (const auto& s : texts) c_text(s, "encode_batch");
  std::unique_ptr<ogx::Tensor> tensor = nogil([&] { return t.EncodeBatch(texts); });
  std::vector<int64_t> shape = tensor->Shape();
  py::array_t<int32_t> a({static_cast<py::ssize_t>(shape[0]), static_cast<py::ssize_t>(shape[1])});
  std::copy_n(static_cast<const int32_t*>(tensor->Data()), tensor->ElementCount(), a.mutable_data());
  return a;
}

void update_options(ogx::Tokenizer& t, const py::kwargs& kw) {
  std::vector<std::string> keys, values;
  for (auto item : kw) {
    keys.push_back(item.first.cast<std::string>());
    if (py::isinstance<py::bool_>(item.second)) values.push_back(item.second.cast<bool>() ? "true" : "false");
    else values.push_back(py::str(item.second).cast<std::string>());
  }
  std::vector<const char*> k, v;
  for (size_t i = 0; i < keys.size(); i++) {
    k.push_back(keys[i].c_str());
    v.push_back(values[i].c_str());
  }
  nogil([&] { t.UpdateOptions(k.data(), v.data(), k.size()); });
}

}  // namespace

void bind_tokenizer(py::module_& m) {
  py::class_<ogx::TokenizerStream>(m, "TokenizerStream", "Decodes one token at a time as onnxruntime_genai's TokenizerStream does (special tokens skipped).")
      .def("decode",
           [](ogx::TokenizerStream& s, int64_t token) {
             if (token < INT32_MIN || token > INT32_MAX) throw py::value_error("decode: token id does not fit int32");
             return utf8(nogil([&] { return std::string(s.Decode(static_cast<int32_t>(token))); }));
           },
           py::arg("token"), "The text this token adds ('' while a multi-byte character is incomplete).")
      .def("flush", [](ogx::TokenizerStream& s) { return utf8(nogil([&] { return s.Flush(); })); },
           "Resets the stream (ogx's addition); returns '' (an unfinished character's bytes are dropped).");

  py::class_<ogx::Tokenizer>(m, "Tokenizer", "The tokenizer of a model's folder.")
      .def(py::init([](const ogx::Model& md) { return nogil([&] { return std::make_unique<ogx::Tokenizer>(md); }); }),
           py::arg("model"))
      .def("encode",
           [](const ogx::Tokenizer& t, const std::string& text) {
             c_text(text, "encode");
             auto ids = nogil([&] { return t.Encode(text.c_str()); });
             return to_numpy(ids);
           },
           py::arg("text"), "Token ids (numpy int32) of UTF-8 text, BOS added as the tokenizer is configured.")
      .def("decode",
           [](const ogx::Tokenizer& t, const py::object& tokens) {
             auto ids = token_ids(tokens, "decode");
             return utf8(nogil([&] { return t.Decode(ids); }));
           },
           py::arg("tokens"), "Text of token ids (special tokens skipped).")
      .def("encode_batch", &encode_batch, py::arg("texts"),
           "Token ids of several texts: numpy int32 [count, longest], right-padded with pad_token_id.")
      .def("decode_batch", &decode_batch, py::arg("tokens"),
           "Texts of a 2-D array or a list of token-id sequences.")
      .def("to_token_id",
           [](const ogx::Tokenizer& t, const std::string& s) {
             c_text(s, "to_token_id");
             return nogil([&] { return t.ToTokenId(s.c_str()); });
           },
           py::arg("text"), "The id of one vocabulary entry, -1 if absent.")
      .def("apply_chat_template",
           [](const ogx::Tokenizer& t, const py::object& messages, const std::optional<std::string>& template_str,
              const py::object& tools, bool add_generation_prompt, const py::object& template_kwargs) {
             std::string msgs = json_arg(messages, "apply_chat_template(messages)");
             std::string tools_json = tools.is_none() ? "" : json_arg(tools, "apply_chat_template(tools)");
             if (template_str) c_text(*template_str, "apply_chat_template(template_str)");
             std::string kwargs_json =
                 template_kwargs.is_none() ? "" : json_arg(template_kwargs, "apply_chat_template(template_kwargs)");
             return utf8(nogil([&] {
               return t.ApplyChatTemplate(template_str ? template_str->c_str() : nullptr, msgs.c_str(),
                                          tools_json.empty() ? nullptr : tools_json.c_str(),
                                          kwargs_json.empty() ? nullptr : kwargs_json.c_str(), add_generation_prompt);
             }));
           },
           py::arg("messages"), py::kw_only(), py::arg("template_str") = py::none(), py::arg("tools") = py::none(),
           py::arg("add_generation_prompt") = true, py::arg("template_kwargs") = py::none(),
           "Render a chat (JSON string or list of {'role', 'content'} dicts) with the tokenizer's chat template.")
      .def("create_stream",
           [](const ogx::Tokenizer& t) { return nogil([&] { return std::make_unique<ogx::TokenizerStream>(t); }); })
      .def_property_readonly("bos_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetBosTokenId(); }); })
      .def_property_readonly("pad_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetPadTokenId(); }); })
      .def_property_readonly("eos_token_ids", [](const ogx::Tokenizer& t) {
        return to_numpy(nogil([&] { return t.GetEosTokenIds(); }));
      })
      .def_property_readonly("bot_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetBotTokenId(); }); },
                             "Beginning of a tool call; raises when the model has none.")
      .def_property_readonly("eot_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetEotTokenId(); }); },
                             "End of a tool call; raises when the model has none.")
      .def_property_readonly("bor_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetBorTokenId(); }); },
                             "Beginning of reasoning; raises when the model has none.")
      .def_property_readonly("eor_token_id", [](const ogx::Tokenizer& t) { return nogil([&] { return t.GetEorTokenId(); }); },
                             "End of reasoning; raises when the model has none.")
      .def("update_options", &update_options,
           "Tokenizer options by keyword: add_special_tokens, skip_special_tokens (bools, or 'true'/'false'/'1'/'0').");
}

}  // namespace ogx::py_module
