// A C interface over Debian's libsentencepiece, built as a separate loadable module (ogx_sentencepiece).
// libsentencepiece carries its own copy of protobuf-lite and exports its symbols; linked into the same process
// as libprotobuf (used for ONNX), the two clash at start-up. ogx therefore loads this module only when a folder
// has a tokenizer.model, into a link namespace of its own (dlmopen) so each library binds to its own protobuf.
#include <sentencepiece_processor.h>

#include <cstring>
#include <string>
#include <vector>

namespace {
thread_local std::string g_error;
char* dup(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.data(), s.size() + 1);
  return p;
}
}  // namespace

extern "C" {

// Returns a processor handle or null (error text from ogx_spm_error()).
void* ogx_spm_load(const char* path) {
  auto* sp = new sentencepiece::SentencePieceProcessor();
  auto st = sp->Load(path);
  if (!st.ok()) {
    g_error = st.ToString();
    delete sp;
    return nullptr;
  }
  return sp;
}

void ogx_spm_free(void* h) { delete static_cast<sentencepiece::SentencePieceProcessor*>(h); }
const char* ogx_spm_error() { return g_error.c_str(); }
void ogx_spm_free_buffer(void* p) { std::free(p); }

// Encodes text; *ids is malloc'ed (free with ogx_spm_free_buffer). Returns count or -1.
int ogx_spm_encode(void* h, const char* text, size_t len, int** ids) {
  std::vector<int> v;
  auto st = static_cast<sentencepiece::SentencePieceProcessor*>(h)->Encode(std::string_view(text, len), &v);
  if (!st.ok()) {
    g_error = st.ToString();
    return -1;
  }
  *ids = static_cast<int*>(std::malloc(sizeof(int) * (v.size() + 1)));
  if (!*ids) return -1;
  std::memcpy(*ids, v.data(), sizeof(int) * v.size());
  return (int)v.size();
}

// Decodes ids into a malloc'ed string (free with ogx_spm_free_buffer); null on error.
char* ogx_spm_decode(void* h, const int* ids, int n) {
  std::string out;
  auto st = static_cast<sentencepiece::SentencePieceProcessor*>(h)->Decode(std::vector<int>(ids, ids + n), &out);
  if (!st.ok()) {
    g_error = st.ToString();
    return nullptr;
  }
  return dup(out);
}

int ogx_spm_piece_size(void* h) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->GetPieceSize(); }
int ogx_spm_unk_id(void* h) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->unk_id(); }
int ogx_spm_piece_to_id(void* h, const char* s, size_t len) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(h)->PieceToId(std::string_view(s, len));
}
char* ogx_spm_id_to_piece(void* h, int id) {
  return dup(static_cast<sentencepiece::SentencePieceProcessor*>(h)->IdToPiece(id));
}
int ogx_spm_is_control(void* h, int id) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->IsControl(id); }
int ogx_spm_is_unknown(void* h, int id) { return static_cast<sentencepiece::SentencePieceProcessor*>(h)->IsUnknown(id); }

}  // extern "C"
