#pragma once
// What train and replay record of every step's exchanges, the same way: the step's traffic and
// times on every rank, settled on the simulated clock, gathered to rank 0 and written into the
// step traffic columns of the log's row (log/run_log.hpp, step_traffic_columns). The commands
// add their own columns (loss, error against a dense step...) to the same row.
#include <cstdint>
#include <vector>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/run_clock.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/log/run_log.hpp"

namespace lowcomm::cli {

// One rank's share of a step's row. Plain data: gathered to rank 0 as bytes.
struct StepTraffic {
  std::int64_t sent = 0, received = 0;
  double codec_s = 0, measured_s = 0, modelled_s = 0;
  double exposed_s = 0, hidden_s = 0;  // on the simulated clock (RunClock::overlap)
  double simulated_s = 0;              // the clock after the step's settlement, the same on every rank
  std::int64_t present = 1;            // 0 when the step's exchanges went without this rank (SyncReport)
};

// One rank's whole share of a row: its traffic, and the command's own values (plain data).
template <class Own>
struct RankShare {
  StepTraffic traffic;
  Own own;
};

class StepRecorder {
 public:
  StepRecorder(RunClock& clock, const ControlChannel& control);

  // Settles the step on the simulated clock (every rank, collectively) and returns this rank's
  // traffic: the exchanges of `sync`, the time the settlement exposed and hid, and the clock.
  StepTraffic settle(const SyncReport& sync);

  // Gathers every rank's traffic and its `own` values (the command's columns) to rank 0 in one
  // gather (collective; `mine` is StepTraffic{} for a step that exchanged nothing). On rank 0
  // `row` gets the step traffic columns and the result is every rank's share, in rank order;
  // elsewhere `row` is unused (it may be null) and the result empty.
  template <class Own>
  std::vector<RankShare<Own>> record(const StepTraffic& mine, const Own& own, RowValues* row) const {
    std::vector<RankShare<Own>> all = control_.gather_to_root(RankShare<Own>{mine, own});
    if (control_.is_root()) {
      std::vector<StepTraffic> traffic;
      for (const RankShare<Own>& share : all) traffic.push_back(share.traffic);
      write_traffic(traffic, row);
    }
    return all;
  }

 private:
  void write_traffic(const std::vector<StepTraffic>& all, RowValues* row) const;

  RunClock& clock_;
  const ControlChannel& control_;
};

}  // namespace lowcomm::cli
