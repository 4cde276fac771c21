#include "lowcomm/comm/collective.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::Barrier: return "barrier";
    case CollectiveKind::PairExchange: return "pair_exchange";
    case CollectiveKind::AllToAll: return "all_to_all";
  }
  return "?";
}

std::string_view to_string(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::Ring: return "ring";
    case AllReduceAlgorithm::Rabenseifner: return "rabenseifner";
  }
  return "?";
}

std::string_view to_string(AllGatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllGatherAlgorithm::Ring: return "ring";
    case AllGatherAlgorithm::RecursiveDoubling: return "recursive_doubling";
    case AllGatherAlgorithm::Bruck: return "bruck";
  }
  return "?";
}

AllReduceAlgorithm parse_all_reduce_algorithm(std::string_view name) {
  for (auto a : {AllReduceAlgorithm::Ring, AllReduceAlgorithm::Rabenseifner}) {
    if (to_string(a) == name) return a;
  }
  throw ConfigError(fmt::format("unknown all-reduce algorithm '{}': use ring or rabenseifner", name));
}

AllGatherAlgorithm parse_all_gather_algorithm(std::string_view name) {
  for (auto a : {AllGatherAlgorithm::Ring, AllGatherAlgorithm::RecursiveDoubling,
                 AllGatherAlgorithm::Bruck}) {
    if (to_string(a) == name) return a;
  }
  throw ConfigError(fmt::format(
      "unknown all-gather algorithm '{}': use ring, recursive_doubling or bruck", name));
}

}  // namespace lowcomm
