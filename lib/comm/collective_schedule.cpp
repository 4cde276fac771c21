#include "lowcomm/comm/collective_schedule.hpp"

#include <fmt/format.h>

#include <numeric>
#include <vector>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Elements in chunk i when `count` elements are split into `parts` nearly equal chunks.
std::uint64_t chunk_elements(std::uint64_t count, int parts, int i) {
  const auto p = static_cast<std::uint64_t>(parts);
  return count / p + (static_cast<std::uint64_t>(i) < count % p ? 1 : 0);
}

int floor_power_of_two(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

void require_ranks(int world_size) {
  if (world_size < 1) throw CommError(fmt::format("world size must be at least 1, got {}", world_size));
}

// A half-open range of element indices.
struct Range {
  std::uint64_t begin;
  std::uint64_t end;
  std::uint64_t size() const { return end - begin; }
};

}  // namespace

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

void ring_all_reduce_rounds(int world_size, std::uint64_t count, std::uint64_t element_bytes,
                            const RoundVisitor& visit) {
  require_ranks(world_size);
  const int w_count = world_size;
  if (w_count == 1) return;
  std::vector<Transfer> round(static_cast<std::size_t>(w_count));
  auto chunk_bytes = [&](int chunk) {
    return chunk_elements(count, w_count, ((chunk % w_count) + w_count) % w_count) * element_bytes;
  };
  // Reduce-scatter: in step s rank w passes its partial sum of chunk (w - s) to rank w + 1;
  // afterwards rank w holds the complete chunk (w + 1).
  for (int s = 0; s < w_count - 1; ++s) {
    for (int w = 0; w < w_count; ++w) round[w] = {w, (w + 1) % w_count, chunk_bytes(w - s)};
    visit(round);
  }
  // All-gather: in step s rank w passes the complete chunk (w + 1 - s) on.
  for (int s = 0; s < w_count - 1; ++s) {
    for (int w = 0; w < w_count; ++w) round[w] = {w, (w + 1) % w_count, chunk_bytes(w + 1 - s)};
    visit(round);
  }
}

void rabenseifner_all_reduce_rounds(int world_size, std::uint64_t count,
                                    std::uint64_t element_bytes, const RoundVisitor& visit) {
  require_ranks(world_size);
  if (world_size == 1) return;
  const int p = floor_power_of_two(world_size);
  const int extra = world_size - p;
  const std::uint64_t full = count * element_bytes;

  // Ranks 0..2*extra-1 pair up: the even one hands its vector to the odd one and sits out.
  std::vector<Transfer> round;
  if (extra > 0) {
    for (int w = 0; w < 2 * extra; w += 2) round.push_back({w, w + 1, full});
    visit(round);
  }
  auto real_rank = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };

  // Recursive halving among the p active ranks (virtual ranks 0..p-1), remembering each step's
  // ranges so the all-gather can retrace them.
  std::vector<Range> range(static_cast<std::size_t>(p), Range{0, count});
  std::vector<std::vector<Range>> history;
  for (int d = p / 2; d >= 1; d /= 2) {
    history.push_back(range);
    round.clear();
    std::vector<Range> next = range;
    for (int v = 0; v < p; ++v) {
      const Range r = range[v];
      const std::uint64_t mid = r.begin + r.size() / 2;
      const bool keeps_lower = (v & d) == 0;
      const Range sent = keeps_lower ? Range{mid, r.end} : Range{r.begin, mid};
      next[v] = keeps_lower ? Range{r.begin, mid} : Range{mid, r.end};
      round.push_back({real_rank(v), real_rank(v ^ d), sent.size() * element_bytes});
    }
    range = std::move(next);
    visit(round);
  }
  // Recursive doubling: each rank sends what it owns to the partner it split from.
  for (int d = 1; d < p; d *= 2) {
    round.clear();
    for (int v = 0; v < p; ++v) {
      round.push_back({real_rank(v), real_rank(v ^ d), range[v].size() * element_bytes});
    }
    range = history.back();
    history.pop_back();
    visit(round);
  }
  if (extra > 0) {
    round.clear();
    for (int w = 0; w < 2 * extra; w += 2) round.push_back({w + 1, w, full});
    visit(round);
  }
}

void ring_all_gather_rounds(std::span<const std::uint64_t> block_bytes, const RoundVisitor& visit) {
  const int w_count = static_cast<int>(block_bytes.size());
  require_ranks(w_count);
  std::vector<Transfer> round(static_cast<std::size_t>(w_count));
  // In step s rank w forwards block (w - s), which it received in step s - 1 (its own at s = 0).
  for (int s = 0; s < w_count - 1; ++s) {
    for (int w = 0; w < w_count; ++w) {
      round[w] = {w, (w + 1) % w_count, block_bytes[((w - s) % w_count + w_count) % w_count]};
    }
    visit(round);
  }
}

