#include "lowcomm/comm/pending_collective.hpp"

#include <utility>

#include "lowcomm/comm/communicator.hpp"

namespace lowcomm {

PendingCollective::PendingCollective(PendingCollective&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)), id_(other.id_) {}

PendingCollective& PendingCollective::operator=(PendingCollective&& other) noexcept {
  if (this != &other) {
    if (comm_ != nullptr) {
      try {
        comm_->wait(id_);
      } catch (...) {  // NOLINT(bugprone-empty-catch): a move cannot report it
      }
    }
    comm_ = std::exchange(other.comm_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

PendingCollective::~PendingCollective() {
  if (comm_ == nullptr) return;
  try {
    comm_->wait(id_);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report it
  }
}

bool PendingCollective::test() {
  if (comm_ == nullptr) return true;
  return comm_->test(id_);
}

void PendingCollective::wait() {
  if (comm_ == nullptr) return;
  Communicator* comm = std::exchange(comm_, nullptr);
  comm->wait(id_);
}

}  // namespace lowcomm
