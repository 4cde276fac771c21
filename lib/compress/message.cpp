#include "lowcomm/compress/message.hpp"

namespace lowcomm {

Message Message::sum(std::vector<float> values, kernels::ValueType wire) {
  Message m;
  m.exchange = Exchange::Sum;
  m.values = std::move(values);
  m.wire = wire;
  return m;
}

Message Message::sum_view(std::span<const float> values, kernels::ValueType wire) {
  Message m;
  m.exchange = Exchange::Sum;
  m.borrowed = values;
  m.wire = wire;
  return m;
}

Message Message::gather(std::vector<std::byte> bytes) {
  Message m;
  m.exchange = Exchange::GatherBytes;
  m.bytes = std::move(bytes);
  return m;
}

Message Message::merge(std::vector<std::byte> bytes) {
  Message m;
  m.exchange = Exchange::Merge;
  m.bytes = std::move(bytes);
  return m;
}

std::uint64_t Message::wire_bytes() const {
  return exchange == Exchange::Sum ? sum_values().size() * kernels::value_bytes(wire) : bytes.size();
}

}  // namespace lowcomm
