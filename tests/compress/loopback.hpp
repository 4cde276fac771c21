#pragma once
// Runs a compressor for W simulated ranks inside one process: every rank's encode, the exchange
// done by hand (summing values in rank order, concatenating payloads), every rank's decode. It is
// "the same computation done on one rank with all ranks' data" that the MPI tests compare the
// real, fused, MPI-driven exchange against.
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lowcomm/compress/compressor.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::test {

// compressors[w] is rank w's instance; inputs[w] its gradient of the unit; scratch[w] the unit's
// scratch on rank w (resized to the world; pass it on to `transmitted`). Returns every rank's
// aggregate.
inline std::vector<std::vector<float>> loopback_unit(std::span<const std::unique_ptr<Compressor>> compressors,
                                                      UnitContext unit,
                                                      const std::vector<std::vector<float>>& inputs,
                                                      std::vector<UnitScratch>& scratch) {
  const int world = static_cast<int>(compressors.size());
  unit.world_size = world;
  scratch.resize(compressors.size());
  std::vector<std::optional<Message>> messages(compressors.size());
  for (int w = 0; w < world; ++w) {
    unit.rank = w;
    messages[w] = compressors[w]->encode(unit, inputs[w], scratch[w]);
  }
  // NaN on entry: decode must write every element (compressor.hpp), and a NaN left over fails
  // every comparison with the MPI run or a fixture.
  std::vector<std::vector<float>> aggregates(
      compressors.size(),
      std::vector<float>(static_cast<std::size_t>(unit.numel()), std::numeric_limits<float>::quiet_NaN()));
  for (int round = 0; messages[0]; ++round) {
    Received received;
    std::vector<float> sum;
    if (messages[0]->exchange == Exchange::Sum) {
      // In the wire's type: each rank's values rounded to it, each partial sum too.
      const kernels::ValueType wire = messages[0]->wire;
      auto round_to_wire = [wire](std::span<float> values) {
        std::vector<std::byte> bytes(values.size() * kernels::value_bytes(wire));
        kernels::encode_values(values, wire, bytes);
        kernels::decode_values(bytes, wire, values);
      };
      sum.assign(messages[0]->sum_values().size(), 0.0f);
      for (int w = 0; w < world; ++w) {
        const std::span<const float> sent = messages[w]->sum_values();
        if (sent.size() != sum.size()) throw Error("loopback: ranks sent sums of different sizes");
        std::vector<float> mine(sent.begin(), sent.end());
        round_to_wire(mine);
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += mine[i];
        round_to_wire(sum);
      }
      received.sum = sum;
    } else {
      for (int w = 0; w < world; ++w) received.gathered.emplace_back(messages[w]->bytes);
    }
    std::vector<std::optional<Message>> next(compressors.size());
    for (int w = 0; w < world; ++w) {
      unit.rank = w;
      next[w] = compressors[w]->decode(unit, round, received, scratch[w], aggregates[w]);
    }
    messages = std::move(next);
  }
  return aggregates;
}

// The same, for one step of a unit whose scratch is not needed afterwards.
inline std::vector<std::vector<float>> loopback_unit(std::span<const std::unique_ptr<Compressor>> compressors,
                                                      UnitContext unit,
                                                      const std::vector<std::vector<float>>& inputs) {
  std::vector<UnitScratch> scratch;
  return loopback_unit(compressors, unit, inputs, scratch);
}

}  // namespace lowcomm::test
