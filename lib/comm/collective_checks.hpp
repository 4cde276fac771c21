#pragma once
// The Communicator's checks of each call's arguments, apart from the calls: each throws CommError
// saying what the caller got wrong, before any data moves.
#include <cstddef>
#include <span>
#include <string_view>

namespace lowcomm {

// all_gather_v: counts has one entry per rank, the input counts[rank] elements and the output
// their sum.
void check_gather_v(std::string_view who, int rank, int size, std::size_t mine, std::span<const std::size_t> counts,
                    std::size_t all);

// exchange_pairs: `partners` is a matching over `size` ranks (each names its partner, which names
// it back, or -1).
void check_matching(std::span<const int> partners, int size);

// send_pairs: every rank sends to another rank of the job or to -1, and no two to the same one.
// Returns the rank that sends to `rank`, or -1.
int sender_to(std::span<const int> sends_to, int rank, int size);

// all_to_all: as many elements in as out, a multiple of the ranks. Returns the elements per block.
std::size_t all_to_all_block(std::size_t count, std::size_t their_count, int size);

}  // namespace lowcomm
