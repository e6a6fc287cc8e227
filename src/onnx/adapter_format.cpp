#include "onnx/adapter_format.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <fstream>
#include <set>

#include "adapter_format_generated.h"
#include "common/checked.h"
#include "common/mapped_file.h"

namespace fbs = onnxruntime::adapters;

namespace ogx {

namespace {

// Tensor dtypes an adapter parameter may have: the numeric ones a Tensor holds (no strings, complex or fp8).
bool supported_dtype(int32_t code) {
  if (!dtype_known(code)) return false;
  const DType t = static_cast<DType>(code);
  return t != DType::undefined && t != DType::string;
}

}  // namespace

AdapterFile parse_adapter_bytes(const uint8_t* data, size_t size, std::shared_ptr<const void> owner,
                                const std::string& what) {
  OGX_CHECK(size >= 8 && fbs::AdapterBufferHasIdentifier(data), "'", what,
            "' is not an ONNX Runtime adapter file (no 'TORT' identifier)");
  OGX_CHECK(size < FLATBUFFERS_MAX_BUFFER_SIZE, "'", what, "' is larger than the 2 GiB a flatbuffer may hold");
  flatbuffers::Verifier verifier(data, size);
  OGX_CHECK(fbs::VerifyAdapterBuffer(verifier), "'", what,
            "' fails the adapter format's verification (truncated or corrupt: an offset or size points outside)");
  const fbs::Adapter* a = fbs::GetAdapter(data);
  AdapterFile out;
  out.format_version = a->format_version();
  out.adapter_version = a->adapter_version();
  out.model_version = a->model_version();
  OGX_CHECK(out.format_version == kAdapterFormatVersion, "'", what, "': adapter format version ",
            out.format_version, " is not supported (ogx reads version ", kAdapterFormatVersion, ")");
  OGX_CHECK(a->parameters() != nullptr, "'", what, "' has no parameter list");
  std::set<std::string> seen;
  for (flatbuffers::uoffset_t i = 0; i < a->parameters()->size(); i++) {
    const fbs::Parameter* p = a->parameters()->Get(i);
    OGX_CHECK(p != nullptr, "'", what, "': parameter ", i, " is null");
    OGX_CHECK(p->name() != nullptr && p->name()->size() > 0, "'", what, "': parameter ", i, " has no name");
    const std::string name = p->name()->str();
    const std::string where = "'" + what + "': parameter '" + name + "'";
    OGX_CHECK(seen.insert(name).second, where, " appears twice");
    OGX_CHECK(p->dims() != nullptr, where, " has no dims");
    // Copied bytewise: the verifier checks the vector's bounds, not that its int64 elements are 8-byte aligned.
    static_assert(FLATBUFFERS_LITTLEENDIAN, "adapter files are little-endian");
    Shape shape(p->dims()->size());
    if (!shape.empty()) std::memcpy(shape.data(), p->dims()->Data(), shape.size() * sizeof(int64_t));
    for (int64_t d : shape) OGX_CHECK(d >= 0, where, " has a negative dimension in ", shape_str(shape));
    const int32_t code = static_cast<int32_t>(p->data_type());
    OGX_CHECK(supported_dtype(code), where, " has data type ", code, ", which ogx cannot hold");
    const DType dt = static_cast<DType>(code);
    const size_t bytes = bytes_checked(shape, dt, where);
    const size_t have = p->raw_data() ? p->raw_data()->size() : 0;
    OGX_CHECK(have == bytes, where, ": ", dtype_name(dt), " ", shape_str(shape), " needs ", bytes,
              " bytes of raw_data, the file has ", have);
    Tensor t;
    const uint8_t* src = have ? p->raw_data()->data() : nullptr;
    if (bytes == 0) {
      t = Tensor(dt, shape);
    } else if (reinterpret_cast<uintptr_t>(src) % dtype_size(dt) == 0) {
      t = Tensor(dt, shape, Storage::borrow(const_cast<uint8_t*>(src), bytes, owner));
    } else {
      t = Tensor(dt, shape);
      std::memcpy(t.raw(), src, bytes);
    }
    out.parameters.push_back({name, std::move(t)});
  }
  return out;
}

AdapterFile read_adapter_file(const std::string& path) {
  std::shared_ptr<MappedFile> f = MappedFile::open(path);
  return parse_adapter_bytes(static_cast<const uint8_t*>(f->data()), f->size(), f, path);
}

std::vector<uint8_t> serialize_adapter(const AdapterFile& adapter) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fbs::Parameter>> params;
  for (const AdapterParameter& p : adapter.parameters) {
    OGX_CHECK(!p.name.empty(), "adapter parameter without a name");
    OGX_CHECK(supported_dtype(static_cast<int32_t>(p.tensor.dtype())), "adapter parameter '", p.name,
              "': unsupported dtype ", dtype_name(p.tensor.dtype()));
    auto name = b.CreateString(p.name);
    auto dims = b.CreateVector(p.tensor.shape().data(), p.tensor.shape().size());
    // raw_data is force_align 8, as ONNX Runtime's schema says (its builder aligns the same way).
    b.ForceVectorAlignment(p.tensor.bytes(), 1, 8);
    auto raw = b.CreateVector(static_cast<const uint8_t*>(p.tensor.raw()), p.tensor.bytes());
    params.push_back(fbs::CreateParameter(b, name, dims, static_cast<fbs::TensorDataType>(p.tensor.dtype()), raw));
  }
  auto vec = b.CreateVector(params);
  auto root = fbs::CreateAdapter(b, kAdapterFormatVersion, adapter.adapter_version, adapter.model_version, vec);
  fbs::FinishAdapterBuffer(b, root);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

void write_adapter_file(const AdapterFile& adapter, const std::string& path) {
  std::vector<uint8_t> bytes = serialize_adapter(adapter);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), (std::streamsize)bytes.size());
  OGX_CHECK(out.good(), "cannot write adapter file ", path);
}

}  // namespace ogx
