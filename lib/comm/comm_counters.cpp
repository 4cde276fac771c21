#include "lowcomm/comm/comm_counters.hpp"

namespace lowcomm {

CommCounters& CommCounters::operator+=(const CommCounters& other) {
  calls += other.calls;
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  measured_s += other.measured_s;
  modelled_s += other.modelled_s;
  return *this;
}

CommCounters operator-(CommCounters a, const CommCounters& b) {
  a.calls -= b.calls;
  a.bytes_sent -= b.bytes_sent;
  a.bytes_received -= b.bytes_received;
  a.measured_s -= b.measured_s;
  a.modelled_s -= b.modelled_s;
  return a;
}

}  // namespace lowcomm
