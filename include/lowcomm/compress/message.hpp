#pragma once
// What a compressor asks the library to exchange, and what comes back. A compressor never calls
// MPI: it returns a Message, the library runs the collective (fusing the messages of all units
// of a round into one call), and hands the result to Compressor::decode.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lowcomm {

enum class Exchange : std::uint8_t {
  SumFloat32,   // all-reduce SUM of float32 values (equal sizes on all ranks)
  GatherBytes,  // all-gather of opaque payloads (sizes may differ between ranks)
};

struct Message {
  Exchange exchange = Exchange::SumFloat32;
  std::vector<float> values;     // SumFloat32
  std::vector<std::byte> bytes;  // GatherBytes

  static Message sum(std::vector<float> values);
  static Message gather(std::vector<std::byte> bytes);
  std::uint64_t wire_bytes() const;  // what this rank contributes to the collective
};

struct Received {
  std::span<const float> sum;                        // SumFloat32: element-wise sum over ranks
  std::vector<std::span<const std::byte>> gathered;  // GatherBytes: each rank's payload, in rank order
};

}  // namespace lowcomm
