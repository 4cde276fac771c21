#include "blas.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>

#ifdef LOWCOMM_HAVE_CBLAS
#include LOWCOMM_CBLAS_HEADER  // cblas.h, or MKL's mkl_cblas.h (cmake/LowcommBLAS.cmake)
#else
#include <Eigen/Core>
#endif

namespace lowcomm::kernels::detail {

#ifdef LOWCOMM_HAVE_CBLAS

namespace {

#ifdef LOWCOMM_HAVE_OPENBLAS
using BlasInt = blasint;

// OpenBLAS keeps its own thread pool (the pthread build) or uses OpenMP's (the OpenMP build).
// Either way it must use as many threads as our OpenMP loops and no more: two pools of all the
// cores each would oversubscribe them. Set once, and again only when OMP's count changes.
void match_blas_threads() {
  static std::atomic<int> configured{0};
  const int threads = omp_get_max_threads();
  if (threads != configured.load()) {
    openblas_set_num_threads(threads);
    configured.store(threads);
  }
}
#else
// Another CBLAS (LOWCOMM_BLAS=FindBLAS: MKL, BLIS, a site's BLAS) threads as its own settings say
// (MKL_NUM_THREADS, BLIS_NUM_THREADS, ...): set them to the rank's compute.threads. Its LP64
// interface takes int (configure refuses ILP64 vendors).
using BlasInt = int;
void match_blas_threads() {}
#endif

}  // namespace

void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  // Inside a parallel region OpenBLAS's OpenMP build runs on the calling thread; outside, it
  // takes as many threads as our loops would.
  if (omp_in_parallel() == 0) match_blas_threads();
  // BLAS wants every leading dimension >= 1 even for an empty matrix.
  const auto ld = [](std::int64_t stride) { return static_cast<BlasInt>(std::max<std::int64_t>(1, stride)); };
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
              static_cast<BlasInt>(m), static_cast<BlasInt>(n), static_cast<BlasInt>(k), alpha, a, ld(lda), b,
              ld(ldb), beta, c, ld(ldc));
}

#ifdef LOWCOMM_HAVE_OPENBLAS
const char* sgemm_provider() { return openblas_get_config(); }
#else
const char* sgemm_provider() { return "CBLAS " LOWCOMM_CBLAS_LIBRARIES; }
#endif

#else

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstView = Eigen::Map<const RowMajor, Eigen::Unaligned, Stride>;
using View = Eigen::Map<RowMajor, Eigen::Unaligned, Stride>;

template <typename OpA, typename OpB>
void product(const OpA& op_a, const OpB& op_b, float alpha, float beta, View c) {
  if (beta == 0.0f) {
    c.noalias() = alpha * op_a * op_b;
  } else {
    c *= beta;
    c.noalias() += alpha * op_a * op_b;
  }
}

}  // namespace

void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  const ConstView stored_a(a, transpose_a ? k : m, transpose_a ? m : k, Stride(lda));
  const ConstView stored_b(b, transpose_b ? n : k, transpose_b ? k : n, Stride(ldb));
  const View out(c, m, n, Stride(ldc));
  if (transpose_a && transpose_b) {
    product(stored_a.transpose(), stored_b.transpose(), alpha, beta, out);
  } else if (transpose_a) {
    product(stored_a.transpose(), stored_b, alpha, beta, out);
  } else if (transpose_b) {
    product(stored_a, stored_b.transpose(), alpha, beta, out);
  } else {
    product(stored_a, stored_b, alpha, beta, out);
  }
}

const char* sgemm_provider() { return "Eigen"; }

#endif

}  // namespace lowcomm::kernels::detail
