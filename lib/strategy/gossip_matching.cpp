#include "lowcomm/strategy/gossip_matching.hpp"

#include <numeric>
#include <utility>

namespace lowcomm {

namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += kGolden);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

}  // namespace

std::vector<int> gossip_matching(int world_size, std::uint64_t seed, std::uint64_t round,
                                 const std::vector<bool>& present) {
  std::vector<int> perm(static_cast<std::size_t>(world_size));
  std::iota(perm.begin(), perm.end(), 0);
  SplitMix64 random(seed ^ (kGolden * (round + 1)));
  for (std::size_t i = perm.size(); i-- > 1;) std::swap(perm[i], perm[random.next() % (i + 1)]);
  std::vector<int> partners(perm.size(), -1);
  const auto here = [&](int r) { return present.empty() || present[static_cast<std::size_t>(r)]; };
  for (std::size_t k = 0; k + 1 < perm.size(); k += 2) {
    const int a = perm[k], b = perm[k + 1];
    if (!here(a) || !here(b)) continue;
    partners[static_cast<std::size_t>(a)] = b;
    partners[static_cast<std::size_t>(b)] = a;
  }
  return partners;
}

}  // namespace lowcomm
