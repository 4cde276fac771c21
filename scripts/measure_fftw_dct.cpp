// Is FFTW's DCT faster than lowcomm's block DCT on the BLAS? (issue 10, "a fast DCT: FFTW's
// REDFT10/REDFT01 r2r plans, batched over blocks"). Times, on one thread, on a rows x cols
// tensor of 64 x 64 blocks (DeMo's chunk 64):
//   lowcomm   kernels::dct_encode_blocks / dct_decode_blocks, Backend::Cpu (what DeMo runs);
//   fftw 2-D  one guru plan, 2-D REDFT10 (REDFT01 back) over every block, strided in place of
//             the tensor, block-major out as lowcomm writes, plus the orthonormal scaling;
//   fftw 1-D  FFTW's best case: one contiguous batch of 64-point REDFT10s over the same number
//             of values, half of a 2-D transform's work.
// and checks that the FFTW path gives lowcomm's coefficients (max difference printed).
// Built and run by scripts/measure-fftw-dct.sh.
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "lowcomm/kernels/dct.hpp"

namespace {

using lowcomm::kernels::Backend;
using Clock = std::chrono::steady_clock;

constexpr int kBlock = 64;
constexpr int kRepeats = 10;

template <typename F>
double milliseconds_per_call(F&& f) {
  f();  // warm-up: first touch of the outputs, plan-time work
  const auto start = Clock::now();
  for (int i = 0; i < kRepeats; ++i) f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / kRepeats;
}

// FFTW's REDFT10 is 2·Σ x_n cos(π(n+½)k/N); the orthonormal DCT-II scales coefficient k by
// sqrt(1/(4N)) at k = 0 and sqrt(1/(2N)) otherwise, per dimension. REDFT01 (the inverse
// direction) takes x_0 once, so its input scale is twice that at k = 0.
void scale_blocks(std::vector<float>& q, bool inverse) {
  const float s0 = std::sqrt(1.0f / (4 * kBlock)) * (inverse ? 2.0f : 1.0f);
  const float s1 = std::sqrt(1.0f / (2 * kBlock));
  for (std::size_t b = 0; b < q.size(); b += kBlock * kBlock) {
    float* block = q.data() + b;
    for (int i = 0; i < kBlock; ++i) {
      const float si = i ? s1 : s0;
      for (int j = 0; j < kBlock; ++j) block[i * kBlock + j] *= si * (j ? s1 : s0);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ROWS COLS estimate|measure   (ROWS, COLS multiples of 64)\n", argv[0]);
    return 2;
  }
  const int rows = std::atoi(argv[1]), cols = std::atoi(argv[2]);
  const unsigned planning = std::string_view(argv[3]) == "measure" ? FFTW_MEASURE : FFTW_ESTIMATE;
  if (rows <= 0 || cols <= 0 || rows % kBlock || cols % kBlock) {
    std::fprintf(stderr, "ROWS and COLS must be positive multiples of %d\n", kBlock);
    return 2;
  }
  const std::size_t n = std::size_t(rows) * cols;
  const lowcomm::kernels::BlockLayout layout{1, rows, cols, kBlock, kBlock};
  std::vector<float> x(n), q(n), back(n), fq(n), fback(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);

  const double ours_encode = milliseconds_per_call([&] { dct_encode_blocks(Backend::Cpu, layout, x, q); });
  const double ours_decode = milliseconds_per_call([&] { dct_decode_blocks(Backend::Cpu, layout, q, back); });

  // Dimensions {size, input stride, output stride}: within a block (rows, then columns), then
  // over the blocks of a block row and over the block rows.
  const int per_row = cols / kBlock;
  const fftwf_iodim in_block[2] = {{kBlock, cols, kBlock}, {kBlock, 1, 1}};
  const fftwf_iodim over_blocks[2] = {{per_row, kBlock, kBlock * kBlock},
                                      {rows / kBlock, kBlock * cols, per_row * kBlock * kBlock}};
  const fftwf_iodim in_block_back[2] = {{kBlock, kBlock, cols}, {kBlock, 1, 1}};
  const fftwf_iodim over_blocks_back[2] = {{per_row, kBlock * kBlock, kBlock},
                                           {rows / kBlock, per_row * kBlock * kBlock, kBlock * cols}};
  const fftwf_r2r_kind forward[2] = {FFTW_REDFT10, FFTW_REDFT10};
  const fftwf_r2r_kind inverse[2] = {FFTW_REDFT01, FFTW_REDFT01};
  std::vector<float> scratch(n);  // FFTW_MEASURE overwrites the arrays it plans on
  fftwf_plan encode = fftwf_plan_guru_r2r(2, in_block, 2, over_blocks, scratch.data(), fq.data(), forward, planning);
  fftwf_plan decode = fftwf_plan_guru_r2r(2, in_block_back, 2, over_blocks_back, scratch.data(), fback.data(), inverse, planning);
  int length = kBlock;
  const fftwf_r2r_kind kind = FFTW_REDFT10;
  fftwf_plan batch = fftwf_plan_many_r2r(1, &length, int(n / kBlock), scratch.data(), nullptr, 1, kBlock,
                                         fback.data(), nullptr, 1, kBlock, &kind, planning);
  if (!encode || !decode || !batch) {
    std::fprintf(stderr, "FFTW returned no plan\n");
    return 1;
  }
  const double fftw_encode = milliseconds_per_call([&] {
    fftwf_execute_r2r(encode, x.data(), fq.data());
    scale_blocks(fq, false);
  });
  const double fftw_decode = milliseconds_per_call([&] {
    scratch = fq;
    scale_blocks(scratch, true);
    fftwf_execute_r2r(decode, scratch.data(), fback.data());
  });
  const double fftw_pass = milliseconds_per_call([&] { fftwf_execute_r2r(batch, x.data(), fback.data()); });
  // Check the FFTW path computes the same transform (the decode again, timing aside).
  scratch = fq;
  scale_blocks(scratch, true);
  fftwf_execute_r2r(decode, scratch.data(), fback.data());

  double coefficient_gap = 0, largest = 0, round_trip_gap = 0;
  for (std::size_t i = 0; i < n; ++i) {
    coefficient_gap = std::max(coefficient_gap, double(std::fabs(q[i] - fq[i])));
    largest = std::max(largest, double(std::fabs(q[i])));
    round_trip_gap = std::max(round_trip_gap, double(std::fabs(x[i] - fback[i])));
  }
  std::printf("%5d x %-5d %s: lowcomm encode %7.2f ms, decode %7.2f | fftw 2-D encode %7.2f, decode %7.2f"
              " | fftw 1-D pass %7.2f | fftw - lowcomm coefficients <= %.2g (largest %.2g), fftw round trip <= %.2g\n",
              rows, cols, argv[3], ours_encode, ours_decode, fftw_encode, fftw_decode, fftw_pass, coefficient_gap,
              largest, round_trip_gap);
  fftwf_destroy_plan(encode);
  fftwf_destroy_plan(decode);
  fftwf_destroy_plan(batch);
  return 0;
}
