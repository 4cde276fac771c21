#include "mpi_session.hpp"

#include "lowcomm/comm/threads.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "lowcomm/core/local_rank.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"

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
  share_cores_among_local_ranks(MPI_COMM_WORLD);
  place_on_launchers_device();
  control_.emplace(MPI_COMM_WORLD);
}

MpiSession::~MpiSession() {
  control_.reset();
  MPI_Finalize();
}

int rank_for_messages() { return g_rank_for_messages; }

int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(variable)) return std::atoi(value);
  }
  return 0;
}

void place_on_launchers_device() { kernels::place_on_node(local_rank_from_environment()); }

int exit_status_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ReportedFailure& reported) {
    return reported.exit_status();
  } catch (const ConfigError&) {
    return 2;
  } catch (...) {
    return 1;
  }
}

int report_failure(const std::exception_ptr& error) {
  const int status = exit_status_of(error);
  const std::string where = g_rank_for_messages == 0 ? "" : " on rank " + std::to_string(g_rank_for_messages);
  try {
    std::rethrow_exception(error);
  } catch (const ReportedFailure&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lowcomm: %s%s: %s\n", status == 2 ? "configuration error" : "error", where.c_str(),
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "lowcomm: unknown error%s\n", where.c_str());
  }
  std::fflush(stderr);
  return status;
}

void agree_on_failure(const ControlChannel& control, const std::function<void()>& work) {
  const int rank = control.rank();
  std::exception_ptr failure;
  try {
    work();
  } catch (...) {
    failure = std::current_exception();
  }
  // [0]: the worst exit status any rank fails with (0: none failed), [1]: did rank 0 fail.
  std::int32_t global[2] = {failure ? exit_status_of(failure) : 0, (failure && rank == 0) ? 1 : 0};
  control.max_each(std::span<std::int32_t>(global));
  if (global[0] == 0) return;
  const bool speaks = failure && (rank == 0 || global[1] == 0);
  throw AgreedFailure{speaks ? failure : std::make_exception_ptr(ReportedFailure(global[0]))};
}

void on_rank_zero_agreed(const ControlChannel& control, const std::function<void()>& work) {
  agree_on_failure(control, [&] {
    if (control.is_root()) work();
  });
}

int run_with_mpi(const std::function<void(MpiSession&)>& body) {
  int agreed_status = 0;
  {
    MpiSession mpi;
    try {
      body(mpi);
    } catch (const AgreedFailure& failure) {
      // Every rank is here. Report while all ranks are alive, then finalise normally.
      agreed_status = report_failure(failure.error);
      mpi.control().barrier();
    } catch (const std::exception& e) {
      if (mpi.size() > 1) {
        std::fprintf(stderr, "lowcomm: error on rank %d: %s\n", mpi.rank(), e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      throw;  // one rank: main() reports it
    }
  }
  if (agreed_status != 0) throw ReportedFailure(agreed_status);
  return 0;
}

}  // namespace lowcomm::cli
