#include "common/step_recorder.hpp"

#include <algorithm>
#include <span>

namespace lowcomm::cli {

StepRecorder::StepRecorder(RunClock& clock, const ControlChannel& control) : clock_(clock), control_(control) {}

StepTraffic StepRecorder::settle(const SyncReport& sync) {
  const ClockSettlement clock = clock_.settle();
  return {.sent = static_cast<std::int64_t>(sync.comm.bytes_sent),
          .received = static_cast<std::int64_t>(sync.comm.bytes_received),
          .codec_s = sync.codec_s,
          .measured_s = sync.comm.measured_s,
          .modelled_s = sync.comm.modelled_s,
          .exposed_s = clock.exposed_s,
          .hidden_s = clock.hidden_s,
          .simulated_s = clock.simulated_s,
          .present = sync.present ? 1 : 0};
}

void StepRecorder::write_traffic(const std::vector<StepTraffic>& all, RowValues* row) const {
  std::vector<std::int64_t> sent, received, present;
  double codec = 0, measured = 0, modelled = 0, exposed = 0, hidden = 0;
  for (const StepTraffic& r : all) {
    sent.push_back(r.sent);
    received.push_back(r.received);
    present.push_back(r.present);
    codec = std::max(codec, r.codec_s);
    measured = std::max(measured, r.measured_s);
    modelled = std::max(modelled, r.modelled_s);
    if (r.exposed_s >= exposed) {  // the pair of the rank that waited longest
      exposed = r.exposed_s;
      hidden = r.hidden_s;
    }
  }
  row->set("bytes_sent", std::span<const std::int64_t>(sent))
      .set("bytes_received", std::span<const std::int64_t>(received))
      .set("present", std::span<const std::int64_t>(present))
      .set("compress_s", codec)
      .set("comm_measured_s", measured)
      .set("comm_modelled_s", modelled)
      .set("comm_exposed_s", exposed)
      .set("comm_hidden_s", hidden)
      .set("simulated_s", all.front().simulated_s);
}

}  // namespace lowcomm::cli
