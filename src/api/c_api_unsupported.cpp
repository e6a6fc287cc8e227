// C API: the multimodal names of ort_genai_c.h. ogx runs text models only; these exist so that code naming them
// builds, and fail with one clear message.
#include "api/handles.h"

using namespace ogx::api;

namespace {

template <typename T>
OgxResult* unsupported(T** out, const char* fn) {
  return guard([&] {
    if (out) *out = nullptr;
    fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": multimodal models are not supported by ogx (it runs "
                                                         "text models: decoder-only model folders)");
  });
}

}  // namespace

extern "C" {

OgxResult* OgxLoadImage(const char*, OgxImages** out) { return unsupported(out, "OgxLoadImage"); }
OgxResult* OgxLoadImages(const OgxStringArray*, OgxImages** out) { return unsupported(out, "OgxLoadImages"); }
OgxResult* OgxLoadAudio(const char*, OgxAudios** out) { return unsupported(out, "OgxLoadAudio"); }
OgxResult* OgxLoadAudios(const OgxStringArray*, OgxAudios** out) { return unsupported(out, "OgxLoadAudios"); }
OgxResult* OgxCreateMultiModalProcessor(const OgxModel*, OgxMultiModalProcessor** out) {
  return unsupported(out, "OgxCreateMultiModalProcessor");
}
// No such object is ever made: only NULL can be passed here.
void OgxDestroyImages(OgxImages*) {}
void OgxDestroyAudios(OgxAudios*) {}
void OgxDestroyMultiModalProcessor(OgxMultiModalProcessor*) {}

}  // extern "C"
