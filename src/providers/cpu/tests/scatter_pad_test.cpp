// Pad, GatherND and ScatterND on the CPU: the ONNX specification's examples (known answers) and error cases.
#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::test {
namespace {

std::vector<float> floats(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

Tensor pad(const std::string& mode, const Tensor& x, std::vector<int64_t> pads, float value = 0.0f,
           std::vector<int64_t> axes = {}) {
  NodeRun r("", "Pad");
  r.input("x", x).constant("pads", make_tensor(DType::i64, {(int64_t)pads.size()}, pads));
  r.constant("value", make_tensor(DType::f32, {}, std::vector<float>{value}));
  if (!axes.empty()) r.constant("axes", make_tensor(DType::i64, {(int64_t)axes.size()}, axes));
  return r.attr("mode", mode).registry(cpu::register_pad).run()[0];
}

// The ONNX operator documentation's Pad examples (x = [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], pads [0, 2, 0, 0]).
TEST(Pad, SpecificationExamples) {
  Tensor x = make_tensor(DType::f32, {3, 2}, std::vector<float>{1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  EXPECT_EQ(floats(pad("constant", x, {0, 2, 0, 0})),
            (std::vector<float>{0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}));
  EXPECT_EQ(floats(pad("reflect", x, {0, 2, 0, 0})),
            (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  EXPECT_EQ(floats(pad("edge", x, {0, 2, 0, 0})),
            (std::vector<float>{1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}));
  Tensor w = pad("wrap", x, {2, 1, 1, 1});  // [6, 4]
  EXPECT_EQ(floats(w), (std::vector<float>{3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                                           3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f}));
}

TEST(Pad, AxesValueAndCropping) {
  Tensor x = make_tensor(DType::f32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor y = pad("constant", x, {1, -1}, 9.0f, {-1});  // last axis: one before, crop one after
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(floats(y), (std::vector<float>{9, 1, 2, 9, 4, 5}));
  EXPECT_THROW(pad("constant", x, {1, 2, 3}), Error);          // pads of the wrong length
  EXPECT_THROW(pad("constant", x, {0, -4, 0, 0}), Error);      // crops below zero
  EXPECT_THROW(pad("mirror", x, {0, 0, 0, 0}), Error);         // unknown mode
}

// GatherND examples 1, 2 and 5 of the ONNX documentation.
TEST(GatherND, SpecificationExamples) {
  auto run = [](const Tensor& data, const Tensor& idx, int64_t b) {
    return NodeRun("", "GatherND").input("d", data).input("i", idx).attr("batch_dims", b)
        .registry(cpu::register_gather).run()[0];
  };
  Tensor d = make_tensor(DType::i32, {2, 2}, std::vector<int32_t>{0, 1, 2, 3});
  Tensor y = run(d, make_tensor(DType::i64, {2, 2}, std::vector<int64_t>{0, 0, 1, 1}), 0);
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(y.data<int32_t>()[0], 0);
  EXPECT_EQ(y.data<int32_t>()[1], 3);
  y = run(d, make_tensor(DType::i64, {2, 1}, std::vector<int64_t>{1, 0}), 0);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ((std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 4)), (std::vector<int32_t>{2, 3, 0, 1}));
  Tensor d3 = make_tensor(DType::i32, {2, 2, 2}, std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  y = run(d3, make_tensor(DType::i64, {2, 1}, std::vector<int64_t>{1, 0}), 1);  // batch_dims 1
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ((std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 4)), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_THROW(run(d, make_tensor(DType::i64, {1, 2}, std::vector<int64_t>{0, 2}), 0), Error);  // out of range
}

// ScatterND: the documentation's first example, then each reduction with a duplicate index.
TEST(ScatterND, ExamplesAndReductions) {
  auto run = [](const Tensor& data, const Tensor& idx, const Tensor& upd, const std::string& red) {
    return NodeRun("", "ScatterND").input("d", data).input("i", idx).input("u", upd).attr("reduction", red)
        .registry(cpu::register_scatter).run()[0];
  };
  Tensor d = make_tensor(DType::f32, {8}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = run(d, make_tensor(DType::i64, {4, 1}, std::vector<int64_t>{4, 3, 1, 7}),
                 make_tensor(DType::f32, {4}, std::vector<float>{9, 10, 11, 12}), "none");
  EXPECT_EQ(floats(y), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  Tensor idx = make_tensor(DType::i64, {3, 1}, std::vector<int64_t>{1, 1, -1});
  Tensor upd = make_tensor(DType::f32, {3}, std::vector<float>{2, 3, 0.5f});
  EXPECT_EQ(floats(run(d, idx, upd, "add")), (std::vector<float>{1, 7, 3, 4, 5, 6, 7, 8.5f}));
  EXPECT_EQ(floats(run(d, idx, upd, "mul")), (std::vector<float>{1, 12, 3, 4, 5, 6, 7, 4}));
  EXPECT_EQ(floats(run(d, idx, upd, "max")), (std::vector<float>{1, 3, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(floats(run(d, idx, upd, "min")), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 0.5f}));
  EXPECT_THROW(run(d, idx, upd, "avg"), Error);
  EXPECT_THROW(run(d, idx, make_tensor(DType::f32, {2}, std::vector<float>{1, 2}), "none"), Error);  // updates shape
}

}  // namespace
}  // namespace ogx::test
