// Layer normalisation (layernorm.hpp) on the GPU, the Reference's formulas in float.
//
// Row statistics take one thread block per row: each thread sums a strided slice of the row in
// order, then a fixed tree (shuffles within each warp, then across the warps' sums) adds the
// slices. The sums therefore differ from the Reference's index-order ones by float rounding only,
// and are the same bits run to run. Every other operation is the Reference's, in its order (with
// --fmad=false, each multiply and add rounds as on the host).
//
// The parameter gradients sum over rows, in cuda_column_sums.cuh's two deterministic passes (row
// chunks, then the chunks in order; no atomics): within float rounding of the Reference's
// row-order sums, the same bits run to run. dinp, dweight and dbias accumulate, as the contract
// says.
#include <cmath>
#include <cstdint>
#include <span>

#include "cuda_block_reduce.cuh"
#include "cuda_column_sums.cuh"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// One block per row (grid-striding over rows): mean, then rstd = 1 / sqrt(Σ (x − mean)² / C + eps),
// then out = (x − mean) · rstd · weight + bias. Each element is written after both reductions'
// barriers, by the one thread that reads it in that last pass.
__global__ void normalise_rows(const float* inp, const float* weight, const float* bias, std::int64_t N,
                               std::int64_t C, float eps, float* out, float* mean, float* rstd) {
  for (std::int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float* x = inp + n * C;
    float sum = 0.0f;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) sum += x[c];
    const float m = block_sum(sum) / static_cast<float>(C);
    float squares = 0.0f;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) squares += (x[c] - m) * (x[c] - m);
    const float s = 1.0f / sqrtf(block_sum(squares) / static_cast<float>(C) + eps);
    float* y = out + n * C;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) y[c] = (x[c] - m) * s * weight[c] + bias[c];
    if (threadIdx.x == 0) {
      mean[n] = m;
      rstd[n] = s;
    }
  }
}

// One block per row: dinp += rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), dx̂ = weight · dout,
// x̂ = (inp − mean) · rstd.
__global__ void backward_rows(const float* dout, const float* inp, const float* weight, const float* mean,
                              const float* rstd, std::int64_t N, std::int64_t C, float* dinp) {
  for (std::int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float* dy = dout + n * C;
    const float* x = inp + n * C;
    const float m = mean[n], s = rstd[n];
    float dnorm_sum = 0.0f, dnorm_norm_sum = 0.0f;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float dnorm = weight[c] * dy[c];
      dnorm_sum += dnorm;
      dnorm_norm_sum += dnorm * ((x[c] - m) * s);
    }
    const float dnorm_mean = block_sum(dnorm_sum) / static_cast<float>(C);
    const float dnorm_norm_mean = block_sum(dnorm_norm_sum) / static_cast<float>(C);
    float* dx = dinp + n * C;
    for (std::int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const float norm = (x[c] - m) * s;
      dx[c] += s * (weight[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
    }
  }
}

// The terms of dweight[c] += Σ_n dout · x̂ and dbias[c] += Σ_n dout, for add_column_sums.
struct ParameterGradientTerms {
  const float* dout;
  const float* inp;
  const float* mean;
  const float* rstd;
  std::int64_t C;
  __device__ void operator()(std::int64_t n, std::int64_t c, float (&term)[2]) const {
    const float dy = dout[n * C + c];
    term[0] = dy * ((inp[n * C + c] - mean[n]) * rstd[n]);
    term[1] = dy;
  }
};

}  // namespace

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::int64_t N, std::int64_t C,
                       float eps) {
  const Input<float> x(inp);
  const Input<float> scale(weight);
  const Input<float> shift(bias);
  // All three are overwritten: host spans are not copied in.
  Output<float> normalised(out);
  Output<float> row_mean(mean);
  Output<float> row_rstd(rstd);
  if (N > 0) {
    normalise_rows<<<row_blocks(N), kThreads, 0, stream()>>>(x.data(), scale.data(), shift.data(), N, C, eps,
                                                             normalised.data(), row_mean.data(), row_rstd.data());
    check(cudaGetLastError(), "layernorm_forward");
  }
  normalised.finish();
  row_mean.finish();
  row_rstd.finish();
}

void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N, std::int64_t C) {
  if (N == 0 || C == 0) return;  // nothing to add
  const Input<float> dy(dout);
  const Input<float> x(inp);
  const Input<float> scale(weight);
  const Input<float> row_mean(mean);
  const Input<float> row_rstd(rstd);
  Output<float> dx(dinp, /*initialised=*/true);
  Output<float> dw(dweight, /*initialised=*/true);
  Output<float> db(dbias, /*initialised=*/true);
  backward_rows<<<row_blocks(N), kThreads, 0, stream()>>>(dy.data(), x.data(), scale.data(), row_mean.data(),
                                                          row_rstd.data(), N, C, dx.data());
  check(cudaGetLastError(), "layernorm_backward (dinp)");
  add_column_sums<2>("layernorm_backward (dweight, dbias)",
                     ParameterGradientTerms{dy.data(), x.data(), row_mean.data(), row_rstd.data(), C}, N, C,
                     {dw.data(), db.data()});
  dx.finish();
  dw.finish();
  db.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
