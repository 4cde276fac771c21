#include "mpi_session.hpp"

#include <cstdio>
#include <exception>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

int g_rank_for_messages = 0;

// Thrown by agree_on_failure so run_with_mpi knows every rank is unwinding together.
struct AgreedFailure {
  std::exception_ptr error;
};

}  // namespace

MpiSession::MpiSession() {
  int provided = 0;
  // Kernels run OpenMP threads; only the main thread calls MPI (FUNNELED).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED && rank_ == 0) {
    std::fprintf(stderr, "lowcomm: warning: the MPI library does not support MPI_THREAD_FUNNELED; "
                         "set OMP_NUM_THREADS=1 if runs fail\n");
  }
  g_rank_for_messages = rank_;
}

MpiSession::~MpiSession() { MPI_Finalize(); }

int rank_for_messages() { return g_rank_for_messages; }

int exit_status_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ConfigError&) {
    return 2;
  } catch (...) {
    return 1;
  }
}

void agree_on_failure(MPI_Comm comm, const std::function<void()>& work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::exception_ptr failure;
  try {
    work();
  } catch (...) {
    failure = std::current_exception();
  }
  // [0]: the worst exit status any rank fails with (0: none failed), [1]: did rank 0 fail.
  int local[2] = {failure ? exit_status_of(failure) : 0, (failure && rank == 0) ? 1 : 0};
  int global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_INT, MPI_MAX, comm);
  if (global[0] == 0) return;
  const bool speaks = failure && (rank == 0 || global[1] == 0);
  throw AgreedFailure{speaks ? failure : std::make_exception_ptr(StoppedByOtherRank(global[0]))};
}

void on_rank_zero_agreed(MPI_Comm comm, const std::function<void()>& work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  agree_on_failure(comm, [&] {
    if (rank == 0) work();
  });
}

int run_with_mpi(const std::function<void(MpiSession&)>& body) {
  std::exception_ptr agreed;
  {
    MpiSession mpi;
    try {
      body(mpi);
    } catch (const AgreedFailure& failure) {
      agreed = failure.error;  // every rank is here: finalise normally, then report
    } catch (const std::exception& e) {
      if (mpi.size() > 1) {
        std::fprintf(stderr, "lowcomm: error on rank %d: %s\n", mpi.rank(), e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      throw;  // one rank: main() reports it
    }
  }
  if (agreed) std::rethrow_exception(agreed);
  return 0;
}

}  // namespace lowcomm::cli