void recursive_doubling_all_gather_rounds(std::span<const std::uint64_t> block_bytes,
                                          const RoundVisitor& visit) {
  const int w_count = static_cast<int>(block_bytes.size());
  require_ranks(w_count);
  if (!is_power_of_two(w_count)) {
    throw CommError(fmt::format(
        "recursive-doubling all-gather needs a power-of-two number of ranks, got {}; "
        "use the ring or bruck all-gather algorithm instead", w_count));
  }
  std::vector<Transfer> round(static_cast<std::size_t>(w_count));
  // Before the step with distance d, rank w holds the d blocks of its aligned group.
  for (int d = 1; d < w_count; d *= 2) {
    for (int w = 0; w < w_count; ++w) {
      const int first = (w / d) * d;
      const std::uint64_t held = std::accumulate(block_bytes.begin() + first,
                                                 block_bytes.begin() + first + d, std::uint64_t{0});
      round[w] = {w, w ^ d, held};
    }
    visit(round);
  }
}

void bruck_all_gather_rounds(std::span<const std::uint64_t> block_bytes, const RoundVisitor& visit) {
  const int w_count = static_cast<int>(block_bytes.size());
  require_ranks(w_count);
  std::vector<Transfer> round(static_cast<std::size_t>(w_count));
  // Before the step with distance d, rank w holds blocks w .. w+d-1 (mod W); it sends the first
  // min(d, W - d) of them to rank w - d.
  for (int d = 1; d < w_count; d *= 2) {
    const int blocks = std::min(d, w_count - d);
    for (int w = 0; w < w_count; ++w) {
      std::uint64_t bytes = 0;
      for (int b = 0; b < blocks; ++b) bytes += block_bytes[(w + b) % w_count];
      round[w] = {w, (w - d + w_count) % w_count, bytes};
    }
    visit(round);
  }
}

void binomial_broadcast_rounds(int world_size, int root, std::uint64_t bytes,
                               const RoundVisitor& visit) {
  require_ranks(world_size);
  if (root < 0 || root >= world_size) {
    throw CommError(fmt::format("broadcast root {} is not a rank of a {}-rank communicator", root,
                                world_size));
  }
  std::vector<Transfer> round;
  // Relative rank v = w - root; in the step with distance d every v < d sends to v + d.
  for (int d = 1; d < world_size; d *= 2) {
    round.clear();
    for (int v = 0; v < d && v + d < world_size; ++v) {
      round.push_back({(v + root) % world_size, (v + d + root) % world_size, bytes});
    }
    visit(round);
  }
}

void pairwise_all_to_all_rounds(int world_size, std::uint64_t block_bytes, const RoundVisitor& visit) {
  require_ranks(world_size);
  std::vector<Transfer> round(static_cast<std::size_t>(world_size));
  for (int d = 1; d < world_size; ++d) {
    for (int w = 0; w < world_size; ++w) round[static_cast<std::size_t>(w)] = {w, (w + d) % world_size, block_bytes};
    visit(round);
  }
}

void dissemination_barrier_rounds(int world_size, const RoundVisitor& visit) {
  require_ranks(world_size);
  std::vector<Transfer> round(static_cast<std::size_t>(world_size));
  for (int d = 1; d < world_size; d *= 2) {
    for (int w = 0; w < world_size; ++w) round[w] = {w, (w + d) % world_size, 0};
    visit(round);
  }
}

void all_reduce_rounds(AllReduceAlgorithm algorithm, int world_size, std::uint64_t count,
                       std::uint64_t element_bytes, const RoundVisitor& visit) {
  switch (algorithm) {
    case AllReduceAlgorithm::Ring:
      return ring_all_reduce_rounds(world_size, count, element_bytes, visit);
    case AllReduceAlgorithm::Rabenseifner:
      return rabenseifner_all_reduce_rounds(world_size, count, element_bytes, visit);
  }
  throw CommError("unknown all-reduce algorithm");
}

void all_gather_rounds(AllGatherAlgorithm algorithm, std::span<const std::uint64_t> block_bytes,
                       const RoundVisitor& visit) {
  switch (algorithm) {
    case AllGatherAlgorithm::Ring: return ring_all_gather_rounds(block_bytes, visit);
    case AllGatherAlgorithm::RecursiveDoubling:
      return recursive_doubling_all_gather_rounds(block_bytes, visit);
    case AllGatherAlgorithm::Bruck: return bruck_all_gather_rounds(block_bytes, visit);
  }
  throw CommError("unknown all-gather algorithm");
}

}  // namespace lowcomm
