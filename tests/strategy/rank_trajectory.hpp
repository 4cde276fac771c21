#pragma once
// A strategy fixture's trajectories, as make_desloc_fixture.py and make_noloco_fixture.py write
// them: in one HDF5 group, init/<tensor> (the starting parameters, the same on every rank) and
// [steps, W, n] datasets (each rank's gradient, parameters, ... at each step). This reads this
// MPI rank's share and steps a strategy through the recorded gradients.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "lowcomm/strategy/strategy.hpp"

namespace lowcomm::test {

struct RankTrajectory {
  RankTrajectory(const char* path, std::string group, std::vector<TensorInfo> tensors)
      : file(path), group(std::move(group)), tensors(std::move(tensors)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w);
  }

  FixtureFile file;
  std::string group;  // a fixture whose groups are per world size sets it once w is known
  std::vector<TensorInfo> tensors;
  int rank = 0, w = 1;

  std::size_t steps() const { return static_cast<std::size_t>(file.attr_int(group, "steps")); }

  std::vector<std::vector<float>> init() const {
    std::vector<std::vector<float>> values;
    for (const TensorInfo& t : tensors) values.push_back(file.floats(group + "/init/" + t.name));
    return values;
  }

  // Row (step s, this rank) of tensor t in the [steps, w, n] dataset <group>/<quantity>/<tensor>.
  template <class T = double>
  std::vector<T> row(const std::string& quantity, std::size_t t, std::size_t s) const {
    const std::string dataset = group + "/" + quantity + "/" + tensors[t].name;
    const std::vector<T> all = [&] {
      if constexpr (std::is_same_v<T, float>) return file.floats(dataset);
      else return file.doubles(dataset);
    }();
    const auto n = static_cast<std::size_t>(tensors[t].numel());
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>((s * static_cast<std::size_t>(w) + rank) * n);
    return {begin, begin + static_cast<std::ptrdiff_t>(n)};
  }

  // Step s of `strategy` with this rank's recorded gradients (the "grad" datasets).
  StrategyStepReport step(Strategy& strategy, std::size_t s, double lr, std::vector<std::vector<float>>& params) const {
    std::vector<std::vector<float>> grads;
    std::vector<std::span<float>> p;
    std::vector<std::span<const float>> g;
    for (std::size_t t = 0; t < tensors.size(); ++t) grads.push_back(row<float>("grad", t, s));
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      p.emplace_back(params[t]);
      g.emplace_back(grads[t]);
    }
    return strategy.step(s, lr, p, g);
  }
};

// A float32 run against a float64 fixture: within `tolerance` of each value (relative, plus the
// same absolute); a flipped sign or another top-k choice in the methods tested moves a value far
// beyond that. At most three failures are reported, under `what`.
inline void expect_near_fixture(std::span<const float> got, const std::vector<double>& want, const std::string& what,
                                double tolerance = 2e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::abs(got[i] - want[i]) > tolerance * (1.0 + std::abs(want[i])) && mismatches++ < 3) {
      ADD_FAILURE() << what << " [" << i << "]: " << got[i] << " != " << want[i];
    }
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

}  // namespace lowcomm::test
