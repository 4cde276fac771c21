#pragma once
// DeepSpeed's compressed all-reduce (runtime/comm/nccl.py), the exchange of 1-bit Adam and 0/1
// Adam: a vector's mean over ranks sent as one sign bit per entry, with error feedback on both
// sides of two phases. The vector (n entries) is padded with zeros to N, a multiple of
// W·lcm(W, 8), so that each rank's chunk of N/W signs is whole bytes:
//   b ← x + e_worker ;  s ← sign(b) (0 counts +1) ;  a ← ‖b‖/√N ;  e_worker ← b − a·s
//   phase 1: chunk j of every rank's signs to rank j (all-to-all), every a to every rank
//   rank j:  c ← Σ_i a_i/W·s_i[chunk j] + e_server ;  t ← sign(c) ;  α ← ‖c‖/√(N/W) ;
//            e_server ← c − α·t
//   phase 2: every rank's t and α to every rank (all-gathers); x ← α_j·t_j on chunk j
// The arithmetic runs on the host (a CUDA run's buffers are managed memory).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/traffic.hpp"
#include "lowcomm/core/state_dict.hpp"

namespace lowcomm::strategy {

// The name the 1-bit optimizers give their exchange in headers, logs and plans (their "compressor").
inline constexpr const char* kOnebitTransport = "onebit_allreduce";

class OnebitAllReduce {
 public:
  OnebitAllReduce(Communicator& comm, std::size_t n);

  // values (n entries) ← their compressed mean over the ranks; returns this rank's payload bytes
  // (the W − 1 blocks of the all-to-all, its chunk and two scales). Collective. The errors start
  // at zero with the first call.
  std::uint64_t run(std::span<float> values);
  // Both errors back to zero (0/1 Adam does so when the vector it sends changes meaning).
  void reset_errors() { has_errors_ = false; }

  // The errors, once the first call has made them: keys <prefix>has_errors, worker_error,
  // server_error. load_state throws lowcomm::Error for sizes of another model or world size.
  void save_state(StateDict& state, const std::string& prefix) const;
  void load_state(const StateDict& state, const std::string& prefix);

  // N for n entries on W ranks, and one call's traffic on a modelled network (its four
  // collectives: the signs' all-to-all, the worker scales', server signs' and server scales'
  // all-gathers), for `lowcomm plan`.
  static std::uint64_t padded_size(std::uint64_t n, int world_size);
  static StepTraffic price(std::uint64_t n, int world_size, const CommunicatorOptions& options);

 private:
  Communicator& comm_;
  std::size_t n_ = 0, padded_ = 0, chunk_ = 0;  // n, N, N / W
  std::vector<float> worker_error_, server_error_;
  bool has_errors_ = false;
  // Scratch, kept from call to call.
  std::vector<float> buffer_, compensated_, scales_;
  std::vector<std::uint8_t> signs_, chunks_, server_signs_, all_signs_;
};

}  // namespace lowcomm::strategy
