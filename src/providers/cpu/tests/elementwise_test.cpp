// The elementwise op families (elementwise.cpp, elementwise_compare.cpp, elementwise_variadic.cpp): known answers
// with broadcasting, and the type errors (And/Or/Xor on non-bool inputs) failing cleanly.
#include <gtest/gtest.h>

#include "kernel_test_util.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::test {
namespace {

Tensor bools(Shape shape, const std::vector<int>& vals) {
  Tensor t(DType::boolean, std::move(shape));
  for (int64_t i = 0; i < t.numel(); i++) t.data<bool>()[i] = vals[(size_t)i] != 0;
  return t;
}

std::vector<int> ints_of(const Tensor& t) {
  std::vector<int> v;
  for (int64_t i = 0; i < t.numel(); i++) v.push_back((int)t.get_f64(i));
  return v;
}

Tensor run_op(const std::string& op, const std::vector<Tensor>& ins, std::function<void(KernelRegistry&)> fill) {
  NodeRun r("", op);
  for (size_t i = 0; i < ins.size(); i++) r.input("x" + std::to_string(i), ins[i]);
  return r.registry(std::move(fill)).run().at(0);
}

TEST(CpuElementwise, LogicOnBoolWithBroadcasting) {
  Tensor a = bools({2, 2}, {0, 0, 1, 1});
  Tensor b = bools({2}, {0, 1});
  Tensor t = bools({}, {1});
  EXPECT_EQ(ints_of(run_op("And", {a, b}, cpu::register_compare)), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(ints_of(run_op("Or", {a, b}, cpu::register_compare)), (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(ints_of(run_op("Xor", {a, b}, cpu::register_compare)), (std::vector<int>{0, 1, 1, 0}));
  Tensor x = run_op("Xor", {a, t}, cpu::register_compare);
  EXPECT_EQ(x.dtype(), DType::boolean);
  EXPECT_EQ(ints_of(x), (std::vector<int>{1, 1, 0, 0}));
}

TEST(CpuElementwise, LogicRejectsNonBoolInputs) {
  Tensor i = make_tensor(DType::i32, {2}, std::vector<int>{1, 0});
  EXPECT_THROW(run_op("And", {i, i}, cpu::register_compare), Error);
  EXPECT_THROW(run_op("Or", {i, bools({2}, {1, 0})}, cpu::register_compare), Error);
}

TEST(CpuElementwise, ComparisonsBroadcastToBool) {
  Tensor a = make_tensor(DType::i64, {2, 1}, std::vector<int>{1, 3});
  Tensor b = make_tensor(DType::i64, {3}, std::vector<int>{0, 1, 2});
  Tensor lt = run_op("Less", {a, b}, cpu::register_compare);
  EXPECT_EQ(lt.shape(), (Shape{2, 3}));
  EXPECT_EQ(ints_of(lt), (std::vector<int>{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(ints_of(run_op("GreaterOrEqual", {a, b}, cpu::register_compare)), (std::vector<int>{1, 1, 0, 1, 1, 1}));
  Tensor h = make_tensor(DType::f16, {3}, std::vector<float>{0.5f, 1.0f, -2.0f});
  Tensor g = make_tensor(DType::f16, {3}, std::vector<float>{0.5f, 2.0f, -2.0f});
  EXPECT_EQ(ints_of(run_op("Equal", {h, g}, cpu::register_compare)), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(ints_of(run_op("Equal", {bools({2}, {1, 0}), bools({}, {0})}, cpu::register_compare)),
            (std::vector<int>{0, 1}));
  EXPECT_THROW(run_op("Less", {a, h}, cpu::register_compare), Error);  // input types differ
}

TEST(CpuElementwise, VariadicFoldsWithBroadcasting) {
  Tensor a = make_tensor(DType::f32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  Tensor b = make_tensor(DType::f32, {2}, std::vector<float>{10, 20});
  Tensor c = make_tensor(DType::f32, {}, std::vector<float>{100});
  EXPECT_EQ(ints_of(run_op("Sum", {a, b, c}, cpu::register_variadic)), (std::vector<int>{111, 122, 113, 124}));
  EXPECT_EQ(ints_of(run_op("Max", {b, a}, cpu::register_variadic)), (std::vector<int>{10, 20, 10, 20}));
  Tensor m = run_op("Min", {b}, cpu::register_variadic);  // one input: a copy
  EXPECT_EQ(ints_of(m), (std::vector<int>{10, 20}));
  Tensor h = make_tensor(DType::f16, {2}, std::vector<float>{1.0f, -3.0f});
  Tensor k = make_tensor(DType::f16, {2}, std::vector<float>{2.0f, -5.0f});
  Tensor mean = run_op("Mean", {h, k}, cpu::register_variadic);
  EXPECT_EQ(mean.dtype(), DType::f16);
  EXPECT_EQ(mean.get_f64(0), 1.5);
  EXPECT_EQ(mean.get_f64(1), -4.0);
  Tensor i = make_tensor(DType::i32, {3}, std::vector<int>{7, 8, 9});
  EXPECT_EQ(ints_of(run_op("Mean", {i, i, i}, cpu::register_variadic)), (std::vector<int>{7, 8, 9}));
}

TEST(CpuElementwise, WhereBroadcastsAllThree) {
  Tensor cond = bools({2, 1}, {1, 0});
  Tensor x = make_tensor(DType::i64, {3}, std::vector<int>{1, 2, 3});
  Tensor y = make_tensor(DType::i64, {}, std::vector<int>{-1});
  EXPECT_EQ(ints_of(run_op("Where", {cond, x, y}, cpu::register_variadic)), (std::vector<int>{1, 2, 3, -1, -1, -1}));
  EXPECT_THROW(run_op("Where", {x, x, y}, cpu::register_variadic), Error);  // condition not bool
}

TEST(CpuElementwise, ArithmeticKnownAnswers) {
  Tensor a = make_tensor(DType::i32, {4}, std::vector<int>{7, -7, 7, -7});
  Tensor b = make_tensor(DType::i32, {4}, std::vector<int>{3, 3, -3, -3});
  EXPECT_EQ(ints_of(run_op("Mod", {a, b}, cpu::register_elementwise)), (std::vector<int>{1, 2, -2, -1}));
  EXPECT_EQ(ints_of(run_op("Sub", {a, b}, cpu::register_elementwise)), (std::vector<int>{4, -10, 10, -4}));
  Tensor zero = make_tensor(DType::i32, {}, std::vector<int>{0});
  EXPECT_THROW(run_op("Div", {a, zero}, cpu::register_elementwise), Error);
  Tensor f = make_tensor(DType::f32, {2}, std::vector<float>{2, 3});
  Tensor e = make_tensor(DType::i64, {}, std::vector<int>{2});
  EXPECT_EQ(ints_of(run_op("Pow", {f, e}, cpu::register_elementwise)), (std::vector<int>{4, 9}));
  EXPECT_THROW(run_op("Add", {bools({1}, {1}), bools({1}, {1})}, cpu::register_elementwise), Error);  // no bool
}

}  // namespace
}  // namespace ogx::test
