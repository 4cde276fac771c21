#include "lowcomm/compress/transmitted.hpp"

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm {

Transmitted Transmitted::entries(std::span<const std::int64_t> indices, std::span<const float> values) {
  if (indices.size() != values.size()) throw Error("Transmitted::entries: one value per index");
  return Transmitted(Form::Entries, indices, values);
}

void Transmitted::write_dense(kernels::Backend backend, std::span<const float> aggregate, std::span<float> out) const {
  switch (form_) {
    case Form::Dense: return;
    case Form::Entries:
      kernels::fill(backend, out, 0.0f);
      kernels::scatter_add(backend, indices_, values_, out);
      return;
    case Form::Aggregate:
      if (aggregate.size() != out.size()) throw Error("Transmitted::write_dense: the aggregate is not the unit's size");
      kernels::scale(backend, 1.0f, aggregate, out);  // 1·x is x, bit for bit
      return;
  }
}

}  // namespace lowcomm
