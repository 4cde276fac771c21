#include "collective_checks.hpp"

#include <fmt/format.h>

#include <vector>

#include "lowcomm/error.hpp"

namespace lowcomm {

void check_gather_v(std::string_view who, int rank, int size, std::size_t mine, std::span<const std::size_t> counts,
                    std::size_t all) {
  if (counts.size() != static_cast<std::size_t>(size)) {
    throw CommError(fmt::format("{}: counts must hold one entry per rank", who));
  }
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  if (mine != counts[static_cast<std::size_t>(rank)] || all != total) {
    throw CommError(fmt::format("{}: the input must hold counts[rank] elements and the output the sum of counts", who));
  }
}

void check_matching(std::span<const int> partners, int size) {
  if (partners.size() != static_cast<std::size_t>(size)) {
    throw CommError(fmt::format("exchange_pairs: partners holds {} entries for {} ranks", partners.size(), size));
  }
  for (int r = 0; r < size; ++r) {
    const int p = partners[static_cast<std::size_t>(r)];
    if (p < -1 || p >= size || p == r || (p >= 0 && partners[static_cast<std::size_t>(p)] != r)) {
      throw CommError(fmt::format("exchange_pairs: partners is not a matching: rank {} names {} (each rank names "
                                  "its partner, which names it back, or -1)",
                                  r, p));
    }
  }
}

int sender_to(std::span<const int> sends_to, int rank, int size) {
  if (sends_to.size() != static_cast<std::size_t>(size)) {
    throw CommError(fmt::format("send_pairs: sends_to holds {} entries for {} ranks", sends_to.size(), size));
  }
  std::vector<int> sender_of(static_cast<std::size_t>(size), -1);
  for (int r = 0; r < size; ++r) {
    const int to = sends_to[static_cast<std::size_t>(r)];
    if (to < -1 || to >= size || to == r) {
      throw CommError(fmt::format("send_pairs: rank {} sends to {} (a rank of the {} other than itself, or -1)", r,
                                  to, size));
    }
    if (to < 0) continue;
    int& sender = sender_of[static_cast<std::size_t>(to)];
    if (sender >= 0) {
      throw CommError(fmt::format("send_pairs: ranks {} and {} both send to rank {} (one message per rank and call)",
                                  sender, r, to));
    }
    sender = r;
  }
  return sender_of[static_cast<std::size_t>(rank)];
}

std::size_t all_to_all_block(std::size_t count, std::size_t their_count, int size) {
  if (their_count != count || count % static_cast<std::size_t>(size) != 0) {
    throw CommError(fmt::format("all_to_all: {} elements in and {} out on {} ranks: both must be the same multiple "
                                "of the number of ranks",
                                count, their_count, size));
  }
  return count / static_cast<std::size_t>(size);
}

}  // namespace lowcomm
