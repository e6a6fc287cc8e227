// The server's warm-up: before it listens, a short prompt and a few sampled tokens for one sequence alone and for two
// decoding together, so that the first user's request does not pay for the device's first use of the prompt,
// decode, batched-decode and sampling kernels (on the H200 the first request of a fresh 1B server waited 1.9 s for
// its first token, the steady ones 10 ms). A failure here is reported and serving goes on.
#include "serve/warmup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>

#include "genai/batch_step.h"
#include "genai/generator.h"

namespace ogx::serve {

void warm_up(const std::shared_ptr<genai::Model>& model) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const int64_t V = model->io().vocab_size;
    const int context = model->config().model.context_length;
    const int prompt_len = 80;  // past the 64 rows of the batched-decode kernels: the prompt kernels run
    if (V <= 0 || context < prompt_len + 4) return;
    genai::GeneratorParams params(*model);
    params.search.max_length = prompt_len + 4;
    params.search.do_sample = true;  // OpenAI's default picking: temperature 1, top_p 1
    params.search.temperature = 1.0;
    params.search.top_p = 1.0;
    params.search.top_k = 0;
    params.search.random_seed = 1;
    std::vector<int32_t> prompt(prompt_len);
    for (int i = 0; i < prompt_len; i++) prompt[i] = (int32_t)((1 + 7919 * (int64_t)i) % V);
    genai::Generator a(model, params), b(model, params);
    a.append_tokens(prompt);
    b.append_tokens(std::vector<int32_t>(prompt.begin(), prompt.begin() + 8));
    a.generate_next_token();
    b.generate_next_token();
    genai::decode_together({&a, &b});
    genai::decode_together({&a, &b});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ogx serve: warm-up failed (serving anyway): %s\n", e.what());
    return;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "ogx serve: warmed up in %.0f ms\n", ms);
}

}  // namespace ogx::serve
