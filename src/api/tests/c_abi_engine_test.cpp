// The C ABI's Engine / Request (continuous batching) and the C++ wrapper over it, on the default model
// (models/ogx-debian-10m/int4, CPU): tokens equal a generator's alone; OgxEngineStep hands back the caller's own
// request handle (reference-counted); the last release of a submitted request removes it; bad handles and bad use
// are errors, not crashes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ogx/ogx.hpp"

namespace {

const std::string kModel = std::string(OGX_SOURCE_DIR) + "/models/ogx-debian-10m/int4";

std::unique_ptr<ogx::Model> load() {
  auto config = std::make_unique<ogx::Config>(kModel.c_str());
  config->ClearProviders();
  return std::make_unique<ogx::Model>(*config);
}

std::unique_ptr<ogx::GeneratorParams> greedy(const ogx::Model& m, int max_length) {
  auto p = ogx::GeneratorParams::Create(m);
  p->SetSearchOption("max_length", max_length);
  p->SetSearchOptionBool("do_sample", false);
  return p;
}

std::vector<int32_t> alone(const ogx::Model& m, const std::vector<int32_t>& ids, int max_length) {
  auto p = greedy(m, max_length);
  ogx::Generator g(m, *p);
  g.AppendTokens(ids);
  std::vector<int32_t> out;
  while (!g.IsDone()) {
    g.GenerateNextToken();
    out.push_back(g.GetNextTokens()[0]);
  }
  return out;
}

void expect_error(OgxResult* r, const char* needle) {
  ASSERT_NE(r, nullptr) << "expected an error containing '" << needle << "'";
  EXPECT_NE(std::string(OgxResultGetError(r)).find(needle), std::string::npos) << OgxResultGetError(r);
  OgxDestroyResult(r);
}

TEST(CAbiEngine, StepReturnsTheCallersHandleAndTokensEqualAlone) {
  auto m = load();
  const std::vector<std::vector<int32_t>> prompts = {{1, 300, 301, 302}, {1, 50, 60, 70, 80, 90, 100}};
  const std::vector<int> lengths = {20, 24};
  OgxEngine* engine = nullptr;
  ASSERT_EQ(OgxCreateEngine(m->get(), &engine), nullptr);
  std::vector<OgxRequest*> reqs;
  std::vector<int> tags = {10, 11};
  for (size_t i = 0; i < prompts.size(); i++) {
    auto p = greedy(*m, lengths[i]);
    OgxRequest* r = nullptr;
    ASSERT_EQ(OgxCreateRequest(p->get(), &r), nullptr);
    ogx::Sequences s;
    s.Append(prompts[i]);
    ASSERT_EQ(OgxRequestAddTokens(r, s.get()), nullptr);
    ASSERT_EQ(OgxRequestSetOpaqueData(r, &tags[i]), nullptr);
    ASSERT_EQ(OgxEngineAddRequest(engine, r), nullptr);
    reqs.push_back(r);
  }
  std::map<OgxRequest*, std::vector<int32_t>> got;
  for (;;) {
    OgxRequest* r = nullptr;
    ASSERT_EQ(OgxEngineStep(engine, &r), nullptr);
    if (!r) break;
    ASSERT_TRUE(r == reqs[0] || r == reqs[1]);
    void* data = nullptr;
    ASSERT_EQ(OgxRequestGetOpaqueData(r, &data), nullptr);
    EXPECT_EQ(data, r == reqs[0] ? &tags[0] : &tags[1]);
    bool unseen = false;
    while (OgxRequestHasUnseenTokens(r, &unseen), unseen) {
      int32_t t = -1;
      ASSERT_EQ(OgxRequestGetUnseenToken(r, &t), nullptr);
      got[r].push_back(t);
    }
    OgxDestroyRequest(r);  // the step's reference; the caller's stays
  }
  for (size_t i = 0; i < prompts.size(); i++) {
    EXPECT_EQ(got[reqs[i]], alone(*m, prompts[i], lengths[i]));
    bool complete = false;
    ASSERT_EQ(OgxRequestIsTurnComplete(reqs[i], &complete), nullptr);
    EXPECT_TRUE(complete);
    int32_t t = 0;
    expect_error(OgxRequestGetUnseenToken(reqs[i], &t), "no unseen tokens");
    ASSERT_EQ(OgxEngineRemoveRequest(engine, reqs[i]), nullptr);
    OgxDestroyRequest(reqs[i]);
  }
  bool pending = true;
  ASSERT_EQ(OgxEngineHasPendingRequests(engine, &pending), nullptr);
  EXPECT_FALSE(pending);
  OgxDestroyEngine(engine);
}

TEST(CAbiEngine, LastReleaseRemovesAndBadUseIsAnError) {
  auto m = load();
  OgxEngine* engine = nullptr;
  ASSERT_EQ(OgxCreateEngine(m->get(), &engine), nullptr);
  auto p = greedy(*m, 64);
  OgxRequest* r = nullptr;
  ASSERT_EQ(OgxCreateRequest(p->get(), &r), nullptr);
  ogx::Sequences two;
  two.Append(std::vector<int32_t>{1, 2});
  two.Append(std::vector<int32_t>{1, 3});
  expect_error(OgxRequestAddTokens(r, two.get()), "one sequence");
  expect_error(OgxEngineAddRequest(engine, r), "no tokens");
  ogx::Sequences one;
  one.Append(std::vector<int32_t>{1, 400, 401});
  ASSERT_EQ(OgxRequestAddTokens(r, one.get()), nullptr);
  ASSERT_EQ(OgxEngineAddRequest(engine, r), nullptr);
  expect_error(OgxRequestContinue(r, one.get()), "not complete");
  OgxDestroyRequest(r);  // the last reference: removed from the engine
  bool pending = true;
  ASSERT_EQ(OgxEngineHasPendingRequests(engine, &pending), nullptr);
  EXPECT_FALSE(pending);
  OgxRequest* none = reinterpret_cast<OgxRequest*>(engine);  // a handle of another type
  expect_error(OgxEngineAddRequest(engine, none), "OgxRequest");
  expect_error(OgxEngineStep(nullptr, &r), "engine");
  OgxDestroyRequest(nullptr);
  OgxDestroyEngine(engine);
  OgxDestroyEngine(engine);  // a second destroy is ignored
  auto beams = ogx::GeneratorParams::Create(*m);
  beams->SetSearchOption("num_beams", 2);
  expect_error(OgxCreateRequest(beams->get(), &r), "num_beams");
}

TEST(CppEngine, WrapperRunsTwoRequests) {
  auto m = load();
  auto engine = ogx::Engine::Create(*m);
  auto p = greedy(*m, 16);
  auto a = ogx::Request::Create(*p), b = ogx::Request::Create(*p);
  a->AddTokens(std::vector<int32_t>{1, 500, 501});
  b->AddTokens(std::vector<int32_t>{1, 700});
  engine->Add(*a);
  engine->Add(*b);
  std::map<OgxRequest*, std::vector<int32_t>> got;
  while (auto r = engine->Step())
    while (r->HasUnseenTokens()) got[r->get()].push_back(r->GetUnseenToken());
  EXPECT_EQ(got[a->get()], alone(*m, {1, 500, 501}, 16));
  EXPECT_EQ(got[b->get()], alone(*m, {1, 700}, 16));
  EXPECT_TRUE(a->IsTurnComplete());
  EXPECT_NE(a->GetFinishReason(), "none");
  engine->Remove(*a);
  engine->Remove(*b);
  EXPECT_FALSE(engine->HasPendingRequests());
}

}  // namespace
