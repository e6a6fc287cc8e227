// Transpose, Slice, Expand and Tile against naive index arithmetic on seeded random shapes and data.
#include <gtest/gtest.h>

#include <random>

#include "kernel_test_util.h"
#include "providers/cpu/cpu_ops.h"

namespace ogx::test {
namespace {

std::mt19937 rng(2024);

Tensor random_f32(const Shape& s) {
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<float> v((size_t)shape_numel(s));
  for (auto& x : v) x = d(rng);
  return make_tensor(DType::f32, s, v);
}

Shape random_shape(int rank) {
  Shape s(rank);
  for (auto& d : s) d = 1 + (int64_t)(rng() % 4);
  return s;
}

// Multi-index of flat position i in shape s.
std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = (int)s.size() - 1; d >= 0; d--) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t o = 0;
  for (size_t d = 0; d < s.size(); d++) o = o * s[d] + idx[d];
  return o;
}

TEST(ShapeOps, TransposeRandomPermutations) {
  for (int trial = 0; trial < 20; trial++) {
    int r = 1 + trial % 4;
    Shape s = random_shape(r);
    std::vector<int64_t> perm(r);
    for (int i = 0; i < r; i++) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor x = random_f32(s);
    Tensor y = NodeRun("", "Transpose").input("x", x).attr("perm", perm).registry(cpu::register_shape_ops).run()[0];
    for (int64_t i = 0; i < y.numel(); i++) {
      auto oi = unravel(i, y.shape());
      std::vector<int64_t> ii(r);
      for (int d = 0; d < r; d++) ii[perm[d]] = oi[d];
      ASSERT_EQ(y.data<float>()[i], x.data<float>()[ravel(ii, s)]);
    }
  }
}

TEST(ShapeOps, SliceWithNegativeStepsAndClamping) {
  Tensor x = random_f32({5, 6});
  auto i64 = [](std::vector<int64_t> v) { return make_tensor(DType::i64, {(int64_t)v.size()}, v); };
  Tensor y = NodeRun("", "Slice")
                 .input("x", x)
                 .input("starts", i64({-1, 1}))
                 .input("ends", i64({-100, 100}))
                 .input("axes", i64({0, 1}))
                 .input("steps", i64({-2, 2}))
                 .registry(cpu::register_shape_ops)
                 .run()[0];
  ASSERT_EQ(y.shape(), Shape({3, 3}));  // rows 4,2,0; columns 1,3,5
  for (int64_t r = 0; r < 3; r++)
    for (int64_t c = 0; c < 3; c++) EXPECT_EQ(y.data<float>()[r * 3 + c], x.data<float>()[(4 - 2 * r) * 6 + 1 + 2 * c]);
}

TEST(ShapeOps, ExpandAndTile) {
  Tensor x = random_f32({3, 1, 2});
  Tensor shape = make_tensor(DType::i64, {4}, std::vector<int64_t>{2, 3, 4, 2});
  Tensor e = NodeRun("", "Expand").input("x", x).input("s", shape).registry(cpu::register_shape_ops).run()[0];
  ASSERT_EQ(e.shape(), Shape({2, 3, 4, 2}));
  for (int64_t i = 0; i < e.numel(); i++) {
    auto idx = unravel(i, e.shape());
    ASSERT_EQ(e.data<float>()[i], x.data<float>()[idx[1] * 2 + idx[3]]);
  }
  Tensor reps = make_tensor(DType::i64, {3}, std::vector<int64_t>{2, 3, 1});
  Tensor t = NodeRun("", "Tile").input("x", x).input("r", reps).registry(cpu::register_shape_ops).run()[0];
  ASSERT_EQ(t.shape(), Shape({6, 3, 2}));
  for (int64_t i = 0; i < t.numel(); i++) {
    auto idx = unravel(i, t.shape());
    ASSERT_EQ(t.data<float>()[i], x.data<float>()[(idx[0] % 3) * 2 + idx[2]]);
  }
}

}  // namespace
}  // namespace ogx::test
