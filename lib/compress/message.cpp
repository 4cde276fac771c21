#include "lowcomm/compress/message.hpp"

namespace lowcomm {

Message Message::sum(std::vector<float> values) {
  Message m;
  m.exchange = Exchange::SumFloat32;
  m.values = std::move(values);
  return m;
}

Message Message::gather(std::vector<std::byte> bytes) {
  Message m;
  m.exchange = Exchange::GatherBytes;
  m.bytes = std::move(bytes);
  return m;
}

std::uint64_t Message::wire_bytes() const {
  return exchange == Exchange::SumFloat32 ? values.size() * sizeof(float) : bytes.size();
}

}  // namespace lowcomm
