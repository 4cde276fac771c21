#pragma once
// What a compressor asks the library to exchange, and what comes back. A compressor never calls
// MPI: it returns a Message, the library runs the collective (fusing the messages of all units
// of a round into one call), and hands the result to Compressor::decode.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/kernels/float16.hpp"

namespace lowcomm {

enum class Exchange : std::uint8_t {
  Sum,          // all-reduce SUM of values (equal sizes on all ranks)
  GatherBytes,  // all-gather of opaque payloads (sizes may differ between ranks)
  Merge,        // payloads combined pairwise up a butterfly by Compressor::merge (equal sizes)
};

struct Message {
  Exchange exchange = Exchange::Sum;
  // Sum: the values, owned (`values`) or, for a message made by sum_view, borrowed (`borrowed`,
  // which must stay valid until the exchange returns: the gradient given to encode does).
  // sum_values() is whichever the message has.
  std::vector<float> values;
  std::span<const float> borrowed;
  // Sum: the type the values travel and are summed in. fp16 and bf16 halve the bytes; each
  // partial sum is rounded to that type, as an all-reduce in half precision does on a GPU.
  kernels::ValueType wire = kernels::ValueType::F32;
  std::vector<std::byte> bytes;  // GatherBytes, Merge

  static Message sum(std::vector<float> values, kernels::ValueType wire = kernels::ValueType::F32);
  // A Sum of values the message does not copy (`none` sends the gradient itself this way).
  static Message sum_view(std::span<const float> values, kernels::ValueType wire = kernels::ValueType::F32);
  static Message gather(std::vector<std::byte> bytes);
  static Message merge(std::vector<std::byte> bytes);
  std::span<const float> sum_values() const { return values.empty() ? borrowed : std::span<const float>(values); }
  std::uint64_t wire_bytes() const;  // what this rank contributes to the collective
};

struct Received {
  std::span<const float> sum;                        // Sum: element-wise sum over ranks, as float
  std::vector<std::span<const std::byte>> gathered;  // GatherBytes: each present rank's payload, in rank order
  // GatherBytes: the rank that sent gathered[i]; empty when every rank is present (then rank i).
  std::vector<int> senders;
  int sender(std::size_t i) const { return senders.empty() ? static_cast<int>(i) : senders[i]; }
  std::span<const std::byte> merged;                 // Merge: every rank's payload merged, the same on every rank
};

}  // namespace lowcomm
